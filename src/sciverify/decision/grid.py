"""The decision settings the cross-validation chooses among, and the fixed default the choice must beat.

The grid is part of the decision: a new setting of :class:`~sciverify.decision.settings.DecisionConfig`
reaches the cross-validation by a value here (:func:`sciverify.training.cv.decision.choose_decision`
searches it inside the folds).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DECISION_GRID",
    "FIXED_DECISION",
    "READER_BOTH_OPTIONS",
    "READER_EVERY_OPTIONS",
    "READER_GRIDS",
    "READER_LIST_OPTIONS",
    "READER_OPTIONS",
    "fixed_grid",
]

#: The decision settings chosen inside the folds: the sentence threshold (what is listed, and whether the
#: label model reads the second-best sentence), the emit threshold on the emit model's P(evidence) and
#: the most abstracts emitted per claim.
DECISION_GRID: dict[str, tuple[Any, ...]] = {
    "sentence_threshold": (0.2, 0.3, 0.4, 0.5, 0.6),
    "emit_threshold": tuple(round(0.1 + 0.05 * i, 2) for i in range(15)),
    "max_emitted": (1, 2, 3),
}
#: The fixed, documented default the tuned decision must beat under the paired bootstrap (the 95 % interval
#: of the difference in the mean of the two headline F1s above zero) to ship instead: a sentence
#: is listed when the selector gives it even odds (VeriSci's 0.5), an abstract is emitted when the emit
#: model thinks evidence likelier than not, and a claim gets its one most confident abstract.
FIXED_DECISION: dict[str, Any] = {"sentence_threshold": 0.5, "emit_threshold": 0.5, "max_emitted": 1}
#: With a reader in the run, how it is used is chosen inside the folds too (grid key ``"reader"``): not at
#: all (today's pipeline); or reading the selector's best 3 or 5 sentences of each candidate, its
#: P(rationale) blended into their scores with weight 0, 0.5 or 1, with the label from the reader or from
#: the label model beside it. The label model always reads the selector's own best one or two sentences
#: (what its stored outputs hold), so a blend changes what is listed and emitted, not what it reads. Every
#: option with the reader gives the emit model the reader's features.
READER_OPTIONS: tuple[dict[str, Any], ...] = (
    {},
    *(
        {"reader_reads": n, "reader_weight": w, "label_source": source}
        for source in ("reader", "model")
        for n in (3, 5)
        for w in (0.0, 0.5, 1.0)
    ),
)
#: The second grid (``--reader-role list``), declared after the first was seen to lose out of domain
#: (docs/cross-validation.md): not at all, or the reader reading the selector's best 3 or 5 sentences
#: of the abstracts emitted without it, its P(rationale) blended in with weight 0.5 or 1 to choose which
#: sentences they list (``reader_lists_only``: the label model labels, the emit model does not hear it).
READER_LIST_OPTIONS: tuple[dict[str, Any], ...] = (
    {},
    *(
        {"reader_reads": n, "reader_weight": w, "reader_lists_only": True}
        for n in (3, 5)
        for w in (0.5, 1.0)
    ),
)
#: The third grid (``--reader-role every``, written with the rule of candidate (R), before its folds): every
#: option of the two grids above, and the label from both stance models, the label model's answer averaged
#: with the reader's stance over the same sentences (``label_source = "both"``), the reader reading the
#: selector's best 3 or 5 sentences with its P(rationale) blended in with weight 0, 0.5 or 1. Twenty-three
#: options, "no reader" among them.
READER_BOTH_OPTIONS: tuple[dict[str, Any], ...] = tuple(
    {"reader_reads": n, "reader_weight": w, "label_source": "both"} for n in (3, 5) for w in (0.0, 0.5, 1.0)
)
READER_EVERY_OPTIONS: tuple[dict[str, Any], ...] = (
    *READER_OPTIONS,
    *READER_LIST_OPTIONS[1:],
    *READER_BOTH_OPTIONS,
)
#: The grid of each reader role (:data:`sciverify.training.cv.plan.READER_ROLES`).
READER_GRIDS: dict[str, tuple[dict[str, Any], ...]] = {
    "all": READER_OPTIONS,
    "list": READER_LIST_OPTIONS,
    "every": READER_EVERY_OPTIONS,
}


def fixed_grid() -> dict[str, tuple[Any, ...]]:
    """:data:`FIXED_DECISION` as a one-point grid."""
    return {name: (value,) for name, value in FIXED_DECISION.items()}
