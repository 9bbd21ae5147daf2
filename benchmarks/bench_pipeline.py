"""Quality and speed of the full pipeline on the validation split, beside a VeriSci-style baseline.

Run:  python benchmarks/bench_pipeline.py [--claims N] [--repeats R] [--models DIR] [--index DIR]

Quality: the four SciFact F1s (via sciverify.scoring) and evidence recall@k of the retrieval stage, on
the fixed validation split (181 claims from claims_train.jsonl, never used for training).

* ``VeriSci-style``: TF-IDF top-3 retrieval (VeriSci's retriever and k), every sentence the selector
  scores >= 0.5 as rationale (VeriSci's rule, here with our trained selector), label by argmax of the
  label model, NEI when no rationale (Wadden et al. 2020, sec. 5 and App. A.1).
* ``sciverify``: the shipped configuration (fusion retrieval, tuned decision). Its learned emit model was
  fitted on these same claims, so this row is in sample; the row after it repeats the out-of-fold scores
  that ``sciverify train`` recorded in the models' ``rationale/manifest.json`` (no claim scored by a model
  fitted on it), which is the figure to quote.

Speed: ``verify`` latency per claim (warm, one claim at a time, p50/p95), ``predict`` throughput over
the validation claims including model loading, and peak resident memory. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time
from dataclasses import replace
from pathlib import Path


def _recall(hits: list[list[object]], claims: list[object]) -> float:
    from sciverify.data.records import doc_key

    found = total = 0
    for claim, row in zip(claims, hits, strict=True):
        gold = set(claim.evidence)  # type: ignore[attr-defined]
        total += len(gold)
        found += len(gold & {doc_key(h.doc_id) for h in row})  # type: ignore[attr-defined]
    return found / total if total else 0.0


def _quality(verifier: object, claims: list[object]) -> dict[str, float]:
    from sciverify.scoring import score

    preds = verifier.predict(claims)  # type: ignore[attr-defined]
    report = score(claims, preds)  # type: ignore[arg-type]
    out = {family: prf.f1 for family, prf in report.aggregate.items()}
    hits = verifier.retriever.retrieve([c.text for c in claims], verifier.config.retrieval.k)  # type: ignore[attr-defined]
    out["recall"] = _recall(hits, claims)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--claims", type=int, default=None, help="use only the first N validation claims")
    parser.add_argument("--latency-claims", type=int, default=60, help="claims timed one by one for verify")
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--index", type=Path, default=None)
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims
    from sciverify.models.decision import VERISCI_RULE
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import PIPELINE_TOML, Verifier, default_model_dir
    from sciverify.retrieval.base import RetrievalConfig

    claims = split_claims(read_claims(resolve_data_dir().train)).validation
    if args.claims:
        claims = claims[: args.claims]
    model_dir = args.models or default_model_dir()
    shipped = PipelineConfig.load_toml(model_dir / "rationale" / PIPELINE_TOML)
    baseline_cfg = replace(
        shipped,
        retrieval=RetrievalConfig(method="tfidf", k=3),
        decision=VERISCI_RULE,
    )

    rows = []
    for name, cfg in (("VeriSci-style (TF-IDF top-3, t=0.5, argmax)", baseline_cfg), ("sciverify", shipped)):
        t0 = time.perf_counter()
        verifier = Verifier.load(args.index, model_dir, cfg)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        quality = _quality(verifier, claims)
        predict_s = time.perf_counter() - t0
        latencies = []
        verifier.verify(claims[0].text, k=cfg.retrieval.k)  # warm-up
        for claim in claims[: args.latency_claims]:
            t1 = time.perf_counter()
            verifier.verify(claim.text, k=cfg.retrieval.k)
            latencies.append((time.perf_counter() - t1) * 1000)
        latencies.sort()
        rows.append(
            (
                name,
                cfg.retrieval.k,
                quality,
                statistics.median(latencies),
                latencies[int(0.95 * (len(latencies) - 1))],
                (load_s + predict_s) / len(claims),
            )
        )

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\nValidation split: {len(claims)} claims; CPU: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; peak RSS {peak_mb:.0f} MB\n"
    )
    print(
        "| system | k | recall@k | abstract label-only F1 | abstract label+rationale F1 | "
        "sentence selection F1 | sentence selection+label F1 | verify p50 ms | verify p95 ms | "
        "predict s/claim (incl. load) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, k, q, p50, p95, per_claim in rows:
        print(
            f"| {name} | {k} | {q['recall']:.3f} | {q['abstract_label_only']:.3f} | "
            f"{q['abstract_rationalized']:.3f} | {q['sentence_selection']:.3f} | {q['sentence_label']:.3f} | "
            f"{p50:.0f} | {p95:.0f} | {per_claim:.3f} |"
        )
    manifest = model_dir / "rationale" / "manifest.json"
    if shipped.decision.confidence == "learned" and manifest.exists():
        import json

        q = json.loads(manifest.read_text(encoding="utf-8"))["metrics"]["validation"]
        print(
            f"| sciverify, emit model out of fold (manifest) | {shipped.retrieval.k} | – | "
            f"{q['abstract_label_only']:.3f} | {q['abstract_rationalized']:.3f} | "
            f"{q['sentence_selection']:.3f} | {q['sentence_label']:.3f} | – | – | – |"
        )


if __name__ == "__main__":
    main()
