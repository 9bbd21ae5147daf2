"""Training examples for the reader: one (claim, sentence) pair each, with a stance and a rationale target.

SciFact gives the sentence-level supervision: every sentence of every cited abstract is an example
(rationale sentences carry the claim's label, the others NOT_ENOUGH_INFO), and so are the most claim-like
sentences (IDF-weighted term overlap) of retrieved abstracts that are not cited: the hard negatives the
open setting meets and the cited abstracts alone never show. Retrieval and the term-overlap picker learn
nothing from claims, so under cross-validation these negatives carry no information from the held-out
fold (the trees' scores would: each fold's selector saw the other folds' gold). Rule-negated claims
against the same rationale sentences, with the label flipped, teach polarity
(:mod:`sciverify.training.negation`).

The auxiliary entailment pairs (:mod:`sciverify.training.label_data`) carry a stance only: their
``rationale`` target is -1, masked out of the rationale loss.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sciverify.data.records import Abstract, Claim, Label, doc_key
from sciverify.training.label_data import LABEL_INDEX, LabelPair, NeiSentencePicker

__all__ = ["ReaderExample", "aux_examples", "scifact_examples"]

N = LABEL_INDEX[Label.NOT_ENOUGH_INFO]


@dataclass(frozen=True)
class ReaderExample:
    """One pair. ``stance`` indexes (SUPPORT, CONTRADICT, NOT_ENOUGH_INFO); ``rationale`` is 1, 0 or -1
    (no rationale target); ``source`` names the builder, for counts in the training report."""

    claim: str
    title: str
    sentence: str
    stance: int
    rationale: int
    source: str


def aux_examples(pairs: Sequence[LabelPair]) -> list[ReaderExample]:
    """Auxiliary pairs as stance-only examples (their evidence joined into one segment)."""
    return [
        ReaderExample(p.claim, p.title, " ".join(p.sentences), p.label, -1, f"aux_{p.source}") for p in pairs
    ]


def _rationale(claim: Claim, key: str) -> tuple[int, set[int]]:
    sets = claim.evidence.get(key, ())
    if not sets:
        return N, set()
    return LABEL_INDEX[sets[0].label], {i for s in sets for i in s.sentences}


def scifact_examples(
    claims: Sequence[Claim],
    corpus: Mapping[str, Abstract],
    *,
    seed: int,
    retrieved: Mapping[str, Sequence[str]] | None = None,
    negatives_per_claim: int = 2,
    sentences_per_negative: int = 3,
    negated: bool = True,
) -> list[ReaderExample]:
    """Sentence examples from claims with gold annotations.

    Args:
        claims: training claims (their ``evidence`` and ``cited_doc_ids`` are read).
        corpus: abstracts by :func:`doc_key`.
        seed: seeds the negation rules' choices and the negated claims' extra sentences.
        retrieved: per claim id (:func:`doc_key` of it), the retrieved doc ids in rank order; the first
            ``negatives_per_claim`` that are not cited give their ``sentences_per_negative`` most
            claim-like sentences as NOT_ENOUGH_INFO. None: the most topical uncited abstracts by term
            overlap stand in (tiny runs, no retrieval at hand).
        negatives_per_claim: retrieved non-evidence abstracts per claim.
        sentences_per_negative: sentences read from each.
        negated: add rule-negated claims against each evidence abstract's rationale sentences (label
            flipped) and against two of its other sentences (NOT_ENOUGH_INFO: negation words alone must not
            make a sentence evidence).

    Returns:
        Examples in claim order (the trainer shuffles).
    """
    from sciverify.training.negation import negate

    rng = random.Random(seed)
    picker = NeiSentencePicker(corpus.values())
    out: list[ReaderExample] = []
    for claim in claims:
        cited = [doc_key(d) for d in claim.cited_doc_ids]
        cited += [k for k in claim.evidence if k not in cited]
        for key in cited:
            doc = corpus.get(key)
            if doc is None:
                continue
            stance, rat = _rationale(claim, key)
            for i, sentence in enumerate(doc.sentences):
                is_rat = i in rat
                src = "scifact_rationale" if is_rat else "scifact_cited_other"
                out.append(
                    ReaderExample(claim.text, doc.title, sentence, stance if is_rat else N, int(is_rat), src)
                )
            if negated and rat:
                label = Label.SUPPORT if stance == LABEL_INDEX[Label.SUPPORT] else Label.CONTRADICT
                flipped = negate(claim.text, rng, allow_antonym=label is Label.SUPPORT)
                if flipped is None:
                    continue
                other = LABEL_INDEX[Label.CONTRADICT if label is Label.SUPPORT else Label.SUPPORT]
                for i in sorted(rat):
                    if 0 <= i < len(doc.sentences):
                        out.append(
                            ReaderExample(flipped, doc.title, doc.sentences[i], other, 1, "scifact_negated")
                        )
                rest = [i for i in range(len(doc.sentences)) if i not in rat]
                for i in sorted(rng.sample(rest, min(2, len(rest)))):
                    out.append(
                        ReaderExample(flipped, doc.title, doc.sentences[i], N, 0, "scifact_negated_other")
                    )
        seen = set(cited)
        if retrieved is not None:
            keys = [k for k in retrieved.get(doc_key(claim.id), ()) if k not in seen and k in corpus]
            negatives = [corpus[k] for k in keys[:negatives_per_claim]]
        else:
            negatives = (
                picker.top_docs(claim.text, negatives_per_claim, exclude=seen) if negatives_per_claim else []
            )
        for doc in negatives:
            for i in sorted(picker.top_sentences(claim.text, doc, sentences_per_negative)):
                out.append(ReaderExample(claim.text, doc.title, doc.sentences[i], N, 0, "scifact_retrieved"))
    return out
