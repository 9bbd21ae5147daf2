"""Retrieval stage: the on-disk corpus index and the retrievers that rank its abstracts for a claim."""

from __future__ import annotations

from sciverify.retrieval.base import Hit, RetrievalConfig, Retriever
from sciverify.retrieval.index import (
    CorpusIndex,
    IndexConfig,
    build_index,
    default_index_dir,
    ensure_default_index,
)
from sciverify.retrieval.methods import make_retriever

__all__ = [
    "CorpusIndex",
    "Hit",
    "IndexConfig",
    "RetrievalConfig",
    "Retriever",
    "build_index",
    "default_index_dir",
    "ensure_default_index",
    "make_retriever",
]
