"""Label prediction: does this abstract's rationale SUPPORT or CONTRADICT the claim, or neither?

A cross-encoder (its body is one of :data:`sciverify.training.bases.BODIES`; the shipped one is named in its
``config.json`` and model card) reads the claim (segment A) together with the abstract's title and its
selected rationale sentences (segment B), mean-pools the last layer and applies a 3-way head. At run time
it is an int8 ONNX graph driven by ``onnxruntime`` and ``tokenizers``: torch is needed only to train.

API::

    model = LabelModel.load()                       # shipped weights in sciverify/models/weights/label/
    probs = model.predict(claim, [(title, [sent, ...]), ...])
    # float32 (n, 3), rows sum to 1, columns in LABEL_ORDER = (SUPPORT, CONTRADICT, NOT_ENOUGH_INFO)

Each evidence is its own ONNX call. The graph is dynamically quantised: it picks its int8 activation
scales from the whole input tensor, so in a batch one abstract's verdict would shift with the other
abstracts (and the padding) beside it. One row per call makes a verdict a function of its own
(claim, evidence) pair only, so tuning, ``verify``, ``predict`` and the model card's evaluation agree to
the last digit; and unpadded single rows are faster than a batch padded to its longest row on a few CPU
cores (``benchmarks/bench_label.py``). The claim segment is never truncated before the evidence segment: a
verdict without the full claim would be a guess.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Label
from sciverify.errors import ArtifactError, MissingDependencyError
from sciverify.models.base import LABEL_PREDICTORS
from sciverify.models.parallel import map_calls

__all__ = [
    "CONFIG_VERSION",
    "LABEL_ORDER",
    "LabelModel",
    "LabelModelConfig",
    "default_label_weights_dir",
    "exact_graph_bytes",
    "format_evidence",
    "open_cross_encoder",
    "require_files",
]

CONFIG_VERSION = 1
LABEL_ORDER: tuple[Label, Label, Label] = (Label.SUPPORT, Label.CONTRADICT, Label.NOT_ENOUGH_INFO)
INPUT_TEMPLATE = "[CLS] claim [SEP] title. sentence_1 sentence_2 ... [SEP]"


def default_label_weights_dir() -> Path:
    """The weights shipped inside the package."""
    return Path(__file__).resolve().parent / "weights" / "label"


def format_evidence(title: str, sentences: Sequence[str]) -> str:
    """Segment B of the input: the title gives the topic (many rationales only say "this drug"),
    the sentences carry the finding. Training and inference both build their text here."""
    title = " ".join(title.split())
    body = " ".join(" ".join(s.split()) for s in sentences if s.strip())
    if title and not title.endswith((".", "?", "!")):
        title += "."
    return f"{title} {body}".strip()


@dataclass(frozen=True)
class LabelModelConfig:
    """What travels with the weights (``config.json``): enough to rebuild the inputs exactly."""

    max_length: int = 192
    labels: tuple[str, ...] = tuple(label.value for label in LABEL_ORDER)
    input_template: str = INPUT_TEMPLATE
    config_version: int = CONFIG_VERSION

    def to_json(self) -> dict[str, object]:
        return {
            "config_version": self.config_version,
            "labels": list(self.labels),
            "max_length": self.max_length,
            "input_template": self.input_template,
            "pooling": "mean",
            "outputs": "probabilities",
        }

    @classmethod
    def read(cls, path: Path) -> LabelModelConfig:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ArtifactError(f"cannot read label model config {path}: {exc}") from None
        if not isinstance(raw, dict):
            raise ArtifactError(f"{path}: label model config must be a JSON object")
        if raw.get("config_version") != CONFIG_VERSION:
            raise ArtifactError(
                f"{path}: label model config_version {raw.get('config_version')!r} is not the supported"
                f" version {CONFIG_VERSION}; retrain with `sciverify train`"
            )
        labels = tuple(raw.get("labels", ()))
        if labels != tuple(label.value for label in LABEL_ORDER):
            raise ArtifactError(f"{path}: labels {labels!r} differ from {[x.value for x in LABEL_ORDER]}")
        max_length = raw.get("max_length")
        if not isinstance(max_length, int) or not 16 <= max_length <= 512:
            raise ArtifactError(f"{path}: max_length must be an integer in [16, 512], got {max_length!r}")
        return cls(max_length=max_length, labels=labels)


class LabelModel:
    """Three-way verdict for (claim, abstract rationale) pairs from an ONNX cross-encoder."""

    def __init__(self, directory: Path, threads: int | None = None) -> None:
        require_files(directory, "label model")
        self.directory = directory
        self.config = LabelModelConfig.read(directory / "config.json")
        self._session, self._inputs, self._tokenizer = open_cross_encoder(
            directory, "label model", self.config.max_length, threads
        )

    @classmethod
    def load(cls, path: Path | str | None = None, *, threads: int | None = None) -> LabelModel:
        """Load a weights directory (``model.onnx``, ``tokenizer.json``, ``config.json``); None = shipped."""
        directory = Path(path) if path is not None else default_label_weights_dir()
        if not directory.is_dir():
            raise ArtifactError(f"label model directory not found: {directory}")
        return cls(directory, threads=threads)

    def encode(
        self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]
    ) -> dict[str, npt.NDArray[np.int64]]:
        """Token ids, attention mask and segment ids for one claim against each evidence, padded together."""
        pairs = [(claim, format_evidence(title, sentences)) for title, sentences in evidences]
        return encode_pairs(self._tokenizer, pairs, self.config.max_length)

    def predict(self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]) -> npt.NDArray[np.float32]:
        """Probabilities ``(len(evidences), 3)`` over LABEL_ORDER; one ONNX call per evidence (see above),
        the calls spread over the cores (:mod:`sciverify.models.parallel`)."""
        out = np.zeros((len(evidences), len(LABEL_ORDER)), dtype=np.float32)
        rows = map_calls(lambda evidence: self.predict_padded(claim, [evidence])[0], evidences)
        for row, probs in enumerate(rows):
            out[row] = probs
        return out

    def predict_padded(
        self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]
    ) -> npt.NDArray[np.float32]:
        """All evidences in one padded ONNX call: the batch-dependent path, kept for the benchmark that
        measures what :meth:`predict` avoids. Not exact for more than one evidence."""
        feeds = self.encode(claim, evidences)
        feeds = {name: value for name, value in feeds.items() if name in self._inputs}
        return np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)

    @staticmethod
    def labels_for(probs: npt.NDArray[np.float32]) -> list[Label]:
        """The arg-max label of each row."""
        return [LABEL_ORDER[int(i)] for i in np.argmax(probs, axis=1)]


def require_files(directory: Path, what: str) -> None:
    """ArtifactError naming the first missing file of a cross-encoder directory."""
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        if not (directory / name).is_file():
            raise ArtifactError(f"{what} file missing: {directory / name}")


def open_cross_encoder(
    directory: Path, what: str, max_length: int, threads: int | None = None
) -> tuple[Any, set[str], Any]:
    """The ONNX session, its input names and the tokenizer of a cross-encoder directory whose files the
    caller has checked with :func:`require_files` (it must, before reading ``config.json`` for
    ``max_length``); a damaged file is an ArtifactError naming ``what``. The tokenizer truncates pairs to
    ``max_length`` and never pads."""
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError:
        raise MissingDependencyError("onnxruntime/tokenizers", "models") from None
    options = ort.SessionOptions()
    # One thread per call by default: the calls are small and run side by side, one per core
    # (sciverify.models.parallel), which beats splitting each call over the cores.
    options.intra_op_num_threads = threads or 1
    options.inter_op_num_threads = 1
    # No spinning: the ONNX sessions (embedder, label model) run one after another in one
    # process, and a session's idle threads spinning would take the cores from the next one.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(
            exact_graph_bytes(directory / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
    except ArtifactError:
        raise
    except Exception as exc:  # onnxruntime raises its own untyped errors for damaged files
        raise ArtifactError(f"cannot load {what} {directory / 'model.onnx'}: {exc}") from None
    try:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as exc:  # tokenizers raises untyped errors for damaged files too
        raise ArtifactError(f"cannot read {what} tokenizer {directory / 'tokenizer.json'}: {exc}") from None
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    return session, {i.name for i in session.get_inputs()}, tokenizer


def exact_graph_bytes(path: Path) -> bytes:
    """The graph at ``path`` in the form whose integer products are exact on this CPU and fastest: int8
    weights of an integer product rewritten as uint8 (:func:`sciverify.models.int8.make_exact`), which no
    kernel saturates, and back to int8 (:func:`~sciverify.models.int8.make_signed`) where this CPU's u8 x s8
    kernel adds in 32 bits. The shipped graphs are stored as uint8; the rewrite is in memory."""
    import onnx

    from sciverify.models.int8 import inspect_graph, make_exact, make_signed, signed_products_exact

    raw = path.read_bytes()
    try:
        model = onnx.load_from_string(raw)
    except Exception as exc:  # protobuf's decode errors are untyped
        raise ArtifactError(f"cannot read ONNX graph {path}: {exc}") from None
    graph = inspect_graph(model)
    if signed_products_exact():
        if graph.int8_products == graph.signed_weights:
            return raw
        make_signed(model)
    elif graph.exact:
        return raw
    else:
        make_exact(model)
    return bytes(model.SerializeToString())


def encode_pairs(
    tokenizer: object, pairs: Sequence[tuple[str, str]], max_length: int
) -> dict[str, npt.NDArray[np.int64]]:
    """Encode (claim, evidence) pairs with a ``tokenizers.Tokenizer``; the claim keeps its tokens first.

    The claim is cut to at most half the window before the pair is built, then the evidence fills what is
    left, so a long abstract never pushes the claim out.
    """
    half = max(8, max_length // 2)
    claims = [_clip(tokenizer, claim, half) for claim, _ in pairs]
    encodings = tokenizer.encode_batch([(c, e) for c, (_, e) in zip(claims, pairs, strict=True)])  # type: ignore[attr-defined]
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(pairs), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        ids[row, :n] = enc.ids
        mask[row, :n] = 1
        types[row, :n] = enc.type_ids
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def _clip(tokenizer: object, text: str, max_tokens: int) -> str:
    """Shorten an over-long claim to about ``max_tokens`` word pieces (rare: claims are one sentence)."""
    words = text.split()
    if len(words) <= max_tokens // 2:
        return text
    enc = tokenizer.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
    if len(enc.ids) <= max_tokens:
        return text
    end = enc.offsets[max_tokens - 1][1]
    return text[:end]


@LABEL_PREDICTORS.register("model")
def _label_model(model_dir: Path | None) -> LabelModel:
    return LabelModel.load(model_dir)
