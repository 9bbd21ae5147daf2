"""The figures a cross-fitted run reports: F1s with bootstrap intervals, the paired test of the tuned
decision against the fixed default, and the label model's accuracy on gold evidence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim, Prediction

__all__ = ["gold_label_accuracy", "score_summary", "tuned_against_fixed"]


def score_summary(claims: Sequence[Claim], preds: Sequence[Prediction], seed: int) -> dict[str, Any]:
    """Precision, recall and F1 of every metric family, with the F1's 95 % bootstrap interval."""
    from sciverify.scoring import score
    from sciverify.scoring.bootstrap import bootstrap

    report = score(claims, preds)
    boot = bootstrap(report.counts, n_boot=10_000, seed=seed)
    out: dict[str, Any] = {}
    for family, prf in report.aggregate.items():
        ci = boot.stats[family]["f1"]
        out[family] = {
            "precision": round(prf.precision, 4),
            "recall": round(prf.recall, 4),
            "f1": round(prf.f1, 4),
            "f1_ci95": [round(ci.low, 4), round(ci.high, 4)],
        }
    return out


def tuned_against_fixed(
    claims: Sequence[Claim], tuned: Sequence[Prediction], fixed: Sequence[Prediction], seed: int
) -> dict[str, Any]:
    """Paired bootstrap (10,000 resamples of claims) of the cross-fitted tuned decision against the fixed
    default, on each headline F1 and on their mean (the objective the tuning maximises). The tuned
    settings keep their place only if the objective's 95 % interval of the difference lies above zero."""
    from sciverify.scoring import paired_bootstrap, score
    from sciverify.scoring.bootstrap import bootstrap_totals, resample_indices
    from sciverify.scoring.metrics import metric_arrays

    a, b = score(claims, tuned), score(claims, fixed)
    paired = paired_bootstrap(a, b, n_boot=10_000, seed=seed)
    out: dict[str, Any] = {}
    for family in ("abstract_rationalized", "sentence_label"):
        st = paired.stats[family]["f1"]
        out[family] = {
            "diff": round(st.diff, 4),
            "ci95": [round(st.low, 4), round(st.high, 4)],
            "p_value": round(st.p_value, 4),
        }
    idx = resample_indices(len(claims), 10_000, seed)

    def objective(counts: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        m = metric_arrays(counts)
        return np.asarray((m["abstract_rationalized"]["f1"] + m["sentence_label"]["f1"]) / 2)

    diff = objective(bootstrap_totals(a.counts, idx)) - objective(bootstrap_totals(b.counts, idx))
    low, high = np.percentile(diff, [2.5, 97.5])
    point = float(objective(a.counts.sum(0)) - objective(b.counts.sum(0)))
    out["objective"] = {"diff": round(point, 4), "ci95": [round(float(low), 4), round(float(high), 4)]}
    out["tuned_wins"] = bool(low > 0)
    return out


def gold_label_accuracy(label_rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The label model's accuracy (and SUPPORT/CONTRADICT confusion) on gold evidence abstracts read with
    their gold rationales, from the ``gold`` part of the label files."""
    from sciverify.models.label import LABEL_ORDER

    names = [x.value for x in LABEL_ORDER]
    total = right = 0
    confusion = {a: dict.fromkeys(names, 0) for a in names[:2]}
    for row in label_rows:
        for g in row["gold"].values():
            pred = names[int(np.argmax(g["probs"]))]
            confusion[g["label"]][pred] += 1
            total += 1
            right += int(pred == g["label"])
    return {"evidence_abstracts": total, "accuracy": round(right / max(1, total), 4), "confusion": confusion}
