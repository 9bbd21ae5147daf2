"""``sciverify data``: where the SciFact data is read from, and fetching the official release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import console, data_app
from sciverify.cli.options import DataOpt

__all__ = ["data_fetch", "data_where"]


@data_app.command("where")
def data_where(data: DataOpt = None) -> None:
    """Print the data directory sciverify will read, and check each official file's sha256."""
    from sciverify.data.datasets import data_dir_lines, resolve_data_dir

    for line in data_dir_lines(resolve_data_dir(data).root):
        console.print(line, highlight=False)


@data_app.command("fetch")
def data_fetch(
    dest: Annotated[Path | None, typer.Option("--dest", help="Where to put the files.")] = None,
    url: Annotated[str | None, typer.Option("--url", help="Release tarball URL (file:// works).")] = None,
) -> None:
    """Download the official SciFact release and verify every file's sha256 before installing it."""
    from rich.markup import escape

    from sciverify.data.datasets import OFFICIAL_URL, fetch_scifact

    target = fetch_scifact(dest, url or OFFICIAL_URL)
    console.print(f"[green]SciFact data verified and installed in {escape(str(target))}[/]")
