"""Rank-based views of a scored run: average precision over confidences, and the label confusion matrix.

Average precision follows the definition used by TAC KBP scorers: rank every predicted abstract of
every claim by its ``confidence`` (highest first; ties keep gold-claim order, then the order in the
prediction), call an abstract relevant when it is correctly labelled *and* rationalized, and take
AP = (sum of precision@k over the ranks k holding a relevant abstract) / (number of gold evidence
abstracts). Gold abstracts never predicted therefore lower AP, as in the recall of the micro metrics.

A confidence is also meant to be read as a probability: of the abstracts predicted with confidence near
0.7, about 70 % should be gold evidence. The reliability table bins the predicted abstracts by confidence
(ten equal-width bins) and sets each bin's mean confidence beside the fraction that are gold evidence
abstracts and the fraction correctly labelled and rationalized; the expected calibration error (ECE) is
the bins' size-weighted mean gap between confidence and the gold-evidence fraction (Guo et al., 2017).

The second number a prediction may carry, ``p_label_correct`` (P(the label is right | the abstract is
evidence)), has its own table: over the predicted abstracts that *are* gold evidence, binned by
``p_label_correct``, the fraction whose label is right; its ECE is the gap to that fraction. When that
table is empty, :func:`label_table_reason` says why, since a reader otherwise cannot tell a file that carries
no ``p_label_correct`` from one whose numbers all sit on abstracts that are not gold evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sciverify.scoring.counts import ClaimJudgement
from sciverify.wording import counted

__all__ = [
    "CONFUSION_COLUMNS",
    "CONFUSION_ROWS",
    "Confusion",
    "RankingResult",
    "ReliabilityBin",
    "confusion_matrix",
    "label_reliability",
    "label_table_reason",
    "rank_abstracts",
    "reliability",
]


@dataclass(frozen=True)
class ReliabilityBin:
    """Predicted abstracts whose confidence lies in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    n: int
    mean_confidence: float
    evidence_rate: float
    correct_rate: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "mean_confidence": self.mean_confidence,
            "evidence_rate": self.evidence_rate,
            "correct_rate": self.correct_rate,
        }


def reliability(
    judgements: Sequence[ClaimJudgement], bins: int = 10
) -> tuple[tuple[ReliabilityBin, ...], float | None]:
    """The reliability table over non-empty bins and the ECE (None when no abstract has a confidence)."""
    rows = [
        (float(a.entry.confidence), a.in_gold, a.rationalized)
        for j in judgements
        for a in j.abstracts
        if a.entry.confidence is not None
    ]
    return _binned([(c, float(e), float(r), float(e)) for c, e, r in rows], bins)


def label_reliability(
    judgements: Sequence[ClaimJudgement], bins: int = 10
) -> tuple[tuple[ReliabilityBin, ...], float | None]:
    """The reliability table of ``p_label_correct`` over predicted gold evidence abstracts, and its ECE.

    Each bin's ``evidence_rate`` is 1.0 (only gold evidence is binned) and ``correct_rate`` is the
    fraction correctly labelled, the rate ``p_label_correct`` predicts. None when no predicted gold
    evidence abstract carries the number.
    """
    rows = [
        (float(a.entry.p_label_correct), a.label_ok)
        for j in judgements
        for a in j.abstracts
        if a.entry.p_label_correct is not None and a.in_gold and a.entry.valid
    ]
    return _binned([(c, 1.0, float(ok), float(ok)) for c, ok in rows], bins)


#: Where the second number is found, for a file that carries none: a cross-validation run fits its label
#: calibrator after its decision, so the decision's predictions cannot carry it.
LABEL_NUMBER_SOURCES = (
    "`sciverify predict` writes it when a label calibrator ships; a cross-validation run's "
    "oof_predictions.jsonl has none (its decision is made before its label calibrator is fitted), and the "
    "same run's oof_evidence.jsonl has both numbers: score that file for this table"
)


def label_table_reason(judgements: Sequence[ClaimJudgement]) -> str | None:
    """Why the ``p_label_correct`` table is empty, in one line (None when it is not): the file carries no
    such number, or none of the abstracts that carry it is gold evidence (the table bins only those)."""
    predicted = [a for j in judgements for a in j.abstracts]
    carrying = [a for a in predicted if a.entry.p_label_correct is not None]
    if any(a.in_gold and a.entry.valid for a in carrying):
        return None
    if not predicted:
        return "no predicted abstracts"
    if not carrying:
        return f"none of the {counted(len(predicted), 'predicted abstract')} carries 'p_label_correct': " \
            f"{LABEL_NUMBER_SOURCES}"
    carry = "carries" if len(carrying) == 1 else "carry"
    return (
        f"{counted(len(carrying), 'predicted abstract')} {carry} 'p_label_correct', none of them a gold "
        "evidence abstract (the table bins only gold evidence: the share labelled right)"
    )


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
    reliability: tuple[ReliabilityBin, ...] = ()
    ece: float | None = None
    label_reliability: tuple[ReliabilityBin, ...] = ()
    label_ece: float | None = None
    #: Why :attr:`label_reliability` is empty (:func:`label_table_reason`); None when it is not.
    label_reason: str | None = None

    def as_dict(self, *, with_curve: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "average_precision": self.average_precision,
            "n_ranked": self.n_ranked,
            "n_gold_abstracts": self.n_relevant,
            "reason": self.reason,
            "ece": self.ece,
            "reliability": [b.as_dict() for b in self.reliability],
            "label_ece": self.label_ece,
            "label_reliability": [b.as_dict() for b in self.label_reliability],
            "label_reason": self.label_reason,
        }
        if with_curve:
            out["curve"] = [{"recall": r, "precision": p, "confidence": c} for r, p, c in self.curve]
        return out


def rank_abstracts(judgements: Sequence[ClaimJudgement]) -> RankingResult:
    """Average precision of all predicted abstracts ranked by confidence (see module docstring), and both
    reliability tables; the ``p_label_correct`` table is filled whenever the numbers are there, with or
    without confidences, and says why when it is empty."""
    label_table, label_ece = label_reliability(judgements)
    return replace(_rank_by_confidence(judgements), label_reliability=label_table, label_ece=label_ece,
                   label_reason=label_table_reason(judgements))


def _rank_by_confidence(judgements: Sequence[ClaimJudgement]) -> RankingResult:
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
    table, ece = reliability(judgements)
    return RankingResult(total / n_gold, len(items), n_gold, tuple(curve), None, table, ece)


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


def _binned(
    rows: Sequence[tuple[float, float, float, float]], bins: int
) -> tuple[tuple[ReliabilityBin, ...], float | None]:
    """Rows of (confidence, is evidence, is correct, what the confidence predicts) in equal-width bins
    (the last includes 1.0), with the expected calibration error against the last column."""
    if not rows:
        return (), None
    out = []
    ece = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [r for r in rows if low <= r[0] < high or (b == bins - 1 and r[0] >= high)]
        if not inside:
            continue
        n = len(inside)
        conf, evidence, correct, target = (sum(r[k] for r in inside) / n for k in range(4))
        ece += n / len(rows) * abs(conf - target)
        out.append(ReliabilityBin(low, high, n, conf, evidence, correct))
    return tuple(out), ece
