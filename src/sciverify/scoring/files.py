"""Write one evaluation's output files: the text views of :mod:`sciverify.scoring.outputs` and the HTML
report of :mod:`sciverify.scoring.html`, side by side in one directory."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson

from sciverify.data.io import write_text_atomic
from sciverify.data.output_checks import check_not_an_input
from sciverify.data.output_checks import check_output_dir as check_output_dir_of
from sciverify.errors import DataFormatError
from sciverify.scoring.html import render_html
from sciverify.scoring.outputs import (
    confidence_text,
    debug_text,
    errlog_text,
    metrics_dict,
    params_text,
    summary_text,
)
from sciverify.scoring.report import EvaluationResult
from sciverify.wording import counted

__all__ = ["OUTPUT_FILES", "OUTPUT_FILE_HELP", "check_output_dir", "written_lines", "write_outputs"]

OUTPUT_FILES = ("summary", "debug", "confidence", "params", "errlog", "metrics.json", "report.html")
#: What each file holds, in a few words: `sciverify evaluate -o DIR` lists the files it wrote with these,
#: so a reader knows which one to open.
OUTPUT_FILE_HELP = {
    "summary": "the metric tables, counts and both reliability tables, as text",
    "debug": "every claim judged, abstract by abstract and sentence by sentence",
    "confidence": "each metric's bootstrap mean, standard deviation and interval",
    "params": "how to reproduce the run: command, versions, sha256 of each input",
    "errlog": "every problem in the predictions, with file and line",
    "metrics.json": "all the figures, for programs",
    "report.html": "the same as a page to read in a browser",
}


def check_output_dir(outdir: str | Path, *, inputs: Iterable[str | Path | None] = ()) -> Path:
    """Check, before scoring, that ``outdir`` can hold the output files.

    Defined behaviour: a missing directory is created with its parents when the outputs are written (not
    before: a failed evaluation leaves nothing); in an existing directory the files of
    :data:`OUTPUT_FILES` are replaced, one by one atomically, and any other file is left alone. A path
    that is a file, a place nobody can write, or a directory where an output would replace one of
    ``inputs`` is refused.

    Raises:
        DataFormatError: naming the path and what is wrong with it.
    """
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise DataFormatError(
            "exists and is a file; -o takes a directory (it will hold summary, debug, confidence, params, "
            "errlog, metrics.json, report.html)",
            out,
        )
    for name in OUTPUT_FILES:
        check_not_an_input(out / name, inputs)
    return check_output_dir_of(out, "-o directory")


def write_outputs(result: EvaluationResult, outdir: str | Path, *, public: bool = False) -> dict[str, Path]:
    """Write every output file into ``outdir`` (created if needed); returns name -> path.

    Files already in ``outdir`` with the names of :data:`OUTPUT_FILES` are replaced (see
    :func:`check_output_dir`).

    With ``public=True`` the ``debug`` file is not written and ``metrics.json``/``report.html``
    hold no per-claim information.
    """
    out = Path(outdir)
    texts = {
        "summary": summary_text(result, public=public),
        "confidence": confidence_text(result),
        "params": params_text(result, public=public),
        "errlog": errlog_text(result, public=public),
        "metrics.json": orjson.dumps(metrics_dict(result, public=public), option=orjson.OPT_INDENT_2).decode()
        + "\n",
        "report.html": render_html(result, public=public),
    }
    if not public:
        texts["debug"] = debug_text(result)
    written = {}
    for name, text in texts.items():
        path = out / name
        write_text_atomic(path, text)
        written[name] = path
    return written


def written_lines(written: dict[str, Path]) -> list[str]:
    """``wrote N files to DIR:`` then one line per file, its name and what it holds, in
    :data:`OUTPUT_FILES` order."""
    if not written:
        return []
    where = next(iter(written.values())).parent
    names = sorted(written, key=lambda n: OUTPUT_FILES.index(n) if n in OUTPUT_FILES else len(OUTPUT_FILES))
    width = max(len(name) for name in names)
    return [f"wrote {counted(len(names), 'file')} to {where}:"] + [
        f"  {name:<{width}}  {OUTPUT_FILE_HELP.get(name, '')}".rstrip() for name in names
    ]
