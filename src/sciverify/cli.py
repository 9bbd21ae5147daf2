"""The `sciverify` command line: parses arguments, builds configs, calls the library. Nothing else.

Every SciverifyError becomes one clear red line and exit status 2, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from sciverify.errors import SciverifyError

__all__ = ["app", "main"]

app = typer.Typer(
    name="sciverify",
    help="Verify scientific claims against research abstracts, and score claim-verification systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
data_app = typer.Typer(help="Locate, fetch and check the SciFact data.", no_args_is_help=True)
app.add_typer(data_app, name="data")

console = Console()
err_console = Console(stderr=True)


def _flags_show_no_value() -> None:
    """Help lists a plain flag (``--json``, ``--help``) without a value type: this typer prints
    ``--json <bool>``, which reads as if the flag took a value. It takes none."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_sciverify", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)

    display_type_rich._sciverify = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_show_no_value()

DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data", help="SciFact data directory (default: $SCIVERIFY_DATA, then ../shared/data/scifact)."
    ),
]


@data_app.command("where")
def data_where(data: DataOpt = None) -> None:
    """Print the data directory sciverify will read, and check each official file's sha256."""
    from sciverify.data.datasets import resolve_data_dir, verify_files

    paths = resolve_data_dir(data)
    console.print(f"data directory: {paths.root}")
    for name, status in verify_files(paths.root).items():
        colour = {"ok": "green", "missing": "yellow"}.get(status, "red")
        console.print(f"  {name:<22} [{colour}]{status}[/]")


@data_app.command("fetch")
def data_fetch(
    dest: Annotated[Path | None, typer.Option("--dest", help="Where to put the files.")] = None,  # noqa: UP007
    url: Annotated[str | None, typer.Option("--url", help="Release tarball URL (file:// works).")] = None,  # noqa: UP007
) -> None:
    """Download the official SciFact release and verify every file's sha256 before installing it."""
    from sciverify.data.datasets import OFFICIAL_URL, fetch_scifact

    target = fetch_scifact(dest, url or OFFICIAL_URL)
    console.print(f"[green]SciFact data verified and installed in {target}[/]")


ingest_app = typer.Typer(
    help="Turn literature dumps (CORD-19, PubMed) into a SciFact-format corpus for `sciverify index`.",
    no_args_is_help=True,
)
app.add_typer(ingest_app, name="ingest")


def _print_ingest(report: object, out: Path) -> None:
    from sciverify.data.sources.common import IngestReport

    assert isinstance(report, IngestReport)
    for note in report.notes:
        err_console.print(f"  {note}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"[green]{report.summary()}: {out}[/]", highlight=False, soft_wrap=True)


@ingest_app.command("cord19")
def ingest_cord19(
    metadata: Annotated[Path, typer.Argument(help="CORD-19 metadata.csv (or .csv.gz).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Corpus JSONL to write.")],
) -> None:
    """One abstract per cord_uid, split into sentences, with doi, pmid, journal, year and url."""
    from sciverify.data.io import check_output_file
    from sciverify.data.sources.cord19 import ingest_cord19 as run

    check_output_file(out, "corpus file")
    _print_ingest(run(metadata, out), out)


@ingest_app.command("pubmed")
def ingest_pubmed(
    files: Annotated[
        list[Path], typer.Argument(help="PubMed XML files (.xml or .xml.gz): baseline, then updates.")
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Corpus JSONL to write.")],
) -> None:
    """The latest version of every PMID with an abstract (DeleteCitation honoured), labelled sections kept."""
    from sciverify.data.io import check_output_file
    from sciverify.data.sources.pubmed import ingest_pubmed as run

    check_output_file(out, "corpus file")
    _print_ingest(run(files, out), out)


@app.command("instruct-pairs")
def instruct_pairs(
    claims: Annotated[Path, typer.Argument(help="SciFact claims JSONL with evidence and cited_doc_ids.")],
    out: Annotated[Path, typer.Argument(help="Where to write the pairs JSONL (inputs, prompt, expected).")],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus JSONL (default: the data directory's).")
    ] = None,
) -> None:
    """Write one instruction-style gold pair per (claim, cited abstract): prompt plus expected JSON answer."""
    from collections import Counter

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import check_output_file
    from sciverify.scoring.instruct import read_instruct_gold, write_instruct_pairs

    check_output_file(out, "pairs file")
    pairs = read_instruct_gold(claims, corpus or resolve_data_dir(None).corpus)
    write_instruct_pairs(out, pairs)
    counts = Counter(p.verdict for p in pairs)
    by_verdict = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    console.print(f"wrote {len(pairs)} pairs to {out} ({by_verdict})")


@app.command("evaluate-instruct")
def evaluate_instruct(
    gold: Annotated[Path, typer.Argument(help="Pairs JSONL from `instruct-pairs`, or SciFact claims JSONL.")],
    outputs: Annotated[Path, typer.Argument(help="JSONL of {claim_id, doc_id, output: raw model text}.")],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus JSONL, for a claims GOLD (default: data dir's).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Score instruction-style {"verdict", "evidence"} model outputs: verdict accuracy/F1, evidence F1."""
    import orjson

    from sciverify.errors import ConfigError
    from sciverify.scoring.instruct import evaluate_instruct_files, is_pairs_file, report_to_json

    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be 'text' or 'json', got {fmt!r}")
    if corpus is None and not is_pairs_file(gold):
        from sciverify.data.datasets import resolve_data_dir

        corpus = resolve_data_dir(None).corpus
    report = evaluate_instruct_files(gold, outputs, corpus)
    if fmt == "json":
        sys.stdout.write(orjson.dumps(report_to_json(report), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    console.print(f"pairs {report.pairs}  parsed {report.parsed}  unparseable {report.unparseable} "
                  f"(missing {report.missing})  normalised verdicts {report.normalised_verdicts}  "
                  f"unmatched outputs {len(report.unmatched_output_lines)}", soft_wrap=True)
    console.print(f"label accuracy {report.accuracy:.4f}  macro F1 {report.macro_f1:.4f}  "
                  f"label F1 (SUPPORT/CONTRADICT only) {report.label_f1_non_nei:.4f}", soft_wrap=True)
    for name, c in report.per_class.items():
        console.print(f"  {name:<10} P {c.precision:.4f}  R {c.recall:.4f}  F1 {c.f1:.4f}  "
                      f"gold {c.support}  predicted {c.predicted}")
    console.print(f"evidence token F1: mean over pairs {report.evidence_token_f1:.4f}  "
                  f"over pairs with gold evidence {report.evidence_token_f1_gold_evidence:.4f}  "
                  f"pooled {report.evidence_token_f1_pooled:.4f}", soft_wrap=True)
    # unparseable outputs (with a line to look at) before pairs that got no output at all
    for failure in sorted(report.failures, key=lambda f: f.line is None)[:20]:
        where = f"{outputs}:{failure.line}" if failure.line is not None else "(no output)"
        console.print(f"  unparseable {where} claim {failure.claim_id} doc {failure.doc_id}: "
                      f"{failure.reason}", highlight=False, markup=False, soft_wrap=True)
    if len(report.failures) > 20:
        console.print(f"  ... and {len(report.failures) - 20} more (use --format json for all)")


BaseUrlOpt = Annotated[
    Optional[str],  # noqa: UP045 - typer needs Optional here
    typer.Option("--base-url", help="OpenAI-compatible server root, e.g. http://127.0.0.1:8080/v1."),
]
ModelNameOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--model", help="Model name as the server knows it."),
]
ApiKeyEnvOpt = Annotated[
    str, typer.Option("--api-key-env", help="Environment variable holding the API key (never printed).")
]
JudgeKeyEnvOpt = Annotated[
    Optional[str],  # noqa: UP045 - unset: the judge's default ($OPENAI_API_KEY)
    typer.Option("--api-key-env", help="Environment variable holding the API key (never printed)."),
]
ConcurrencyOpt = Annotated[
    Optional[int], typer.Option("--concurrency", help="Requests in flight at once.")  # noqa: UP045
]
TimeoutOpt = Annotated[
    Optional[float], typer.Option("--timeout", help="Seconds per request.")  # noqa: UP045
]
MaxTokensOpt = Annotated[
    Optional[int], typer.Option("--max-tokens", help="Longest answer, in tokens.")  # noqa: UP045
]
JsonSchemaOpt = Annotated[
    bool, typer.Option("--json-schema", help="Send response_format with the verdict/evidence JSON schema.")
]
JudgeOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--judge", help="'models' (shipped models) or 'llm' (--base-url --model)."),
]
ConfigOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--config", help="pipeline.toml to use (default: the model directory's tuned one)."),
]


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
        Optional[int], typer.Option("--limit", help="Only the first N pairs (after --sample).")  # noqa: UP045
    ] = None,
    sample: Annotated[
        Optional[int], typer.Option("--sample", help="A random sample of N pairs (see --seed).")  # noqa: UP045
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
    no_score: Annotated[bool, typer.Option("--no-score", help="Skip scoring at the end.")] = False,
) -> None:
    """Send every pair's prompt to an OpenAI-compatible server, append the answers, then score them.

    Resumable: re-run with the same -o to skip the pairs already answered (and retry failed ones).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from sciverify.models.llm import LlmConfig
    from sciverify.pipeline.instruct_run import RunProgress, run_instruct

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
                err_console.print(f"resuming: {p.skipped} of {p.total} pairs already answered in {out}")

        def advance(p: RunProgress) -> None:
            rate = (f"{p.requests_per_s:.2f} req/s  {p.tokens_per_s:.1f} tok/s  "
                    f"tokens {p.prompt_tokens}+{p.completion_tokens}  failed {p.failed}")
            bar.update(task, completed=p.skipped + p.done, rate=rate)

        result = run_instruct(pairs, out, config, limit=limit, sample=sample, seed=seed, score=not no_score,
                              on_start=start, on_progress=advance)
    p = result.progress
    for note in result.notes:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    err_console.print(
        f"[green]{p.done} answers appended to {out}[/] ({p.failed} failed for good, {p.retries} retries, "
        f"{p.skipped} already there) in {p.elapsed:.1f} s: {p.requests_per_s:.2f} requests/s, "
        f"{p.tokens_per_s:.1f} generated tokens/s, tokens {p.prompt_tokens} in + {p.completion_tokens} out",
        highlight=False, soft_wrap=True)
    if result.report is not None:
        r = result.report
        console.print(f"pairs {r.pairs}  parsed {r.parsed}  unparseable {r.unparseable}  "
                      f"label accuracy {r.accuracy:.4f}  macro F1 {r.macro_f1:.4f}  "
                      f"label F1 (SUPPORT/CONTRADICT) {r.label_f1_non_nei:.4f}  "
                      f"evidence token F1 {r.evidence_token_f1:.4f} "
                      f"(pooled {r.evidence_token_f1_pooled:.4f})",
                      soft_wrap=True, highlight=False)
EngineOpt = Annotated[
    str, typer.Option("--engine", help="Where the heavy steps run: local (this process) or ray.")
]
AddressOpt = Annotated[
    Optional[str],  # noqa: UP045 - typer needs Optional here
    typer.Option("--address", help="Ray cluster: auto or ray://HOST:10001 (default: Ray starts here)."),
]
WorkersOpt = Annotated[int, typer.Option("--workers", help="Ray actors per stage (each loads models once).")]


@app.command("index")
def index_corpus(
    corpus: Annotated[Path | None, typer.Argument(help="Corpus JSONL in SciFact format.")] = None,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Index directory to write.")] = None,
    split_sentences: Annotated[
        bool, typer.Option("--split-sentences", help="Accept `abstract` as one string and split it (pysbd).")
    ] = False,
    no_dense: Annotated[
        bool, typer.Option("--no-dense", help="Skip embeddings: lexical retrieval only, builds in seconds.")
    ] = False,
    dense_text: Annotated[
        str,
        typer.Option(
            "--dense-text",
            help="What to embed: sentences (every sentence and title) or title (one short text per "
            "abstract, for corpora too large to embed whole).",
        ),
    ] = "sentences",
    ann: Annotated[
        str,
        typer.Option(
            "--ann", help="Approximate nearest-neighbour graph for the dense part: auto (from 200k "
            "abstracts), on or off (exact search).",
        ),
    ] = "auto",
    default: Annotated[
        bool, typer.Option("--default", help="(Re)build the default index of the SciFact corpus.")
    ] = False,
    data: DataOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Index a corpus for retrieval: text store, BM25 and MiniLM embeddings, all memory-mapped."""
    from sciverify.errors import ConfigError
    from sciverify.pipeline.engines import make_engine
    from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index, default_index_dir

    if default:
        from sciverify.data.datasets import resolve_data_dir

        if corpus is not None:
            raise ConfigError("--default indexes the SciFact corpus; do not also give CORPUS")
        corpus, out = resolve_data_dir(data).corpus, out or default_index_dir()
    elif corpus is None or out is None:
        raise ConfigError("give CORPUS and -o DIR, or --default for the SciFact corpus")
    config = IndexConfig(
        dense=not no_dense, split_sentences=split_sentences, dense_text=dense_text, ann=ann
    )
    with make_engine(engine, address, workers) as runner:
        index = CorpusIndex.open(build_index(corpus, out, config, progress=True, engine=runner))
    seconds = index.manifest["build_seconds"]
    counts = f"{len(index)} abstracts, {index.n_sentences} sentences"
    resumed = (index.manifest.get("embedding") or {}).get("resumed_blocks", 0)
    if resumed:
        counts += f", {resumed} embedding blocks resumed from a previous run"
    console.print(f"[green]indexed {counts} in {seconds} s: {out}[/]")


@app.command("evaluate")
def evaluate(
    gold: Annotated[Path, typer.Argument(help="Gold claims JSONL (id, evidence).")],
    pred: Annotated[Path, typer.Argument(help="Predictions JSONL in leaderboard format.")],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus JSONL: also check doc ids and sentence indices.")
    ] = None,
    outdir: Annotated[
        Path | None,
        typer.Option("-o", "--outdir", help="Write summary, debug, confidence, params, errlog, metrics.json, "
                     "report.html here."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    cap: Annotated[
        str, typer.Option("--cap", help="Rationale cap: 'leaderboard' (max(3, smallest gold set)) or 3.")
    ] = "leaderboard",
    strict: Annotated[bool, typer.Option("--strict", help="Fail on any problem in the predictions.")] = False,
    n_boot: Annotated[int, typer.Option("--bootstrap", help="Number of bootstrap resamples.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    no_bootstrap: Annotated[
        bool, typer.Option("--no-bootstrap", help="Skip the bootstrap intervals.")
    ] = False,
    public: Annotated[
        bool, typer.Option("--public", help="Write outputs without per-claim gold information.")
    ] = False,
) -> None:
    """Score predictions exactly like the SciFact leaderboard, with bootstrap intervals and a debug report."""
    import orjson

    from sciverify.errors import ConfigError
    from sciverify.scoring import evaluate_files, metrics_dict, print_summary, write_outputs

    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be 'text' or 'json', got {fmt!r}")
    _check_cap(cap)
    if outdir is not None:
        from sciverify.scoring.files import check_output_dir

        check_output_dir(outdir)
    result = evaluate_files(gold, pred, corpus, strict=strict, cap=cap, n_boot=0 if no_bootstrap else n_boot,
                            seed=seed, invocation="sciverify " + " ".join(sys.argv[1:]))
    if outdir is not None:
        write_outputs(result, outdir, public=public)
    if fmt == "json":
        payload = metrics_dict(result, public=True, with_curve=False)
        payload["problems"] = [p.as_dict() for p in result.problems[:50]]
        sys.stdout.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_summary(result, console)
    if result.problems:
        where = f"; all in {outdir / 'errlog'}" if outdir is not None else ""
        err_console.print(f"[yellow]{len(result.problems)} problem(s) in the predictions{where}; first:[/]")
        for problem in result.problems[:5]:
            err_console.print(f"  {problem}", highlight=False, markup=False, soft_wrap=True)


def _check_cap(cap: str) -> None:
    """``--cap`` takes exactly the two documented values: the leaderboard's rule or the repository's 3."""
    from sciverify.errors import ConfigError

    if cap not in ("leaderboard", "3"):
        raise ConfigError(f"--cap must be 'leaderboard' or 3, got {cap!r}")


@app.command("compare")
def compare(
    gold: Annotated[Path, typer.Argument(help="Gold claims JSONL.")],
    a: Annotated[Path, typer.Argument(help="Predictions of system A.")],
    b: Annotated[Path, typer.Argument(help="Predictions of system B.")],
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Corpus JSONL for extra checks.")] = None,
    n_boot: Annotated[
        int, typer.Option("--bootstrap", help="Number of paired bootstrap resamples.")
    ] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    cap: Annotated[str, typer.Option("--cap", help="Rationale cap: 'leaderboard' or 3.")] = "leaderboard",
    strict: Annotated[bool, typer.Option("--strict", help="Fail on any problem in either file.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Paired bootstrap comparison of two systems: A - B per metric, 95% interval and two-sided p-value."""
    import orjson
    from rich import box
    from rich.table import Table

    from sciverify.errors import ConfigError
    from sciverify.scoring import FAMILIES, MEASURES, compare_files, comparison_dict

    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be 'text' or 'json', got {fmt!r}")
    _check_cap(cap)
    result = compare_files(gold, a, b, corpus, strict=strict, cap=cap, n_boot=n_boot, seed=seed)
    if fmt == "json":
        sys.stdout.write(orjson.dumps(comparison_dict(result), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        table = Table(title=f"A = {a.name}, B = {b.name}: paired bootstrap ({n_boot} resamples, seed {seed})",
                      box=box.SIMPLE, pad_edge=False, collapse_padding=True)
        for column in ("family", "", "A", "B", "A - B", "95% interval", "p"):
            table.add_column(column, justify="left" if column in ("family", "") else "right", no_wrap=True)
        for family in FAMILIES:
            for measure in MEASURES:
                s = result.paired.stats[family][measure]
                short = {"precision": "P", "recall": "R", "f1": "F1"}[measure]
                table.add_row(family, short, f"{s.a:.4f}", f"{s.b:.4f}", f"{s.diff:+.4f}",
                              f"[{s.low:+.4f}, {s.high:+.4f}]", f"{s.p_value:.4f}")
        console.print(table)
        console.print("p: two-sided, 2 * min(P(d <= 0), P(d >= 0)) over resampled differences d = A - B",
                      highlight=False)
    for name, r in (("A", result.a), ("B", result.b)):
        if r.problems:
            err_console.print(f"[yellow]{name}: {len(r.problems)} problem(s); first: {r.problems[0]}[/]",
                              highlight=False, soft_wrap=True)


@app.command("oracle")
def oracle(
    gold: Annotated[Path, typer.Argument(help="Gold claims JSONL.")],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Predictions JSONL to write (default stdout).")
    ] = None,
    rationales: Annotated[
        str, typer.Option("--rationales", help="gold: all gold rationale sentences; none: no sentences.")
    ] = "gold",
) -> None:
    """Oracle-abstract predictions from the gold file (every gold evidence abstract with its gold label)."""
    import orjson

    from sciverify.data.io import prediction_to_json, write_predictions
    from sciverify.errors import ConfigError
    from sciverify.scoring import load_gold, oracle_predictions

    if rationales not in ("gold", "none"):
        raise ConfigError(f"--rationales must be 'gold' or 'none', got {rationales!r}")
    if out is not None:
        from sciverify.data.io import check_output_file

        check_output_file(out, "predictions file")
    preds = oracle_predictions(load_gold(gold), rationales)  # type: ignore[arg-type]
    if out is None:
        for p in preds:
            sys.stdout.write(orjson.dumps(prediction_to_json(p)).decode() + "\n")
    else:
        write_predictions(out, preds)
        err_console.print(f"[green]wrote {len(preds)} oracle predictions to {out}[/]")


IndexDirOpt = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional here
    typer.Option("--index", help="Corpus index directory (default: the SciFact index)."),
]
ModelsDirOpt = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional here
    typer.Option("--models", help="Model directory with label/ and rationale/ (default: shipped)."),
]


@app.command("verify")
def verify_claim(
    claim: Annotated[str, typer.Argument(help="The claim to verify (one sentence).")],
    index: IndexDirOpt = None,
    models: ModelsDirOpt = None,
    k: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("-k", help="Candidate abstracts to retrieve and judge (default: the tuned k, 5)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
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
    """
    from sciverify.pipeline.present import print_verified, verified_to_json
    from sciverify.pipeline.verify import Verifier, check_claim

    pipeline = _pipeline_config(models, config, judge, base_url=base_url, model=model,
                                api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
                                max_tokens=max_tokens, json_schema=json_schema or None)
    check_claim(claim, pipeline.claim_limit)  # before the models load
    if k is not None and k < 1:
        from sciverify.errors import ConfigError

        raise ConfigError(f"-k must be at least 1, got {k}")
    verifier = Verifier.load(index, models, pipeline)
    results = verifier.verify(claim, k=k)
    if as_json:
        import orjson

        body = verified_to_json(claim, results, verifier.searched)
        if verifier.llm_judge is not None:
            stats = verifier.llm_judge.stats
            body["llm_judge"] = {"model": pipeline.llm.model, "answers": stats.answers,
                                 "unparseable": stats.unparseable, "dropped_evidence": stats.dropped_evidence}
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_verified(console, claim, results, verifier.searched)
    _report_llm_judge(verifier)


def _report_llm_judge(verifier: object) -> None:
    """What the LLM judge could not use, on stderr: nothing it drops goes unmentioned."""
    judge = getattr(verifier, "llm_judge", None)
    if judge is None:
        return
    s = judge.stats
    for note in s.notes:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    err_console.print(f"LLM judge {judge.config.model}: {s.answers} answers, {s.unparseable} unparseable "
                      f"(read as NEI), {s.dropped_evidence} evidence strings matched no sentence (dropped)",
                      highlight=False, soft_wrap=True)


def _pipeline_config(models: Path | None, config: Path | None, judge: str | None, **llm: Any) -> Any:
    """The pipeline configuration: --config FILE, else the model dir's tuned pipeline.toml; then the
    judge options on top."""
    from sciverify.pipeline.config import PipelineConfig, tuned_config

    base = PipelineConfig.load_toml(config) if config is not None else tuned_config(models)
    return base.with_judge(judge, **llm)


@app.command("predict")
def predict(
    claims: Annotated[Path, typer.Argument(help="Claims JSONL (only `id` and `claim` are read).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Predictions JSONL to write.")],
    index: IndexDirOpt = None,
    models: ModelsDirOpt = None,
    retrieval: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--retrieval", help="'oracle' = gold abstracts (needs --gold), or a retriever name."),
    ] = None,
    rationale: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--rationale", help="'oracle' = gold rationales (needs --gold), or a selector name."),
    ] = None,
    gold: Annotated[Optional[Path], typer.Option("--gold", help="Gold claims JSONL (oracle runs).")] = None,  # noqa: UP045
    k: Annotated[Optional[int], typer.Option("-k", help="Candidates per claim (default: tuned).")] = None,  # noqa: UP045
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

    from sciverify.data.io import check_output_file, read_claims
    from sciverify.pipeline.engines import make_engine
    from sciverify.pipeline.run import predict_claims, read_claim_texts

    # everything that can be wrong with the inputs fails here, before any model loads
    check_output_file(out, "predictions file")
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
    found = sum(1 for p in preds if p.evidence)
    err_console.print(f"[green]wrote {len(preds)} predictions ({found} with evidence) to {out}[/]")


@app.command("train")
def train(
    out: Annotated[Optional[Path], typer.Option("--out", help="Output directory.")] = None,  # noqa: UP045
    tiny: Annotated[bool, typer.Option("--tiny", help="Train on a small slice (CI smoke run).")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of every stage.")] = 13,
    index: IndexDirOpt = None,
    data: DataOpt = None,
    cv: Annotated[int, typer.Option("--cv", help="Grouped folds to cross-fit over (at least 2).")] = 5,
    label_base: Annotated[
        str,
        typer.Option("--label-base", help="Label model body: mpnet6 (shipped), minilm or mpnet."),
    ] = "mpnet6",
    no_final: Annotated[
        bool, typer.Option("--no-final", help="Stop after the estimate (no final models).")
    ] = False,
    reader: Annotated[
        str,
        typer.Option(
            "--reader",
            help="Per-sentence reader recipe trained in every fold (mpnet6 or minilm; empty: none).",
        ),
    ] = "",
    reader_role: Annotated[
        str,
        typer.Option(
            "--reader-role",
            help="The reader's grid: all (it lists, labels and informs emission) or list (it only "
            "chooses the listed sentences of abstracts emitted without it). Roles share the folds.",
        ),
    ] = "all",
) -> None:
    """Reproduce the shipped models and their cross-validated figures.

    Every train claim is scored by models trained without its fold (--cv N grouped folds), the decision
    is cross-fitted over those outputs, and the final models are trained on all claims. Resumable: rerun
    with the same --out to continue.
    """
    from sciverify.training.cv import CvConfig, run_cv

    cv_config = CvConfig(
        out_dir=out or Path("runs") / f"cv{cv}-{label_base}",
        folds=cv,
        seed=seed,
        label_base=label_base,
        tiny=tiny,
        final=not no_final,
        index_dir=index,
        data_dir=data,
        reader=reader,
        reader_role=reader_role,
    )
    summary = run_cv(cv_config, log=err_console.print)
    scored = summary["claims"]
    console.print(f"[green]cross-fitted run in {cv_config.out_dir}[/] ({scored} claims scored)")
    for name, row in summary["tuned"].items():
        low, high = row["f1_ci95"]
        console.print(f"  out of fold {name:<24} F1 {row['f1']:.3f}  (95% CI {low:.3f}-{high:.3f})")


@app.command("calibrate")
def calibrate(
    run: Annotated[Path, typer.Argument(help="A `sciverify train --cv` run directory, e.g. results/cv5.")],
    label_base: Annotated[
        str, typer.Option("--label-base", help="Whose label outputs: mpnet6 or minilm.")
    ] = "mpnet6",
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("-o", "--out", help="Also write the calibrator here (e.g. the shipped weights' "
                     "rationale/label_calibration.json)."),
    ] = None,
    reader: Annotated[
        str,
        typer.Option("--reader", help="The run's reader recipe, when the decision reads sentences with it."),
    ] = "",
    models: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--models", help="Whose pipeline.toml decides what was read (default: shipped)."),
    ] = None,
    data: DataOpt = None,
) -> None:
    """Fit P(label right | evidence) on a run's out-of-fold outputs; write the evidence view with both.

    Writes RUN/BASE/label_calibration.json, RUN/BASE/oof_evidence.jsonl (score it with `sciverify
    evaluate`: both reliability tables) and RUN/BASE/calibration_summary.json (BASE is
    BASE+reader-NAME with --reader).
    """
    from sciverify.data.io import check_output_file
    from sciverify.training.calibrate import calibrate_run

    if out is not None:
        check_output_file(out, "calibrator file")
    result = calibrate_run(
        run, label_base=label_base, reader=reader, data_dir=data, model_dir=models, out=out
    )
    s = result.summary
    written = str(s["source"]).split("/", 1)[-1]
    console.print(f"[green]label calibrator fitted on {s['gold_evidence_candidates']} gold evidence "
                  f"candidates of {s['claims']} claims (label accuracy {s['label_accuracy']:.3f})[/]",
                  highlight=False)
    console.print(f"evidence view (P(evidence) >= {s['show_threshold']}): {s['shown']} abstracts shown, "
                  f"{s['shown_precision']:.3f} of them gold evidence, {s['shown_recall_of_candidates']:.3f} "
                  f"of the gold evidence among the candidates; written to {run / written}",
                  highlight=False)


ServeDbOpt = Annotated[
    Optional[str],  # noqa: UP007, UP045 - typer needs Optional here
    typer.Option("--db", help="Database URL (default: SQLite in the serving data dir)."),
]
ServeDirOpt = Annotated[
    Optional[Path],  # noqa: UP007, UP045
    typer.Option("--data-dir", help="Serving data dir, home of the default SQLite database."),
]


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    index: Annotated[
        Optional[Path],  # noqa: UP007, UP045
        typer.Option("--index", help="Retrieval index directory (default: the SciFact index)."),
    ] = None,
    db: ServeDbOpt = None,
    leaderboard_gold: Annotated[
        Optional[Path],  # noqa: UP007, UP045
        typer.Option("--leaderboard-gold", help="Hidden gold claims file the leaderboard scores against."),
    ] = None,
    leaderboard_claims: Annotated[
        Optional[Path],  # noqa: UP007, UP045
        typer.Option(
            "--leaderboard-claims",
            help="Public claims file: the claim ids every upload must predict (default: the gold's ids).",
        ),
    ] = None,
    private_ids: Annotated[
        Optional[Path],  # noqa: UP007, UP045
        typer.Option(
            "--leaderboard-private-ids",
            help="Claim ids (one a line) kept private until `sciverify leaderboard close`.",
        ),
    ] = None,
    private_fraction: Annotated[
        Optional[float],  # noqa: UP007, UP045
        typer.Option(
            "--leaderboard-private-fraction",
            help="Without --leaderboard-private-ids: share of the hidden gold kept private (default 0.5).",
        ),
    ] = None,
    gold_public: Annotated[
        Optional[bool],  # noqa: UP007, UP045
        typer.Option(
            "--gold-public/--gold-hidden",
            help="Public gold (a dev phase: exact scores and full reports) or hidden (the default).",
        ),
    ] = None,
    data_dir: ServeDirOpt = None,
    config: Annotated[
        Optional[Path],  # noqa: UP007, UP045
        typer.Option("--config", help="pipeline.toml to serve (e.g. judge = \"llm\" with an [llm] section)."),
    ] = None,
) -> None:
    """Serve the fact-checking page, the REST API (/docs) and the leaderboard."""
    from sciverify.serving.server import run_server, settings_from_args

    run_server(settings_from_args(host=host, port=port, index_dir=index, db_url=db,
                                  leaderboard_gold=leaderboard_gold, leaderboard_claims=leaderboard_claims,
                                  leaderboard_private_ids=private_ids,
                                  leaderboard_private_fraction=private_fraction,
                                  gold_public=gold_public, data_dir=data_dir, pipeline_config=config))


leaderboard_app = typer.Typer(help="Manage the leaderboard of `sciverify serve`.", no_args_is_help=True)
app.add_typer(leaderboard_app, name="leaderboard")


@leaderboard_app.command("add-submitter")
def leaderboard_add_submitter(
    name: Annotated[str, typer.Argument(help="Team name shown on the leaderboard.")],
    db: ServeDbOpt = None,
    data_dir: ServeDirOpt = None,
    expires: Annotated[
        Optional[str],  # noqa: UP007, UP045
        typer.Option("--expires", help="Token end: a duration (12h, 30d, 2w) or an ISO date/time (UTC)."),
    ] = None,
) -> None:
    """Register a team and print its API token (shown once; only its sha256 is stored)."""
    from sciverify.serving.server import add_submitter_cli, settings_from_args

    token = add_submitter_cli(settings_from_args(db_url=db, data_dir=data_dir), name, expires)
    console.print(f"submitter {name!r} added. API token (shown once, keep it secret):")
    print(token)


@leaderboard_app.command("revoke")
def leaderboard_revoke(
    name: Annotated[str, typer.Argument(help="Team whose token stops working now.")],
    db: ServeDbOpt = None,
    data_dir: ServeDirOpt = None,
) -> None:
    """Revoke a team's token at once (its uploads stay on the board)."""
    from sciverify.serving.server import revoke_submitter_cli, settings_from_args

    print(revoke_submitter_cli(settings_from_args(db_url=db, data_dir=data_dir), name))


@leaderboard_app.command("list")
def leaderboard_list(db: ServeDbOpt = None, data_dir: ServeDirOpt = None) -> None:
    """List the teams: state (active, expired, revoked), expiry, revocation, uploads."""
    from sciverify.serving.server import list_submitters_cli, settings_from_args

    print(list_submitters_cli(settings_from_args(db_url=db, data_dir=data_dir)))


@leaderboard_app.command("inspect")
def leaderboard_inspect(
    submission_id: Annotated[str, typer.Argument(help="Submission id (as in /leaderboard/submissions/ID).")],
    out: Annotated[
        Optional[Path],  # noqa: UP007, UP045
        typer.Option("--out", help="Write the uploaded file and the stored full report into this directory."),
    ] = None,
    db: ServeDbOpt = None,
    data_dir: ServeDirOpt = None,
) -> None:
    """Operator only: exact scores, released figures and the full report of one upload (never served)."""
    import json

    from sciverify.serving.server import inspect_submission_cli, settings_from_args

    view = inspect_submission_cli(settings_from_args(db_url=db, data_dir=data_dir), submission_id, out)
    print(json.dumps(view, indent=2))


@leaderboard_app.command("close")
def leaderboard_close(db: ServeDbOpt = None, data_dir: ServeDirOpt = None) -> None:
    """Close the open phase: uploads stop, the ranking on the private part goes public."""
    import json

    from sciverify.serving.server import close_phase_cli, settings_from_args

    print(json.dumps(close_phase_cli(settings_from_args(db_url=db, data_dir=data_dir)), indent=2))


def main() -> None:
    """Entry point: run the Typer app, turning expected errors into one clear message."""
    try:
        app(standalone_mode=False)
    except SciverifyError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("[yellow]aborted[/]")
        sys.exit(1)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.ClickException) or (
            callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int)
        ):  # typer may vendor its own click: its usage errors have the same show() and exit_code
            exc.show()  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        raise
