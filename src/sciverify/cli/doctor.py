"""``sciverify doctor``: whether the models give their right answers on this CPU, and where the index
came from."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from sciverify.cli._app import app, console
from sciverify.cli.options import IndexDirOpt, ModelsDirOpt

__all__ = ["doctor"]


@app.command("doctor")
def doctor(
    models: ModelsDirOpt = None,
    index: IndexDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object instead of lines.")] = False,
    no_index: Annotated[bool, typer.Option("--no-index", help="Check the models only.")] = False,
) -> None:
    """Print the CPU's features, onnxruntime's version, each model's canaries and the index's provenance.

    Exit status 1 when a model misses its canaries on this CPU or the index's vectors are not this
    embedder's (docs/cpu-conformance.md).
    """
    from sciverify.pipeline.doctor import diagnose

    report = diagnose(models, index, with_index=not no_index)
    if as_json:
        console.print_json(json.dumps(report.summary()))
    else:
        for line in report.lines():
            console.print(line, highlight=False, markup=False)
    if not report.ok:
        raise typer.Exit(1)
