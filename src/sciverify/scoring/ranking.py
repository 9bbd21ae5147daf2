"""Rank-based views of a scored run: average precision over confidences, and the label confusion matrix.

Average precision follows the definition used by TAC KBP scorers: rank every predicted abstract of
every claim by its ``confidence`` (highest first; ties keep gold-claim order, then the order in the
prediction), call an abstract relevant when it is correctly labelled *and* rationalized, and take
AP = (sum of precision@k over the ranks k holding a relevant abstract) / (number of gold evidence
abstracts). Gold abstracts never predicted therefore lower AP, as in the recall of the micro metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sciverify.scoring.counts import ClaimJudgement

__all__ = [
    "CONFUSION_COLUMNS",
    "CONFUSION_ROWS",
    "Confusion",
    "RankingResult",
    "confusion_matrix",
    "rank_abstracts",
]

CONFUSION_ROWS: tuple[str, ...] = ("SUPPORT", "CONTRADICT", "NEI (not gold)")
CONFUSION_COLUMNS: tuple[str, ...] = ("SUPPORT", "CONTRADICT", "invalid entry", "not predicted")


@dataclass(frozen=True)
class RankingResult:
    """AP and the precision-recall curve, or ``reason`` why they cannot be computed.

    ``curve`` holds one ``(recall, precision, confidence)`` point per rank.
    """

    average_precision: float | None
    n_ranked: int
    n_relevant: int
    curve: tuple[tuple[float, float, float], ...]
    reason: str | None = None

    def as_dict(self, *, with_curve: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "average_precision": self.average_precision,
            "n_ranked": self.n_ranked,
            "n_gold_abstracts": self.n_relevant,
            "reason": self.reason,
        }
        if with_curve:
            out["curve"] = [{"recall": r, "precision": p, "confidence": c} for r, p, c in self.curve]
        return out


def rank_abstracts(judgements: Sequence[ClaimJudgement]) -> RankingResult:
    """Average precision of all predicted abstracts ranked by confidence (see module docstring)."""
    items = [(a.entry.confidence, a.rationalized) for j in judgements for a in j.abstracts]
    n_gold = sum(len(j.gold.evidence) for j in judgements)
    if not items:
        return RankingResult(None, 0, n_gold, (), "no predicted abstracts")
    missing = sum(1 for conf, _ in items if conf is None)
    if missing:
        return RankingResult(
            None,
            0,
            n_gold,
            (),
            f"no confidences: {missing} of {len(items)} predicted abstracts have no 'confidence'",
        )
    if n_gold == 0:
        return RankingResult(None, 0, 0, (), "the gold file has no evidence abstracts")
    order = sorted(range(len(items)), key=lambda i: -float(items[i][0]))  # type: ignore[arg-type]
    hits = 0
    total = 0.0
    curve = []
    for rank, i in enumerate(order, start=1):
        conf, relevant = items[i]
        if relevant:
            hits += 1
            total += hits / rank
        curve.append((hits / n_gold, hits / rank, float(conf)))  # type: ignore[arg-type]
    return RankingResult(total / n_gold, len(items), n_gold, tuple(curve))


@dataclass(frozen=True)
class Confusion:
    """Counts of (claim, abstract) pairs by gold label (rows) and predicted label (columns).

    Rows: the gold label of a gold evidence abstract, or "NEI (not gold)" for a predicted abstract
    that is not gold evidence. Columns: the predicted label, "invalid entry" for an entry that could
    not be scored, or "not predicted" for a gold abstract the prediction left out. The
    (NEI, not predicted) cell is every other abstract of the corpus and is left empty (None).
    """

    cells: tuple[tuple[int | None, ...], ...]

    def as_dict(self) -> dict[str, dict[str, int | None]]:
        return {
            r: dict(zip(CONFUSION_COLUMNS, row, strict=True))
            for r, row in zip(CONFUSION_ROWS, self.cells, strict=True)
        }


def confusion_matrix(judgements: Sequence[ClaimJudgement]) -> Confusion:
    """Tally :class:`Confusion` over all claims."""
    grid = [[0] * len(CONFUSION_COLUMNS) for _ in CONFUSION_ROWS]
    for j in judgements:
        for a in j.abstracts:
            row = CONFUSION_ROWS.index(a.gold_label) if a.gold_label in ("SUPPORT", "CONTRADICT") else 2
            col = CONFUSION_COLUMNS.index(a.entry.label) if a.entry.valid else 2
            grid[row][col] += 1
        for key in j.missed:
            label = j.gold.gold_label(key)
            grid[CONFUSION_ROWS.index(label.value if label else "SUPPORT")][3] += 1
    cells: list[tuple[int | None, ...]] = [tuple(r) for r in grid]
    cells[2] = (*grid[2][:3], None)
    return Confusion(tuple(cells))
