"""The on-disk layout of a corpus index: file names, the build configuration and the manifest.

An index is a directory of ``.npy`` arrays and JSON files (never pickles), so every large part can be
memory-mapped and the directory can be inspected with nothing but numpy::

    manifest.json            format version, sciverify version, config, corpus sha256, counts
    ids.npy                  int64 doc ids             (when every id is an integer)
    ids.blob.npy             UTF-8 bytes of the ids    (when some id is a string)
    ids.offsets.npy          uint64, n_docs + 1
    ids.is_int.npy           uint8 per doc             (only when ids mix integers and strings)
    lookup.hash.npy          uint64 hashes of doc_key(id), sorted
    lookup.row.npy           int64 row of each sorted hash
    titles.blob.npy / titles.offsets.npy          UTF-8 titles
    sentences.blob.npy / sentences.offsets.npy    UTF-8 sentences, all docs back to back
    doc_sentences.npy        uint64, n_docs + 1: doc r owns sentences [doc_sentences[r], doc_sentences[r+1])
    structured.npy           uint8 per doc
    meta.blob.npy / meta.offsets.npy   UTF-8 JSON of each doc's PaperMeta, b"" for none
                             (only when some record has ``metadata``: CORD-19, PubMed)
    bm25/                    a bm25s index (data/indices/indptr .npy, vocab and params JSON)
    dense/sentences.npy      float16 (n_sentences, 384) MiniLM sentence embeddings
    dense/titles.npy         float16 (n_docs, 384) title embeddings
    dense/docs.npy           float16 (n_docs, 384) one unit vector per abstract
                             (absent when ``dense_text="title"``: the title vectors are the doc vectors)
    dense/docs.usearch       an HNSW graph over the doc vectors (usearch), only with ``ann`` on

Large ``.npy`` files are written as streams: a fixed 128-byte header is patched once the length is
known, so a build never holds a whole column in memory.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from sciverify.errors import ConfigError

__all__ = [
    "ANN_MIN_DOCS",
    "ANN_MODES",
    "DENSE_TEXTS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST",
    "IndexConfig",
    "NpyStreamWriter",
    "doc_vector_column",
    "key_hash",
]

FORMAT_NAME = "sciverify-corpus-index"
#: Bump whenever a file changes meaning; readers refuse other versions instead of guessing.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

_HEADER_BYTES = 128
_DOC_VECTORS = ("title+mean", "mean", "title")
DENSE_TEXTS = ("sentences", "title")
ANN_MODES = ("auto", "on", "off")
#: ``ann="auto"`` builds the approximate index from this many abstracts up: below it an exact scan of
#: the doc vectors costs a few ms (measured 24 ms p50 at 5k, almost all of it the claim embedding).
ANN_MIN_DOCS = 200_000


def doc_vector_column(sentence_vectors: bool) -> str:
    """The ``dense/`` column that holds one vector per abstract (and is the HNSW graph's input):
    ``docs``, made from title and sentence vectors, or with title vectors only, ``titles`` itself."""
    return "docs" if sentence_vectors else "titles"


@dataclass(frozen=True)
class IndexConfig:
    """How an index is built; saved in the manifest so a reader knows how to query it.

    Attributes:
        dense: embed every sentence and title with MiniLM (minutes on CPU for SciFact); off gives a
            lexical-only index in seconds.
        split_sentences: accept ``abstract`` as one string and split it into sentences with pysbd.
        stemmer: Snowball language for BM25 tokens (``None`` keeps surface forms).
        bm25_method, bm25_k1, bm25_b: BM25 variant and parameters (bm25s names).
        doc_vector: how the per-abstract vector is made from title and sentence embeddings.
        max_length: token limit per embedded sentence (longer sentences are truncated).
        embed_batch: sentences per model call; embed_chunk: sentences decoded and written per step
            (also the unit a killed build resumes from).
        dense_text: what is embedded: ``"sentences"`` (every sentence and title; maxsim retrieval and
            stored rationale vectors) or ``"title"`` (one short text per abstract, ~9x fewer texts, for
            corpora too large to embed whole; sentence vectors of retrieved abstracts are computed
            when a claim needs them).
        ann: approximate nearest-neighbour search over the doc vectors (usearch HNSW): ``"on"``,
            ``"off"`` or ``"auto"`` (on from :data:`ANN_MIN_DOCS` abstracts when usearch is installed).
    """

    dense: bool = True
    split_sentences: bool = False
    stemmer: str | None = "english"
    bm25_method: str = "lucene"
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    doc_vector: str = "title+mean"
    max_length: int = 128
    embed_batch: int = 64
    embed_chunk: int = 4096
    dense_text: str = "sentences"
    ann: str = "auto"

    def __post_init__(self) -> None:
        if self.dense_text not in DENSE_TEXTS:
            raise ConfigError(f"dense_text must be one of {DENSE_TEXTS}, got {self.dense_text!r}")
        if self.ann not in ANN_MODES:
            raise ConfigError(f"ann must be one of {ANN_MODES}, got {self.ann!r}")
        if self.doc_vector not in _DOC_VECTORS:
            raise ConfigError(f"doc_vector must be one of {_DOC_VECTORS}, got {self.doc_vector!r}")
        if self.bm25_method not in ("lucene", "robertson", "atire"):
            raise ConfigError(f"bm25_method must be lucene, robertson or atire, got {self.bm25_method!r}")
        if self.bm25_k1 <= 0 or not 0 <= self.bm25_b <= 1:
            raise ConfigError("bm25_k1 must be > 0 and bm25_b in [0, 1]")
        if self.max_length < 8 or self.embed_batch < 1 or self.embed_chunk < 1:
            raise ConfigError("max_length must be >= 8, embed_batch and embed_chunk >= 1")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def key_hash(key: str) -> int:
    """64-bit hash of a doc key; the lookup table stores these sorted and verifies the id on a hit."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


class NpyStreamWriter:
    """Append rows to a ``.npy`` file whose length is unknown until the end.

    A placeholder header is written first and replaced on :meth:`close`; numpy's version 1.0 header
    for a 1-D or 2-D shape always pads to 128 bytes, which is checked rather than assumed.
    """

    def __init__(self, path: str | Path, dtype: npt.DTypeLike, row_shape: tuple[int, ...] = ()) -> None:
        self.path = Path(path)
        self.dtype = np.dtype(dtype)
        self.row_shape = row_shape
        self.rows = 0
        self._handle: BinaryIO = self.path.open("wb")
        self._handle.write(b"\0" * _HEADER_BYTES)

    def append(self, values: npt.ArrayLike) -> None:
        arr = np.ascontiguousarray(values, dtype=self.dtype)
        if arr.shape[1:] != self.row_shape:
            raise ValueError(f"row shape {arr.shape[1:]} != {self.row_shape}")
        self._handle.write(arr.tobytes())
        self.rows += arr.shape[0] if arr.ndim else 1

    def append_bytes(self, data: bytes) -> None:
        """Raw bytes, for uint8 blobs (avoids a copy through numpy)."""
        self._handle.write(data)
        self.rows += len(data)

    def close(self) -> None:
        """Write the real header; safe to call twice."""
        if self._handle.closed:
            return
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header,
            {
                "descr": np.lib.format.dtype_to_descr(self.dtype),
                "fortran_order": False,
                "shape": (self.rows, *self.row_shape),
            },
        )
        if len(header.getvalue()) != _HEADER_BYTES:
            raise ValueError("unexpected .npy header size")
        self._handle.seek(0)
        self._handle.write(header.getvalue())
        self._handle.close()
