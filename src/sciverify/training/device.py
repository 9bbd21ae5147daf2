"""Where a training stage runs: the CPU, or a CUDA GPU when the machine has one; the recipe stays the same.

A stage's trajectory is fixed by its plan, its data and its seed (:mod:`sciverify.training.loop`); the
device only says where the arithmetic happens. So the device is a run-time argument, threaded beside the
recipe and never part of it: no recipe, plan or checkpoint stamp holds it, a stage checkpointed on a GPU
resumes on a CPU (and the other way), and everything a stage writes (step checkpoints, the finished
auxiliary weights, the ONNX graphs) holds CPU tensors, so it loads on a machine without a GPU.

On a GPU the forward pass runs under bfloat16 autocast (the weights and AdamW's moments stay float32):
the 109M-parameter body then trains in minutes instead of hours. On the CPU nothing changes: no
autocast, no copies, the same bytes as before the device existed.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from sciverify.errors import ConfigError

__all__ = ["DEVICES", "forward_context", "resolve_device", "to_cpu"]

#: What ``--device`` accepts: ``auto`` is CUDA when torch sees a CUDA GPU, else the CPU.
DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str) -> str:
    """The device a stage runs on, ``"cpu"`` or ``"cuda"``, from what was asked for (idempotent).

    Args:
        name: one of :data:`DEVICES`.

    Raises:
        ConfigError: an unknown name, or ``cuda`` on a machine where torch sees no CUDA GPU.
    """
    if name not in DEVICES:
        raise ConfigError(f"device must be one of {', '.join(DEVICES)}; got {name!r}")
    if name == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if name == "cuda":
        raise ConfigError("device cuda: torch sees no CUDA GPU on this machine; use --device cpu or auto")
    return "cpu"


def forward_context(device: str) -> contextlib.AbstractContextManager[Any]:
    """What a stage's forward pass (and loss) runs inside: bfloat16 autocast on a GPU, nothing on the CPU,
    whose float32 trajectory is the recipe's as written."""
    if device == "cuda":
        import torch

        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def to_cpu(value: Any) -> Any:
    """``value`` (a tensor, or a state dict nested in dicts, lists and tuples) with every tensor on the CPU,
    for writing: a checkpoint written on a GPU then loads where there is none.

    Whatever holds no tensor elsewhere is returned itself, not copied: a stage on the CPU writes the very
    objects it wrote before the device existed, so the file has the same bytes (pickle's shared
    references included). A copied module state dict stays an ``OrderedDict`` with its ``_metadata`` (the
    layout versions ``load_state_dict`` reads).
    """
    import torch

    if isinstance(value, torch.Tensor):
        return value.cpu()  # the tensor itself when it is on the CPU
    if isinstance(value, Mapping):
        items = [(k, v, to_cpu(v)) for k, v in value.items()]
        if all(moved is v for _, v, moved in items):
            return value
        pairs = [(k, moved) for k, _, moved in items]
        out: dict[Any, Any] = OrderedDict(pairs) if isinstance(value, OrderedDict) else dict(pairs)
        metadata = getattr(value, "_metadata", None)
        if metadata is not None:
            out._metadata = metadata  # type: ignore[attr-defined]
        return out
    if isinstance(value, list | tuple):
        moved_items = [to_cpu(v) for v in value]
        if all(moved is v for moved, v in zip(moved_items, value, strict=True)):
            return value
        return moved_items if isinstance(value, list) else tuple(moved_items)
    return value
