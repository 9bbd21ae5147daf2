"""Instruction-style runs of an OpenAI-compatible LLM: ``sciverify instruct-pairs`` (the gold pairs),
``instruct-run`` (ask the server) and ``evaluate-instruct`` (score the answers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import app, console, err_console
from sciverify.cli.options import ApiKeyEnvOpt, BaseUrlOpt, FormatOpt, JsonSchemaOpt, ModelNameOpt

__all__ = ["evaluate_instruct", "instruct_pairs", "instruct_run"]


@app.command("instruct-pairs")
def instruct_pairs(
    claims: Annotated[Path, typer.Argument(help="SciFact claims JSONL with evidence and cited_doc_ids.")],
    out: Annotated[Path, typer.Argument(help="Where to write the pairs JSONL (inputs, prompt, expected).")],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus JSONL (default: the data directory's).")
    ] = None,
) -> None:
    """Write one instruction-style gold pair per (claim, cited abstract): prompt plus expected JSON answer."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.output_checks import check_output_file
    from sciverify.scoring.instruct import read_instruct_gold, write_instruct_pairs
    from sciverify.scoring.instruct_text import pairs_written_line

    corpus = corpus or resolve_data_dir(None).corpus
    check_output_file(out, "pairs file", inputs=[claims, corpus])
    pairs = read_instruct_gold(claims, corpus)
    write_instruct_pairs(out, pairs)
    console.print(pairs_written_line(pairs, out), markup=False)


@app.command("evaluate-instruct")
def evaluate_instruct(
    gold: Annotated[Path, typer.Argument(help="Pairs JSONL from `instruct-pairs`, or SciFact claims JSONL.")],
    outputs: Annotated[Path, typer.Argument(help="JSONL of {claim_id, doc_id, output: raw model text}.")],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus JSONL, for a claims GOLD (default: data dir's).")
    ] = None,
    fmt: FormatOpt = "text",
) -> None:
    """Score instruction-style {"verdict", "evidence"} model outputs: verdict accuracy/F1, evidence F1."""
    import orjson

    from sciverify.errors import ConfigError
    from sciverify.scoring.instruct import evaluate_instruct_files, is_pairs_file, report_to_json
    from sciverify.scoring.instruct_text import report_lines

    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be 'text' or 'json', got {fmt!r}")
    if corpus is None and not is_pairs_file(gold):
        from sciverify.data.datasets import resolve_data_dir

        corpus = resolve_data_dir(None).corpus
    report = evaluate_instruct_files(gold, outputs, corpus)
    if fmt == "json":
        sys.stdout.write(orjson.dumps(report_to_json(report), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for line in report_lines(report, outputs):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command("instruct-run")
def instruct_run(
    pairs: Annotated[Path, typer.Argument(help="Pairs JSONL from `instruct-pairs` (its prompts are sent).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Outputs JSONL (appended; re-run to resume).")],
    base_url: BaseUrlOpt = None,
    model: ModelNameOpt = None,
    api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    concurrency: Annotated[int, typer.Option("--concurrency", help="Requests in flight at once.")] = 4,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.")] = 120.0,
    retries: Annotated[int, typer.Option("--retries", help="Retries on 429/5xx/timeouts.")] = 4,
    temperature: Annotated[float, typer.Option("--temperature", help="Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Longest answer, in tokens.")] = 512,
    json_schema: JsonSchemaOpt = False,
    system: Annotated[str, typer.Option("--system", help="System message put before every prompt.")] = "",
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N pairs (after --sample).")
    ] = None,
    sample: Annotated[
        int | None, typer.Option("--sample", help="A random sample of N pairs (see --seed).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
    no_score: Annotated[bool, typer.Option("--no-score", help="Skip scoring at the end.")] = False,
) -> None:
    """Send every pair's prompt to an OpenAI-compatible server, append the answers, then score them.

    Resumable: re-run with the same -o to skip the pairs already answered (and retry failed ones).
    """
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from sciverify.data.output_checks import check_not_an_input
    from sciverify.models.llm import LlmConfig
    from sciverify.pipeline.instruct_run import RunProgress, run_instruct
    from sciverify.scoring.instruct_text import score_line

    check_not_an_input(out, [pairs])
    config = LlmConfig(base_url=base_url or "", model=model or "", api_key_env=api_key_env, timeout=timeout,
                       max_retries=retries, concurrency=concurrency, temperature=temperature,
                       max_tokens=max_tokens, json_schema=json_schema, system=system)
    columns = (TextColumn("asking {task.fields[model]}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("run", total=0, model=config.model, rate="")

        def start(p: RunProgress) -> None:
            bar.update(task, total=p.total, completed=p.skipped)
            if p.skipped:
                err_console.print(f"resuming: {p.skipped} of {p.total} pairs already answered in {out}",
                                  markup=False)

        def advance(p: RunProgress) -> None:
            bar.update(task, completed=p.skipped + p.done, rate=p.rate_text())

        result = run_instruct(pairs, out, config, limit=limit, sample=sample, seed=seed, score=not no_score,
                              on_start=start, on_progress=advance)
    for note in result.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    err_console.print(f"[green]{escape(result.progress.done_text(out))}[/]", highlight=False, soft_wrap=True)
    if result.report is not None:
        console.print(score_line(result.report), soft_wrap=True, highlight=False, markup=False)
