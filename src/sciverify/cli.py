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
