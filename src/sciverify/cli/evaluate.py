"""Scoring: ``sciverify evaluate`` (one system, like the leaderboard), ``compare`` (two systems, paired
bootstrap) and ``oracle`` (the oracle-abstract rows)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import app, console, err_console
from sciverify.cli.options import FormatOpt

__all__ = ["compare", "evaluate", "oracle"]

CapOpt = Annotated[
    str, typer.Option("--cap", help="Rationale cap: 'leaderboard' (max(3, smallest gold set)) or 3.")
]


def _check_choices(fmt: str, cap: str) -> None:
    """``--format`` and ``--cap`` take exactly their documented values."""
    from sciverify.errors import ConfigError

    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be 'text' or 'json', got {fmt!r}")
    if cap not in ("leaderboard", "3"):
        raise ConfigError(f"--cap must be 'leaderboard' or 3, got {cap!r}")


def _warn(lines: list[str]) -> None:
    """Problems on stderr: the first line in yellow, the rest plain (they quote the user's files)."""
    for n, line in enumerate(lines):
        err_console.print(line, style="yellow" if n == 0 else None, highlight=False, markup=False,
                          soft_wrap=True)


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
                     "report.html here (created if missing)."),
    ] = None,
    fmt: FormatOpt = "text",
    cap: CapOpt = "leaderboard",
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

    from sciverify.scoring import evaluate_files, print_summary, write_outputs
    from sciverify.scoring.files import written_lines
    from sciverify.scoring.outputs import metrics_payload, problems_preview

    _check_choices(fmt, cap)
    if outdir is not None:
        from sciverify.scoring.files import check_output_dir

        check_output_dir(outdir, inputs=[p for p in (gold, pred, corpus) if p is not None])
    result = evaluate_files(gold, pred, corpus, strict=strict, cap=cap, n_boot=0 if no_bootstrap else n_boot,
                            seed=seed, invocation="sciverify " + " ".join(sys.argv[1:]))
    written = write_outputs(result, outdir, public=public) if outdir is not None else {}
    if fmt == "json":
        sys.stdout.write(orjson.dumps(metrics_payload(result), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_summary(result, console)
    # on stderr, so that --format json leaves stdout one JSON document
    for line in written_lines(written):
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    _warn(problems_preview(result, outdir / "errlog" if outdir is not None else None))


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
    fmt: FormatOpt = "text",
) -> None:
    """Paired bootstrap comparison of two systems: A - B per metric, 95% interval and two-sided p-value."""
    import orjson

    from sciverify.scoring import compare_files, comparison_dict
    from sciverify.scoring.compare import print_comparison, problem_notes

    _check_choices(fmt, cap)
    result = compare_files(gold, a, b, corpus, strict=strict, cap=cap, n_boot=n_boot, seed=seed)
    if fmt == "json":
        sys.stdout.write(orjson.dumps(comparison_dict(result), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_comparison(result, console, a.name, b.name)
    for line in problem_notes(result):
        err_console.print(line, style="yellow", highlight=False, markup=False, soft_wrap=True)


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
    from sciverify.data.output_checks import check_output_file
    from sciverify.errors import ConfigError
    from sciverify.scoring import load_gold, oracle_predictions

    if rationales not in ("gold", "none"):
        raise ConfigError(f"--rationales must be 'gold' or 'none', got {rationales!r}")
    if out is not None:
        check_output_file(out, "predictions file", inputs=[gold])
    preds = oracle_predictions(load_gold(gold), rationales)  # type: ignore[arg-type]
    if out is None:
        for p in preds:
            sys.stdout.write(orjson.dumps(prediction_to_json(p)).decode() + "\n")
    else:
        write_predictions(out, preds)
        err_console.print(f"wrote {len(preds)} oracle predictions to {out}", style="green", markup=False)
