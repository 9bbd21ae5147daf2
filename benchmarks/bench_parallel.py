"""Label model calls per claim: one after another on multi-threaded sessions, or side by side on
single-threaded ones (shipped).

Run:  python benchmarks/bench_parallel.py [--claims N] [--k K] [--models DIR] [--index DIR]

For the first N validation claims the pipeline's real inputs are built (fusion top-K candidates and the
rationales the decision has the label model read). Each claim's calls are then run three ways,
interleaved claim by claim so that machine load hits all alike:

* ``sequential, T threads``: one call after another, each session using every core (the previous
  release);
* ``sequential, 1 thread``: one call after another on single-threaded sessions;
* ``side by side, 1 thread``: the shipped way, ``sciverify.models.parallel.map_calls``.

Prints per-claim milliseconds (median, p95) of the label model, and the largest
difference between the outputs of the three ways (it must be 0: each call sees the same input).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _validation import load, parse_args


def main() -> None:
    args = parse_args(__doc__, claims=60)
    from sciverify.models.label import LabelModel
    from sciverify.models.parallel import map_calls, usable_cores
    from sciverify.pipeline.verify import default_model_dir

    claims, verifier = load(args)
    model_dir = args.models or default_model_dir()
    cores = usable_cores()
    labels = {n: LabelModel.load(model_dir / "label", threads=n) for n in (cores, 1)}

    jobs = []
    texts = [c.text for c in claims]
    hits, embs = verifier.candidates(texts, args.k)
    for n, text in enumerate(texts):
        _, evidences = verifier.label_evidences(hits[n], verifier.score_candidates(text, embs[n], hits[n]))
        jobs.append((text, evidences))

    def one(model: Any, text: str) -> Callable[[Any], Any]:
        return lambda evidence: model.predict_padded(text, [evidence])[0]

    ways: dict[str, Callable[[Any, str, list[Any]], list[Any]]] = {
        f"sequential, {cores} threads": lambda m, t, xs: [one(m, t)(x) for x in xs],
        "sequential, 1 thread": lambda m, t, xs: [one(m, t)(x) for x in xs],
        "side by side, 1 thread (shipped)": lambda m, t, xs: map_calls(one(m, t), xs),
    }
    threads_of = dict(zip(ways, (cores, 1, 1), strict=True))
    times: dict[str, list[float]] = {way: [] for way in ways}
    diff = 0.0
    for rep, (text, evidences) in enumerate(jobs):
        outs = []
        for way, run in ways.items():
            t0 = time.perf_counter()
            outs.append(run(labels[threads_of[way]], text, evidences))
            if rep:  # the first claim warms the sessions up
                times[way].append((time.perf_counter() - t0) * 1000)
        for other in outs[1:]:
            for a, b in zip(outs[0], other, strict=True):
                diff = max(diff, float(np.abs(np.asarray(a) - np.asarray(b)).max()))

    print(f"{len(jobs) - 1} validation claims, top {args.k} candidates, {cores} cores")
    print("| calls | label ms/claim p50 | p95 |")
    print("|---|---:|---:|")
    for way in ways:
        xs = sorted(times[way])
        print(f"| {way} | {statistics.median(xs):.1f} | {xs[int(0.95 * (len(xs) - 1))]:.1f} |")
    print(f"largest output difference between the ways: {diff:g}")


if __name__ == "__main__":
    main()
