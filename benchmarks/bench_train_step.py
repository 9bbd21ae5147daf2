"""How long the entailment stage over every pair takes on this CPU: seconds per step, float32 and bfloat16.

Run:  python benchmarks/bench_train_step.py [--steps 24] [--threads 2]

The stage of ``--label-base mpnet6-all`` (:func:`sciverify.training.cv.plan.all_label_recipe`) reads every
auxiliary pair twice in length-grouped batches of 16 on the mpnet6 body. This script builds that stage's
real pairs and its real batch plan (same seed), takes ``--steps`` batches spread evenly over the plan (so
their lengths follow the plan's), and times one optimizer step on each: forward, backward and AdamW, first
in float32 (the recipe as written, the baseline) then under bfloat16 autocast (what a CPU with bfloat16
dot products could use), from the same starting weights. Printed per mode: mean seconds per step, the
projected hours for the whole plan, and the mean loss over the timed batches (bfloat16 must not change
what is learned: its loss should stay within a few hundredths of float32's).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StageSample:
    """Real batches of a label model's auxiliary stage, encoded: ``feeds`` and ``labels`` per batch (CPU
    tensors), chosen every ``stride``-th from the stage's plan of ``plan_steps`` batches over ``pairs``
    pairs, with ``tokens`` real tokens per batch on average and ``load_seconds`` spent building the pairs."""

    pairs: int
    plan_steps: int
    stride: int
    feeds: list[dict[str, Any]]
    labels: list[Any]
    tokens: float
    load_seconds: float


def stage_sample(config: Any, steps: int) -> StageSample:
    """``steps`` batches spread evenly over the aux stage of ``config`` (a ``LabelTrainConfig``): its real
    pairs, its real batch plan (same seed), so their lengths follow the plan's."""
    import torch

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_corpus
    from sciverify.models.label import encode_pairs
    from sciverify.models.label_torch import training_tokenizer
    from sciverify.training.aux_pairs import load_aux
    from sciverify.training.bases import base_dir
    from sciverify.training.label_eval import pairs_text
    from sciverify.training.loop import plan_batches

    paths = resolve_data_dir()
    corpus = list(read_corpus(paths.corpus))
    t0 = time.perf_counter()
    pairs = load_aux(paths.root.parent / "aux", config.aux_sets, corpus, seed=config.seed)
    load_s = time.perf_counter() - t0
    tokenizer = training_tokenizer(base_dir(config.base))
    texts = pairs_text(pairs)
    lengths = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    plan = plan_batches(lengths, config.batch_size, config.aux_epochs, config.seed)
    stride = max(1, len(plan) // steps)
    chosen = plan[::stride][:steps]
    feeds = []
    ys = []
    for batch in chosen:
        enc = encode_pairs(tokenizer, [texts[i] for i in batch], config.aux_max_length)
        feeds.append({k: torch.from_numpy(v) for k, v in enc.items()})
        ys.append(torch.tensor([pairs[i].label for i in batch]))
    tokens = statistics.mean(int(f["attention_mask"].sum()) for f in feeds)
    return StageSample(len(pairs), len(plan), stride, feeds, ys, tokens, load_s)


def timed_steps(
    model: Any,
    sample: StageSample,
    forward: Callable[[], contextlib.AbstractContextManager[Any]],
    device: str = "cpu",
) -> tuple[list[float], list[float]]:
    """One optimizer step on each batch of ``sample`` (the batch moved to ``device``, the forward pass
    inside ``forward()``, then backward and AdamW): the seconds of each step and its loss. Reading the loss
    ends the step's clock, so on a GPU the time includes every kernel the step queued."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=5e-5)
    loss_fn = torch.nn.CrossEntropyLoss()
    times: list[float] = []
    losses: list[float] = []
    for feeds, y in zip(sample.feeds, sample.labels, strict=True):
        start = time.perf_counter()
        with forward():
            logits = model(**{k: v.to(device) for k, v in feeds.items()})
        loss = loss_fn(logits.float(), y.to(device))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        times.append(time.perf_counter() - start)
    return times, losses


def _mode_times(model: Any, sample: StageSample, bf16: bool) -> tuple[float, float]:
    import torch

    times, losses = timed_steps(
        model, sample, lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)
    )
    return statistics.mean(times[1:] or times), statistics.mean(losses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=24, help="batches timed per mode (spread over the plan)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import copy

    import torch

    from sciverify.models.conformance import cpu_info
    from sciverify.models.label_torch import build_classifier
    from sciverify.training.bases import base_dir, kept_layers
    from sciverify.training.cv.plan import all_label_recipe

    torch.set_num_threads(args.threads)
    config = all_label_recipe(seed=0, tiny=False, aux_checkpoint=None)
    sample = stage_sample(config, args.steps)

    base = build_classifier(base_dir(config.base), seed=config.seed, keep_layers=kept_layers(config.base))
    base.train()
    cpu = cpu_info()
    print(f"cpu: {cpu.model}; flags: {' '.join(cpu.flags)}")
    print(
        f"stage: {sample.pairs:,} pairs x {config.aux_epochs} epochs = {sample.plan_steps:,} steps of "
        f"{config.batch_size}; {sample.load_seconds:.0f} s to build the pairs; timed {len(sample.feeds)} "
        f"batches (every {sample.stride}th), {sample.tokens:.0f} real tokens per batch on average; "
        f"{args.threads} threads"
    )
    print(f"{'mode':<10}{'s/step':>8}{'plan hours':>12}{'mean loss':>11}")
    results = {}
    for name, bf16 in (("float32", False), ("bfloat16", True)):
        model = copy.deepcopy(base)
        sec, loss = _mode_times(model, sample, bf16)
        results[name] = sec
        print(f"{name:<10}{sec:>8.2f}{sec * sample.plan_steps / 3600:>12.1f}{loss:>11.3f}")
    print(f"bfloat16 against float32: x{results['float32'] / results['bfloat16']:.2f} faster")


if __name__ == "__main__":
    main()
