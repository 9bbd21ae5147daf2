"""SciFact precision / recall / F1 from count totals: micro (leaderboard) and macro averages.

The four metric families of Wadden et al. (2020, §4) share denominators:

===========================  ===============================  ====================  ===================
family                       correct                          retrieved             relevant
===========================  ===============================  ====================  ===================
abstract_label_only          abstract_correct_label_only      abstract_retrieved    abstract_relevant
abstract_rationalized        abstract_correct_rationalized    abstract_retrieved    abstract_relevant
sentence_selection           sentence_correct_selection       sentence_retrieved    sentence_relevant
sentence_label               sentence_correct_label           sentence_retrieved    sentence_relevant
===========================  ===============================  ====================  ===================

precision = correct / retrieved, recall = correct / relevant, f1 = 2 * precision * recall /
(precision + recall), each 0.0 when its denominator is 0, computed in exactly that float order so the
numbers equal the leaderboard's to the last bit. The same formulas run element-wise on arrays of
totals, which is what makes bootstrap resampling a vector operation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sciverify.scoring.counts import COUNT_COLUMNS

__all__ = [
    "FAMILIES",
    "MEASURES",
    "MacroPRF",
    "PRF",
    "family_columns",
    "macro_metrics",
    "metric_arrays",
    "micro_metrics",
    "prf",
]

#: The four metric families, in leaderboard order.
FAMILIES: tuple[str, ...] = (
    "abstract_label_only",
    "abstract_rationalized",
    "sentence_selection",
    "sentence_label",
)
MEASURES: tuple[str, ...] = ("precision", "recall", "f1")

_COLUMNS = {
    "abstract_label_only": ("abstract_correct_label_only", "abstract_retrieved", "abstract_relevant"),
    "abstract_rationalized": ("abstract_correct_rationalized", "abstract_retrieved", "abstract_relevant"),
    "sentence_selection": ("sentence_correct_selection", "sentence_retrieved", "sentence_relevant"),
    "sentence_label": ("sentence_correct_label", "sentence_retrieved", "sentence_relevant"),
}


def family_columns(family: str) -> tuple[int, int, int]:
    """Column indices (correct, retrieved, relevant) of a family in the count matrix."""
    correct, retrieved, relevant = (COUNT_COLUMNS.index(c) for c in _COLUMNS[family])
    return correct, retrieved, relevant


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of one family."""

    precision: float
    recall: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True)
class MacroPRF:
    """Mean per-claim precision, recall and F1 over ``n_claims`` claims (see :func:`macro_metrics`)."""

    precision: float
    recall: float
    f1: float
    n_claims: int

    def as_dict(self) -> dict[str, float | int]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1, "n_claims": self.n_claims}


def _safe_div(num: float, den: float) -> float:
    return 0.0 if den == 0 else num / den


def prf(correct: int, retrieved: int, relevant: int) -> PRF:
    """Scalar precision/recall/F1, with the leaderboard's zero conventions and float order."""
    precision = _safe_div(correct, retrieved)
    recall = _safe_div(correct, relevant)
    f1 = _safe_div(2 * precision * recall, precision + recall)
    return PRF(float(precision), float(recall), float(f1))


def _div(num: npt.NDArray[np.float64], den: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def metric_arrays(
    totals: npt.NDArray[np.floating | np.integer],
) -> dict[str, dict[str, npt.NDArray[np.float64]]]:
    """Element-wise metrics for any stack of count totals.

    Shapes: ``totals`` is ``(..., len(COUNT_COLUMNS))``; every returned array is ``(...)``.
    Integer totals below 2**53 are exact in float64, and IEEE division and multiplication are
    correctly rounded, so each element equals what :func:`prf` gives for the same totals.
    """
    t = np.asarray(totals, dtype=np.float64)
    out: dict[str, dict[str, npt.NDArray[np.float64]]] = {}
    for family in FAMILIES:
        c, ret, rel = family_columns(family)
        precision = _div(t[..., c], t[..., ret])
        recall = _div(t[..., c], t[..., rel])
        f1 = _div(2 * precision * recall, precision + recall)
        out[family] = {"precision": precision, "recall": recall, "f1": f1}
    return out


def micro_metrics(counts: npt.NDArray[np.integer]) -> dict[str, PRF]:
    """The leaderboard metrics: P/R/F1 of the column sums. Shapes: ``counts`` is ``(n_claims, k)``."""
    totals = [int(x) for x in np.asarray(counts, dtype=np.int64).sum(axis=0)]
    result = {}
    for family in FAMILIES:
        c, ret, rel = family_columns(family)
        result[family] = prf(totals[c], totals[ret], totals[rel])
    return result


def macro_metrics(counts: npt.NDArray[np.integer]) -> dict[str, MacroPRF]:
    """Mean of per-claim P/R/F1, over the claims that have gold evidence at that level.

    Abstract families average over claims with at least one gold evidence abstract; sentence
    families over claims with at least one gold rationale sentence. Claims without gold evidence
    (NOT_ENOUGH_INFO claims) are left out, because their recall is undefined; a claim in the
    average that predicts nothing contributes precision, recall and F1 of 0. When no claim
    qualifies the averages are 0 with ``n_claims == 0``.
    """
    c = np.asarray(counts, dtype=np.int64)
    per_claim = metric_arrays(c)
    result = {}
    for family in FAMILIES:
        _, _, rel = family_columns(family)
        mask = c[:, rel] > 0 if c.size else np.zeros(0, dtype=bool)
        n = int(mask.sum())
        values = {m: float(per_claim[family][m][mask].mean()) if n else 0.0 for m in MEASURES}
        result[family] = MacroPRF(values["precision"], values["recall"], values["f1"], n)
    return result
