"""Sentence scorer: a MiniLM cross-encoder that reads (claim, sentence) and gives P(rationale).

The stored-embedding features of :mod:`sciverify.models.features` compare a claim and a sentence only
through two independently computed vectors, so they see topic but not the finding: "X increases Y" and
"X did not change Y" sit close together. Reading both texts in one pass lets attention align the claim's
entities and direction with the sentence's. It is the costly part of rationale selection (one pass per
sentence of every candidate abstract), so it runs as an int8 ONNX graph, and the trained selector blends
its probability with the cheap head's (:class:`sciverify.models.rationale.TrainedSelector`).

Each abstract is one ONNX call. The graph is dynamically quantised (activation scales come from the
whole input tensor), so a sentence's score depends on the other sentences of its abstract but never on
which other abstracts were retrieved with it: ``verify``, ``predict`` and tuning agree exactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError
from sciverify.models.label import encode_pairs, open_cross_encoder, require_files

__all__ = ["CONFIG_VERSION", "SCORER_DIR", "SentenceScorer", "SentenceScorerConfig"]

CONFIG_VERSION = 1
_KIND = "sentence-scorer"
#: The scorer's sub-directory inside a rationale model directory.
SCORER_DIR = "scorer"


@dataclass(frozen=True)
class SentenceScorerConfig:
    """What travels with the weights (``config.json``)."""

    max_length: int = 96
    config_version: int = CONFIG_VERSION

    def to_json(self) -> dict[str, object]:
        return {
            "kind": _KIND,
            "config_version": self.config_version,
            "max_length": self.max_length,
            "input_template": "[CLS] claim [SEP] sentence [SEP]",
            "pooling": "mean",
            "outputs": "probabilities (other, rationale)",
        }

    @classmethod
    def read(cls, path: Path) -> SentenceScorerConfig:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ArtifactError(f"cannot read sentence scorer config {path}: {exc}") from None
        if not isinstance(raw, dict) or raw.get("kind") != _KIND:
            raise ArtifactError(f"{path} is not a sentence scorer config")
        if raw.get("config_version") != CONFIG_VERSION:
            raise ArtifactError(
                f"{path}: sentence scorer config_version {raw.get('config_version')!r} is not the supported"
                f" version {CONFIG_VERSION}; retrain with `sciverify train`"
            )
        max_length = raw.get("max_length")
        if not isinstance(max_length, int) or not 16 <= max_length <= 512:
            raise ArtifactError(f"{path}: max_length must be an integer in [16, 512], got {max_length!r}")
        return cls(max_length=max_length)


class SentenceScorer:
    """P(sentence is a rationale for the claim), from an ONNX cross-encoder with two outputs."""

    def __init__(self, directory: Path, threads: int | None = None) -> None:
        require_files(directory, "sentence scorer")
        self.directory = directory
        self.config = SentenceScorerConfig.read(directory / "config.json")
        self._session, self._inputs, self._tokenizer = open_cross_encoder(
            directory, "sentence scorer", self.config.max_length, threads
        )

    @classmethod
    def load(cls, path: Path | str, *, threads: int | None = None) -> SentenceScorer:
        directory = Path(path)
        if not directory.is_dir():
            raise ArtifactError(f"sentence scorer directory not found: {directory}")
        return cls(directory, threads=threads)

    def score(self, claim: str, sentences: Sequence[str]) -> npt.NDArray[np.float32]:
        """Shapes: returns ``(len(sentences),)`` probabilities; one ONNX call for the whole list."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        pairs = [(claim, " ".join(s.split()) or ".") for s in sentences]
        feeds = encode_pairs(self._tokenizer, pairs, self.config.max_length)
        feeds = {name: value for name, value in feeds.items() if name in self._inputs}
        probs = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        return probs[:, 1].copy()
