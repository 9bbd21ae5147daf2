"""Cheap per-sentence features for rationale selection, computed from stored embeddings and token overlap.

Cross-encoding every sentence of every candidate abstract costs ~10 ms per pair on CPU, far over a
300 ms budget for ten abstracts. The index already holds a MiniLM vector per sentence, so the claim's
vector against those is free at query time; lexical overlap (IDF-weighted, bigrams, numbers) catches
what a small bi-encoder blurs (gene names, doses), and the position of a sentence and its standing
*within its abstract* (rank, margin to the best sentence, neighbours) carry the rest. A light trained
head (see :mod:`sciverify.models.rationale`) turns these into one score per sentence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Abstract, DocId

__all__ = [
    "COMPACT_FEATURES",
    "AbstractInput",
    "IndexedAbstracts",
    "TermStats",
    "abstract_input",
    "compact_features",
    "embedding_features",
    "tokenize",
]

_WORD = re.compile(r"(?u)\b\w+\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# A short English stop list: lexical features should count content words only.
_STOP = frozenset(
    """a an the of in on at to for from by with without and or nor not no but is are was were be been being
    as that this these those it its into than then there their they we our us you your he she his her
    which who whom whose what when where why how all any both each few more most other some such only own
    same so too very can will just do does did has have had having may might must shall should would could
    also between during after before about against through over under again further once here vs via
    """.split()
)
_CUES = frozenset(
    """conclusion conclusions results result findings suggest suggests suggested indicate indicates
    demonstrate demonstrates demonstrated show shows showed shown associated significant significantly
    increased decreased reduced higher lower risk""".split()
)

#: Names of the columns :func:`compact_features` returns, in order.
COMPACT_FEATURES: tuple[str, ...] = (
    "cos",
    "cos_rank",
    "cos_margin_max",
    "cos_minus_mean",
    "cos_neighbour_max",
    "cos_title",
    "cos_doc",
    "position",
    "is_first",
    "is_last",
    "log_n_sentences",
    "log_length",
    "idf_recall",
    "idf_precision",
    "bigram_recall",
    "shared_number",
    "claim_has_number",
    "bm25",
    "lex_rank",
    "lex_margin_max",
    "cue_words",
    "structured_header",
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words; crude plural folding so 'cells' matches 'cell'."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _STOP:
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of a corpus, for IDF weights; unseen words get the rarest weight."""

    df: Mapping[str, int]
    n_docs: int

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> TermStats:
        """Count, for each token, the number of texts (abstracts) containing it."""
        df: dict[str, int] = {}
        n = 0
        for text in texts:
            n += 1
            for tok in set(tokenize(text)):
                df[tok] = df.get(tok, 0) + 1
        return cls(df, n)

    def idf(self, token: str) -> float:
        """Smoothed IDF, log((N + 1) / (df + 0.5)); always positive."""
        return math.log((self.n_docs + 1) / (self.df.get(token, 0) + 0.5))


@dataclass(frozen=True)
class AbstractInput:
    """What the selector sees of one candidate abstract.

    Attributes:
        sentences: sentence texts in abstract order.
        sentence_emb: ``(n_sentences, 384)`` unit vectors (float16 or float32, as stored in the index).
        title_emb: ``(384,)`` unit vector of the title (zeros when unknown).
        structured: the abstract has section headers (BACKGROUND/METHODS/RESULTS...).
        doc_id: the abstract's doc id, for selectors that look it up (the oracle); None when unknown.
    """

    sentences: Sequence[str]
    sentence_emb: npt.NDArray[np.floating]
    title_emb: npt.NDArray[np.floating]
    structured: bool = False
    doc_id: DocId | None = None


class IndexedAbstracts(Protocol):
    """What building an :class:`AbstractInput` reads of a corpus index
    (:class:`sciverify.retrieval.index.CorpusIndex`)."""

    def sentences(self, row: int) -> tuple[str, ...]: ...
    def sentence_embeddings(self, row: int) -> npt.NDArray[np.float16]: ...
    def abstract(self, row: int) -> Abstract: ...
    @property
    def title_embeddings(self) -> npt.NDArray[np.float16]: ...


def abstract_input(corpus: IndexedAbstracts, row: int) -> AbstractInput:
    """What a selector sees of one corpus row: the serving pipeline and selector training both build it
    here, so the selector is trained on exactly what it reads at query time."""
    abstract = corpus.abstract(row)
    return AbstractInput(
        sentences=corpus.sentences(row),
        sentence_emb=np.asarray(corpus.sentence_embeddings(row), dtype=np.float32),
        title_emb=np.asarray(corpus.title_embeddings[row], dtype=np.float32),
        structured=bool(abstract.structured),
        doc_id=abstract.doc_id,
    )


def _rank_desc(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    order = np.argsort(-x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float32)
    ranks[order] = np.arange(len(x), dtype=np.float32)
    return ranks


def _bigrams(tokens: Sequence[str]) -> set[tuple[str, str]]:
    return set(zip(tokens, tokens[1:], strict=False))


def compact_features(
    claim: str, claim_emb: npt.NDArray[np.floating], abstract: AbstractInput, stats: TermStats
) -> npt.NDArray[np.float32]:
    """Hand-made features of every sentence of one abstract against one claim.

    Shapes: ``claim_emb`` (384,); returns ``(n_sentences, len(COMPACT_FEATURES))`` float32.
    """
    n = len(abstract.sentences)
    out = np.zeros((n, len(COMPACT_FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    u = np.asarray(claim_emb, dtype=np.float32)
    v = np.asarray(abstract.sentence_emb, dtype=np.float32)
    cos = v @ u
    doc = v.mean(axis=0)
    doc_norm = float(np.linalg.norm(doc)) or 1.0
    neighbours = np.full(n, -1.0, dtype=np.float32)
    if n > 1:
        neighbours[1:] = cos[:-1]
        neighbours[:-1] = np.maximum(neighbours[:-1], cos[1:])
    else:
        neighbours[:] = cos

    c_tokens = tokenize(claim)
    c_set = set(c_tokens)
    c_idf = {t: stats.idf(t) for t in c_set}
    c_mass = sum(c_idf.values()) or 1.0
    c_bigrams = _bigrams(c_tokens)
    c_numbers = set(_NUMBER.findall(claim))
    lex = np.zeros(n, dtype=np.float32)
    avg_len = 20.0
    for i, sentence in enumerate(abstract.sentences):
        s_tokens = tokenize(sentence)
        s_set = set(s_tokens)
        shared = c_set & s_set
        shared_mass = sum(c_idf[t] for t in shared)
        s_mass = sum(stats.idf(t) for t in s_set) or 1.0
        lex[i] = shared_mass / c_mass
        out[i, 12] = lex[i]
        out[i, 13] = shared_mass / s_mass
        out[i, 14] = len(c_bigrams & _bigrams(s_tokens)) / len(c_bigrams) if c_bigrams else 0.0
        out[i, 15] = float(bool(c_numbers & set(_NUMBER.findall(sentence))))
        length = len(s_tokens)
        norm = 1.2 * (0.25 + 0.75 * length / avg_len)
        bm25 = 0.0
        for t in shared:
            tf = s_tokens.count(t)
            bm25 += c_idf[t] * tf * 2.2 / (tf + norm)
        out[i, 17] = bm25
        out[i, 11] = math.log1p(length)
        head = sentence[:40].lower()
        out[i, 20] = float(any(w in _CUES for w in _WORD.findall(sentence.lower())))
        out[i, 21] = float(abstract.structured and ("conclusion" in head or "result" in head))

    out[:, 0] = cos
    out[:, 1] = _rank_desc(cos)
    out[:, 2] = cos - cos.max()
    out[:, 3] = cos - cos.mean()
    out[:, 4] = neighbours
    out[:, 5] = float(np.asarray(abstract.title_emb, dtype=np.float32) @ u)
    out[:, 6] = float(doc @ u) / doc_norm
    out[:, 7] = np.arange(n, dtype=np.float32) / max(n - 1, 1)
    out[0, 8] = 1.0
    out[n - 1, 9] = 1.0
    out[:, 10] = math.log(n)
    out[:, 16] = float(bool(c_numbers))
    out[:, 18] = _rank_desc(lex)
    out[:, 19] = lex - lex.max()
    return out


def embedding_features(
    claim_emb: npt.NDArray[np.floating], sentence_emb: npt.NDArray[np.floating]
) -> npt.NDArray[np.float32]:
    """The classic matching features ``[u * v, |u - v|]`` for a learned interaction head.

    Shapes: ``claim_emb`` (384,), ``sentence_emb`` (n, 384); returns (n, 768) float32.
    """
    u = np.asarray(claim_emb, dtype=np.float32)[None, :]
    v = np.asarray(sentence_emb, dtype=np.float32)
    return np.concatenate([u * v, np.abs(u - v)], axis=1)
