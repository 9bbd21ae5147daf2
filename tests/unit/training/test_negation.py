"""Rule-based claim negation used to augment the label model's training pairs."""

from __future__ import annotations

import random

import pytest

from sciverify.training.negation import negate


@pytest.mark.parametrize(
    ("claim", "negated"),
    [
        ("Klf4 is not required for myelopoiesis.", "Klf4 is required for myelopoiesis."),
        ("NR5A2 does not play a role in development.", "NR5A2 plays a role in development."),
        ("Physical activity does not improve cognition.", "Physical activity improves cognition."),
        ("The program demonstrates no significant impact.", "The program demonstrates a significant impact."),
        ("Egr3 regulates the homeostasis of B cells.", "Egr3 does not regulate the homeostasis of B cells."),
        ("Mitochondria play a role in apoptosis.", "Mitochondria do not play a role in apoptosis."),
        ("ALDH1 is associated with poor prognosis.", "ALDH1 is not associated with poor prognosis."),
        ("X can save money.", "X cannot save money."),
        ("Ribosomopathies have a high specificity.", "Ribosomopathies do not have a high specificity."),
    ],
)
def test_negation_rules(claim: str, negated: str) -> None:
    assert negate(claim, random.Random(0), allow_antonym=False) == negated


def test_antonyms_only_when_allowed_and_case_kept() -> None:
    claim = "Increased FGF21 lowers glucose."
    assert negate(claim, allow_antonym=False) == "Increased FGF21 does not lower glucose."
    seen = {negate(claim, random.Random(s)) for s in range(20)}
    assert seen == {"Increased FGF21 does not lower glucose.", "Decreased FGF21 lowers glucose."}


def test_no_rule_gives_none() -> None:
    assert negate("BRCA1 mutations in Ashkenazi Jews.") is None
    assert negate("") is None


def test_reduce_swaps_to_increase() -> None:
    """The user-reported polarity case: "reduce" claims get their opposite by swapping, not only "not"."""
    outs = {negate("Statins reduce cardiovascular risk.", random.Random(seed)) for seed in range(20)}
    assert outs == {"Statins increase cardiovascular risk.", "Statins do not reduce cardiovascular risk."}
    assert negate("Statins reduce cardiovascular risk.", allow_antonym=False) == (
        "Statins do not reduce cardiovascular risk."
    )
