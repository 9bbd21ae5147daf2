"""BM25 over title + abstract, stored in the bm25s on-disk format and queried through bm25s.

bm25s builds its matrix from a Python list of token lists, which for a million abstracts is hundreds
of millions of Python ints. So the build here accumulates token ids in flat typed arrays while the
corpus streams past, and computes the same eager score matrix (CSC: one column per token) with a
few vectorised numpy passes. The files are exactly what ``bm25s.BM25.save`` writes, so
``bm25s.BM25.load(..., mmap=True)`` reads them and does the scoring; a unit test checks that the
scores equal those of an index built by bm25s itself.

bm25s keeps its vocabulary as a Python dict (millions of entries for a large corpus). Beside its
``vocab.index.json`` we therefore store the vocabulary as a UTF-8 blob with a sorted hash table, and
load bm25s without its dict: query tokens are found with ``np.searchsorted`` on memory-mapped arrays.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError, MissingDependencyError
from sciverify.retrieval.layout import key_hash

__all__ = ["Bm25Accumulator", "Bm25Scorer", "Bm25Tokenizer"]

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
DATA, INDICES, INDPTR = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"
VOCAB, PARAMS = "vocab.index.json", "params.index.json"
TOKENS_BLOB, TOKENS_OFFSETS = "tokens.blob.npy", "tokens.offsets.npy"
TOKENS_HASH, TOKENS_ID = "tokens.hash.npy", "tokens.id.npy"


class Bm25Tokenizer:
    """Lower-cased word tokens (2+ characters), English stopwords removed, optionally Snowball-stemmed."""

    def __init__(self, stemmer: str | None = "english") -> None:
        try:
            from bm25s.stopwords import STOPWORDS_EN
        except ImportError:
            raise MissingDependencyError("bm25s", "models") from None
        self._stop = frozenset(STOPWORDS_EN)
        self._stem = None
        if stemmer:
            try:
                import Stemmer
            except ImportError:
                raise MissingDependencyError("PyStemmer", "models") from None
            self._stem = Stemmer.Stemmer(stemmer)

    def __call__(self, text: str) -> list[str]:
        words = [w for w in _TOKEN.findall(text.lower()) if w not in self._stop]
        return self._stem.stemWords(words) if self._stem is not None else words


class Bm25Accumulator:
    """Collects token ids document by document, then writes a bm25s index directory.

    Every ``chunk_docs`` documents the raw token stream is folded into (token, doc, tf) triplets
    with one ``np.unique``, so memory holds 12 bytes per distinct (token, doc) pair rather than the
    whole token stream; the final matrix is filled chunk by chunk with a counting sort by token.
    """

    def __init__(self, tokenizer: Bm25Tokenizer, chunk_docs: int = 16_384) -> None:
        self.tokenizer = tokenizer
        self.chunk_docs = chunk_docs
        self.vocab: dict[str, int] = {}
        self._tokens = array("i")
        self._chunk_lengths = array("q")
        self._lengths = array("q")
        self._chunks: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]] = []

    def add(self, text: str) -> None:
        vocab = self.vocab
        ids = []
        for token in self.tokenizer(text):
            tid = vocab.get(token)
            if tid is None:
                tid = vocab[token] = len(vocab)
            ids.append(tid)
        self._tokens.extend(ids)
        self._chunk_lengths.append(len(ids))
        if len(self._chunk_lengths) >= self.chunk_docs:
            self._fold()

    def _fold(self) -> None:
        """Turn the pending token stream into triplets sorted by (token, doc)."""
        n = len(self._chunk_lengths)
        if n == 0:
            return
        first = len(self._lengths)
        lengths = np.frombuffer(self._chunk_lengths, dtype=np.int64)
        tokens = np.frombuffer(self._tokens, dtype=np.int32) if self._tokens else np.zeros(0, np.int32)
        local = np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys, tf = np.unique(tokens.astype(np.int64) * n + local, return_counts=True)
        self._chunks.append(
            ((keys // n).astype(np.int32), (keys % n + first).astype(np.int32), tf.astype(np.int32))
        )
        self._lengths.extend(self._chunk_lengths)
        self._tokens = array("i")
        self._chunk_lengths = array("q")

    def matrix(
        self, method: str, k1: float, b: float
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        """Eager BM25 scores as CSC arrays (column = token, row = doc), as bm25s stores them."""
        self._fold()
        n_vocab = len(self.vocab)
        lengths = np.frombuffer(self._lengths, dtype=np.int64) if self._lengths else np.zeros(0, np.int64)
        n_docs = len(lengths)
        counts = np.zeros(n_vocab, dtype=np.int64)
        for tok, _, _ in self._chunks:
            counts += np.bincount(tok, minlength=n_vocab)
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        idf = _idf(counts.astype(np.float64), n_docs, method)
        norm = k1 * (1 - b + b * lengths / max(float(lengths.mean()) if n_docs else 1.0, 1e-9))
        data = np.empty(int(indptr[-1]), dtype=np.float32)
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        fill = indptr[:-1].copy()
        while self._chunks:
            tok, doc, tf_int = self._chunks.pop(0)
            starts = np.flatnonzero(np.r_[True, tok[1:] != tok[:-1]]) if len(tok) else np.zeros(0, np.int64)
            sizes = np.diff(np.r_[starts, len(tok)])
            rank = np.arange(len(tok)) - np.repeat(starts, sizes)
            pos = fill[tok] + rank
            tf = tf_int.astype(np.float64)
            tfc = tf * (k1 + 1) / (tf + norm[doc]) if method == "atire" else tf / (tf + norm[doc])
            data[pos] = (idf[tok] * tfc).astype(np.float32)
            indices[pos] = doc
            fill[tok[starts]] += sizes
        return data, indices, indptr

    def write(self, out_dir: Path, method: str, k1: float, b: float) -> None:
        """Compute the eager BM25 score matrix and save it in bm25s layout."""
        import bm25s

        data, indices, indptr = self.matrix(method, k1, b)
        out_dir.mkdir(parents=True, exist_ok=True)
        np.save(out_dir / DATA, data, allow_pickle=False)
        np.save(out_dir / INDICES, indices, allow_pickle=False)
        np.save(out_dir / INDPTR, indptr, allow_pickle=False)
        del data, indices, indptr
        (out_dir / VOCAB).write_text(json.dumps(self.vocab, ensure_ascii=False), encoding="utf-8")
        _write_token_table(out_dir, self.vocab)
        params = {
            "k1": k1,
            "b": b,
            "delta": 0.5,
            "method": method,
            "idf_method": method,
            "dtype": "float32",
            "int_dtype": "int32",
            "num_docs": len(self._lengths),
            "version": bm25s.__version__,
            "backend": "numpy",
        }
        (out_dir / PARAMS).write_text(json.dumps(params, indent=2), encoding="utf-8")


def _idf(df: npt.NDArray[np.float64], n_docs: int, method: str) -> npt.NDArray[np.float64]:
    """bm25s's idf variants, vectorised (tokens with df = 0 never occur in the matrix)."""
    if method == "lucene":
        return np.log1p((n_docs - df + 0.5) / (df + 0.5))
    if method == "robertson":
        return np.log(np.maximum((n_docs - df + 0.5) / (df + 0.5), 1.0))
    return np.log(n_docs / np.maximum(df, 1.0))  # atire


def _write_token_table(out_dir: Path, vocab: dict[str, int]) -> None:
    """Tokens in id order as a UTF-8 blob, plus their hashes sorted for lookup (see module docstring)."""
    offsets = np.zeros(len(vocab) + 1, dtype=np.uint64)
    hashes = np.zeros(len(vocab), dtype=np.uint64)
    blob = bytearray()
    for token, tid in vocab.items():  # insertion order is id order
        data = token.encode("utf-8")
        blob += data
        offsets[tid + 1] = len(blob)
        hashes[tid] = key_hash(token)
    order = np.argsort(hashes, kind="stable")
    np.save(out_dir / TOKENS_BLOB, np.frombuffer(bytes(blob), dtype=np.uint8), allow_pickle=False)
    np.save(out_dir / TOKENS_OFFSETS, offsets, allow_pickle=False)
    np.save(out_dir / TOKENS_HASH, hashes[order], allow_pickle=False)
    np.save(out_dir / TOKENS_ID, order.astype(np.int64), allow_pickle=False)


class Bm25Scorer:
    """A memory-mapped bm25s index plus the tokenizer it was built with."""

    def __init__(self, directory: str | Path, stemmer: str | None) -> None:
        try:
            import bm25s
        except ImportError:
            raise MissingDependencyError("bm25s", "models") from None
        directory = Path(directory)
        missing = [
            n
            for n in (PARAMS, DATA, INDICES, INDPTR, TOKENS_BLOB, TOKENS_HASH)
            if not (directory / n).exists()
        ]
        if missing:
            raise ArtifactError(
                f"BM25 index in {directory} lacks {missing[0]}; rebuild it with `sciverify index`"
            )
        self.model: Any = bm25s.BM25.load(directory, mmap=True, load_vocab=False, show_progress=False)
        self.tokenizer = Bm25Tokenizer(stemmer)
        self.num_docs = int(self.model.scores["num_docs"])

        def load(name: str) -> npt.NDArray[Any]:
            array: npt.NDArray[Any] = np.load(directory / name, mmap_mode="r", allow_pickle=False)
            return array

        self._blob, self._offsets = load(TOKENS_BLOB), load(TOKENS_OFFSETS)
        self._hash, self._id = load(TOKENS_HASH), load(TOKENS_ID)

    def token_id(self, token: str) -> int | None:
        """The vocabulary id of a token, or None if no document contains it."""
        h = np.uint64(key_hash(token))
        i = int(np.searchsorted(self._hash, h, side="left"))
        data = token.encode("utf-8")
        while i < len(self._hash) and self._hash[i] == h:
            tid = int(self._id[i])
            if bytes(self._blob[int(self._offsets[tid]) : int(self._offsets[tid + 1])]) == data:
                return tid
            i += 1
        return None

    def scores(self, text: str) -> npt.NDArray[np.float32]:
        """BM25 score of every document for one query; all zeros when no query token is indexed.

        Shapes: returns ``(num_docs,)``.
        """
        ids = [tid for tid in map(self.token_id, self.tokenizer(text)) if tid is not None]
        if not ids:
            return np.zeros(self.num_docs, dtype=np.float32)
        return np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float32)

    def scores_batch(self, texts: Sequence[str]) -> list[npt.NDArray[np.float32]]:
        return [self.scores(t) for t in texts]
