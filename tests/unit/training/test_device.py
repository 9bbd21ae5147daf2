"""Where training runs: ``auto``/``cpu``/``cuda`` resolved in one place, a missing GPU refused in one line,
and the device kept out of every recipe (so out of every stamp made from one)."""

from __future__ import annotations

import io
from dataclasses import fields

import pytest

torch = pytest.importorskip("torch")

from sciverify.errors import ConfigError  # noqa: E402
from sciverify.training.device import DEVICES, forward_context, resolve_device, to_cpu  # noqa: E402


def test_auto_is_the_cpu_without_a_gpu_and_cuda_with_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda") == "cuda"
    assert resolve_device("cpu") == "cpu"  # asked for, kept, GPU or not
    assert all(resolve_device(resolve_device(d)) == resolve_device(d) for d in DEVICES)  # idempotent


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_auto_resolves_to_the_cpu_here() -> None:
    assert resolve_device("auto") == "cpu"


def test_cuda_without_a_gpu_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError) as caught:
        resolve_device("cuda")
    message = str(caught.value)
    assert "\n" not in message and "no CUDA GPU" in message and "--device cpu or auto" in message


def test_an_unknown_device_is_refused() -> None:
    with pytest.raises(ConfigError, match="device must be one of auto, cpu, cuda; got 'tpu'"):
        resolve_device("tpu")


def test_the_cpu_forward_pass_is_not_autocast() -> None:
    with forward_context("cpu"):
        assert not torch.is_autocast_enabled()
        assert torch.nn.Linear(2, 2)(torch.ones(1, 2)).dtype == torch.float32


def test_to_cpu_keeps_a_cpu_state_byte_for_byte() -> None:
    """What a stage on the CPU writes is unchanged by the copy meant for GPU tensors: the same objects, so
    the same bytes; a state dict that is copied keeps its type and the ``_metadata`` that
    ``load_state_dict`` reads."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(3, 4)).sum().backward()
    opt.step()
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "rng": torch.get_rng_state()}

    def saved(obj: object) -> bytes:
        buffer = io.BytesIO()
        torch.save(obj, buffer)
        return buffer.getvalue()

    assert to_cpu(state) is state and saved(to_cpu(state)) == saved(state)


def test_to_cpu_copies_what_is_elsewhere_and_keeps_the_containers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU's tensors come back as copies (here every tensor's ``.cpu()`` copies, standing in for a GPU);
    dicts, lists and tuples keep their kinds, and a state dict its ``_metadata``, so it loads again."""
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.LayerNorm(3))
    state = {"model": model.state_dict(), "extra": (torch.ones(2), [torch.zeros(1), "x"])}
    monkeypatch.setattr(torch.Tensor, "cpu", lambda self: self.clone())
    moved = to_cpu(state)
    assert moved is not state and moved["model"] is not state["model"]
    assert type(moved["model"]) is type(state["model"])
    assert moved["model"]._metadata == state["model"]._metadata
    extra = moved["extra"]
    assert isinstance(extra, tuple) and isinstance(extra[1], list) and extra[1][1] == "x"
    assert torch.equal(extra[0], torch.ones(2)) and extra[0] is not state["extra"][0]
    model.load_state_dict(moved["model"])


def test_no_recipe_or_plan_has_a_device_field() -> None:
    """The device is a run-time argument: a field of a recipe, a stage plan or the run's config would reach
    the checkpoint stamps, summaries and ``config.json`` made from them, and a finished checkpoint (the
    shared entailment stage) would be refused on the other device."""
    from sciverify.training.cv.plan import CvConfig
    from sciverify.training.label_config import LabelTrainConfig
    from sciverify.training.loop import StagePlan
    from sciverify.training.reader_train import ReaderTrainConfig

    for record in (LabelTrainConfig, ReaderTrainConfig, StagePlan, CvConfig):
        assert "device" not in {f.name for f in fields(record)}, record.__name__
