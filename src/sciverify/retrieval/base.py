"""The retrieval contract: claims in, ranked abstracts (index rows) out; retrievers chosen by name.

Every retriever works over a :class:`~sciverify.retrieval.index.CorpusIndex` and answers a batch of
claims at once (batching lets the dense retriever embed all claims in one model call). A
:class:`Hit` carries the index row, so later stages read text and sentence embeddings straight from
the memory-mapped index without another id lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim, DocId
from sciverify.errors import ConfigError
from sciverify.registry import Registry

if TYPE_CHECKING:
    from sciverify.retrieval.index import CorpusIndex

__all__ = [
    "DEFAULT_K",
    "RETRIEVERS",
    "Hit",
    "RetrievalConfig",
    "Retriever",
    "register",
    "top_k",
]

#: Candidate abstracts judged per claim unless a configuration says otherwise: the number the shipped
#: decision was tuned and cross-fitted for (``pipeline.toml``), so every default in the package reads it.
DEFAULT_K = 5


class Hit(NamedTuple):
    """One retrieved abstract: its index row, its doc id and the retriever's score (higher is better)."""

    row: int
    doc_id: DocId
    score: float


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks abstracts of an index for a batch of claim texts."""

    name: str

    def retrieve(self, claim_texts: Sequence[str], k: int) -> list[list[Hit]]:
        """The ``k`` best hits per claim, best first (fewer if the index is smaller)."""
        ...


@dataclass(frozen=True)
class RetrievalConfig:
    """Which retriever to use and how many abstracts to hand on.

    Attributes:
        method: registered name: "tfidf", "bm25", "dense", "fusion" or "oracle".
        k: abstracts per claim (:data:`DEFAULT_K`; the VeriSci paper uses 3).
        dense_mode: "doc" scores one vector per abstract; "maxsim" takes the best sentence.
        fusion: "rrf" (reciprocal rank) or "score" (min-max normalised scores, weighted sum).
        fusion_weight: weight of the dense side in fusion (BM25 gets ``1 - fusion_weight``).
        rrf_k: the RRF constant; fusion_depth: how deep each side's ranking is read.
    """

    method: str = "fusion"
    k: int = DEFAULT_K
    dense_mode: str = "maxsim"
    fusion: str = "score"
    fusion_weight: float = 0.5
    rrf_k: int = 60
    fusion_depth: int = 100

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError(f"retrieval k must be >= 1, got {self.k}")
        if self.dense_mode not in ("doc", "maxsim"):
            raise ConfigError(f"dense_mode must be 'doc' or 'maxsim', got {self.dense_mode!r}")
        if self.fusion not in ("rrf", "score"):
            raise ConfigError(f"fusion must be 'rrf' or 'score', got {self.fusion!r}")
        if not 0.0 <= self.fusion_weight <= 1.0:
            raise ConfigError("fusion_weight must be in [0, 1]")
        if self.rrf_k < 1 or self.fusion_depth < 1:
            raise ConfigError("rrf_k and fusion_depth must be >= 1")


Factory = Callable[["CorpusIndex", RetrievalConfig, "Sequence[Claim] | None"], Retriever]
#: Retriever factories by name; the built-ins register in :mod:`sciverify.retrieval.methods`, which also
#: builds one by name (:func:`sciverify.retrieval.methods.make_retriever`).
RETRIEVERS: Registry[Factory] = Registry("retrieval method")


def register(name: str) -> Callable[[Factory], Factory]:
    """Decorator adding a retriever factory to :data:`RETRIEVERS` under ``name``."""
    return RETRIEVERS.register(name)


def top_k(index: CorpusIndex, scores: npt.NDArray[np.floating], k: int) -> list[Hit]:
    """The ``k`` highest-scoring rows as hits, best first; ties broken by row for determinism."""
    k = min(k, len(scores))
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    order = part[np.lexsort((part, -scores[part]))]
    ids = index.doc_ids(order)
    return [Hit(int(r), d, float(scores[r])) for r, d in zip(order, ids, strict=True)]
