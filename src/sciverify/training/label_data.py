"""Training pairs for the label model from SciFact: claim/abstract pairs and their NOT_ENOUGH_INFO picks.

Every pair is a (claim, title, evidence sentences, label) record. SciFact gives few pairs (a few hundred
claims, few CONTRADICT), so the label model first learns generic entailment from the auxiliary sets in
:mod:`sciverify.training.aux_pairs`, which build the same record.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sciverify.data.records import Abstract, Claim, Label, doc_key

__all__ = [
    "LABEL_INDEX",
    "LabelPair",
    "WORD_TOKEN",
    "NeiSentencePicker",
    "scifact_pairs",
    "scifact_eval_pairs",
]

LABEL_INDEX = {Label.SUPPORT: 0, Label.CONTRADICT: 1, Label.NOT_ENOUGH_INFO: 2}
S, C, N = 0, 1, 2
_NLI = {"entailment": S, "contradiction": C, "neutral": N, "e": S, "c": C, "n": N}


@dataclass(frozen=True)
class LabelPair:
    """One training example. ``label`` indexes LABEL_ORDER; ``source`` names the builder that made it;
    ``provenance`` is the full source text, kept only for the SciFact overlap check."""

    claim: str
    title: str
    sentences: tuple[str, ...]
    label: int
    source: str
    provenance: str = ""


# ----------------------------------------------------------------------------------------------- SciFact


#: Lower-case word tokens, shared by the NOT_ENOUGH_INFO picker and the corpus-overlap check.
WORD_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of in on to for and or with by is are was were be been that this these those as at from it its"
    " we our than which not no".split()
)


def _terms(text: str) -> list[str]:
    return [t for t in WORD_TOKEN.findall(text.lower()) if t not in _STOP]


class NeiSentencePicker:
    """Picks the sentences of an abstract most similar to a claim (IDF-weighted term overlap).

    NOT_ENOUGH_INFO examples need rationale-like inputs: a rationale selector shows the label model the
    sentences that look most relevant, so the training input for an abstract without evidence is its
    top-k sentences by similarity (as in VeriSci), not random ones. The same scorer ranks corpus abstracts
    to find topical but uncited ones ("retrieved but irrelevant").
    """

    def __init__(self, corpus: Iterable[Abstract]) -> None:
        import math

        self._docs = list(corpus)
        df: dict[str, int] = defaultdict(int)
        self._doc_terms: list[set[str]] = []
        for doc in self._docs:
            terms = set(_terms(doc.title + " " + " ".join(doc.sentences)))
            self._doc_terms.append(terms)
            for t in terms:
                df[t] += 1
        n = max(1, len(self._docs))
        self._idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
        self._default_idf = math.log(n + 1)

    def _score(self, claim_terms: set[str], text: str) -> float:
        terms = set(_terms(text))
        if not terms:
            return 0.0
        overlap = sum(self._idf.get(t, self._default_idf) for t in claim_terms & terms)
        return float(overlap / (len(terms) ** 0.5))

    def top_sentences(self, claim: str, doc: Abstract, k: int, exclude: Iterable[int] = ()) -> list[int]:
        """Indices of the k most claim-like sentences, returned in abstract order."""
        cterms = set(_terms(claim))
        skip = set(exclude)
        scored = [
            (self._score(cterms, s), -i, i)
            for i, s in enumerate(doc.sentences)
            if i not in skip and s.strip()
        ]
        scored.sort(reverse=True)
        return sorted(i for _, _, i in scored[:k])

    def top_docs(self, claim: str, n: int, exclude: Iterable[str]) -> list[Abstract]:
        """The n corpus abstracts sharing the most (IDF-weighted) terms with the claim, minus ``exclude``."""
        cterms = set(_terms(claim))
        skip = set(exclude)
        scored = []
        for doc, terms in zip(self._docs, self._doc_terms, strict=True):
            if doc_key(doc.doc_id) in skip:
                continue
            shared = cterms & terms
            if shared:
                scored.append((sum(self._idf[t] for t in shared), doc_key(doc.doc_id), doc))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [doc for _, _, doc in scored[:n]]


def _rationale(claim: Claim, key: str) -> tuple[Label, list[int]]:
    sets = claim.evidence[key]
    return sets[0].label, sorted({i for s in sets for i in s.sentences})


def _texts(doc: Abstract, indices: Iterable[int]) -> tuple[str, ...]:
    return tuple(doc.sentences[i] for i in sorted(indices) if 0 <= i < len(doc.sentences))


def scifact_pairs(
    claims: Sequence[Claim],
    corpus: Mapping[str, Abstract],
    *,
    seed: int,
    picker: NeiSentencePicker | None = None,
    per_set: bool = True,
    mixed: bool = True,
    retrieved_negatives: int = 1,
    nonrationale_nei: bool = False,
    negated: bool = False,
    negated_nei: bool = True,
) -> list[LabelPair]:
    """Training pairs from SciFact claims with gold evidence.

    SUPPORT / CONTRADICT: the gold rationale sentences (all sets), each set alone when there are several,
    and the rationale with one or two non-rationale sentences mixed in (a rationale selector is rarely
    exact). NOT_ENOUGH_INFO: the top 1-3 claim-like sentences of cited abstracts without evidence, of
    ``retrieved_negatives`` topical uncited abstracts, and optionally of evidence abstracts' non-rationale
    sentences. With ``negated``, each evidence abstract's gold pair is repeated with the claim negated
    (:mod:`sciverify.training.negation`) and the label flipped, and each cited-NEI pair with the claim
    negated and the label kept, so that negation words alone do not predict CONTRADICT.
    """
    from sciverify.training.negation import negate

    rng = random.Random(seed)
    picker = picker or NeiSentencePicker(corpus.values())
    out: list[LabelPair] = []
    for claim in claims:
        for key in claim.evidence:
            doc = corpus.get(key)
            if doc is None:
                continue
            label, rat = _rationale(claim, key)
            y = LABEL_INDEX[label]
            out.append(LabelPair(claim.text, doc.title, _texts(doc, rat), y, "scifact_gold"))
            if negated:
                flipped = negate(claim.text, rng, allow_antonym=label is Label.SUPPORT)
                if flipped is not None:
                    y_flip = LABEL_INDEX[Label.CONTRADICT if label is Label.SUPPORT else Label.SUPPORT]
                    out.append(LabelPair(flipped, doc.title, _texts(doc, rat), y_flip, "scifact_negated"))
            sets = claim.evidence[key]
            if per_set and len(sets) > 1:
                for es in sets:
                    out.append(LabelPair(claim.text, doc.title, _texts(doc, es.sentences), y, "scifact_set"))
            others = [i for i in range(len(doc.sentences)) if i not in set(rat)]
            if mixed and others:
                extra = rng.sample(others, min(len(others), rng.choice((1, 2))))
                out.append(LabelPair(claim.text, doc.title, _texts(doc, rat + extra), y, "scifact_mixed"))
            if nonrationale_nei and others:
                idx = picker.top_sentences(claim.text, doc, rng.choice((1, 2)), exclude=rat)
                out.append(LabelPair(claim.text, doc.title, _texts(doc, idx), N, "scifact_nonrationale"))
        keys = {doc_key(d) for d in claim.cited_doc_ids} | set(claim.evidence)
        for cited in claim.cited_doc_ids:
            key = doc_key(cited)
            doc = corpus.get(key)
            if doc is None or key in claim.evidence:
                continue
            idx = picker.top_sentences(claim.text, doc, rng.choice((1, 2, 3)))
            out.append(LabelPair(claim.text, doc.title, _texts(doc, idx), N, "scifact_cited_nei"))
            flipped = negate(claim.text, rng) if negated and negated_nei else None
            if flipped is not None:
                out.append(LabelPair(flipped, doc.title, _texts(doc, idx), N, "scifact_negated_nei"))
        if retrieved_negatives > 0:
            for doc in picker.top_docs(claim.text, retrieved_negatives, exclude=keys):
                idx = picker.top_sentences(claim.text, doc, rng.choice((1, 2, 3)))
                out.append(LabelPair(claim.text, doc.title, _texts(doc, idx), N, "scifact_retrieved_nei"))
    return out


def scifact_eval_pairs(
    claims: Sequence[Claim],
    corpus: Mapping[str, Abstract],
    *,
    picker: NeiSentencePicker | None = None,
    k: int = 2,
    retrieved: bool = False,
) -> list[LabelPair]:
    """The fixed evaluation protocol (no randomness): gold rationales for evidence abstracts, top-k
    sentences for cited abstracts without evidence, and, with ``retrieved``, for the top topical uncited
    abstract (source ``scifact_retrieved_nei``, reported apart)."""
    picker = picker or NeiSentencePicker(corpus.values())
    out: list[LabelPair] = []
    for claim in claims:
        for key in claim.evidence:
            if key in corpus:
                label, rat = _rationale(claim, key)
                doc = corpus[key]
                out.append(
                    LabelPair(claim.text, doc.title, _texts(doc, rat), LABEL_INDEX[label], "scifact_gold")
                )
        for cited in claim.cited_doc_ids:
            key = doc_key(cited)
            if key in corpus and key not in claim.evidence:
                doc = corpus[key]
                idx = picker.top_sentences(claim.text, doc, k)
                out.append(LabelPair(claim.text, doc.title, _texts(doc, idx), N, "scifact_cited_nei"))
        if retrieved:
            keys = {doc_key(d) for d in claim.cited_doc_ids} | set(claim.evidence)
            for doc in picker.top_docs(claim.text, 1, exclude=keys):
                idx = picker.top_sentences(claim.text, doc, k)
                out.append(LabelPair(claim.text, doc.title, _texts(doc, idx), N, "scifact_retrieved_nei"))
    return out
