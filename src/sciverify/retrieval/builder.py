"""Build a corpus index from a SciFact-format JSONL file, streaming.

The corpus is read once, record by record: each abstract is validated, its text appended to the
UTF-8 blobs and its BM25 tokens to flat typed arrays, and then it is dropped, so memory grows with
the number of tokens (typed arrays), never with a million Python ``Abstract`` objects. Every record
is checked before the minutes of embedding start, so a bad line 900,000 fails fast. Dense vectors
are then computed chunk by chunk from the memory-mapped sentence blob, resumably
(:mod:`sciverify.retrieval.dense_build`).

The index is built in a temporary sibling directory and renamed into place at the end, so a crash
or Ctrl-C never leaves a half-written index where a reader would open it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from array import array
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from sciverify._version import __version__
from sciverify.data.datasets import sha256_file
from sciverify.data.io import iter_jsonl, parse_abstract
from sciverify.data.records import PaperMeta, doc_key
from sciverify.errors import ArtifactError, DataFormatError
from sciverify.retrieval.bm25 import Bm25Accumulator, Bm25Tokenizer
from sciverify.retrieval.dense_build import EmbedCache, embed_cache_dir, embed_column, write_doc_vectors
from sciverify.retrieval.layout import (
    ANN_MIN_DOCS,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,
    IndexConfig,
    NpyStreamWriter,
    doc_vector_column,
    key_hash,
)
from sciverify.retrieval.progress import BuildProgress
from sciverify.retrieval.stages import BlockEngine, SplitStage, run_in_process

__all__ = [
    "build_index",
    "build_index_unlocked",
    "index_lock",
    "index_manifest",
    "install_index",
    "read_corpus_into",
    "staging_dir",
]

EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX, mean pooling, L2-normalised)"


_READ_BLOCK = 512  # records per block handed to the sentence splitter


def _parse(path: Path, line: int, obj: Any) -> Any:
    try:
        return parse_abstract(obj)
    except ValueError as exc:
        raise DataFormatError(str(exc), path, line) from None


def _line_blocks(path: Path) -> Iterator[list[tuple[int, Any]]]:
    block: list[tuple[int, Any]] = []
    for item in iter_jsonl(path):
        block.append(item)
        if len(block) == _READ_BLOCK:
            yield block
            block = []
    if block:
        yield block


def _string_abstract(obj: Any) -> str | None:
    return obj["abstract"] if isinstance(obj, dict) and isinstance(obj.get("abstract"), str) else None


def _records(path: Path, split: bool, engine: BlockEngine | None = None) -> Iterator[tuple[int, Any]]:
    """Validated abstracts with their line numbers; ``split`` turns a string abstract into sentences
    (on the engine's workers, block by block, in file order)."""
    if not split:
        for line, obj in iter_jsonl(path):
            if _string_abstract(obj) is not None:
                raise DataFormatError(
                    "abstract is one string, not a list of sentences; pass --split-sentences to split it",
                    path,
                    line,
                )
            yield line, _parse(path, line, obj)
        return
    pending: deque[list[tuple[int, Any]]] = deque()

    def texts() -> Iterator[list[str | None]]:
        for block in _line_blocks(path):
            pending.append(block)
            yield [_string_abstract(obj) for _, obj in block]

    mapper = engine.map if engine is not None else run_in_process
    for split_block in mapper(SplitStage(), texts()):
        for (line, obj), sentences in zip(pending.popleft(), split_block, strict=True):
            if sentences is not None:
                obj = {**obj, "abstract": sentences}
            yield line, _parse(path, line, obj)


class _TextStore:
    """Streams ids, titles and sentences of one pass over the corpus into the index directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.titles = NpyStreamWriter(root / "titles.blob.npy", np.uint8)
        self.sentences = NpyStreamWriter(root / "sentences.blob.npy", np.uint8)
        self.meta = NpyStreamWriter(root / "meta.blob.npy", np.uint8)
        self.meta_off = array("Q", [0])
        self.title_off = array("Q", [0])
        self.sent_off = array("Q", [0])
        self.doc_sent = array("Q", [0])
        self.structured = array("B")
        self.int_ids = array("q")
        self.is_int = array("B")
        self.id_blob = bytearray()
        self.id_off = array("Q", [0])
        self.hashes = array("Q")
        self.lines = array("q")

    def add(
        self,
        line: int,
        doc_id: int | str,
        title: str,
        sentences: tuple[str, ...],
        structured: bool,
        meta: PaperMeta | None = None,
    ) -> None:
        if isinstance(doc_id, int) and not -(2**63) <= doc_id < 2**63:
            raise ValueError(f"doc_id {doc_id} does not fit in 64 bits")
        key = doc_key(doc_id)
        self.hashes.append(key_hash(key))
        self.lines.append(line)
        self.is_int.append(1 if isinstance(doc_id, int) else 0)
        self.int_ids.append(doc_id if isinstance(doc_id, int) else 0)
        self.id_blob += key.encode("utf-8")
        self.id_off.append(len(self.id_blob))
        data = title.encode("utf-8")
        self.titles.append_bytes(data)
        self.title_off.append(self.title_off[-1] + len(data))
        for sentence in sentences:
            data = sentence.encode("utf-8")
            self.sentences.append_bytes(data)
            self.sent_off.append(self.sent_off[-1] + len(data))
        self.doc_sent.append(len(self.sent_off) - 1)
        self.structured.append(1 if structured else 0)
        data = orjson.dumps(meta.to_json()) if meta is not None else b""
        self.meta.append_bytes(data)
        self.meta_off.append(self.meta_off[-1] + len(data))

    def close(self) -> None:
        self.titles.close()
        self.sentences.close()
        self.meta.close()

    @property
    def n_docs(self) -> int:
        return len(self.structured)

    def id_of(self, row: int) -> str:
        return bytes(self.id_blob[self.id_off[row] : self.id_off[row + 1]]).decode("utf-8")

    def check_duplicates(self, path: Path) -> None:
        """Equal hashes are compared by key; the earliest duplicate line is reported."""
        hashes = np.frombuffer(self.hashes, dtype=np.uint64)
        order = np.argsort(hashes, kind="stable")
        same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
        worst: tuple[int, int | str, int] | None = None
        for i in same:
            first, second = int(order[i]), int(order[i + 1])
            if self.id_of(first) == self.id_of(second):
                line = self.lines[second]
                if worst is None or line < worst[0]:
                    shown = int(self.id_of(second)) if self.is_int[second] else self.id_of(second)
                    worst = (line, shown, self.lines[first])
        if worst is not None:
            raise DataFormatError(
                f"duplicate doc_id {worst[1]!r} (first seen on line {worst[2]})", path, worst[0]
            )

    def finish(self) -> dict[str, Any]:
        """Close the blobs and write every small array; returns the id kind and counts."""
        self.close()
        save = self.root.joinpath
        if self.meta_off[-1]:
            np.save(save("meta.offsets.npy"), np.frombuffer(self.meta_off, np.uint64), allow_pickle=False)
        else:  # no record carried metadata (SciFact): the index looks exactly as before
            save("meta.blob.npy").unlink()
        np.save(save("titles.offsets.npy"), np.frombuffer(self.title_off, np.uint64), allow_pickle=False)
        np.save(save("sentences.offsets.npy"), np.frombuffer(self.sent_off, np.uint64), allow_pickle=False)
        np.save(save("doc_sentences.npy"), np.frombuffer(self.doc_sent, np.uint64), allow_pickle=False)
        np.save(save("structured.npy"), np.frombuffer(self.structured, np.uint8), allow_pickle=False)
        is_int = np.frombuffer(self.is_int, np.uint8)
        if is_int.all():
            kind = "int"
            np.save(save("ids.npy"), np.frombuffer(self.int_ids, np.int64), allow_pickle=False)
        else:
            kind = "str" if not is_int.any() else "mixed"
            np.save(save("ids.blob.npy"), np.frombuffer(bytes(self.id_blob), np.uint8), allow_pickle=False)
            np.save(save("ids.offsets.npy"), np.frombuffer(self.id_off, np.uint64), allow_pickle=False)
            if kind == "mixed":
                np.save(save("ids.is_int.npy"), is_int, allow_pickle=False)
        hashes = np.frombuffer(self.hashes, dtype=np.uint64)
        order = np.argsort(hashes, kind="stable")
        np.save(save("lookup.hash.npy"), hashes[order], allow_pickle=False)
        np.save(save("lookup.row.npy"), order.astype(np.int64), allow_pickle=False)
        return {"id_kind": kind, "docs": self.n_docs, "sentences": len(self.sent_off) - 1}


def staging_dir(out_dir: Path, verb: str) -> Path:
    """A fresh temporary sibling of ``out_dir`` (``.NAME.VERB-PID``) to write an index into before
    :func:`install_index` renames it into place; those a killed process left behind are removed first."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ArtifactError(f"{out_dir} is a file, expected an index directory")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.parent.glob(f".{out_dir.name}.{verb}-*"):  # left by a killed process
        shutil.rmtree(stale, ignore_errors=True)
    tmp = out_dir.with_name(f".{out_dir.name}.{verb}-{os.getpid()}")
    tmp.mkdir()
    return tmp


def read_corpus_into(
    corpus_path: Path,
    root: Path,
    config: IndexConfig,
    bar: BuildProgress,
    engine: BlockEngine | None = None,
    bm25: Bm25Accumulator | None = None,
) -> dict[str, Any]:
    """One pass over the corpus: every record validated and its text written to the text store in
    ``root`` (ids, titles, sentences, lookup table), its tokens counted into ``bm25`` when given (the
    shipped index brings its BM25 part ready-made). Returns the counts for the manifest.

    Raises:
        DataFormatError: a record is malformed, has no sentences, or repeats a doc id (with file:line).
    """
    store = _TextStore(root)
    reading = bar.task(f"reading {corpus_path.name}", None)
    try:
        for line, ab in _records(corpus_path, config.split_sentences, engine):
            try:
                store.add(line, ab.doc_id, ab.title, ab.sentences, ab.structured, ab.meta)
            except ValueError as exc:
                raise DataFormatError(str(exc), corpus_path, line) from None
            if bm25 is not None:
                bm25.add(ab.title + " " + " ".join(ab.sentences))
            bar.advance(reading)
    finally:
        store.close()
    if store.n_docs == 0:
        raise DataFormatError("no corpus records in file (is it empty?)", corpus_path)
    store.check_duplicates(corpus_path)
    return store.finish()


def index_manifest(
    config: IndexConfig,
    corpus_path: Path,
    corpus_sha: str,
    counts: dict[str, Any],
    *,
    ann: bool,
    metadata: bool,
    embedder: dict[str, object] | None,
    resumed_blocks: int,
    build_seconds: float,
    timings: dict[str, float],
    vectors_from: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``manifest.json`` of an index, built or unpacked from the shipped form (``vectors_from``
    then says where its vectors came from, recorded as ``embedding.from``)."""
    embedding: dict[str, Any] | None = None
    if config.dense:
        embedding = {
            "model": EMBEDDING_MODEL,
            "dim": 384,
            "dtype": "float16",
            "max_length": config.max_length,
            "text": config.dense_text,
            "resumed_blocks": resumed_blocks,
            "embedder": embedder,
        }
        if vectors_from is not None:
            embedding["from"] = vectors_from
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "sciverify_version": __version__,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": config.to_json(),
        "corpus": {
            "path": str(corpus_path.resolve()),
            "sha256": corpus_sha,
            "bytes": corpus_path.stat().st_size,
        },
        "counts": counts,
        "components": {
            "bm25": True,
            "dense": config.dense,
            "sentence_vectors": config.dense and config.dense_text == "sentences",
            "ann": ann,
            "metadata": metadata,
        },
        "embedding": embedding,
        "build_seconds": round(build_seconds, 2),
        "build_timings": timings,
    }


def _wants_ann(config: IndexConfig, n_docs: int) -> bool:
    """Whether to build the HNSW graph: always with ``ann="on"`` (usearch was checked before the build
    started), from :data:`ANN_MIN_DOCS` abstracts with ``"auto"`` when usearch is there (else the exact
    scan)."""
    if config.ann == "on":
        return True
    if config.ann == "auto" and n_docs >= ANN_MIN_DOCS:
        from sciverify.retrieval.ann import usearch_available

        return usearch_available()
    return False


def install_index(tmp: Path, out_dir: Path) -> None:
    """Move a finished build into place, replacing an older index but never a foreign directory."""
    if out_dir.exists():
        if out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()
        elif (out_dir / MANIFEST).exists():
            old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
            out_dir.rename(old)
            tmp.rename(out_dir)
            shutil.rmtree(old, ignore_errors=True)
            return
        else:
            raise ArtifactError(f"{out_dir} exists and is not a sciverify index; choose another directory")
    tmp.rename(out_dir)


@contextlib.contextmanager
def index_lock(out_dir: str | Path) -> Iterator[None]:
    """Hold an exclusive lock for building ``out_dir``, so concurrent builders wait instead of
    repeating minutes of embedding (e.g. two web workers starting on a fresh machine)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with (out_dir.parent / f".{out_dir.name}.lock").open("a") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock, builds still never clash (private temp dirs)
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_index(
    corpus_path: str | Path,
    out_dir: str | Path,
    config: IndexConfig | None = None,
    progress: bool = True,
    engine: BlockEngine | None = None,
) -> Path:
    """Build an index of a SciFact-format corpus into ``out_dir`` and return that path.

    ``engine`` runs sentence splitting and embedding block by block (None: in this process; see
    :mod:`sciverify.pipeline.engines` for Ray); the files written are the same either way.

    Raises:
        DataFormatError: a record is malformed, has no sentences, or repeats a doc id (with file:line).
        ArtifactError: ``out_dir`` is an existing directory that is not an index.
        EngineError: the engine lost a worker; no index is left behind.
    """
    with index_lock(out_dir):
        return build_index_unlocked(corpus_path, out_dir, config, progress, engine)


def build_index_unlocked(
    corpus_path: str | Path,
    out_dir: str | Path,
    config: IndexConfig | None = None,
    progress: bool = True,
    engine: BlockEngine | None = None,
) -> Path:
    """:func:`build_index` for a caller that already holds :func:`index_lock`."""
    config = config or IndexConfig()
    corpus_path = Path(corpus_path)
    if config.dense and config.ann == "on":
        from sciverify.retrieval.ann import _usearch

        _usearch()  # a missing extra fails before any work
    out_dir = Path(out_dir)
    tmp = staging_dir(out_dir, "building")
    started = time.perf_counter()
    corpus_sha = sha256_file(corpus_path) if corpus_path.is_file() else ""
    try:
        with BuildProgress(progress) as bar:
            bm25 = Bm25Accumulator(Bm25Tokenizer(config.stemmer))
            counts = read_corpus_into(corpus_path, tmp, config, bar, engine, bm25)
            counts["vocabulary"] = len(bm25.vocab)
            bm25.write(tmp / "bm25", config.bm25_method, config.bm25_k1, config.bm25_b)
            del bm25
            timings = {"text_and_bm25": round(time.perf_counter() - started, 2)}
            resumed = 0
            ann = False
            identity: dict[str, object] | None = None
            if config.dense:
                from sciverify.retrieval.embedder import embedder_identity

                # which model makes the vectors: recorded so another machine can tell (see
                # embedder_check.check_embedder), and part of the checkpoint key so a resumed build never
                # mixes blocks of two models
                identity = embedder_identity(config.max_length)
                (tmp / "dense").mkdir()
                t = time.perf_counter()
                key = {
                    "corpus_sha256": corpus_sha,
                    "sciverify_version": __version__,
                    "config": {k: v for k, v in config.to_json().items() if k != "ann"},
                    "embedder": identity,
                }
                cache = EmbedCache(embed_cache_dir(out_dir), key)
                resumed += embed_column(
                    tmp,
                    "titles",
                    tmp / "dense" / "titles.npy",
                    config,
                    bar,
                    "embedding titles",
                    engine,
                    cache,
                )
                if config.dense_text == "sentences":
                    resumed += embed_column(
                        tmp,
                        "sentences",
                        tmp / "dense" / "sentences.npy",
                        config,
                        bar,
                        "embedding sentences",
                        engine,
                        cache,
                    )
                    write_doc_vectors(tmp, config)
                timings["embeddings"] = round(time.perf_counter() - t, 2)
                ann = _wants_ann(config, counts["docs"])
                if ann:
                    from sciverify.retrieval.ann import ANN_FILE, build_ann

                    t = time.perf_counter()
                    name = doc_vector_column(config.dense_text == "sentences")
                    build_ann(np.load(tmp / "dense" / f"{name}.npy", mmap_mode="r"), tmp / "dense" / ANN_FILE)
                    timings["ann"] = round(time.perf_counter() - t, 2)
        manifest = index_manifest(
            config,
            corpus_path,
            corpus_sha,
            counts,
            ann=ann,
            metadata=(tmp / "meta.blob.npy").exists(),
            embedder=identity,
            resumed_blocks=resumed,
            build_seconds=time.perf_counter() - started,
            timings=timings,
        )
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        install_index(tmp, out_dir)
        shutil.rmtree(embed_cache_dir(out_dir), ignore_errors=True)  # the checkpoints are in the index now
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    return out_dir
