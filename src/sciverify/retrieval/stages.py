"""The heavy steps of an index build as stage objects an engine can run on blocks of the corpus.

A stage is a small picklable object; calling it once (on each worker) returns the function applied to
every block, so a worker loads the embedder once and reuses it. :func:`run_in_process` runs a stage
here; :mod:`sciverify.pipeline.engines` runs the same stages on a Ray actor pool. Both see the same
blocks in the same order, and the embedder batches within a block exactly as one process would, so
the bytes written are the same whichever engine ran them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["BlockEngine", "EmbedStage", "SplitStage", "run_in_process"]

T = TypeVar("T")
R = TypeVar("R")


class BlockEngine(Protocol):
    """Anything that maps a stage over blocks, yielding results in block order."""

    def map(self, stage: Callable[[], Callable[[Any], Any]], blocks: Iterable[Any]) -> Iterator[Any]: ...


def run_in_process(stage: Callable[[], Callable[[T], R]], blocks: Iterable[T]) -> Iterator[R]:
    """The stage applied to each block in this process, in order."""
    fn = stage()
    for block in blocks:
        yield fn(block)


@dataclass(frozen=True)
class SplitStage:
    """Sentence splitting of string abstracts; ``None`` entries (already split) pass through."""

    def __call__(self) -> Callable[[list[str | None]], list[list[str] | None]]:
        from sciverify.data.sentences import split_sentences

        def split(texts: list[str | None]) -> list[list[str] | None]:
            return [None if t is None else split_sentences(t) for t in texts]

        return split


@dataclass(frozen=True)
class EmbedStage:
    """MiniLM embeddings of a block of texts as float16 rows (what an index stores; ``dtype="float32"``
    keeps the embedder's own precision, for measuring what float16 or int8 storage costs); blank texts
    get the zero vector.

    ``sessions`` > 1 runs a block's batches side by side, one single-threaded session each (see
    :class:`~sciverify.retrieval.embedder.Embedder`): the same vectors, sooner, where this process has
    the machine's cores to itself.
    """

    max_length: int
    batch_size: int
    threads: int | None = None
    sessions: int = 1
    dtype: str = "float16"

    def __call__(self) -> Callable[[list[str]], npt.NDArray[np.floating[Any]]]:
        from sciverify.retrieval.embedder import Embedder, get_embedder

        embedder = (
            get_embedder(self.max_length)
            if self.threads is None and self.sessions == 1
            else Embedder(max_length=self.max_length, threads=self.threads, sessions=self.sessions)
        )

        def embed(texts: list[str]) -> npt.NDArray[np.floating[Any]]:
            vectors = embedder.encode(texts, batch_size=self.batch_size)
            vectors[[i for i, t in enumerate(texts) if not t.strip()]] = 0.0  # blank text: no direction
            return vectors.astype(self.dtype)

        return embed
