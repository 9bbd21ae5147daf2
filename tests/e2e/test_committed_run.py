"""The committed cross-validation run recomputed: the shipped decision's out-of-fold predictions come back
byte for byte from the committed fold outputs (results/cv5), through the decision rule as it is now.

Each fold chose its settings from the whole grid; recomputing over the grid narrowed to the values some
fold chose (in the grid's order) chooses the same ones, since the best of the whole grid is the best of any
part holding it and ties go to the earlier setting either way, and it fits the same emit models; so the
test takes seconds, not the minutes of the full grid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sciverify.data.io import read_claims, write_predictions
from sciverify.decision.grid import DECISION_GRID, READER_GRIDS, fixed_grid
from sciverify.training.cv import SHIPPED_RUN, cross_fit_decision, read_run_outputs
from sciverify.training.cv.outputs import fold_rows
from sciverify.training.cv.reader import attach_reader, reader_file

RUN = Path(__file__).resolve().parents[2] / "results" / "cv5"
READER_KEYS = ("reader_reads", "reader_weight", "label_source", "reader_lists_only")


def _narrowed(chosen: list[dict[str, Any]], role: str | None) -> dict[str, tuple[Any, ...]]:
    grid: dict[str, tuple[Any, ...]] = {
        key: tuple(v for v in values if any(c[key] == v for c in chosen))
        for key, values in DECISION_GRID.items()
    }
    if role is not None:
        picked = [{k: c[k] for k in READER_KEYS if k in c} for c in chosen]
        grid["reader"] = tuple(o for o in READER_GRIDS[role] if o in picked)
    return grid


@pytest.mark.parametrize(
    ("base", "name", "reader", "role"),
    [
        ("mpnet6", "mpnet6", "", None),
        ("mpnet6", "mpnet6+reader-mpnet6-list", "mpnet6", "list"),
        (SHIPPED_RUN.label_base, SHIPPED_RUN.name, SHIPPED_RUN.reader, SHIPPED_RUN.role),
    ],
    ids=["mpnet6", "mpnet6-reader-lists", "shipped"],
)
def test_the_committed_decision_comes_back_byte_for_byte(
    scifact, tmp_path: Path, base: str, name: str, reader: str, role: str | None
) -> None:
    claims = read_claims(scifact.train)
    outputs = read_run_outputs(RUN, claims, base)
    if reader:
        outputs = attach_reader(outputs, fold_rows(RUN, reader_file(reader), range(5)))
    summary = json.loads((RUN / name / "summary.json").read_text())
    preds, per_fold = cross_fit_decision(outputs, 5, _narrowed(summary["chosen_per_fold"], role))
    assert [{k: v for k, v in c.items() if k != "objective_on_other_folds"} for c in per_fold] == [
        {k: v for k, v in c.items() if k != "objective_on_other_folds"} for c in summary["chosen_per_fold"]
    ]
    write_predictions(tmp_path / "tuned.jsonl", preds)
    committed = RUN / name / "oof_predictions_tuned.jsonl"
    assert (tmp_path / "tuned.jsonl").read_bytes() == committed.read_bytes()
    fixed, _ = cross_fit_decision(outputs, 5, fixed_grid())
    write_predictions(tmp_path / "fixed.jsonl", fixed)
    committed = RUN / name / "oof_predictions_fixed.jsonl"
    assert (tmp_path / "fixed.jsonl").read_bytes() == committed.read_bytes()
