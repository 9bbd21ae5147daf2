"""A training stage that survives being killed: checkpoints with optimizer state, resumed to the step.

The reader's auxiliary stage reads 45,734 pairs through a 109M-parameter body on two CPU cores: longer than
any one process can be trusted to live. So a stage is planned up front (every batch of every epoch, from
the seed and the example lengths alone), and every ``checkpoint_every`` steps the model, the optimizer,
the schedule, torch's random state and the running loss are written atomically next to a stamp of the
stage's settings. A rerun loads the newest checkpoint, skips the batches already taken and goes on: the
weights it ends with are those of an uninterrupted run (same batches, same dropout masks), which the
tests check on a tiny model.

A stage runs on the CPU or a GPU (:mod:`sciverify.training.device`) with the same plan and stamp; its
checkpoints hold CPU tensors, so one written on a GPU resumes on a CPU.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sciverify.errors import ConfigError
from sciverify.training.device import forward_context, resolve_device, to_cpu

__all__ = ["StagePlan", "length_batches", "plan_batches", "run_stage"]


@dataclass(frozen=True)
class StagePlan:
    """The settings a stage's trajectory depends on (all of them go into its checkpoint stamp). Where the
    stage runs is not one: the device is an argument of :func:`run_stage`.

    Attributes:
        name: the stage's name in logs and in the checkpoint file name.
        epochs: passes over the examples.
        batch_size: examples per optimizer step.
        lr_body: learning rate of every parameter not under a head.
        lr_head: learning rate of parameters whose name starts with ``head`` (fresh layers learn faster).
        warmup: share of the steps with a linearly rising rate; then a linear decay to zero.
        weight_decay: AdamW's decoupled weight decay.
        seed: seeds the batch plan and (unless :func:`run_stage` is told not to) torch's generator at the
            start of the stage.
        checkpoint_every: steps between checkpoints (0: only at the end).
        log_every: steps between progress lines.
    """

    name: str
    epochs: int
    batch_size: int = 16
    lr_body: float = 5e-5
    lr_head: float = 1e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    seed: int = 13
    checkpoint_every: int = 200
    log_every: int = 50

    def __post_init__(self) -> None:
        if self.epochs < 0 or self.batch_size < 1 or self.checkpoint_every < 0:
            raise ConfigError(
                f"stage {self.name!r}: epochs and checkpoint_every must be >= 0, batch_size >= 1"
            )


def length_batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """One epoch's batches, as lists of example indices.

    Examples of similar length share a batch (dynamic padding is most of the speed on a CPU): shuffle,
    cut into chunks of 50 batches, sort each chunk by length, batch it, then shuffle the batches.
    """
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        batches.extend(part[s : s + batch_size] for s in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


def plan_batches(lengths: Sequence[int], batch_size: int, epochs: int, seed: int) -> list[list[int]]:
    """Every batch of every epoch (:func:`length_batches`, one seeded generator across the epochs)."""
    rng = random.Random(seed)
    return [batch for _ in range(epochs) for batch in length_batches(lengths, batch_size, rng)]


def _stamp(plan: StagePlan, n_examples: int, extra: dict[str, Any]) -> str:
    return json.dumps({**asdict(plan), "examples": n_examples, **extra}, sort_keys=True, default=list)


def run_stage(
    model: Any,
    lengths: Sequence[int],
    loss_of_batch: Callable[[list[int]], Any],
    plan: StagePlan,
    checkpoint: Path | None,
    *,
    stamp_extra: dict[str, Any] | None = None,
    log: Callable[[str], None] = lambda _m: None,
    stop_after: int = 0,
    reseed_torch: bool = True,
    device: str = "cpu",
) -> dict[str, float]:
    """Train ``model`` through ``plan`` with AdamW; resume from ``checkpoint`` when it holds this stage.

    Args:
        model: a torch module; parameters named ``head*`` get ``lr_head``, the other trainable ones
            ``lr_body``.
        lengths: token length of each example (for the batch plan).
        loss_of_batch: example indices -> scalar loss tensor (the caller encodes and weights, and puts the
            batch's tensors on ``device``).
        plan: the stage's settings.
        checkpoint: where the resumable state lives (None: no checkpoints). A checkpoint made with other
            settings or data is refused rather than silently continued.
        stamp_extra: more settings the trajectory depends on (data digest, base model, ...).
        log: progress lines.
        stop_after: stop (after checkpointing) once this many steps are done in total; 0 = run to the end.
            For tests of resumption and for time-boxed runs.
        reseed_torch: seed torch's generator with ``plan.seed`` when the stage starts fresh. False keeps
            the caller's generator state (a stage whose trajectory was fixed before this loop existed, such
            as the label model's auxiliary stage); a resumed stage restores the checkpoint's state either way.
        device: where the stage runs (:func:`~sciverify.training.device.resolve_device`): the model moves
            there for the stage and is back on the CPU when this returns, and ``loss_of_batch`` runs under
            :func:`~sciverify.training.device.forward_context`. In no stamp: a checkpoint holds CPU
            tensors and resumes on either device.

    Returns:
        ``steps``, ``seconds`` (this process), ``final_loss`` (running mean) and ``done`` (1.0 at the end).

    Raises:
        ConfigError: the checkpoint belongs to another stage or other settings; the device is unknown or
            not on this machine.
    """
    import torch

    device = resolve_device(device)
    stamp = _stamp(plan, len(lengths), stamp_extra or {})
    batches = plan_batches(lengths, plan.batch_size, plan.epochs, plan.seed)
    total = len(batches)
    if total == 0:
        return {"steps": 0.0, "seconds": 0.0, "final_loss": float("nan"), "done": 1.0}
    warm = max(1, int(total * plan.warmup))
    model.to(device)  # before the optimizer is built, so that its state lives beside the parameters
    try:
        head = [p for n, p in model.named_parameters() if n.startswith("head") and p.requires_grad]
        body = [p for n, p in model.named_parameters() if not n.startswith("head") and p.requires_grad]
        opt = torch.optim.AdamW(
            [{"params": body, "lr": plan.lr_body}, {"params": head, "lr": plan.lr_head}],
            weight_decay=plan.weight_decay,
        )
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm))
        )
        step, running = 0, math.nan
        if reseed_torch:
            torch.manual_seed(plan.seed)
        if checkpoint is not None and checkpoint.exists():
            saved = torch.load(checkpoint, weights_only=False, map_location="cpu")
            if saved.get("stamp") != stamp:
                raise ConfigError(
                    f"{checkpoint} holds another stage or other settings; delete it or choose another "
                    "directory"
                )
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])  # moves AdamW's moments to the parameters' device
            sched.load_state_dict(saved["scheduler"])
            torch.set_rng_state(saved["torch_rng"])
            if device == "cuda" and "cuda_rng" in saved:  # the GPU's dropout masks come from its generator
                torch.cuda.set_rng_state(saved["cuda_rng"])
            step, running = int(saved["step"]), float(saved["running_loss"])
            log(f"[{plan.name}] resumed at step {step}/{total}")

        def save() -> None:
            if checkpoint is None:
                return
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            partial = checkpoint.with_name(checkpoint.name + ".partial")
            state = {
                "stamp": stamp,
                "step": step,
                "running_loss": running,
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(),
                "torch_rng": torch.get_rng_state(),
            }
            if device == "cuda":
                state["cuda_rng"] = torch.cuda.get_rng_state()
            torch.save(to_cpu(state), partial)  # on the CPU already: the same bytes
            partial.replace(checkpoint)

        model.train()
        start, first = time.time(), step
        while step < total:
            with forward_context(device):
                loss = loss_of_batch(batches[step])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            value = float(loss.item())
            running = value if math.isnan(running) else 0.98 * running + 0.02 * value
            if plan.log_every and step % plan.log_every == 0:
                rate = (step - first) * plan.batch_size / max(1e-9, time.time() - start)
                log(f"[{plan.name}] step {step}/{total} loss {running:.3f} {rate:.1f} examples/s")
            if plan.checkpoint_every and step % plan.checkpoint_every == 0 and step < total:
                save()
            if stop_after and step >= stop_after and step < total:
                save()
                seconds = time.time() - start
                return {"steps": float(step), "seconds": seconds, "final_loss": running, "done": 0.0}
        if step > first:
            save()
        seconds = time.time() - start
        log(f"[{plan.name}] done: {total} steps, {seconds:.0f}s in this process")
        return {"steps": float(step), "seconds": seconds, "final_loss": running, "done": 1.0}
    finally:
        model.to("cpu")  # what the caller saves, evaluates and exports is on the CPU
