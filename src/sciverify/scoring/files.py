"""Write one evaluation's output files: the text views of :mod:`sciverify.scoring.outputs` and the HTML
report of :mod:`sciverify.scoring.html`, side by side in one directory."""

from __future__ import annotations

from pathlib import Path

import orjson

from sciverify.data.io import write_text_atomic
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

__all__ = ["OUTPUT_FILES", "write_outputs"]

OUTPUT_FILES = ("summary", "debug", "confidence", "params", "errlog", "metrics.json", "report.html")


def write_outputs(result: EvaluationResult, outdir: str | Path, *, public: bool = False) -> dict[str, Path]:
    """Write every output file into ``outdir`` (created if needed); returns name -> path.

    With ``public=True`` the ``debug`` file is not written and ``metrics.json``/``report.html``
    hold no per-claim information.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
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
