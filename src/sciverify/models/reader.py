"""The reader: for each sentence of a candidate abstract, is it a rationale, and which way does it point?

A cross-encoder reads the claim (segment A) against ``title. sentence`` (segment B), the label model's
input layout with one sentence, and gives P(rationale) and a stance over (SUPPORT, CONTRADICT,
NOT_ENOUGH_INFO). The trees of :mod:`sciverify.models.rationale` see only embeddings and word overlap;
the reader sees the claim and the sentence together, which is what tells "reduced the risk" from
"increased the risk" and a finding from a background sentence on the same topic.

At run time it is an int8 ONNX graph driven by onnxruntime and tokenizers. Each sentence is its own call
(as the label model does): dynamic quantisation picks activation scales per input tensor, so a padded
batch would make one sentence's scores depend on its neighbours. The calls run side by side on the cores.

API::

    reader = ReaderModel.load(directory)
    out = reader.read(claim, title, [sentence, ...])   # float32 (n, 4): READER_OUTPUTS columns
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError
from sciverify.models.label import encode_pairs, format_evidence, open_cross_encoder, require_files
from sciverify.models.parallel import map_calls

__all__ = ["READER_COLUMNS", "ReaderConfig", "ReaderModel"]

CONFIG_VERSION = 1
#: Columns of :meth:`ReaderModel.read`'s output (and of the ONNX graph's ``reader`` output).
READER_COLUMNS = ("p_support", "p_contradict", "p_nei", "p_rationale")
INPUT_TEMPLATE = "[CLS] claim [SEP] title. sentence [SEP]"


@dataclass(frozen=True)
class ReaderConfig:
    """What travels with the weights (``config.json``)."""

    max_length: int = 128
    config_version: int = CONFIG_VERSION

    def to_json(self) -> dict[str, object]:
        return {
            "config_version": self.config_version,
            "kind": "reader",
            "max_length": self.max_length,
            "outputs": list(READER_COLUMNS),
            "input_template": INPUT_TEMPLATE,
            "pooling": "mean",
        }

    @classmethod
    def read(cls, path: Path) -> ReaderConfig:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ArtifactError(f"cannot read reader config {path}: {exc}") from None
        if not isinstance(raw, dict) or raw.get("kind") != "reader":
            raise ArtifactError(f'{path}: not a reader config (expected "kind": "reader")')
        if raw.get("config_version") != CONFIG_VERSION:
            raise ArtifactError(
                f"{path}: reader config_version {raw.get('config_version')!r} is not the supported"
                f" version {CONFIG_VERSION}; retrain with `sciverify train`"
            )
        if tuple(raw.get("outputs", ())) != READER_COLUMNS:
            raise ArtifactError(f"{path}: outputs {raw.get('outputs')!r} differ from {list(READER_COLUMNS)}")
        max_length = raw.get("max_length")
        if not isinstance(max_length, int) or not 16 <= max_length <= 512:
            raise ArtifactError(f"{path}: max_length must be an integer in [16, 512], got {max_length!r}")
        return cls(max_length=max_length)


class ReaderModel:
    """Per-sentence rationale probability and stance from an ONNX cross-encoder."""

    def __init__(self, directory: Path, threads: int | None = None) -> None:
        require_files(directory, "reader")
        self.directory = directory
        self.config = ReaderConfig.read(directory / "config.json")
        self._session, self._inputs, self._tokenizer = open_cross_encoder(
            directory, "reader", self.config.max_length, threads
        )

    @classmethod
    def load(cls, path: Path | str, *, threads: int | None = None) -> ReaderModel:
        """Load a weights directory (``model.onnx``, ``tokenizer.json``, ``config.json``)."""
        directory = Path(path)
        if not directory.is_dir():
            raise ArtifactError(f"reader directory not found: {directory}")
        return cls(directory, threads=threads)

    def read_one(self, claim: str, title: str, sentence: str) -> npt.NDArray[np.float32]:
        """The four outputs for one sentence (one ONNX call)."""
        feeds = encode_pairs(
            self._tokenizer, [(claim, format_evidence(title, [sentence]))], self.config.max_length
        )
        feeds = {name: value for name, value in feeds.items() if name in self._inputs}
        return np.asarray(self._session.run(None, feeds)[0][0], dtype=np.float32)

    def read(self, claim: str, title: str, sentences: Sequence[str]) -> npt.NDArray[np.float32]:
        """Outputs ``(len(sentences), 4)`` in :data:`READER_COLUMNS` order, one call per sentence."""
        return self.read_pairs(claim, [(title, s) for s in sentences])

    def read_pairs(self, claim: str, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        """Outputs ``(len(pairs), 4)`` for (title, sentence) pairs of any abstracts: the calls of a whole
        claim spread over the cores at once."""
        out = np.zeros((len(pairs), len(READER_COLUMNS)), dtype=np.float32)
        for row, values in enumerate(map_calls(lambda p: self.read_one(claim, p[0], p[1]), pairs)):
            out[row] = values
        return out
