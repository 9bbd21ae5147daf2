"""The resumable stage: a run killed and resumed ends with the weights of an uninterrupted run."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from sciverify.errors import ConfigError  # noqa: E402
from sciverify.training.loop import StagePlan, plan_batches, run_stage  # noqa: E402


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    # dropout makes the result depend on torch's random state, which a resume must restore
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.3), torch.nn.Linear(8, 1))


def _data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(37, 4, generator=g)
    return x, x.sum(1, keepdim=True)


def _loss(model: torch.nn.Module):
    x, y = _data()

    def loss(batch: list[int]) -> torch.Tensor:
        idx = torch.tensor(batch)
        return torch.nn.functional.mse_loss(model(x[idx]), y[idx])

    return loss


PLAN = StagePlan("t", epochs=3, batch_size=5, lr_body=1e-2, lr_head=1e-2, seed=7, checkpoint_every=2)
LENGTHS = [i % 6 for i in range(37)]


def test_plan_covers_every_example_once_per_epoch() -> None:
    batches = plan_batches(LENGTHS, 5, 2, seed=3)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == sorted(list(range(37)) * 2)
    assert batches == plan_batches(LENGTHS, 5, 2, seed=3)
    assert batches != plan_batches(LENGTHS, 5, 2, seed=4)


def test_resumed_run_equals_uninterrupted(tmp_path: Path) -> None:
    straight = _model()
    done = run_stage(straight, LENGTHS, _loss(straight), PLAN, None)
    assert done["done"] == 1.0 and done["steps"] == 24.0

    ckpt = tmp_path / "stage.pt"
    first = _model()
    part = run_stage(first, LENGTHS, _loss(first), PLAN, ckpt, stop_after=7)
    assert part["done"] == 0.0 and ckpt.exists()
    resumed = _model()  # a new process: fresh weights, the checkpoint brings them back
    rest = run_stage(resumed, LENGTHS, _loss(resumed), PLAN, ckpt)
    assert rest["done"] == 1.0 and rest["steps"] == 24.0
    for (name, a), (_, b) in zip(straight.state_dict().items(), resumed.state_dict().items(), strict=True):
        assert torch.equal(a, b), name


def test_checkpoint_of_other_settings_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "stage.pt"
    model = _model()
    run_stage(model, LENGTHS, _loss(model), PLAN, ckpt, stop_after=3)
    other = StagePlan("t", epochs=3, batch_size=5, lr_body=2e-2, lr_head=1e-2, seed=7, checkpoint_every=2)
    with pytest.raises(ConfigError, match="other settings"):
        run_stage(model, LENGTHS, _loss(model), other, ckpt)
    with pytest.raises(ConfigError, match="other settings"):
        run_stage(model, LENGTHS, _loss(model), PLAN, ckpt, stamp_extra={"data": "another digest"})


def test_a_stage_told_not_to_reseed_keeps_the_callers_generator_and_still_resumes(tmp_path: Path) -> None:
    """``reseed_torch=False`` (the label model's aux stage): a fresh start draws its dropout masks from the
    caller's generator state, and a resumed run still ends where the uninterrupted one does."""

    def trained(seed: int, ckpt: Path | None, stop_after: int = 0) -> torch.nn.Module:
        model = _model()
        torch.manual_seed(seed)
        run_stage(model, LENGTHS, _loss(model), PLAN, ckpt, stop_after=stop_after, reseed_torch=False)
        return model

    straight, other = trained(100, None), trained(101, None)
    assert any(not torch.equal(a, b) for a, b in zip(straight.parameters(), other.parameters(), strict=True))
    ckpt = tmp_path / "stage.pt"
    trained(100, ckpt, stop_after=5)
    resumed = trained(999, ckpt)  # the generator state comes back from the checkpoint
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)


def test_the_cpu_device_is_the_default_path_bit_for_bit(tmp_path: Path) -> None:
    """``device="cpu"`` (what ``--device auto`` gives without a GPU) trains exactly as a stage did before
    the device existed: the same weights, loss and steps, and the model handed back on the CPU."""
    default = _model()
    on_cpu = _model()
    a = run_stage(default, LENGTHS, _loss(default), PLAN, None)
    b = run_stage(on_cpu, LENGTHS, _loss(on_cpu), PLAN, None, device="cpu")
    assert (a["steps"], a["final_loss"], a["done"]) == (b["steps"], b["final_loss"], b["done"])
    for (name, x), (_, y) in zip(default.state_dict().items(), on_cpu.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert all(p.device.type == "cpu" for p in on_cpu.parameters())


def test_a_checkpoint_holds_cpu_tensors_and_a_stamp_without_the_device(tmp_path: Path) -> None:
    """Written with ``device="cpu"``, resumed with the default (and the other way): the stamp is the plan,
    the example count and the caller's extra settings only, so where a stage ran never makes its checkpoint
    refused, and every tensor in it loads on a CPU."""
    import json
    from dataclasses import asdict

    straight = _model()
    run_stage(straight, LENGTHS, _loss(straight), PLAN, None)
    ckpt = tmp_path / "stage.pt"
    first = _model()
    run_stage(first, LENGTHS, _loss(first), PLAN, ckpt, stop_after=5, device="cpu",
              stamp_extra={"data": "d"})
    saved = torch.load(ckpt, weights_only=False, map_location="cpu")
    assert set(json.loads(saved["stamp"])) == set(asdict(PLAN)) | {"examples", "data"}
    tensors = [v for v in saved["model"].values()] + [
        v for state in saved["optimizer"]["state"].values() for v in state.values()
    ]
    assert tensors and all(t.device.type == "cpu" for t in tensors)
    assert "cuda_rng" not in saved  # a CPU stage's checkpoint is what it was before the device existed
    resumed = _model()
    run_stage(resumed, LENGTHS, _loss(resumed), PLAN, ckpt, stamp_extra={"data": "d"})
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_a_stage_asked_for_cuda_without_one_is_refused_before_it_trains(tmp_path: Path) -> None:
    model = _model()
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        run_stage(model, LENGTHS, _loss(model), PLAN, tmp_path / "stage.pt", device="cuda")
    assert not (tmp_path / "stage.pt").exists()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_stage_checkpointed_on_the_gpu_resumes_on_the_cpu(tmp_path: Path) -> None:
    """On a GPU (bfloat16 autocast): the checkpoint holds CPU tensors and the GPU's generator, the model
    comes back on the CPU, and a CPU process goes on from the GPU's checkpoint to the end."""

    def gpu_loss(model: torch.nn.Module):
        x, y = _data()

        def loss(batch: list[int]) -> torch.Tensor:
            idx = torch.tensor(batch)
            return torch.nn.functional.mse_loss(model(x[idx].to("cuda")).float(), y[idx].to("cuda"))

        return loss

    ckpt = tmp_path / "stage.pt"
    model = _model()
    part = run_stage(model, LENGTHS, gpu_loss(model), PLAN, ckpt, stop_after=7, device="cuda")
    assert part["done"] == 0.0 and all(p.device.type == "cpu" for p in model.parameters())
    saved = torch.load(ckpt, weights_only=False)  # no map_location: nothing in it names the GPU
    assert "cuda_rng" in saved
    assert all(t.device.type == "cpu" for t in saved["model"].values())
    resumed = _model()
    rest = run_stage(resumed, LENGTHS, _loss(resumed), PLAN, ckpt, device="cpu")
    assert rest["done"] == 1.0 and rest["steps"] == 24.0
