"""Reader examples: every sentence of a cited abstract, negated claims, retrieved hard negatives."""

from __future__ import annotations

from collections import Counter

from sciverify.data.records import Abstract, Claim, EvidenceSet, Label
from sciverify.training.label_data import LabelPair
from sciverify.training.reader_data import aux_examples, scifact_examples

S, C, N = 0, 1, 2
DOCS = {
    "1": Abstract(1, "Statins and heart disease", ("Background.", "Statins reduced the risk.", "Methods.")),
    "2": Abstract(2, "Unrelated", ("A sentence.", "Another one.")),
    "3": Abstract(
        3, "Retrieved", ("Nothing here.", "Statins lowered cardiovascular risk.", "Other.", "Risk.")
    ),
    "4": Abstract(4, "Also retrieved", ("q0", "q1")),
}
CLAIM = Claim(
    7,
    "Statins reduce cardiovascular risk.",
    {"1": (EvidenceSet((1,), Label.SUPPORT),)},
    (1, 2),
)


def test_cited_abstracts_give_every_sentence() -> None:
    ex = scifact_examples([CLAIM], DOCS, seed=0, retrieved={}, negated=False)
    by = [(e.title, e.sentence, e.stance, e.rationale) for e in ex]
    assert ("Statins and heart disease", "Statins reduced the risk.", S, 1) in by
    assert ("Statins and heart disease", "Background.", N, 0) in by
    assert ("Unrelated", "Another one.", N, 0) in by  # cited, no evidence
    assert len(ex) == 5


def test_negated_claim_flips_the_rationale_label() -> None:
    ex = scifact_examples([CLAIM], DOCS, seed=0, retrieved={}, negated=True)
    negated = [e for e in ex if e.source == "scifact_negated"]
    assert len(negated) == 1
    assert negated[0].claim != CLAIM.text and negated[0].stance == C and negated[0].rationale == 1
    others = [e for e in ex if e.source == "scifact_negated_other"]
    assert {e.sentence for e in others} == {"Background.", "Methods."}
    assert all(e.stance == N and e.rationale == 0 for e in others)


def test_hard_negatives_come_from_retrieved_uncited_abstracts() -> None:
    retrieved = {"7": ["1", "3", "4", "2"]}  # "1" and "2" are cited: not negatives
    ex = scifact_examples(
        [CLAIM],
        DOCS,
        seed=0,
        retrieved=retrieved,
        negated=False,
        negatives_per_claim=1,
        sentences_per_negative=2,
    )
    negatives = [e for e in ex if e.source == "scifact_retrieved"]
    assert {e.title for e in negatives} == {"Retrieved"}
    # the two most claim-like sentences, by term overlap with the claim
    assert [e.sentence for e in negatives] == ["Statins lowered cardiovascular risk.", "Risk."]
    assert all(e.stance == N and e.rationale == 0 for e in negatives)


def test_aux_pairs_carry_no_rationale_target() -> None:
    pairs = [LabelPair("A claim.", "", ("one", "two"), C, "mnli")]
    (e,) = aux_examples(pairs)
    assert (e.sentence, e.stance, e.rationale, e.source) == ("one two", C, -1, "aux_mnli")
    assert Counter(x.source for x in aux_examples(pairs * 3)) == {"aux_mnli": 3}
