"""The default SciFact index as it ships inside the package, and how it becomes a working index.

Embedding the corpus's 51,135 titles and sentences takes 6 to 12 minutes on two cores and gives the
same vectors on every machine whose embedder agrees, so the package carries them: the vectors as int8
with one float32 scale per row (a quarter of float32), the BM25 part exactly as the builder writes it,
and a manifest naming the corpus (sha256) and the embedder (sha256 of its ONNX graph and tokenizer)
that made them. The corpus text is *not* shipped (SciFact is read from disk, never bundled): on first
use :func:`unpack_shipped_index` reads ``corpus.jsonl`` once, checks it is the corpus the vectors were
made from, and writes an ordinary index (format 1) in a few seconds, with no embedding at all.

The unpacked index records the shipped embedder, so the check every load makes
(:mod:`sciverify.retrieval.embedder_check`) still decides whether this machine's embedder may query it;
where it disagrees, ``sciverify index --default`` builds the index here as before. A user's own index
(``sciverify index CORPUS -o DIR``) is never touched: only
:func:`~sciverify.retrieval.index.ensure_default_index` unpacks, and only where no index exists yet.

Files (``retrieval/shipped/``)::

    manifest.json              format, corpus and embedder, counts, config, sha256 of every file, licence
    dense/titles.int8.npy      int8 (n_docs, 384); dense/titles.scale.npy float32 (n_docs,)
    dense/sentences.int8.npy   int8 (n_sentences, 384); dense/sentences.scale.npy float32 (n_sentences,)
    bm25/                      the builder's BM25 files, byte for byte

``sciverify index --default --write-package`` builds the default index from the data and rewrites these
files from it (:func:`write_shipped_index`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sciverify.data.datasets import sha256_file
from sciverify.errors import ArtifactError
from sciverify.retrieval.layout import FORMAT_VERSION, MANIFEST, IndexConfig, NpyStreamWriter


class BuiltIndex(Protocol):
    """What writing the shipped form reads of an opened :class:`~sciverify.retrieval.index.CorpusIndex`
    (a protocol, since that module imports this one to unpack)."""

    root: Path
    config: IndexConfig
    manifest: dict[str, Any]

    @property
    def has_sentence_vectors(self) -> bool: ...

__all__ = [
    "SHIPPED_DIR",
    "SHIPPED_FORMAT",
    "SHIPPED_FORMAT_VERSION",
    "dequantize_rows",
    "quantize_rows",
    "read_shipped_manifest",
    "shipped_matches",
    "unpack_shipped_index",
    "write_shipped_index",
]

#: Where the package keeps the shipped index.
SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"
SHIPPED_FORMAT = "sciverify-shipped-index"
#: Bump when a shipped file changes meaning; the unpacker refuses other versions.
SHIPPED_FORMAT_VERSION = 1
_COLUMNS = ("titles", "sentences")
_ROWS = 16_384  # rows dequantised per step when unpacking
LICENCE = (
    "Derived from the SciFact corpus (Wadden et al., 2020, 'Fact or Fiction: Verifying Scientific Claims'; "
    "abstracts from S2ORC), licensed ODC-By 1.0: MiniLM vectors and BM25 statistics of its titles and "
    "sentences, no text. Attribute the SciFact authors when you redistribute."
)


def quantize_rows(vectors: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 per row: ``q = round(x / s)`` with ``s = max|x| / 127``, so every row uses the
    whole int8 range whatever its largest component (a zero row gets ``s = 0``).

    Shapes: ``vectors`` ``(n, d)``; returns ``(n, d)`` int8 and ``(n,)`` float32.
    """
    x = np.asarray(vectors, dtype=np.float32)
    scale = (np.abs(x).max(axis=1) / 127.0).astype(np.float32) if len(x) else np.zeros(0, np.float32)
    safe = np.where(scale > 0, scale, 1.0)[:, None]
    q = np.clip(np.rint(x / safe), -127, 127).astype(np.int8)
    return q, scale


def dequantize_rows(q: npt.NDArray[np.int8], scale: npt.NDArray[np.float32]) -> npt.NDArray[np.float16]:
    """Rows back as the index stores them: ``q * s``, made unit length again (the stored vectors were
    unit vectors; zero rows stay zero), as float16.

    Shapes: ``q`` ``(n, d)``, ``scale`` ``(n,)``; returns ``(n, d)``.
    """
    x = np.asarray(q, dtype=np.float32) * np.asarray(scale, dtype=np.float32)[:, None]
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x /= np.where(norms > 0, norms, 1.0)
    return x.astype(np.float16)


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != MANIFEST
    )


def read_shipped_manifest(package: Path | None = None) -> dict[str, Any] | None:
    """The shipped index's manifest (of ``package``, default :data:`SHIPPED_DIR`), or None when this
    install carries no shipped index.

    Raises:
        ArtifactError: the manifest is unreadable or of another format version.
    """
    package = package or SHIPPED_DIR
    path = package / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        message = f"unreadable shipped index manifest {path} ({exc}); reinstall sciverify"
        raise ArtifactError(message) from None
    if not isinstance(manifest, dict) or manifest.get("format") != SHIPPED_FORMAT:
        raise ArtifactError(f"{path} is not a shipped sciverify index manifest; reinstall sciverify")
    if manifest.get("format_version") != SHIPPED_FORMAT_VERSION:
        raise ArtifactError(
            f"shipped index {package} has format version {manifest.get('format_version')}, this sciverify "
            f"reads version {SHIPPED_FORMAT_VERSION}; reinstall sciverify"
        )
    return manifest


def shipped_matches(corpus_path: Path, package: Path | None = None) -> bool:
    """Whether the package ships an index of exactly this corpus file (same sha256)."""
    manifest = read_shipped_manifest(package)
    return (
        manifest is not None
        and corpus_path.is_file()
        and manifest["corpus"]["sha256"] == sha256_file(corpus_path)
    )


def write_shipped_index(index: BuiltIndex, package: Path | None = None) -> dict[str, Any]:
    """Write the shipped form of a built, opened index (with sentence vectors) into ``package`` (default
    :data:`SHIPPED_DIR`), replacing what is there, and return its manifest. Written beside ``package``
    and renamed into place, so an interrupted write leaves the old files. The caller opens the index.

    Raises:
        ArtifactError: the index has no sentence vectors, or no embedder record.
    """
    package = package or SHIPPED_DIR
    embedding = index.manifest.get("embedding") or {}
    if not index.has_sentence_vectors or not embedding.get("embedder"):
        raise ArtifactError(
            f"index {index.root} has no sentence vectors or no embedder record; build it with "
            "`sciverify index --default`"
        )
    package.parent.mkdir(parents=True, exist_ok=True)
    tmp = package.with_name(f".{package.name}.writing-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        (tmp / "dense").mkdir(parents=True)
        vectors: dict[str, Any] = {}
        for name in _COLUMNS:
            stored = np.load(index.root / "dense" / f"{name}.npy", mmap_mode="r")
            q, scale = quantize_rows(stored)
            np.save(tmp / "dense" / f"{name}.int8.npy", q, allow_pickle=False)
            np.save(tmp / "dense" / f"{name}.scale.npy", scale, allow_pickle=False)
            back = dequantize_rows(q, scale).astype(np.float32)
            orig = np.asarray(stored, dtype=np.float32)
            nonzero = np.linalg.norm(orig, axis=1) > 0
            cos = (back * orig).sum(axis=1)[nonzero] / np.linalg.norm(orig[nonzero], axis=1)
            vectors[name] = {"rows": int(len(q)), "min_cosine_to_built": round(float(cos.min()), 6)}
        shutil.copytree(index.root / "bm25", tmp / "bm25")
        corpus = index.manifest["corpus"]
        manifest = {
            "format": SHIPPED_FORMAT,
            "format_version": SHIPPED_FORMAT_VERSION,
            "index_format_version": FORMAT_VERSION,
            "sciverify_version": index.manifest.get("sciverify_version"),
            "corpus": {
                "name": "SciFact corpus.jsonl",
                "sha256": corpus["sha256"],
                "bytes": corpus["bytes"],
                "licence": "ODC-By 1.0",
            },
            "licence": LICENCE,
            "config": index.config.to_json(),
            "counts": index.manifest["counts"],
            "embedding": {k: v for k, v in embedding.items() if k not in ("resumed_blocks", "dtype")},
            "vectors": {
                "dtype": "int8",
                "scale": "float32 per row: x = q * scale, made unit length; float16 once unpacked",
                "columns": vectors,
            },
            "files": {rel: sha256_file(tmp / rel) for rel in _files(tmp)},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        old = package.with_name(f".{package.name}.old-{os.getpid()}")
        if package.exists():
            package.rename(old)
        tmp.rename(package)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _check_files(package: Path, manifest: dict[str, Any]) -> None:
    for rel, sha in manifest["files"].items():
        path = package / rel
        if not path.is_file() or sha256_file(path) != sha:
            raise ArtifactError(
                f"shipped index file {path} is missing or damaged (sha256 differs); reinstall sciverify, "
                "or build the index with `sciverify index --default`"
            )


def unpack_shipped_index(
    corpus_path: Path, out_dir: Path, progress: bool = True, package: Path | None = None
) -> Path:
    """Make a working index in ``out_dir`` from the shipped vectors and BM25 part and the text of
    ``corpus_path``; the caller holds :func:`~sciverify.retrieval.builder.index_lock` for ``out_dir``.

    Raises:
        ArtifactError: no shipped index, a damaged file, or a corpus other than the one it was made from.
        DataFormatError: a record of the corpus is malformed.
    """
    from sciverify.retrieval.builder import index_manifest, install_index, read_corpus_into, staging_dir
    from sciverify.retrieval.dense_build import write_doc_vectors
    from sciverify.retrieval.progress import BuildProgress

    started = time.perf_counter()
    package = package or SHIPPED_DIR
    manifest = read_shipped_manifest(package)
    if manifest is None:
        raise ArtifactError(
            f"this sciverify ships no index ({package} is empty); run `sciverify index --default`"
        )
    corpus_sha = sha256_file(corpus_path)
    if corpus_sha != manifest["corpus"]["sha256"]:
        raise ArtifactError(
            f"{corpus_path} is not the corpus the shipped index was made from (sha256 {corpus_sha[:12]}, "
            f"shipped {manifest['corpus']['sha256'][:12]}); build its index with `sciverify index --default`"
        )
    _check_files(package, manifest)
    config = IndexConfig.from_json(manifest["config"])
    tmp = staging_dir(out_dir, "unpacking")
    try:
        with BuildProgress(progress) as bar:
            counts = read_corpus_into(corpus_path, tmp, config, bar)
        counts["vocabulary"] = manifest["counts"]["vocabulary"]
        if counts != manifest["counts"]:
            raise ArtifactError(
                f"{corpus_path} gives counts {counts}, the shipped index has {manifest['counts']}; "
                "build its index with `sciverify index --default`"
            )
        shutil.copytree(package / "bm25", tmp / "bm25")
        (tmp / "dense").mkdir()
        for name in _COLUMNS:
            q = np.load(package / "dense" / f"{name}.int8.npy", mmap_mode="r")
            scale = np.load(package / "dense" / f"{name}.scale.npy", mmap_mode="r")
            writer = NpyStreamWriter(tmp / "dense" / f"{name}.npy", np.float16, (q.shape[1],))
            try:
                for start in range(0, len(q), _ROWS):
                    writer.append(dequantize_rows(q[start : start + _ROWS], scale[start : start + _ROWS]))
            finally:
                writer.close()
        write_doc_vectors(tmp, config)
        embedding = manifest["embedding"]
        seconds = time.perf_counter() - started
        written = index_manifest(
            config,
            corpus_path,
            corpus_sha,
            counts,
            ann=False,
            metadata=(tmp / "meta.blob.npy").exists(),
            embedder=embedding.get("embedder"),
            resumed_blocks=0,
            build_seconds=seconds,
            timings={"unpack": round(seconds, 2)},
            vectors_from={"shipped": str(package), "dtype": manifest["vectors"]["dtype"]},
        )
        (tmp / MANIFEST).write_text(json.dumps(written, indent=2), encoding="utf-8")
        install_index(tmp, out_dir)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    return out_dir
