"""The overall verdict weighs its papers: P(evidence) x P(right side | evidence) summed per side, 2:1 wins."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sciverify.decision.verdict import WIN_RATIO, Overall, paper_reason, paper_weight, weigh


@dataclass(frozen=True)
class P:
    label: str
    p_evidence: float | None
    p_label_correct: float | None = 0.9


def test_a_weak_off_topic_paper_does_not_outvote_a_strong_one() -> None:
    # the case that made "conflicting" out of clear claims: one strong supporting paper, one at the threshold
    w = weigh([P("SUPPORT", 0.85, 0.9), P("CONTRADICT", 0.31, 0.6)])
    assert w.verdict is Overall.SUPPORTED
    assert (w.n_support, w.n_refute) == (1, 1)
    assert w.support_weight == pytest.approx(0.765) and w.refute_weight == pytest.approx(0.186)
    assert w.why == (
        "1 supporting paper (weight 0.77) against 1 refuting paper (weight 0.19): "
        "at least 2 times the weight."
    )


def test_comparable_sides_conflict_and_the_ratio_is_the_boundary() -> None:
    w = weigh([P("SUPPORT", 0.6), P("CONTRADICT", 0.5)])
    assert w.verdict is Overall.CONFLICTING
    assert "neither side weighs 2 times the other" in w.why
    # exactly twice the other's weight wins; a hair under does not
    assert weigh([P("SUPPORT", 0.8, 1.0), P("CONTRADICT", 0.4, 1.0)]).verdict is Overall.SUPPORTED
    assert weigh([P("SUPPORT", 0.79, 1.0), P("CONTRADICT", 0.4, 1.0)]).verdict is Overall.CONFLICTING
    assert weigh([P("SUPPORT", 0.4, 1.0), P("CONTRADICT", 0.8, 1.0)]).verdict is Overall.REFUTED
    assert WIN_RATIO == 2.0


def test_many_weak_papers_can_outweigh_one_strong_paper() -> None:
    weak = [P("CONTRADICT", 0.5, 0.9)] * 4
    w = weigh([P("SUPPORT", 0.8, 0.9), *weak])
    assert w.verdict is Overall.REFUTED and w.n_refute == 4
    assert w.why.startswith("4 refuting papers (weight 1.80) against 1 supporting paper (weight 0.72)")


def test_one_side_only_and_nothing_shown() -> None:
    assert weigh([P("CONTRADICT", 0.4)]).verdict is Overall.REFUTED
    assert weigh([P("CONTRADICT", 0.4)]).why == "1 refuting paper (weight 0.36), none on the other side."
    assert weigh([P("SUPPORT", 0.4), P("SUPPORT", 0.9)]).verdict is Overall.SUPPORTED
    nothing = weigh([])
    assert nothing.verdict is Overall.NOT_ENOUGH_EVIDENCE and nothing.why.startswith("No paper")
    # a NOT_ENOUGH_INFO row (never shown by the view) does not count for either side
    assert weigh([P("NOT_ENOUGH_INFO", 0.9)]).verdict is Overall.NOT_ENOUGH_EVIDENCE


def test_missing_numbers_count_as_one_so_the_llm_judge_counts_papers() -> None:
    assert paper_weight(None, None) == 1.0 and paper_weight(0.5, None) == 0.5
    assert paper_weight(0.5, 0.5) == 0.25
    two_to_one = [P("SUPPORT", None, None), P("SUPPORT", None, None), P("CONTRADICT", None, None)]
    assert weigh(two_to_one).verdict is Overall.SUPPORTED
    assert weigh(two_to_one[1:]).verdict is Overall.CONFLICTING


def test_each_paper_says_why_it_sits_on_its_side() -> None:
    assert paper_reason("SUPPORT", ["High ALDH1 predicts poor prognosis.", "Other."], 0.8) == (
        "Supports the claim (80% likely the right side): \u201cHigh ALDH1 predicts poor prognosis.\u201d"
    )
    assert paper_reason("CONTRADICT", [], None) == "Refutes the claim."
    heading = paper_reason("CONTRADICT", ["CONCLUSIONS Tricyclics prevent migraine."], 0.72)
    assert heading.endswith(": \u201cTricyclics prevent migraine.\u201d")
    long = paper_reason("CONTRADICT", ["word " * 100], 0.5)
    assert len(long) < 220 and long.endswith("\u2026\u201d")


def test_the_weighing_is_worded_once_and_quoted_from_the_code() -> None:
    """The 2:1 wording lives in the decision; the API description and docs/evidence.md quote it."""
    from pathlib import Path

    from sciverify.decision.verdict import OUTCOMES, WEIGHING
    from sciverify.serving.schemas import VerifyResponse

    assert f"{WIN_RATIO:g} times" in WEIGHING and f"{WIN_RATIO:g} times" in OUTCOMES
    docs = (Path(__file__).resolve().parents[3] / "docs" / "evidence.md").read_text(encoding="utf-8")
    assert f"\n> {WEIGHING}\n" in docs
    fields = VerifyResponse.model_fields
    assert fields["rule"].default == WEIGHING
    assert (fields["verdict"].description or "").startswith(OUTCOMES[:-1])


def test_a_verdict_needs_weight_and_says_when_it_had_too_little() -> None:
    """The MMR case: one weak, off-topic paper (P(evidence) 0.31, side 0.6) cannot decide a verdict."""
    from sciverify.decision.verdict import MIN_WEIGHT

    assert MIN_WEIGHT == 0.2  # the folds' choice, docs/cross-validation.md
    light = weigh([P("SUPPORT", 0.31, 0.6)])
    assert light.verdict is Overall.NOT_ENOUGH_EVIDENCE and light.too_light
    assert light.why == (
        "The papers found weigh too little to decide: the heavier side weighs 0.19, less than the 0.2 a "
        "verdict needs."
    )
    assert weigh([P("SUPPORT", 0.31, 0.7)]).verdict is Overall.SUPPORTED  # 0.217
    # weights add up: two light papers on one side can carry it
    assert weigh([P("CONTRADICT", 0.31, 0.6)] * 2).verdict is Overall.REFUTED
    assert weigh([P("SUPPORT", 0.31, 0.6)], min_weight=0.0).verdict is Overall.SUPPORTED
    assert not weigh([]).too_light


def test_a_paper_of_unclear_direction_has_no_side_and_weighs_nothing() -> None:
    from sciverify.decision.verdict import UNCLEAR_BELOW, is_unclear, sides

    assert UNCLEAR_BELOW == 0.0  # off: by its rule it did not ship (docs/cross-validation.md)
    papers = [P("SUPPORT", 0.8, 0.9), P("CONTRADICT", 0.9, 0.55), P("SUPPORT", 0.5, None),
              P("NOT_ENOUGH_INFO", 0.2)]
    support, refute, unclear = sides(papers, 0.6)
    assert support == [papers[0], papers[2]] and refute == [] and unclear == [papers[1]]
    assert sides(papers) == ([papers[0], papers[2]], [papers[1]], [])
    w = weigh(papers, unclear_below=0.6)
    assert w.verdict is Overall.SUPPORTED and w.n_unclear == 1 and w.refute_weight == 0.0
    assert w.why.endswith("1 paper of unclear direction weighs nothing.")
    only = weigh([papers[1]], unclear_below=0.6)
    assert only.verdict is Overall.NOT_ENOUGH_EVIDENCE
    assert only.why.startswith("No paper was found on a clear side.")
    assert not is_unclear("SUPPORT", None, 0.99) and not is_unclear("NOT_ENOUGH_INFO", 0.1, 0.5)
    assert paper_reason("CONTRADICT", ["X did not lower Y."], 0.55, 0.6) == (
        "Direction unclear: the models lean to refuting (55% likely the right side), too unsure to count it "
        "on a side: \u201cX did not lower Y.\u201d"
    )
