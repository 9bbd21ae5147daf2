"""Open a corpus index (memory-mapped) and read abstracts, ids and embeddings out of it.

Opening costs a few milliseconds whatever the corpus size: every array is memory-mapped, so pages
are read only when a row is touched, and the operating system shares them between processes (web
workers) for free. Doc ids map to rows through a sorted table of 64-bit key hashes searched with
``np.searchsorted`` and checked against the stored id, instead of a dict holding a million strings.

Also here: the default index of the built-in SciFact corpus (``default_index_dir``,
``ensure_default_index``), unpacked on first use from the copy the package ships
(:mod:`sciverify.retrieval.shipped_index`). The check that this machine's embedder still makes the
vectors an index stores is :mod:`sciverify.retrieval.embedder_check`; see
:mod:`sciverify.retrieval.layout` for the files.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from sciverify.data.io import parse_meta
from sciverify.data.records import Abstract, DocId, PaperMeta, doc_key
from sciverify.errors import ArtifactError
from sciverify.retrieval.builder import build_index
from sciverify.retrieval.layout import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,
    IndexConfig,
    doc_vector_column,
    key_hash,
)

__all__ = [
    "FORMAT_VERSION",
    "CorpusIndex",
    "IndexConfig",
    "build_index",
    "build_summary",
    "default_index_dir",
    "ensure_default_index",
]

_REBUILD = "rebuild it with `sciverify index`"
#: Rows whose sentence vectors an index without stored ones keeps after computing them.
LAZY_ROWS = 1024


def _load(path: Path) -> npt.NDArray[Any]:
    try:
        array: npt.NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
        return array
    except FileNotFoundError:
        raise ArtifactError(f"index file missing: {path}; {_REBUILD}") from None
    except ValueError as exc:
        raise ArtifactError(f"index file damaged: {path} ({exc}); {_REBUILD}") from None


class CorpusIndex:
    """A read-only, memory-mapped corpus index. Rows are 0..len-1 in corpus file order."""

    def __init__(self, root: Path, manifest: dict[str, Any]) -> None:
        self.root = root
        self.manifest = manifest
        self.config = IndexConfig.from_json(manifest.get("config", {}))
        self.id_kind: str = manifest["counts"]["id_kind"]
        self._titles = _load(root / "titles.blob.npy")
        self._title_off = _load(root / "titles.offsets.npy")
        self._sents = _load(root / "sentences.blob.npy")
        self._sent_off = _load(root / "sentences.offsets.npy")
        self._doc_sent = _load(root / "doc_sentences.npy")
        self._structured = _load(root / "structured.npy")
        self._hash = _load(root / "lookup.hash.npy")
        self._hash_row = _load(root / "lookup.row.npy")
        if self.id_kind == "int":
            self._ids = _load(root / "ids.npy")
        else:
            self._id_blob = _load(root / "ids.blob.npy")
            self._id_off = _load(root / "ids.offsets.npy")
            self._id_is_int = _load(root / "ids.is_int.npy") if self.id_kind == "mixed" else None
        self._meta: npt.NDArray[Any] | None = None
        self._meta_off: npt.NDArray[Any] | None = None
        if (root / "meta.blob.npy").exists():
            self._meta = _load(root / "meta.blob.npy")
            self._meta_off = _load(root / "meta.offsets.npy")
        self._n = len(self._doc_sent) - 1
        self._lazy: OrderedDict[int, npt.NDArray[np.float16]] = OrderedDict()
        self._lazy_embed: Any = None
        self._lazy_lock = threading.Lock()
        if self._n != manifest["counts"]["docs"] or len(self._hash) != self._n:
            raise ArtifactError(f"index in {root} is inconsistent (document counts differ); {_REBUILD}")

    @classmethod
    def open(cls, directory: str | Path) -> CorpusIndex:
        """Open an index directory; raises ArtifactError if it is missing, damaged or of another format."""
        root = Path(directory)
        path = root / MANIFEST
        if not path.exists():
            raise ArtifactError(
                f"no index in {root} (manifest.json missing); build one with `sciverify index`"
            )
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ArtifactError(f"unreadable index manifest {path} ({exc}); {_REBUILD}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
            raise ArtifactError(f"{root} is not a sciverify corpus index; {_REBUILD}")
        version = manifest.get("format_version")
        if version != FORMAT_VERSION:
            raise ArtifactError(
                f"index {root} has format version {version} (built by sciverify "
                f"{manifest.get('sciverify_version', '?')}), this sciverify reads version {FORMAT_VERSION}; "
                f"{_REBUILD}"
            )
        return cls(root, manifest)

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"CorpusIndex({str(self.root)!r}, docs={self._n}, sentences={self.n_sentences})"

    @property
    def n_sentences(self) -> int:
        return len(self._sent_off) - 1

    @property
    def has_dense(self) -> bool:
        return bool(self.manifest.get("components", {}).get("dense"))

    @property
    def has_sentence_vectors(self) -> bool:
        """False for an index embedded with ``dense_text="title"``: its sentence vectors are computed
        for the abstracts a claim retrieves, when it retrieves them."""
        components = self.manifest.get("components", {})
        return self.has_dense and bool(components.get("sentence_vectors", True))

    @cached_property
    def ann(self) -> Any:
        """The memory-mapped HNSW graph over the doc vectors (:class:`~sciverify.retrieval.ann.AnnIndex`),
        or None when the index was built without one (exact search)."""
        if not self.manifest.get("components", {}).get("ann"):
            return None
        from sciverify.retrieval.ann import ANN_FILE, AnnIndex

        path = self.root / "dense" / ANN_FILE
        if not path.exists():
            raise ArtifactError(f"index file missing: {path}; {_REBUILD}")
        return AnnIndex(path, self._n)

    # ---- ids -------------------------------------------------------------------------------------

    def doc_id(self, row: int) -> DocId:
        """The doc id of a row, as the corpus gave it (int or str)."""
        if self.id_kind == "int":
            return int(self._ids[row])
        text = bytes(self._id_blob[int(self._id_off[row]) : int(self._id_off[row + 1])]).decode("utf-8")
        if self._id_is_int is not None and self._id_is_int[row]:
            return int(text)
        return text

    def doc_ids(self, rows: Sequence[int] | npt.NDArray[np.integer[Any]]) -> list[DocId]:
        if self.id_kind == "int":
            return [int(x) for x in self._ids[np.asarray(rows, dtype=np.int64)]]
        return [self.doc_id(int(r)) for r in rows]

    def row_of(self, doc_id: DocId) -> int | None:
        """The row of a doc id, or None. ``4983`` and ``"4983"`` are the same doc (see ``doc_key``)."""
        key = doc_key(doc_id)
        h = np.uint64(key_hash(key))
        i = int(np.searchsorted(self._hash, h, side="left"))
        while i < self._n and self._hash[i] == h:
            row = int(self._hash_row[i])
            if doc_key(self.doc_id(row)) == key:
                return row
            i += 1
        return None

    # ---- text ------------------------------------------------------------------------------------

    def title(self, row: int) -> str:
        return bytes(self._titles[int(self._title_off[row]) : int(self._title_off[row + 1])]).decode("utf-8")

    def sentence_range(self, row: int) -> tuple[int, int]:
        """Global sentence numbers ``[start, stop)`` of a row (rows into ``sentence_embeddings``)."""
        return int(self._doc_sent[row]), int(self._doc_sent[row + 1])

    def sentence_starts(self) -> npt.NDArray[np.int64]:
        """First global sentence number of every row. Shapes: ``(n_docs,)``."""
        return np.asarray(self._doc_sent[:-1], dtype=np.int64)

    def sentences(self, row: int) -> tuple[str, ...]:
        start, stop = self.sentence_range(row)
        offsets = self._sent_off[start : stop + 1].astype(np.int64)
        chunk = bytes(self._sents[offsets[0] : offsets[-1]])
        cuts = (offsets - offsets[0]).tolist()
        return tuple(chunk[cuts[i] : cuts[i + 1]].decode("utf-8") for i in range(stop - start))

    def meta(self, row: int) -> PaperMeta | None:
        """Where the abstract comes from (doi, pmid, journal, year, url), when the corpus said so."""
        if self._meta is None or self._meta_off is None:
            return None
        raw = bytes(self._meta[int(self._meta_off[row]) : int(self._meta_off[row + 1])])
        return parse_meta(orjson.loads(raw)) if raw else None

    def meta_blob(self) -> npt.NDArray[Any] | None:
        """Every record's metadata as one memory-mapped byte array (JSON objects end to end), or None
        when the corpus carries none: scanned whole for the years it spans."""
        return self._meta

    def abstract(self, row: int) -> Abstract:
        if not 0 <= row < self._n:
            raise IndexError(f"row {row} out of range for an index of {self._n} documents")
        return Abstract(
            doc_id=self.doc_id(row),
            title=self.title(row),
            sentences=self.sentences(row),
            structured=bool(self._structured[row]),
            meta=self.meta(row),
        )

    def text(self, row: int) -> str:
        """Title and abstract as one string (what the lexical retrievers index)."""
        return self.title(row) + " " + " ".join(self.sentences(row))

    def iter_texts(self) -> Iterator[str]:
        for row in range(self._n):
            yield self.text(row)

    # ---- dense -----------------------------------------------------------------------------------

    def _dense(self, name: str) -> npt.NDArray[np.float16]:
        if not self.has_dense:
            raise ArtifactError(f"index {self.root} was built without embeddings; rebuild without --no-dense")
        return _load(self.root / "dense" / f"{name}.npy")

    @cached_property
    def all_sentence_embeddings(self) -> npt.NDArray[np.float16]:
        """Memory-mapped float16 ``(n_sentences, 384)`` unit vectors, in global sentence order."""
        if self.has_dense and not self.has_sentence_vectors:
            raise ArtifactError(
                f"index {self.root} stores title vectors only (built with --dense-text title); "
                "sentence vectors are computed per abstract"
            )
        return self._dense("sentences")

    @cached_property
    def doc_embeddings(self) -> npt.NDArray[np.float16]:
        """Memory-mapped float16 ``(n_docs, 384)``: one unit vector per abstract (the title vector
        in an index built with ``dense_text="title"``)."""
        return self._dense(doc_vector_column(self.has_sentence_vectors))

    @cached_property
    def title_embeddings(self) -> npt.NDArray[np.float16]:
        """Memory-mapped float16 ``(n_docs, 384)``; all zeros where a title is empty."""
        return self._dense("titles")

    def sentence_embeddings(self, row: int) -> npt.NDArray[np.float16]:
        """Embeddings of one abstract's sentences. Shapes: ``(n_sentences_of_row, 384)`` float16.

        An index without stored sentence vectors embeds the row's sentences now and keeps the last
        :data:`LAZY_ROWS` rows, so a claim's few retrieved abstracts cost one model call each.
        """
        if not self.has_sentence_vectors and self.has_dense:
            return self._lazy_sentence_embeddings(row)
        start, stop = self.sentence_range(row)
        return self.all_sentence_embeddings[start:stop]

    def _lazy_sentence_embeddings(self, row: int) -> npt.NDArray[np.float16]:
        cache = self._lazy
        with self._lazy_lock:
            if row in cache:
                cache.move_to_end(row)
                return cache[row]
        from sciverify.retrieval.stages import EmbedStage

        embed = self._lazy_embed
        if embed is None:
            embed = self._lazy_embed = EmbedStage(self.config.max_length, self.config.embed_batch)()
        vectors: npt.NDArray[np.float16] = embed(list(self.sentences(row)))
        with self._lazy_lock:
            cache[row] = vectors
            if len(cache) > LAZY_ROWS:
                cache.popitem(last=False)
        return vectors

    @cached_property
    def bm25(self) -> Any:
        """The BM25 scorer (:class:`sciverify.retrieval.bm25.Bm25Scorer`), loaded on first use."""
        from sciverify.retrieval.bm25 import Bm25Scorer

        return Bm25Scorer(self.root / "bm25", self.config.stemmer)


def build_summary(index: CorpusIndex) -> str:
    """One line on a finished build (what ``sciverify index`` prints): counts, resumed blocks, seconds."""
    counts = f"{len(index)} abstracts, {index.n_sentences} sentences"
    resumed = (index.manifest.get("embedding") or {}).get("resumed_blocks", 0)
    if resumed:
        counts += f", {resumed} embedding blocks resumed from a previous run"
    return f"indexed {counts} in {index.manifest['build_seconds']} s: {index.root}"


def default_index_dir() -> Path:
    """Where the index of the built-in SciFact corpus lives: ``$SCIVERIFY_INDEX`` or the user data dir."""
    env = os.environ.get("SCIVERIFY_INDEX")
    if env:
        return Path(env)
    from sciverify.data.datasets import user_data_dir

    return user_data_dir() / "index" / f"scifact-v{FORMAT_VERSION}"


def ensure_default_index(progress: bool = True, data_dir: str | Path | None = None) -> CorpusIndex:
    """Open the default SciFact index, making it first if it does not exist yet: unpacked from the
    index the package ships when the corpus found is the one it was made from (seconds), else built
    with embeddings (minutes). An index already there, built or unpacked, is opened as it is."""
    root = default_index_dir()
    if not (root / MANIFEST).exists():
        from sciverify.data.datasets import resolve_data_dir
        from sciverify.retrieval.builder import build_index_unlocked, index_lock
        from sciverify.retrieval.shipped_index import shipped_matches, unpack_shipped_index

        corpus = resolve_data_dir(data_dir).corpus
        with index_lock(root):
            if not (root / MANIFEST).exists():  # another process may have made it while we waited
                if shipped_matches(corpus):
                    unpack_shipped_index(corpus, root, progress=progress)
                else:
                    build_index_unlocked(corpus, root, IndexConfig(), progress=progress)
    return CorpusIndex.open(root)
