"""The `sciverify` command line: parses arguments, builds configs, calls the library. Nothing else.

Every SciverifyError becomes one clear red line and exit status 2, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

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

DataOpt = Annotated[
    Optional[Path],  # noqa: UP007 - typer needs Optional here
    typer.Option("--data", help="SciFact data directory (default: $SCIVERIFY_DATA, then ../shared/data/scifact)."),
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
    dest: Annotated[Optional[Path], typer.Option("--dest", help="Where to put the files.")] = None,  # noqa: UP007
    url: Annotated[Optional[str], typer.Option("--url", help="Release tarball URL (file:// works).")] = None,  # noqa: UP007
) -> None:
    """Download the official SciFact release and verify every file's sha256 before installing it."""
    from sciverify.data.datasets import OFFICIAL_URL, fetch_scifact

    target = fetch_scifact(dest, url or OFFICIAL_URL)
    console.print(f"[green]SciFact data verified and installed in {target}[/]")


@app.command("instruct-pairs")
def instruct_pairs(
    claims: Annotated[Path, typer.Argument(help="SciFact claims JSONL with evidence and cited_doc_ids.")],
    out: Annotated[Path, typer.Argument(help="Where to write the pairs JSONL (input fields, prompt, expected).")],
    corpus: Annotated[Optional[Path], typer.Option("--corpus", help="Corpus JSONL (default: the data directory's).")] = None,  # noqa: UP007,E501
) -> None:
    """Write one instruction-style gold pair per (claim, cited abstract): prompt plus expected JSON answer."""
    from collections import Counter

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.scoring.instruct import read_instruct_gold, write_instruct_pairs

    pairs = read_instruct_gold(claims, corpus or resolve_data_dir(None).corpus)
    write_instruct_pairs(out, pairs)
    counts = Counter(p.verdict for p in pairs)
    console.print(f"wrote {len(pairs)} pairs to {out} ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})")


@app.command("evaluate-instruct")
def evaluate_instruct(
    gold: Annotated[Path, typer.Argument(help="Pairs JSONL from `instruct-pairs`, or SciFact claims JSONL.")],
    outputs: Annotated[Path, typer.Argument(help="JSONL of {claim_id, doc_id, output: raw model text}.")],
    corpus: Annotated[Optional[Path], typer.Option("--corpus", help="Corpus JSONL, needed when GOLD is a claims file.")] = None,  # noqa: UP007,E501
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Score instruction-style {"verdict", "evidence"} model outputs: label accuracy/F1 and evidence token F1."""
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
                  f"unmatched outputs {len(report.unmatched_output_lines)}")
    console.print(f"label accuracy {report.accuracy:.4f}  macro F1 {report.macro_f1:.4f}  "
                  f"label F1 (SUPPORT/CONTRADICT only) {report.label_f1_non_nei:.4f}")
    for name, c in report.per_class.items():
        console.print(f"  {name:<10} P {c.precision:.4f}  R {c.recall:.4f}  F1 {c.f1:.4f}  "
                      f"gold {c.support}  predicted {c.predicted}")
    console.print(f"evidence token F1: mean over pairs {report.evidence_token_f1:.4f}  "
                  f"over pairs with gold evidence {report.evidence_token_f1_gold_evidence:.4f}  "
                  f"pooled {report.evidence_token_f1_pooled:.4f}")
    for failure in report.failures[:20]:
        where = f"{outputs}:{failure.line}" if failure.line is not None else "(no output)"
        console.print(f"  unparseable {where} claim {failure.claim_id} doc {failure.doc_id}: {failure.reason}",
                      highlight=False, markup=False)
    if len(report.failures) > 20:
        console.print(f"  ... and {len(report.failures) - 20} more (use --format json for all)")


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

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        raise
