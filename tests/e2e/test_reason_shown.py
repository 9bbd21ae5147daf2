"""The reason shown is the reason used: every card's side is what the label model says, given the
sentences the card shows.

The label model reads the one or two sentences the selector ranks best; a reader that only lists may list
others for the benchmark's sentence metrics. A card that showed the listing could say "Refutes" above
sentences the label model, given them alone, reads as supporting. The view shows what was read
(:func:`sciverify.pipeline.evidence.shown_rationale`); this reruns the shipped label model on each shown
card's sentences, for the plain facts of the polarity fixture and their negations, and checks the side.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciverify.data.records import Label

FACTS = Path(__file__).resolve().parents[1] / "fixtures" / "facts_negations.jsonl"


@pytest.fixture(scope="module")
def verifier():  # type: ignore[no-untyped-def]
    from sciverify.pipeline.verify import load_verifier

    return load_verifier()


def test_every_shown_card_is_the_label_models_reading_of_its_sentences(verifier) -> None:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in FACTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    claims = [c for r in rows for c in (r["claim"], r["negation"])]
    cards = relisted = 0
    for claim in claims:
        for card in verifier.verify(claim):
            if Label(card.label) is Label.NOT_ENOUGH_INFO:  # related, not evidence: no side, no rationale
                assert card.rationale == () and not card.in_prediction
                continue
            row = verifier.index.row_of(card.doc_id)
            assert row is not None and card.rationale, card
            sentences = verifier.index.sentences(row)
            read = sorted(s.index for s in card.rationale)  # the label model reads in abstract order
            probs = verifier.labeler.predict(
                claim, [(verifier.index.title(row), [sentences[i] for i in read])]
            )[0]
            side = Label.SUPPORT if probs[0] >= probs[1] else Label.CONTRADICT
            assert side is Label(card.label), (claim, card.doc_id, read, np.round(probs, 3).tolist())
            cards += 1
            relisted += int(bool(card.listed))
    assert cards >= 40, "the facts and their negations show papers"
    assert relisted >= 1, "the reader lists other sentences for some card: the case this guards"
