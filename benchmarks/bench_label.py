"""Label-model inference: one ONNX call per evidence (shipped) against one padded call per claim.

Run:  python benchmarks/bench_label.py [--claims N] [--k K] [--models DIR] [--index DIR]

For the first N validation claims, the pipeline's real label inputs are built (fusion top-K candidates,
the selector's sentences under the shipped thresholds), then labelled both ways with the same int8
graph, interleaved claim by claim so that machine load hits both alike. Prints per-claim latency
(median, p95) and how far the batched probabilities stray from the per-evidence ones: dynamic int8
quantisation picks activation scales from the whole input tensor, so in a batch a verdict moves with
its batch-mates and their padding, while one evidence per call is exact.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from _validation import load, parse_args


def main() -> None:
    args = parse_args(__doc__, claims=100)
    claims, verifier = load(args)
    labeler = verifier.labeler
    texts = [c.text for c in claims]
    hits, embs = verifier.candidates(texts, args.k)
    jobs = []
    for n, text in enumerate(texts):
        scores = verifier.score_candidates(text, embs[n], hits[n])
        _, evidences = verifier.label_evidences(hits[n], scores)
        if evidences:
            jobs.append((text, evidences))

    for text, evidences in jobs[:3]:  # warm-up
        labeler.predict(text, evidences)
        labeler.predict_padded(text, evidences)
    times: dict[str, list[float]] = {"one call per evidence (shipped)": [], "one padded call per claim": []}
    shifts, flips, rows = [], 0, 0
    for text, evidences in jobs:
        t0 = time.perf_counter()
        exact = labeler.predict(text, evidences)
        t1 = time.perf_counter()
        padded = labeler.predict_padded(text, evidences)
        t2 = time.perf_counter()
        times["one call per evidence (shipped)"].append((t1 - t0) * 1000)
        times["one padded call per claim"].append((t2 - t1) * 1000)
        shifts.extend(np.abs(exact - padded).max(axis=1).tolist())
        flips += int((exact.argmax(1) != padded.argmax(1)).sum())
        rows += len(evidences)

    print(f"{len(jobs)} claims, {rows} evidences ({rows / len(jobs):.1f} per claim), k={args.k}\n")
    print(
        "| label inference | median ms/claim | p95 ms/claim"
        " | max-prob shift vs exact (mean / max) | argmax changes |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, ms in times.items():
        p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) > 1 else ms[0]
        drift = "0 / 0" if "shipped" in name else f"{np.mean(shifts):.4f} / {np.max(shifts):.4f}"
        changes = "0" if "shipped" in name else f"{flips} of {rows}"
        print(f"| {name} | {statistics.median(ms):.1f} | {p95:.1f} | {drift} | {changes} |")


if __name__ == "__main__":
    main()
