"""Speed of the shipped pipeline beside a comparison model set, and its cross-validated quality.

Run:  python benchmarks/bench_pipeline.py [--baseline-models DIR] [--claims N] [--cv results/cv5]

Speed, measured here in one run for every row: ``verify`` latency per claim (warm, one claim at a time,
p50/p95) and ``predict`` seconds per claim including model loading, over the first N claims of
``claims_test.jsonl`` (unlabelled claims: no quality is read from them). Rows:

* ``VeriSci-style``: the shipped models with VeriSci's retrieval and decision (TF-IDF top-3, every sentence
  scoring >= 0.5 a rationale, argmax label; Wadden et al. 2020, sec. 5);
* ``sciverify``: the shipped models and ``pipeline.toml``;
* ``comparison``: another model directory (``--baseline-models``, e.g. an earlier release's weights
  extracted with ``git archive``), so that speed targets can be quoted as ratios measured side by side.

Quality is never measured here: the only quality figures are the cross-fitted out-of-fold ones
(``sciverify train --cv 5``), read from the committed ``<cv>/<base>/summary.json`` and printed below the
speed table with their bootstrap intervals. Peak RSS is the whole process's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock


def _time_system(index: Path | None, model_dir: Path, cfg: Any, claims: list[Any], n_latency: int) -> tuple:
    from sciverify.pipeline.verify import Verifier

    t0 = time.perf_counter()
    verifier = Verifier.load(index, model_dir, cfg, progress=False)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    verifier.predict(claims)
    predict_s = time.perf_counter() - t0
    verifier.verify(claims[0].text)  # warm-up
    latencies = []
    for claim in claims[:n_latency]:
        t1 = time.perf_counter()
        verifier.verify(claim.text)
        latencies.append((time.perf_counter() - t1) * 1000)
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    return statistics.median(latencies), p95, (load_s + predict_s) / len(claims)


def _graphs_as_written(active: bool) -> contextlib.AbstractContextManager[object]:
    """While active, cross-encoders load their graph file as written (no uint8 rewrite)."""
    import sciverify.models.label as label

    if not active:
        return contextlib.nullcontext()
    return mock.patch.object(label, "exact_graph_bytes", lambda path: Path(path).read_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--claims", type=int, default=100, help="claims of claims_test.jsonl for predict")
    parser.add_argument("--latency-claims", type=int, default=60, help="claims timed one by one for verify")
    parser.add_argument("--models", type=Path, default=None, help="models to measure (default: shipped)")
    parser.add_argument("--baseline-models", type=Path, default=None, help="a comparison model directory")
    parser.add_argument(
        "--baseline-as-written",
        action="store_true",
        help="load the comparison's int8 graphs as their files are written, not made exact (to time a "
        "release from before models.int8 as it ran, saturating kernels and all)",
    )
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--cv", type=Path, default=Path("results/cv5"), help="cross-fitted run directory")
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.decision.settings import VERISCI_RULE
    from sciverify.models.conformance import cpu_info
    from sciverify.pipeline.config import default_model_dir, tuned_config
    from sciverify.retrieval.base import RetrievalConfig

    claims = read_claims(resolve_data_dir().test, require_text=True)[: args.claims]
    model_dir = args.models or default_model_dir()
    shipped = tuned_config(model_dir)
    systems = [
        (
            "VeriSci-style (TF-IDF top-3, t=0.5, argmax)",
            model_dir,
            replace(shipped, retrieval=RetrievalConfig(method="tfidf", k=3), decision=VERISCI_RULE),
        ),
        ("sciverify (shipped)" if args.models is None else f"sciverify: {args.models}", model_dir, shipped),
    ]
    if args.baseline_models is not None:
        base_cfg = tuned_config(args.baseline_models)
        systems.append((f"comparison: {args.baseline_models}", args.baseline_models, base_cfg))

    rows = []
    for name, d, cfg in systems:
        as_written = args.baseline_as_written and d == args.baseline_models
        with _graphs_as_written(as_written):
            timed = _time_system(args.index, d, cfg, claims, args.latency_claims)
        rows.append((name, cfg.retrieval.k, *timed))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\n{len(claims)} claims of claims_test.jsonl; CPU: {cpu_info().line()}, "
        f"{os.cpu_count()} cores; peak RSS {peak_mb:.0f} MB\n"
    )
    print("| system | k | verify p50 ms | verify p95 ms | predict s/claim (incl. load) |")
    print("|---|---:|---:|---:|---:|")
    for name, k, p50, p95, per_claim in rows:
        print(f"| {name} | {k} | {p50:.0f} | {p95:.0f} | {per_claim:.3f} |")
    if args.baseline_models is not None:
        _, _, p50, _, per_claim = rows[1]
        _, _, b50, _, b_claim = rows[-1]
        ratio = f"verify p50 x{p50 / b50:.2f}, predict per claim x{per_claim / b_claim:.2f}"
        print(f"\nmeasured / comparison: {ratio}")

    summaries = sorted(args.cv.glob("*/summary.json"))
    if summaries:
        print("\nQuality, cross-validated (every claim scored out of fold; 95% bootstrap intervals):\n")
        print(
            "| run (label model, reader) | claims | abstract label-only | abstract label+rationale | "
            "sentence selection | sentence selection+label |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for path in summaries:
            s = json.loads(path.read_text(encoding="utf-8"))
            cells = []
            for f in ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label"):
                row = s["tuned"][f]
                cells.append(f"{row['f1']:.3f} ({row['f1_ci95'][0]:.3f}-{row['f1_ci95'][1]:.3f})")
            print(f"| {path.parent.name} | {s['claims']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
