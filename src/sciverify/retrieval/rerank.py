"""Optional reranking between retrieval and rationale selection.

Retrieval ranks abstracts by how well the claim matches the whole abstract (BM25) or its best sentence
(dense maxsim). A reranker reads deeper before the costly stages run: it scores every sentence of the first
``depth`` retrieved abstracts with the rationale selector's cheap head (trees over stored embeddings, no
transformer) and reorders the candidates by a mix of their retrieval score and their best sentence's score.
Only the first ``k`` after reranking reach the label model.

On SciFact it buys nothing, and the shipped ``pipeline.toml`` leaves it off: fusion retrieval already finds
within its first 5 abstracts every gold abstract it finds within 20 (docs/pipeline.md, "Reranking"). It is
for corpora where the first-stage ranking is weaker than the selector's reading of the sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sciverify.errors import ConfigError
from sciverify.retrieval.base import Hit

__all__ = ["RERANKERS", "RerankConfig", "rerank"]

#: "none" keeps the retriever's order; "sentence" reorders by the cheap head's best sentence score.
RERANKERS = ("none", "sentence")


@dataclass(frozen=True)
class RerankConfig:
    """Whether and how deep to rerank.

    Attributes:
        method: one of :data:`RERANKERS`.
        depth: retrieved abstracts read by the reranker (at least ``k``; the first ``k`` after it go on).
        weight: weight of the best sentence score; the retrieval score, min-max normalised over the
            ``depth`` candidates of the claim, gets ``1 - weight``.
    """

    method: str = "none"
    depth: int = 20
    weight: float = 0.3

    def __post_init__(self) -> None:
        if self.method not in RERANKERS:
            raise ConfigError(f"rerank method must be one of {', '.join(RERANKERS)}, got {self.method!r}")
        if self.depth < 1:
            raise ConfigError(f"rerank depth must be >= 1, got {self.depth}")
        if not 0.0 <= self.weight <= 1.0:
            raise ConfigError(f"rerank weight must be in [0, 1], got {self.weight}")

    @property
    def enabled(self) -> bool:
        return self.method != "none"


def rerank(hits: Sequence[Hit], best_sentence: Sequence[float], weight: float) -> list[Hit]:
    """``hits`` ordered by ``(1 - weight) * normalised retrieval score + weight * best_sentence``, best first;
    ties keep the retriever's order. The hits keep their retrieval scores, which later stages read."""
    if len(hits) != len(best_sentence):
        raise ValueError(f"{len(hits)} hits but {len(best_sentence)} sentence scores")
    if not hits:
        return []
    retrieval = np.asarray([h.score for h in hits], dtype=np.float64)
    spread = float(retrieval.max() - retrieval.min())
    normalised = (retrieval - retrieval.min()) / spread if spread > 0 else np.ones_like(retrieval)
    combined = (1.0 - weight) * normalised + weight * np.asarray(best_sentence, dtype=np.float64)
    order = np.argsort(-combined, kind="stable")
    return [hits[int(i)] for i in order]
