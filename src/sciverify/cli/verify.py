"""Verification: ``sciverify verify`` (the evidence view of one claim, or of several with the models loaded
once) and ``predict`` (a claims file, leaderboard format)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from sciverify.cli._app import app, console, err_console
from sciverify.cli.options import (
    AddressOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    ConfigOpt,
    EngineOpt,
    IndexDirOpt,
    JsonSchemaOpt,
    JudgeKeyEnvOpt,
    JudgeOpt,
    MaxTokensOpt,
    ModelNameOpt,
    ModelsDirOpt,
    TimeoutOpt,
    WorkersOpt,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import Verifier

__all__ = ["predict", "verify_claim"]


def _pipeline_config(
    models: Path | None, config: Path | None, judge: str | None, **llm: Any
) -> PipelineConfig:
    """The pipeline configuration: --config FILE, else the model dir's tuned pipeline.toml; then the
    judge options on top."""
    from sciverify.pipeline.config import PipelineConfig, tuned_config

    base = PipelineConfig.load_toml(config) if config is not None else tuned_config(models)
    return base.with_judge(judge, **llm)


@app.command("verify")
def verify_claim(
    claims: Annotated[
        list[str],
        typer.Argument(
            help="The claim to verify (one sentence). Several claims are answered in order with the models "
            "loaded once; `-` reads one claim per line from stdin.",
            show_default=False,
            metavar="CLAIM",
        ),
    ],
    index: IndexDirOpt = None,
    models: ModelsDirOpt = None,
    k: Annotated[
        int | None,
        typer.Option("-k", help="Candidate abstracts to retrieve and judge.", show_default="the tuned k, 5"),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON instead of a table (a line per claim for several claims)."),
    ] = False,
    config: ConfigOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    model: ModelNameOpt = None,
    api_key_env: JudgeKeyEnvOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    json_schema: JsonSchemaOpt = False,
) -> None:
    """Every paper the models find relevant, supporting and refuting, with an overall verdict.

    Each paper shows P(evidence) and P(right side | evidence), its link and its rationale sentences;
    papers that the leaderboard decision (`predict`) emits are marked.

    Several claims (or `-`: one claim per line on stdin) load the models once. A claim that cannot be
    checked is named on stderr, the others are still answered, and the exit status is then 2.
    """
    from sciverify.errors import ConfigError
    from sciverify.pipeline.many import is_many
    from sciverify.pipeline.verify import Verifier, check_claim

    pipeline = _pipeline_config(models, config, judge, base_url=base_url, model=model,
                                api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
                                max_tokens=max_tokens, json_schema=json_schema or None)
    many = is_many(claims)
    claim = "" if many else check_claim(claims[0], pipeline.claim_limit)  # before the models load
    if k is not None and k < 1:
        raise ConfigError(f"-k must be at least 1, got {k}")
    if many:
        _verify_many(claims, lambda: Verifier.load(index, models, pipeline), pipeline, k, as_json)
        return
    verifier = Verifier.load(index, models, pipeline)
    results = verifier.verify(claim, k=k)
    judge_stats = verifier.llm_judge.stats if verifier.llm_judge is not None else None
    if as_json:
        import orjson

        from sciverify.pipeline.present import verified_to_json

        body = verified_to_json(claim, results, verifier.searched)
        if judge_stats is not None:
            body["llm_judge"] = judge_stats.to_json(pipeline.llm.model)
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        from sciverify.pipeline.present import print_verified

        print_verified(console, claim, results, verifier.searched)
    _judge_notes(verifier, pipeline)


def _verify_many(
    claims: list[str], load: Callable[[], Verifier], pipeline: PipelineConfig, k: int | None, as_json: bool
) -> None:
    """``verify A B`` or ``verify -``: :func:`sciverify.pipeline.many.answer_each`, its problems on stderr."""
    from sciverify.errors import InputError
    from sciverify.pipeline.many import STDIN, ClaimInput, answer_each, claim_inputs

    if STDIN in claims and sys.stdin.isatty():
        err_console.print("reading claims from stdin, one per line (Ctrl-D ends)", style="dim",
                          highlight=False)

    def problem(item: ClaimInput) -> None:
        err_console.print(Text.assemble(("error:", "bold red"), f" {item.where}: {item.problem}"),
                          highlight=False, soft_wrap=True)

    inputs = claim_inputs(claims, sys.stdin.buffer, pipeline.claim_limit)
    tally = answer_each(inputs, load, k=k, as_json=as_json, out=sys.stdout, console=console, problem=problem)
    if tally.verifier is not None:
        _judge_notes(tally.verifier, pipeline)
    if tally.failed:
        raise InputError(tally.failed_line())
    if not tally.answered:
        raise InputError("no claim given: stdin had no line with a claim on it")


def _judge_notes(verifier: Verifier, pipeline: PipelineConfig) -> None:
    """What the LLM judge could not use, on stderr: nothing goes unmentioned."""
    judge_stats = verifier.llm_judge.stats if verifier.llm_judge is not None else None
    if judge_stats is None:
        return
    for note in judge_stats.notes:
        err_console.print(Text.assemble(("note:", "yellow"), f" {note}"), highlight=False, soft_wrap=True)
    err_console.print(judge_stats.count_line(pipeline.llm.model), highlight=False, markup=False,
                      soft_wrap=True)


@app.command("predict")
def predict(
    claims: Annotated[Path, typer.Argument(help="Claims JSONL (only `id` and `claim` are read).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Predictions JSONL to write.")],
    index: IndexDirOpt = None,
    models: ModelsDirOpt = None,
    retrieval: Annotated[
        str | None,
        typer.Option("--retrieval", help="'oracle' = gold abstracts (needs --gold), or a retriever name."),
    ] = None,
    rationale: Annotated[
        str | None,
        typer.Option("--rationale", help="'oracle' = gold rationales (needs --gold), or a selector name."),
    ] = None,
    gold: Annotated[Path | None, typer.Option("--gold", help="Gold claims JSONL (oracle runs).")] = None,
    k: Annotated[
        int | None, typer.Option("-k", help="Candidates per claim.", show_default="the tuned k, 5")
    ] = None,
    config: ConfigOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    model: ModelNameOpt = None,
    api_key_env: JudgeKeyEnvOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    json_schema: JsonSchemaOpt = False,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Predict evidence for every claim of a file, in SciFact leaderboard format (with confidences)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from sciverify.data.io import read_claims
    from sciverify.data.output_checks import check_output_file
    from sciverify.pipeline.engines import make_engine
    from sciverify.pipeline.run import predict_claims, predicted_line, read_claim_texts

    # everything that can be wrong with the inputs fails here, before any model loads
    check_output_file(out, "predictions file", inputs=[p for p in (claims, gold, config) if p is not None])
    pipeline = _pipeline_config(models, config, judge, base_url=base_url, model=model,
                                api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
                                max_tokens=max_tokens, json_schema=json_schema or None)
    items = read_claim_texts(claims, pipeline.claim_limit)
    gold_claims = read_claims(gold) if gold is not None else None
    columns = (TextColumn("predicting"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with make_engine(engine, address, workers) as runner, Progress(
        *columns, console=err_console, transient=True
    ) as bar:
        task = bar.add_task("predict", total=len(items))
        preds = predict_claims(
            items, out, index_dir=index, model_dir=models, retrieval=retrieval, rationale=rationale,
            gold=gold_claims, k=k, on_progress=lambda n: bar.advance(task, n), config=pipeline,
            engine=runner,
        )
    err_console.print(predicted_line(preds, out), style="green", highlight=False, markup=False)
