"""The dense half of an index build: embedding vectors written into the index being built.

Split from :mod:`sciverify.retrieval.builder`, which reads the corpus and writes the text and BM25
files, because this part has its own state and failure story: embedding a large corpus takes hours,
so every finished block is checkpointed (:class:`EmbedCache`) and a killed build resumes from the
first missing block, writing the same bytes. Also here: one vector per abstract from its title and
sentence vectors (:func:`write_doc_vectors`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError
from sciverify.retrieval.layout import IndexConfig, NpyStreamWriter
from sciverify.retrieval.progress import BuildProgress
from sciverify.retrieval.stages import BlockEngine, EmbedStage, run_in_process

__all__ = ["EmbedCache", "decode_range", "embed_cache_dir", "embed_column", "write_doc_vectors"]


def decode_range(
    blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.uint64], start: int, stop: int
) -> list[str]:
    """Strings ``start`` to ``stop`` of a blob column, decoded from one contiguous slice (the blocks
    the embedder is handed)."""
    base = int(offsets[start])
    chunk = bytes(blob[base : int(offsets[stop])])
    cuts = (offsets[start : stop + 1] - base).tolist()
    return [chunk[cuts[i] : cuts[i + 1]].decode("utf-8") for i in range(stop - start)]


def embed_column(
    root: Path,
    name: str,
    out: Path,
    config: IndexConfig,
    progress: BuildProgress,
    label: str,
    engine: BlockEngine | None,
    cache: EmbedCache,
) -> int:
    """Embed every string of one blob column into a float16 ``(n, 384)`` .npy, chunk by chunk (each
    chunk one block for the engine); returns how many blocks came from ``cache``.

    With a cache every finished block is also saved there, so a build killed after hours of
    embedding starts again from the first missing block; the assembled file is the same bytes.
    """
    from sciverify.retrieval.embedder import EMBEDDING_DIM

    blob = np.load(root / f"{name}.blob.npy", mmap_mode="r")
    offsets = np.load(root / f"{name}.offsets.npy", mmap_mode="r")
    n = len(offsets) - 1
    chunk = config.embed_chunk
    starts = range(0, n, chunk)
    done = {i for i in range(len(starts)) if cache.has(name, i)}
    todo = [i for i in range(len(starts)) if i not in done]
    task = progress.task(label, n)
    progress.advance(task, sum(min(n, starts[i] + chunk) - starts[i] for i in done))
    blocks = (decode_range(blob, offsets, starts[i], min(n, starts[i] + chunk)) for i in todo)
    mapper = engine.map if engine is not None else run_in_process
    # in this process (no engine, or the local one) the batches use every core side by side; a Ray
    # actor keeps one session, as it shares its machine with the other actors
    local = engine is None or getattr(engine, "name", "") == "local"
    stage = EmbedStage(config.max_length, config.embed_batch, sessions=(os.cpu_count() or 1) if local else 1)
    writer = NpyStreamWriter(out, np.float16, (EMBEDDING_DIM,))
    try:
        for i, vectors in zip(todo, mapper(stage, blocks), strict=True):
            cache.put(name, i, vectors)
            progress.advance(task, len(vectors))
        for i in range(len(starts)):
            writer.append(cache.get(name, i))
    finally:
        writer.close()
    return len(done)


class EmbedCache:
    """Finished embedding blocks of one build, kept beside the output until the index is installed.

    ``key.json`` names the corpus (sha256), the sciverify version and the build configuration; a
    cache left by another corpus or configuration is discarded, never mixed in. Each block is written
    to a temporary name and renamed, so a block file that exists is complete.
    """

    def __init__(self, path: Path, key: dict[str, Any]) -> None:
        self.path = path
        marker = path / "key.json"
        if path.exists():
            try:
                same = json.loads(marker.read_text(encoding="utf-8")) == key
            except (OSError, ValueError):
                same = False
            if not same:
                shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            marker.write_text(json.dumps(key, sort_keys=True), encoding="utf-8")

    def _file(self, name: str, block: int) -> Path:
        return self.path / f"{name}-{block:06d}.npy"

    def has(self, name: str, block: int) -> bool:
        return self._file(name, block).exists()

    def put(self, name: str, block: int, vectors: npt.NDArray[np.float16]) -> None:
        tmp = self.path / f".{name}-{block:06d}.{os.getpid()}.npy"
        np.save(tmp, vectors, allow_pickle=False)
        tmp.rename(self._file(name, block))

    def get(self, name: str, block: int) -> npt.NDArray[np.float16]:
        try:
            return np.asarray(np.load(self._file(name, block), allow_pickle=False))
        except (OSError, ValueError) as exc:
            raise ArtifactError(
                f"damaged embedding checkpoint {self._file(name, block)} ({exc}); "
                f"delete {self.path} and rerun"
            ) from None


def embed_cache_dir(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.embed-cache")


def write_doc_vectors(root: Path, config: IndexConfig) -> None:
    """One unit vector per abstract from its title and sentence embeddings (``config.doc_vector``)."""
    sent = np.load(root / "dense" / "sentences.npy", mmap_mode="r")
    titles = np.load(root / "dense" / "titles.npy", mmap_mode="r")
    doc_sent = np.load(root / "doc_sentences.npy").astype(np.int64)
    n_docs = len(doc_sent) - 1
    writer = NpyStreamWriter(root / "dense" / "docs.npy", np.float16, (sent.shape[1],))
    step = 8192
    try:
        for start in range(0, n_docs, step):
            stop = min(n_docs, start + step)
            lo, hi = int(doc_sent[start]), int(doc_sent[stop])
            block = np.asarray(sent[lo:hi], dtype=np.float32)
            sums = np.add.reduceat(block, doc_sent[start:stop] - lo, axis=0)
            mean = sums / np.linalg.norm(sums, axis=1, keepdims=True).clip(1e-12)
            title = np.asarray(titles[start:stop], dtype=np.float32)
            if config.doc_vector == "mean":
                vec = mean
            elif config.doc_vector == "title":
                has_title = np.linalg.norm(title, axis=1, keepdims=True) > 0
                vec = np.where(has_title, title, mean)
            else:
                vec = title + mean
            vec /= np.linalg.norm(vec, axis=1, keepdims=True).clip(1e-12)
            writer.append(vec.astype(np.float16))
    finally:
        writer.close()
