"""Whether this machine's embedder still makes the vectors an index stores.

Split from :mod:`sciverify.retrieval.index`, which opens and reads an index, because this is a
question about the machine, not the files: an index built elsewhere (another ONNX graph, tokenizer
or a CPU whose int8 kernels round differently) opens and reads fine, yet claim vectors made here
would not be comparable with its stored ones and dense retrieval would rank silently wrong. The
check re-embeds a few stored texts and compares, and says how to rebuild when they differ.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError, SciverifyError
from sciverify.retrieval.index import CorpusIndex, default_index_dir

__all__ = ["CHECK_SENTENCES", "MIN_COSINE", "EmbedderCheck", "Encode", "check_embedder", "require_embedder"]

#: How many stored vectors :func:`check_embedder` re-embeds, and the cosine every one must reach. The
#: int8 graph quantises activations per batch, so re-embedding a sentence in another batch than the
#: build's gives a slightly different vector (still 1.0000 to four places on the tiny test corpus
#: built in batches of 4 and of 64); another model, tokenizer or a CPU whose int8 kernels round
#: differently falls well below 0.99.
CHECK_SENTENCES = 8
MIN_COSINE = 0.99
_IDENTITY_KEYS = ("onnx_sha256", "tokenizer_sha256", "max_length")
_NOT_RECORDED = "not recorded"

Encode = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class EmbedderCheck:
    """What :func:`check_embedder` found.

    Attributes:
        ok: the embedder may query this index: every re-embedded vector reached :data:`MIN_COSINE`
            and the recorded embedder (when the index has the record) is the current one.
        min_cosine: the lowest cosine between a stored vector and its re-embedding (1.0 when the
            index stores no vectors).
        sentences: how many stored texts were re-embedded (0 for an index without embeddings).
        recorded: the embedder the index was built with, in short, or ``"not recorded"`` for an index
            built before the record existed.
        current: the embedder this machine has, in short.
        message: one line saying what was found and, when ``ok`` is False, how to rebuild.
    """

    ok: bool
    min_cosine: float
    sentences: int
    recorded: str
    current: str
    message: str


def _describe(identity: Mapping[str, object] | None) -> str:
    if identity is None:
        return _NOT_RECORDED
    return (
        f"onnx {str(identity.get('onnx_sha256', '?'))[:12]}, "
        f"tokenizer {str(identity.get('tokenizer_sha256', '?'))[:12]}, "
        f"max_length {identity.get('max_length', '?')}"
    )


def _rebuild_command(index: CorpusIndex) -> str:
    """The ``sciverify index`` command that rebuilds this index with this machine's embedder: the
    corpus path is the recorded one when it exists here (else a ``CORPUS`` placeholder), with the
    flags the index was built with."""
    try:
        is_default = index.root.resolve() == default_index_dir().resolve()
    except OSError:
        is_default = False
    if is_default:
        return "sciverify index --default"
    corpus = str((index.manifest.get("corpus") or {}).get("path") or "")
    parts = ["sciverify", "index", shlex.quote(corpus) if corpus and Path(corpus).is_file() else "CORPUS"]
    parts += ["-o", shlex.quote(str(index.root))]
    if index.config.split_sentences:
        parts.append("--split-sentences")
    if index.config.dense_text != "sentences":
        parts += ["--dense-text", index.config.dense_text]
    if index.config.ann != "auto":
        parts += ["--ann", index.config.ann]
    return " ".join(parts)


def _probe(index: CorpusIndex) -> tuple[list[str], npt.NDArray[np.float32]]:
    """The first :data:`CHECK_SENTENCES` non-empty stored texts, in index order, with their stored
    vectors as float32: sentences, or titles in an index that stores title vectors only. Fixed by the
    index alone, so every machine checks the same texts."""
    if not index.has_dense:
        return [], np.zeros((0, 0), dtype=np.float32)
    texts: list[str] = []
    rows: list[int] = []
    vectors = index.all_sentence_embeddings if index.has_sentence_vectors else index.title_embeddings
    for row in range(len(index)):
        if index.has_sentence_vectors:
            start, _ = index.sentence_range(row)
            candidates = [(start + j, text) for j, text in enumerate(index.sentences(row))]
        else:
            candidates = [(row, index.title(row))]
        for number, text in candidates:
            if text.strip() and len(texts) < CHECK_SENTENCES:
                texts.append(text)
                rows.append(number)
        if len(texts) == CHECK_SENTENCES:
            break
    return texts, np.asarray(vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)


def check_embedder(index: CorpusIndex, encode: Encode | None = None) -> EmbedderCheck:
    """Whether ``encode`` (this machine's embedder when None) reproduces the vectors ``index`` stores.

    Re-embeds the first :data:`CHECK_SENTENCES` non-empty stored sentences and compares each with its
    stored (float16) vector by cosine, in float32; passes when all reach :data:`MIN_COSINE` and the
    recorded embedder, if the index has the record, is this machine's. An index built before the
    record existed is judged by the vectors alone. Never raises for a failed check: see
    :func:`require_embedder` for that.

    ``encode`` takes a list of texts and returns ``(n, 384)`` vectors; a test passes a fake one.
    """
    recorded_identity = (index.manifest.get("embedding") or {}).get("embedder")
    if not isinstance(recorded_identity, Mapping):
        recorded_identity = None
    recorded = _describe(recorded_identity)
    from sciverify.retrieval.embedder import embedder_identity

    current_identity: dict[str, object] | None
    try:
        current_identity = embedder_identity(index.config.max_length)
        current = _describe(current_identity)
    except SciverifyError as exc:  # no model here: only the vectors can tell
        current_identity, current = None, f"unknown ({exc})"
    texts, stored = _probe(index)
    if not texts:
        return EmbedderCheck(
            True, 1.0, 0, recorded, current, f"index {index.root} stores no embeddings; nothing to check"
        )
    if encode is None:
        from sciverify.retrieval.embedder import get_embedder

        encode = get_embedder(index.config.max_length).encode
    fresh = np.asarray(encode(texts), dtype=np.float32)
    rebuild = f"rebuild it with `{_rebuild_command(index)}`"
    if fresh.shape != stored.shape:
        return EmbedderCheck(
            False,
            0.0,
            len(texts),
            recorded,
            current,
            f"the embedder here makes vectors of shape {fresh.shape[1:]}, index {index.root} stores "
            f"{stored.shape[1:]}; {rebuild}",
        )
    norms = np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1)
    cosines = (fresh * stored).sum(axis=1) / np.maximum(norms, 1e-12)
    min_cosine = float(cosines.min())
    differs = [
        key
        for key in _IDENTITY_KEYS
        if recorded_identity is not None
        and current_identity is not None
        and recorded_identity.get(key) != current_identity.get(key)
    ]
    if differs:
        message = (
            f"index {index.root} was embedded by another embedder ({', '.join(differs)} differ: "
            f"built with {recorded}, this machine has {current}); {rebuild}"
        )
    elif min_cosine < MIN_COSINE:
        message = (
            f"the embedder here does not reproduce the vectors of index {index.root} (cosine "
            f"{min_cosine:.4f} < {MIN_COSINE} on {len(texts)} stored sentences); {rebuild}"
        )
    else:
        message = (
            f"index {index.root}: the embedder here reproduces {len(texts)} stored vectors "
            f"(min cosine {min_cosine:.4f}; embedder {recorded})"
        )
    ok = not differs and min_cosine >= MIN_COSINE
    return EmbedderCheck(ok, min_cosine, len(texts), recorded, current, message)


def require_embedder(index: CorpusIndex, encode: Encode | None = None) -> EmbedderCheck:
    """:func:`check_embedder`, raising when the check fails: vectors this machine makes for a claim
    would not be comparable with the stored ones, so dense retrieval would rank silently wrong.

    Raises:
        ArtifactError: one line naming the index directory and the command that rebuilds it.
    """
    check = check_embedder(index, encode)
    if not check.ok:
        raise ArtifactError(check.message)
    return check
