"""The built-in retrievers: TF-IDF (the VeriSci baseline), BM25, dense MiniLM, their fusion, and an oracle.

Each one scores every abstract of the index with cheap vector operations (a sparse column sum, one
matrix-vector product) and keeps the top k; for SciFact-sized corpora that is a few milliseconds
per claim. An index built with an HNSW graph (``IndexConfig.ann``, a million abstracts) answers the
dense side from the graph instead (:mod:`sciverify.retrieval.ann`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim, doc_key
from sciverify.errors import ConfigError, MissingDependencyError
from sciverify.retrieval.base import RETRIEVERS, Hit, RetrievalConfig, Retriever, register, top_k

if TYPE_CHECKING:
    from sciverify.retrieval.index import CorpusIndex

__all__ = [
    "MAXSIM_CANDIDATES",
    "RESIDENT_ROWS",
    "Bm25Retriever",
    "DenseRetriever",
    "FusionRetriever",
    "OracleRetriever",
    "TfidfRetriever",
    "fuse_scores",
    "make_retriever",
]


class TfidfRetriever:
    """TF-IDF over title + abstract with unigrams and bigrams, cosine similarity (VeriSci's retriever).

    The vectoriser is fitted on the index's own texts when the retriever is made (about a second
    for SciFact); it is a baseline, not meant for million-abstract corpora.
    """

    name = "tfidf"

    def __init__(self, index: CorpusIndex) -> None:
        try:
            from sklearn.feature_extraction.text import TfidfVectorizer
        except ImportError:
            raise MissingDependencyError("scikit-learn", "models") from None
        self.index = index
        self.vectorizer = TfidfVectorizer(stop_words="english", ngram_range=(1, 2))
        # Stored transposed (terms x docs, CSR) so a query is one sparse product, not a copy per call.
        self.matrix_t = self.vectorizer.fit_transform(index.iter_texts()).T.tocsr()

    def scores(self, claim_texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Shapes: ``(n_claims, n_docs)``."""
        q = self.vectorizer.transform(list(claim_texts))
        return np.asarray((q @ self.matrix_t).toarray(), dtype=np.float32)

    def retrieve(self, claim_texts: Sequence[str], k: int) -> list[list[Hit]]:
        return [top_k(self.index, row, k) for row in self.scores(claim_texts)]


class Bm25Retriever:
    """BM25 (bm25s, memory-mapped) over title + abstract, with the index's stemmer and stopwords."""

    name = "bm25"

    def __init__(self, index: CorpusIndex) -> None:
        self.index = index
        self.scorer = index.bm25

    def scores(self, claim_texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Shapes: ``(n_claims, n_docs)``."""
        out = np.zeros((len(claim_texts), len(self.index)), dtype=np.float32)
        for i, text in enumerate(claim_texts):
            out[i] = self.scorer.scores(text)
        return out

    def retrieve(self, claim_texts: Sequence[str], k: int) -> list[list[Hit]]:
        return [top_k(self.index, row, k) for row in self.scores(claim_texts)]


#: Matrices up to this many rows are copied to RAM as float32 (at most ~3 GB); larger ones are read
#: from the float16 memory map in chunks on every query, so RAM stays flat whatever the corpus size.
RESIDENT_ROWS = 2_000_000
_CHUNK = 131_072
#: When the sentence matrix is too big to scan per query, maxsim re-scores only this many abstracts
#: (the best by their doc vector); the rest keep their doc-vector score, shifted below every candidate.
MAXSIM_CANDIDATES = 256


class _Vectors:
    """A matrix of unit vectors that can be multiplied by a batch of queries without loading it whole."""

    def __init__(self, matrix: npt.NDArray[np.float16]) -> None:
        self._resident = matrix.shape[0] <= RESIDENT_ROWS
        self._matrix = np.asarray(matrix, dtype=np.float32) if self._resident else matrix

    def dot(self, q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Shapes: ``q`` is ``(n, 384)``, returns ``(n, rows)``."""
        if self._resident:
            return q @ self._matrix.T
        out = np.empty((q.shape[0], self._matrix.shape[0]), dtype=np.float32)
        for start in range(0, self._matrix.shape[0], _CHUNK):
            block = np.asarray(self._matrix[start : start + _CHUNK], dtype=np.float32)
            out[:, start : start + len(block)] = q @ block.T
        return out


class DenseRetriever:
    """Cosine similarity of MiniLM claim embeddings with the index's abstract or sentence embeddings.

    ``mode="doc"`` compares the claim with one vector per abstract; ``mode="maxsim"`` scores an
    abstract by its best-matching sentence or its title, which suits claims that restate one finding.
    """

    name = "dense"

    def __init__(self, index: CorpusIndex, mode: str = "maxsim") -> None:
        from sciverify.retrieval.embedder import get_embedder

        if mode not in ("doc", "maxsim"):
            raise ConfigError(f"dense mode must be 'doc' or 'maxsim', got {mode!r}")
        if not index.has_sentence_vectors:
            mode = "doc"  # title vectors only: the best "sentence" is the title, i.e. the doc vector
        self.index = index
        self.mode = mode
        self.embedder = get_embedder(index.config.max_length)
        self._ann = index.ann
        self._rerank = mode == "maxsim" and (index.n_sentences > RESIDENT_ROWS or self._ann is not None)
        if (mode == "doc" or self._rerank) and self._ann is None:
            self._docs = _Vectors(index.doc_embeddings)
        if mode == "maxsim" and not self._rerank:
            self._sentences = _Vectors(index.all_sentence_embeddings)
            self._titles = _Vectors(index.title_embeddings)
            self._starts = index.sentence_starts()

    def scores(self, claim_texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Shapes: ``(n_claims, n_docs)`` cosine similarities."""
        if not claim_texts:
            return np.zeros((0, len(self.index)), dtype=np.float32)
        return self.scores_for(self.embedder.encode(list(claim_texts)))

    def scores_for(self, q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Scores for already-embedded claims ``(n, 384)``, e.g. when the caller embeds them anyway."""
        if self.mode == "doc":
            return self._doc_scores(q)
        if self._rerank:
            return self._maxsim_of_candidates(q)
        best = np.maximum.reduceat(self._sentences.dot(q), self._starts, axis=1)
        return np.maximum(best, self._titles.dot(q))

    def _doc_scores(self, q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine with every doc vector: exact, or from the HNSW graph for its
        :data:`MAXSIM_CANDIDATES` nearest rows, the others scored -2 (below any cosine)."""
        if self._ann is None:
            return self._docs.dot(q)
        rows, sims = self._ann.search(q, MAXSIM_CANDIDATES)
        out = np.full((len(q), len(self.index)), -2.0, dtype=np.float32)
        for i in range(len(q)):
            found = rows[i] >= 0
            out[i, rows[i][found]] = sims[i][found]
        return out

    def _maxsim_of_candidates(self, q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Exact maxsim for the top :data:`MAXSIM_CANDIDATES` abstracts by doc vector, per claim."""
        scores = self._doc_scores(q) - 2.0  # cosines lie in [-1, 1]: every candidate will rank above
        sentences, titles = self.index.all_sentence_embeddings, self.index.title_embeddings
        n_cand = min(MAXSIM_CANDIDATES, scores.shape[1])
        for i in range(len(q)):
            rows = np.sort(np.argpartition(-scores[i], n_cand - 1)[:n_cand])
            ranges = [self.index.sentence_range(int(r)) for r in rows]
            block = np.concatenate([np.asarray(sentences[a:b], dtype=np.float32) for a, b in ranges])
            starts = np.cumsum([0] + [b - a for a, b in ranges[:-1]])
            best = np.maximum.reduceat(block @ q[i], starts)
            scores[i, rows] = np.maximum(best, np.asarray(titles[rows], dtype=np.float32) @ q[i])
        return scores

    def retrieve(self, claim_texts: Sequence[str], k: int) -> list[list[Hit]]:
        return [top_k(self.index, row, k) for row in self.scores(claim_texts)]


def _normalise(scores: npt.NDArray[np.float32], depth: int) -> npt.NDArray[np.float32]:
    """Min-max over the top ``depth`` scores, so the best doc gets 1 and the depth-th gets 0."""
    depth = min(depth, scores.shape[-1])
    top = np.partition(scores, -depth, axis=-1)[..., -depth:]
    lo = top.min(axis=-1, keepdims=True)
    hi = top.max(axis=-1, keepdims=True)
    normalised: npt.NDArray[np.float32] = np.clip((scores - lo) / np.maximum(hi - lo, 1e-9), 0.0, None)
    return normalised.astype(np.float32)


def _rrf(scores: npt.NDArray[np.float32], depth: int, rrf_k: int) -> npt.NDArray[np.float32]:
    out = np.zeros_like(scores, dtype=np.float32)
    depth = min(depth, scores.shape[-1])
    for i, row in enumerate(scores):
        order = np.argsort(-row, kind="stable")[:depth]
        out[i, order] = 1.0 / (rrf_k + 1 + np.arange(depth))
    return out


def fuse_scores(
    lexical: npt.NDArray[np.float32], dense: npt.NDArray[np.float32], config: RetrievalConfig
) -> npt.NDArray[np.float32]:
    """Combine two ``(n_claims, n_docs)`` score matrices; pure, so weights can be tuned offline."""
    w = config.fusion_weight
    if config.fusion == "rrf":
        a, b = (
            _rrf(lexical, config.fusion_depth, config.rrf_k),
            _rrf(dense, config.fusion_depth, config.rrf_k),
        )
    else:
        a, b = _normalise(lexical, config.fusion_depth), _normalise(dense, config.fusion_depth)
    return ((1.0 - w) * a + w * b).astype(np.float32)


class FusionRetriever:
    """BM25 and dense combined by :func:`fuse_scores` (weights tuned on the validation split)."""

    name = "fusion"

    def __init__(self, index: CorpusIndex, config: RetrievalConfig) -> None:
        self.index = index
        self.config = config
        self.lexical = Bm25Retriever(index)
        self.dense = DenseRetriever(index, config.dense_mode)

    def scores(self, claim_texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return fuse_scores(self.lexical.scores(claim_texts), self.dense.scores(claim_texts), self.config)

    def retrieve(self, claim_texts: Sequence[str], k: int) -> list[list[Hit]]:
        return [top_k(self.index, row, k) for row in self.scores(claim_texts)]


class OracleRetriever:
    """The gold abstracts of each claim: evidence docs first, then other cited docs.

    This is the paper's "oracle abstract" setting, an upper bound for the later stages. It returns
    every gold doc whatever ``k`` is; claims it does not know (by text) get no hits.
    """

    name = "oracle"

    def __init__(self, index: CorpusIndex, claims: Sequence[Claim]) -> None:
        self.index = index
        self._gold: dict[str, list[Hit]] = {}
        for claim in claims:
            keys = list(claim.evidence) + [doc_key(d) for d in claim.cited_doc_ids]
            hits = self._gold.setdefault(claim.text, [])
            seen = {doc_key(h.doc_id) for h in hits}
            for key in keys:
                row = index.row_of(key)
                if row is not None and key not in seen:
                    seen.add(key)
                    hits.append(Hit(row, index.doc_id(row), 1.0 if key in claim.evidence else 0.5))

    def retrieve(self, claim_texts: Sequence[str], k: int) -> list[list[Hit]]:
        return [list(self._gold.get(text, [])) for text in claim_texts]


@register("tfidf")
def _tfidf(index: CorpusIndex, config: RetrievalConfig, claims: Sequence[Claim] | None) -> Any:
    return TfidfRetriever(index)


@register("bm25")
def _bm25(index: CorpusIndex, config: RetrievalConfig, claims: Sequence[Claim] | None) -> Any:
    return Bm25Retriever(index)


@register("dense")
def _dense(index: CorpusIndex, config: RetrievalConfig, claims: Sequence[Claim] | None) -> Any:
    return DenseRetriever(index, config.dense_mode)


@register("fusion")
def _fusion(index: CorpusIndex, config: RetrievalConfig, claims: Sequence[Claim] | None) -> Any:
    return FusionRetriever(index, config)


@register("oracle")
def _oracle(index: CorpusIndex, config: RetrievalConfig, claims: Sequence[Claim] | None) -> Any:
    if claims is None:
        raise ConfigError("the oracle retriever needs the gold claims (claims=...)")
    return OracleRetriever(index, claims)


def make_retriever(
    index: CorpusIndex, config: RetrievalConfig | None = None, claims: Sequence[Claim] | None = None
) -> Retriever:
    """Build the retriever ``config.method`` over ``index``; ``claims`` (gold evidence) only for oracle."""
    config = config or RetrievalConfig()
    return RETRIEVERS.get(config.method)(index, config, claims)
