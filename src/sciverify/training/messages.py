"""What ``sciverify train`` and ``sciverify calibrate`` print about a finished run (Rich markup: the
first line of each is green; paths and names are escaped)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.markup import escape

__all__ = ["calibration_lines", "cv_lines"]


def cv_lines(summary: Mapping[str, Any], out_dir: Path) -> list[str]:
    """Where the cross-fitted run is, how many claims it scored, and each tuned out-of-fold F1."""
    lines = [f"[green]cross-fitted run in {escape(str(out_dir))}[/] ({summary['claims']} claims scored)"]
    for name, row in summary["tuned"].items():
        low, high = row["f1_ci95"]
        lines.append(f"  out of fold {escape(name):<24} F1 {row['f1']:.3f}  (95% CI {low:.3f}-{high:.3f})")
    return lines


def calibration_lines(s: Mapping[str, Any], run: Path) -> list[str]:
    """The label calibrator's fit and the evidence view it implies (``s``: ``calibration_summary.json``)."""
    written = str(s["source"]).split("/", 1)[-1]
    return [
        f"[green]label calibrator fitted on {s['gold_evidence_candidates']} gold evidence "
        f"candidates of {s['claims']} claims (label accuracy {s['label_accuracy']:.3f})[/]",
        f"evidence view (P(evidence) >= {s['show_threshold']}): {s['shown']} abstracts shown, "
        f"{s['shown_precision']:.3f} of them gold evidence, {s['shown_recall_of_candidates']:.3f} "
        f"of the gold evidence among the candidates; written to {escape(str(run / written))}",
    ]
