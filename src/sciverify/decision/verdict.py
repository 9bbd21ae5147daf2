"""The overall verdict: each shown paper weighs what the models say of it; one side must clearly outweigh.

Counting papers lets a weak, off-topic paper turn a clear claim into "conflicting": a paper at
P(evidence) 0.31 counted as much as one at 0.9. So each paper weighs

    weight = P(evidence) x P(right side | evidence)

the chance that it is evidence *and* on the side it is shown on (both calibrated out of fold,
:mod:`sciverify.models.calibration`; a missing number counts as 1, so the LLM judge, which gives none,
counts papers). The weights of a side add up, and a side wins only when its weight is at least
:data:`WIN_RATIO` times the other's; otherwise the verdict is *conflicting*. No paper shown: *not enough
evidence*. docs/evidence.md measures the weighing out of fold (``benchmarks/verdict_rule.py``).

Two settings guard against a confident wrong answer, each chosen inside the cross-validation's folds by a
rule written before its figures (docs/cross-validation.md, "Direction unclear" and a verdict that needs
weight; ``benchmarks/direction_rule.py`` prints what they did out of fold):

* :data:`UNCLEAR_BELOW`: a paper whose P(right side | evidence) is below it is shown as evidence with no
  side ("direction unclear") and weighs nothing; a wrong side quoted costs a fact-checker more than no
  side.
* :data:`MIN_WEIGHT`: when the heavier side weighs less than this, the verdict is *not enough evidence*
  however the papers lean, so one weak, off-topic paper cannot decide it.

The module is pure: it reads labels and numbers, never a model, so the CLI, the API and the page give
one verdict and one explanation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, TypeVar

from sciverify.data.records import Label

__all__ = [
    "MIN_WEIGHT",
    "OUTCOMES",
    "UNCLEAR_BELOW",
    "WEIGHING",
    "WIN_RATIO",
    "Overall",
    "Scored",
    "Weighed",
    "is_unclear",
    "paper_reason",
    "paper_weight",
    "sides",
    "weigh",
]

#: A side wins when its summed weight is at least this many times the other side's (2:1).
WIN_RATIO = 2.0
#: A paper below this P(right side | evidence) is shown without a side, "direction unclear" (0: never).
#: Off: out of fold the folds' choice (0.5-0.8) made 35 more verdicts miss gold (interval 13 to 57), so
#: by its rule it does not ship (docs/cross-validation.md).
UNCLEAR_BELOW = 0.0
#: The heavier side must weigh at least this for a supported, refuted or conflicting verdict (0: any).
#: Chosen inside the folds (every fold chose 0.2): supported and refuted verdicts right 0.650 against
#: 0.635, +0.014 (+0.006, +0.024) out of fold (docs/cross-validation.md).
MIN_WEIGHT = 0.2

#: The weighing in one line, for the page, the CLI, the API and docs/evidence.md (which quotes it, checked
#: by tests/unit/pipeline/test_verdict.py).
WEIGHING = (
    "Each paper weighs P(evidence) x P(right side | evidence); a side wins when its papers weigh at "
    f"least {WIN_RATIO:g} times the other side's, otherwise the verdict is conflicting; when neither side "
    f"weighs {MIN_WEIGHT:g}, there is not enough evidence."
)
#: What each overall verdict means, in one line (the API's description of the field).
OUTCOMES = (
    f"supported or refuted when that side's papers weigh at least {WIN_RATIO:g} times the other's, "
    f"conflicting otherwise, not enough evidence when no paper is shown or neither side weighs "
    f"{MIN_WEIGHT:g}."
)


class Overall(StrEnum):
    """The overall verdict over the abstracts shown."""

    SUPPORTED = "supported"
    REFUTED = "refuted"
    CONFLICTING = "conflicting"
    NOT_ENOUGH_EVIDENCE = "not enough evidence"


class Scored(Protocol):
    """What the rule reads of a shown paper (a ``VerifiedAbstract`` or the API's ``VerifyResult``)."""

    @property
    def label(self) -> str: ...

    @property
    def p_evidence(self) -> float | None: ...

    @property
    def p_label_correct(self) -> float | None: ...


def paper_weight(p_evidence: float | None, p_label_correct: float | None) -> float:
    """P(evidence) x P(right side | evidence); a number the pipeline does not give counts as 1."""
    pe = 1.0 if p_evidence is None else float(p_evidence)
    pl = 1.0 if p_label_correct is None else float(p_label_correct)
    return max(0.0, pe) * max(0.0, pl)


def is_unclear(label: str, p_label_correct: float | None, below: float = UNCLEAR_BELOW) -> bool:
    """Whether a SUPPORT or CONTRADICT paper is shown without a side: its P(right side | evidence) is
    known and below ``below`` (a judge that gives no number is taken at its word)."""
    if Label(label) is Label.NOT_ENOUGH_INFO or p_label_correct is None:
        return False
    return float(p_label_correct) < below


_P = TypeVar("_P", bound="Scored")


def sides(papers: Iterable[_P], below: float = UNCLEAR_BELOW) -> tuple[list[_P], list[_P], list[_P]]:
    """(supporting, refuting, direction unclear), each in the order given; NOT_ENOUGH_INFO is dropped.
    The one place that says under which heading a shown paper goes."""
    support: list[_P] = []
    refute: list[_P] = []
    unclear: list[_P] = []
    for p in papers:
        label = Label(p.label)
        if label is Label.NOT_ENOUGH_INFO:
            continue
        if is_unclear(p.label, p.p_label_correct, below):
            unclear.append(p)
        else:
            (support if label is Label.SUPPORT else refute).append(p)
    return support, refute, unclear


@dataclass(frozen=True)
class Weighed:
    """The verdict with what it rests on: papers and summed weight per side, the papers shown without a
    side, and one line saying why."""

    verdict: Overall
    n_support: int
    n_refute: int
    support_weight: float
    refute_weight: float
    ratio: float = WIN_RATIO
    n_unclear: int = 0
    min_weight: float = MIN_WEIGHT

    @property
    def too_light(self) -> bool:
        """Papers on a side were shown, but the heavier side weighs less than the minimum."""
        heavier = max(self.support_weight, self.refute_weight)
        return self.n_support + self.n_refute > 0 and heavier < self.min_weight

    @property
    def why(self) -> str:
        """One sentence a person can check against the papers listed."""
        s = _papers(self.n_support, "supporting", self.support_weight)
        r = _papers(self.n_refute, "refuting", self.refute_weight)
        unclear = ""
        if self.n_unclear:
            unclear = (
                f" {self.n_unclear} paper{'' if self.n_unclear == 1 else 's'} of unclear direction "
                f"{'weighs' if self.n_unclear == 1 else 'weigh'} nothing."
            )
        if self.verdict is Overall.NOT_ENOUGH_EVIDENCE:
            if self.too_light:
                heavier = max(self.support_weight, self.refute_weight)
                return (
                    f"The papers found weigh too little to decide: the heavier side weighs {heavier:.2f}, "
                    f"less than the {self.min_weight:g} a verdict needs.{unclear}"
                )
            if self.n_unclear:
                return f"No paper was found on a clear side.{unclear}"
            return "No paper was found likely enough to be evidence (P(evidence) at least 0.3)."
        if self.verdict is Overall.CONFLICTING:
            return f"{s} against {r}: neither side weighs {self.ratio:g} times the other.{unclear}"
        win, lose = (s, r) if self.verdict is Overall.SUPPORTED else (r, s)
        if (self.n_refute if self.verdict is Overall.SUPPORTED else self.n_support) == 0:
            return f"{win}, none on the other side.{unclear}"
        return f"{win} against {lose}: at least {self.ratio:g} times the weight.{unclear}"


def _papers(n: int, side: str, weight: float) -> str:
    return f"{n} {side} paper{'' if n == 1 else 's'} (weight {weight:.2f})"


def weigh(
    papers: Iterable[Scored],
    ratio: float = WIN_RATIO,
    *,
    unclear_below: float = UNCLEAR_BELOW,
    min_weight: float = MIN_WEIGHT,
) -> Weighed:
    """The overall verdict of the shown papers: a side wins when it weighs at least ``ratio`` times the
    other; papers of unclear direction (:func:`sides`) weigh nothing; when the heavier side weighs less
    than ``min_weight`` the verdict is *not enough evidence*."""
    support, refute, unclear = sides(papers, unclear_below)
    ws = sum(paper_weight(p.p_evidence, p.p_label_correct) for p in support)
    wr = sum(paper_weight(p.p_evidence, p.p_label_correct) for p in refute)
    if not support and not refute or max(ws, wr) < min_weight:
        verdict = Overall.NOT_ENOUGH_EVIDENCE
    elif not refute or (ws > 0 and ws >= ratio * wr):
        verdict = Overall.SUPPORTED
    elif not support or (wr > 0 and wr >= ratio * ws):
        verdict = Overall.REFUTED
    else:
        verdict = Overall.CONFLICTING
    return Weighed(
        verdict, len(support), len(refute), round(ws, 4), round(wr, 4), ratio, len(unclear), min_weight
    )


def paper_reason(
    label: str, sentences: Sequence[str], p_label_correct: float | None, unclear_below: float = UNCLEAR_BELOW
) -> str:
    """Why a paper sits on its side, in one line: what it says about the claim and the sentence that
    weighed most (the rationale is listed best first). A paper of unclear direction says which way the
    models lean and that it is too unsure to count."""
    sure = "" if p_label_correct is None else f" ({p_label_correct * 100:.0f}% likely the right side)"
    if is_unclear(label, p_label_correct, unclear_below):
        lean = "supporting" if Label(label) is Label.SUPPORT else "refuting"
        head = f"Direction unclear: the models lean to {lean}{sure}, too unsure to count it on a side"
        return f"{head}." if not sentences else f"{head}: \u201c{_clip(sentences[0])}\u201d"
    side = "Supports" if Label(label) is Label.SUPPORT else "Refutes"
    if not sentences:
        return f"{side} the claim{sure}."
    return f"{side} the claim{sure}: \u201c{_clip(sentences[0])}\u201d"


#: A structured abstract's section heading at the start of a sentence ("CONCLUSIONS Tricyclics ...").
_SECTION = re.compile(
    r"^(?:RESULTS?|CONCLUSIONS?|METHODS?|FINDINGS|INTERPRETATION|DISCUSSION|BACKGROUND|OBJECTIVES?|AIMS?"
    r"|PURPOSE|CONTEXT|DESIGN|SETTING|PARTICIPANTS|MAIN OUTCOME MEASURES?|MEASUREMENTS|UNLABELLED"
    r"|METHODS AND RESULTS|CONCLUSIONS? AND RELEVANCE|CONCLUSIONS?/SIGNIFICANCE)\s*:?\s+(?=\S)"
)


def _clip(text: str, limit: int = 160) -> str:
    text = _SECTION.sub("", " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"
