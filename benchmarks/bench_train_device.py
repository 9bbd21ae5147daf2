"""How fast the label model's entailment stage trains here: pairs per second on the CPU, and on a CUDA GPU
when torch sees one.

Run:  python benchmarks/bench_train_device.py [--steps 10] [--device all|auto|cpu|cuda] [--base mpnet6]
      [--batch-size 16] [--threads 2]

The stage is ``--label-base mpnet6-all``'s (:func:`sciverify.training.cv.plan.all_label_recipe`): its real
auxiliary pairs and batch plan, ``--steps`` batches spread evenly over it (``bench_train_step``'s
:func:`stage_sample`), on the recipe's body with its trainable parameters (embeddings frozen). Each step
is what ``sciverify train --device D`` does per batch: the batch moved to the device, the forward pass
inside :func:`sciverify.training.device.forward_context` (bfloat16 autocast on a GPU, plain float32 on
the CPU), backward and AdamW on float32 weights (``bench_train_step``'s :func:`timed_steps`). The first
step (allocations, kernel choice) is not counted. ``--base mpnet`` times the 12-layer body;
``--batch-size`` another batch size than the recipe's 16 (on a GPU a larger batch fills the device better,
at the cost of another recipe).
"""

from __future__ import annotations

import argparse
import copy
import statistics
from dataclasses import replace

from bench_train_step import stage_sample, timed_steps


def _device_name(device: str) -> str:
    import torch

    if device == "cuda":
        return str(torch.cuda.get_device_name())
    from sciverify.models.conformance import cpu_info

    return f"{cpu_info().model}, {torch.get_num_threads()} threads"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="batches timed per device (over the plan)")
    parser.add_argument(
        "--device", default="all", help="all (the CPU, and a CUDA GPU when there is one), auto, cpu or cuda"
    )
    parser.add_argument("--base", default="mpnet6", help="the body (training.bases.BODIES): mpnet6, mpnet")
    parser.add_argument("--batch-size", type=int, default=0, help="pairs per step (0: the recipe's)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads on the CPU")
    args = parser.parse_args()

    import torch

    from sciverify.models.label_torch import build_classifier, freeze_lower_layers
    from sciverify.training.bases import base_dir, kept_layers
    from sciverify.training.cv.plan import all_label_recipe
    from sciverify.training.device import forward_context, resolve_device

    torch.set_num_threads(args.threads)
    config = replace(all_label_recipe(seed=0, tiny=False, aux_checkpoint=None), base=args.base)
    if args.batch_size:
        config = replace(config, batch_size=args.batch_size)
    if args.device == "all":
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    else:
        devices = [resolve_device(args.device)]
    sample = stage_sample(config, args.steps + 1)  # + the uncounted first step

    base = build_classifier(base_dir(config.base), seed=config.seed, keep_layers=kept_layers(config.base))
    if config.freeze_embeddings:
        base.body.embeddings.word_embeddings.weight.requires_grad_(False)
    freeze_lower_layers(base, config.trainable_layers)
    base.train()
    layers = len(base.body.encoder.layer)
    print(
        f"stage: {config.base} ({layers} layers), {sample.pairs:,} pairs x {config.aux_epochs} epochs = "
        f"{sample.plan_steps:,} steps of {config.batch_size}; timed {len(sample.feeds) - 1} batches "
        f"(every {sample.stride}th, the first uncounted), {sample.tokens:.0f} real tokens per batch"
    )
    print(f"{'device':<8}{'pairs/s':>9}{'s/step':>9}{'plan hours':>12}{'mean loss':>11}  name")
    for device in devices:
        model = copy.deepcopy(base).to(device)
        times, losses = timed_steps(model, sample, lambda d=device: forward_context(d), device)
        counted = times[1:] or times
        pairs = sum(len(y) for y in sample.labels[len(sample.labels) - len(counted) :])
        rate = pairs / sum(counted)
        step = statistics.mean(counted)
        hours = sample.plan_steps * config.batch_size / rate / 3600
        print(
            f"{device:<8}{rate:>9.1f}{step:>9.3f}{hours:>12.2f}{statistics.mean(losses):>11.3f}  "
            f"{_device_name(device)}"
        )


if __name__ == "__main__":
    main()
