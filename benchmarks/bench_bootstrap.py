"""Bootstrap speed: sciverify's vectorised resampling against a plain per-resample Python loop.

Both use the same per-claim count matrix and the same resampled claim indices, and the script
checks that they produce identical totals and metrics before printing the times.

Run: python benchmarks/bench_bootstrap.py [--claims 300] [--resamples 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from sciverify.data.records import AbstractPrediction, Claim, EvidenceSet, Label, Prediction
from sciverify.scoring import FAMILIES, MEASURES, bootstrap, bootstrap_totals, resample_indices, score
from sciverify.scoring.metrics import family_columns, metric_arrays, prf


def synthetic_run(n_claims: int, seed: int) -> np.ndarray:
    """Score a random, SciFact-shaped gold/prediction pair and return its count matrix."""
    rng = np.random.default_rng(seed)
    golds, preds = [], []
    for cid in range(n_claims):
        evidence = {}
        for d in range(int(rng.integers(0, 3))):
            label = Label.SUPPORT if rng.random() < 0.6 else Label.CONTRADICT
            sets = tuple(
                EvidenceSet(
                    tuple(int(x) for x in rng.choice(12, int(rng.integers(1, 4)), replace=False)), label
                )
                for _ in range(int(rng.integers(1, 3)))
            )
            evidence[str(cid * 10 + d)] = sets
        golds.append(Claim(id=cid, text="", evidence=evidence))
        predicted = {}
        for key, sets in evidence.items():
            if rng.random() < 0.7:
                label = sets[0].label if rng.random() < 0.8 else Label.CONTRADICT
                sentences = tuple(int(x) for x in rng.choice(12, int(rng.integers(1, 5)), replace=False))
                predicted[key] = AbstractPrediction(label, sentences)
        if rng.random() < 0.4:
            predicted["99999"] = AbstractPrediction(Label.SUPPORT, (0, 1))
        preds.append(Prediction(id=cid, evidence=predicted))
    return score(golds, preds).counts


def loop_bootstrap(counts: np.ndarray, indices: np.ndarray) -> tuple[list[list[int]], dict[str, list[float]]]:
    """The baseline: for each resample, sum the sampled claims' counts and compute metrics in Python."""
    rows = [list(map(int, r)) for r in counts]
    all_totals = []
    values: dict[str, list[float]] = {f"{f}_{m}": [] for f in FAMILIES for m in MEASURES}
    for sample in indices.tolist():
        totals = [0] * len(rows[0])
        for i in sample:
            row = rows[i]
            for k in range(len(totals)):
                totals[k] += row[k]
        all_totals.append(totals)
        for family in FAMILIES:
            c, ret, rel = family_columns(family)
            result = prf(totals[c], totals[ret], totals[rel])
            for m in MEASURES:
                values[f"{family}_{m}"].append(getattr(result, m))
    return all_totals, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    counts = synthetic_run(args.claims, args.seed)
    indices = resample_indices(len(counts), args.resamples, args.seed)

    # correctness first: identical totals and metrics from both implementations
    totals = bootstrap_totals(counts, indices)
    loop_totals, loop_values = loop_bootstrap(counts, indices)
    assert np.array_equal(totals, np.asarray(loop_totals, dtype=np.float64)), "totals differ"
    arrays = metric_arrays(totals)
    for family in FAMILIES:
        for m in MEASURES:
            assert np.array_equal(arrays[family][m], np.asarray(loop_values[f"{family}_{m}"])), (family, m)

    vector_times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        bootstrap(counts, n_boot=args.resamples, seed=args.seed)
        vector_times.append(time.perf_counter() - start)
    start = time.perf_counter()
    loop_bootstrap(counts, resample_indices(len(counts), args.resamples, args.seed))
    loop_time = time.perf_counter() - start

    vector = statistics.median(vector_times)
    print(
        f"bootstrap of {args.claims} claims x {args.resamples} resamples "
        f"(CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores visible, "
        f"numpy {np.__version__}; vectorised: median of {args.repeats} runs, loop: 1 run)"
    )
    print("results identical: yes (totals and all 12 metrics, every resample)")
    print(f"{'implementation':<38}{'seconds':>10}")
    print(f"{'sciverify.scoring.bootstrap (vector)':<38}{vector:>10.3f}")
    print(f"{'per-resample Python loop (baseline)':<38}{loop_time:>10.3f}")
    print(f"speed-up: {loop_time / vector:.0f}x")


if __name__ == "__main__":
    main()
