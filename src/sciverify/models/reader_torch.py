"""The trainable reader: one body, a stance head and a rationale head, and its export to int8 ONNX.

The reader reads (claim, "title. sentence") pairs. It shares the label model's body and input layout, so
its stance head is the label model's three-way head (same parameter names, same label order): the
auxiliary entailment stage trains ``body`` and ``head`` once, and its checkpoint can start either model.
The rationale head (``head_rat``, one logit) learns from SciFact alone: in the SciFact paper, FEVER
pre-training lifted label prediction but not rationale selection, so the auxiliary pairs carry no
rationale target (they are masked out of that loss).

Exported graph: one output ``reader`` of shape (batch, 4): P(SUPPORT), P(CONTRADICT), P(NOT_ENOUGH_INFO)
from the stance head's softmax and P(rationale) from the rationale head's sigmoid.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciverify.errors import MissingDependencyError

if TYPE_CHECKING:
    import torch

__all__ = ["READER_OUTPUTS", "build_reader", "export_reader_onnx"]

#: Columns of the exported output.
READER_OUTPUTS = ("p_support", "p_contradict", "p_nei", "p_rationale")


def build_reader(base_dir: Path, *, keep_layers: int = 0, dropout: float = 0.1, seed: int = 0) -> Any:
    """A fresh reader (torch ``nn.Module``) over the body in ``base_dir``, cut to its lowest ``keep_layers``
    transformer layers when > 0. ``forward`` returns (stance logits (B, 3), rationale logit (B,)), or
    with ``probs=True`` the (B, 4) tensor the ONNX graph outputs."""
    try:
        import torch
        from torch import nn
        from transformers import AutoModel
    except ImportError:
        raise MissingDependencyError("torch/transformers", "models") from None

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(seed)
    body = AutoModel.from_pretrained(str(base_dir), local_files_only=True)
    if 0 < keep_layers < len(body.encoder.layer):
        body.encoder.layer = body.encoder.layer[:keep_layers]
        body.config.num_hidden_layers = keep_layers
    takes_segments = "token_type_ids" in inspect.signature(body.forward).parameters

    class Reader(nn.Module):
        """Masked mean of the last layer -> dropout -> stance head (3) and rationale head (1)."""

        takes_segment_ids = takes_segments

        def __init__(self) -> None:
            super().__init__()
            self.body = body
            self.dropout = nn.Dropout(dropout)
            self.head = nn.Linear(body.config.hidden_size, 3)
            self.head_rat = nn.Linear(body.config.hidden_size, 1)

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor | None = None,
            probs: bool = False,
        ) -> Any:
            extra = (
                {"token_type_ids": token_type_ids} if takes_segments and token_type_ids is not None else {}
            )
            hidden = self.body(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = self.dropout((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9))
            stance, rationale = self.head(pooled), self.head_rat(pooled).squeeze(-1)
            if probs:
                return torch.cat([torch.softmax(stance, -1), torch.sigmoid(rationale).unsqueeze(-1)], -1)
            return stance, rationale

    return Reader()


def export_reader_onnx(
    model: Any, out_path: Path, *, quantize: bool = True, keep_float: bool = False
) -> Path:
    """Write the reader as an ONNX graph with output ``reader`` (B, 4); int8 dynamic quantisation with
    per-channel scales by default (per-tensor scales moved the label model's verdicts three times more,
    docs/experiments-label.md). The float graph stays beside it as ``<name>.fp32.onnx`` when
    ``keep_float`` (the int8 check compares the two)."""
    import torch

    segments = bool(getattr(model, "takes_segment_ids", True))

    class _Graph(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: Any) -> Any:
            ids, mask = inputs[0], inputs[1]
            return self.inner(ids, mask, inputs[2] if segments else None, probs=True)

    model.eval()
    wrapper = _Graph(model).eval()
    dummy = torch.full((2, 16), 5, dtype=torch.long)  # an ordinary token id (1 is MPNet's padding id)
    names = ["input_ids", "attention_mask", "token_type_ids"][: 3 if segments else 2]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    float_path = out_path.with_suffix(".fp32.onnx") if quantize else out_path
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            (dummy, torch.ones_like(dummy), torch.zeros_like(dummy))[: len(names)],
            str(float_path),
            input_names=names,
            output_names=["reader"],
            dynamic_axes={**{n: axes for n in names}, "reader": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    if quantize:
        from sciverify.models.label_torch import quantize_int8

        quantize_int8(float_path, out_path, per_channel=True, keep_float=keep_float)
    return out_path
