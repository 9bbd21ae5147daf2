"""The overall verdict: each shown paper weighs what the models say of it; one side must clearly outweigh.

Counting papers lets a weak, off-topic paper turn a clear claim into "conflicting": a paper at
P(evidence) 0.31 counted as much as one at 0.9. So each paper weighs

    weight = P(evidence) x P(right side | evidence)

the chance that it is evidence *and* on the side it is shown on (both calibrated out of fold,
:mod:`sciverify.models.calibration`; a missing number counts as 1, so the LLM judge, which gives none,
counts papers). The weights of a side add up, and a side wins only when its weight is at least
:data:`WIN_RATIO` times the other's; otherwise the verdict is *conflicting*. No paper shown: *not enough
evidence*. docs/evidence.md measures the weighing out of fold (``benchmarks/verdict_rule.py``).

The module is pure: it reads labels and numbers, never a model, so the CLI, the API and the page give
one verdict and one explanation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from sciverify.data.records import Label

__all__ = [
    "OUTCOMES",
    "WEIGHING",
    "WIN_RATIO",
    "Overall",
    "Scored",
    "Weighed",
    "paper_reason",
    "paper_weight",
    "weigh",
]

#: A side wins when its summed weight is at least this many times the other side's (2:1).
WIN_RATIO = 2.0

#: The weighing in one line, for the page, the CLI, the API and docs/evidence.md (which quotes it, checked
#: by tests/unit/pipeline/test_verdict.py).
WEIGHING = (
    "Each paper weighs P(evidence) x P(right side | evidence); a side wins when its papers weigh at "
    f"least {WIN_RATIO:g} times the other side's, otherwise the verdict is conflicting."
)
#: What each overall verdict means, in one line (the API's description of the field).
OUTCOMES = (
    f"supported or refuted when that side's papers weigh at least {WIN_RATIO:g} times the other's, "
    "conflicting otherwise, not enough evidence when no paper is shown."
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


@dataclass(frozen=True)
class Weighed:
    """The verdict with what it rests on: papers and summed weight per side, and one line saying why."""

    verdict: Overall
    n_support: int
    n_refute: int
    support_weight: float
    refute_weight: float
    ratio: float = WIN_RATIO

    @property
    def why(self) -> str:
        """One sentence a person can check against the papers listed."""
        s = _papers(self.n_support, "supporting", self.support_weight)
        r = _papers(self.n_refute, "refuting", self.refute_weight)
        if self.verdict is Overall.NOT_ENOUGH_EVIDENCE:
            return "No paper was found likely enough to be evidence (P(evidence) at least 0.3)."
        if self.verdict is Overall.CONFLICTING:
            return f"{s} against {r}: neither side weighs {self.ratio:g} times the other."
        win, lose = (s, r) if self.verdict is Overall.SUPPORTED else (r, s)
        if (self.n_refute if self.verdict is Overall.SUPPORTED else self.n_support) == 0:
            return f"{win}, none on the other side."
        return f"{win} against {lose}: at least {self.ratio:g} times the weight."


def _papers(n: int, side: str, weight: float) -> str:
    return f"{n} {side} paper{'' if n == 1 else 's'} (weight {weight:.2f})"


def weigh(papers: Iterable[Scored], ratio: float = WIN_RATIO) -> Weighed:
    """The overall verdict of the shown papers (SUPPORT and CONTRADICT; anything else is ignored); a side
    wins when it weighs at least ``ratio`` times the other."""
    n = {Label.SUPPORT: 0, Label.CONTRADICT: 0}
    w = {Label.SUPPORT: 0.0, Label.CONTRADICT: 0.0}
    for p in papers:
        label = Label(p.label)
        if label in n:
            n[label] += 1
            w[label] += paper_weight(p.p_evidence, p.p_label_correct)
    ws, wr = w[Label.SUPPORT], w[Label.CONTRADICT]
    if n[Label.SUPPORT] == 0 and n[Label.CONTRADICT] == 0:
        verdict = Overall.NOT_ENOUGH_EVIDENCE
    elif n[Label.CONTRADICT] == 0 or (ws > 0 and ws >= ratio * wr):
        verdict = Overall.SUPPORTED
    elif n[Label.SUPPORT] == 0 or (wr > 0 and wr >= ratio * ws):
        verdict = Overall.REFUTED
    else:
        verdict = Overall.CONFLICTING
    return Weighed(verdict, n[Label.SUPPORT], n[Label.CONTRADICT], round(ws, 4), round(wr, 4), ratio)


def paper_reason(label: str, sentences: Sequence[str], p_label_correct: float | None) -> str:
    """Why a paper sits on its side, in one line: what it says about the claim and the sentence that
    weighed most (the rationale is listed best first)."""
    side = "Supports" if Label(label) is Label.SUPPORT else "Refutes"
    sure = "" if p_label_correct is None else f" ({p_label_correct * 100:.0f}% likely the right side)"
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
