"""Retrieval benchmark: quality on the validation split, query latency, index build time and memory.

Usage:
    python benchmarks/bench_retrieval.py                    # default SciFact index (built if missing)
    python benchmarks/bench_retrieval.py --index DIR --data DIR
    python benchmarks/bench_retrieval.py --scale 200000     # also build a synthetic 200k-abstract index

Quality: recall@1/3/5/10/20 and MRR of every retriever on the fixed validation split (181 claims;
"evidence" = docs with gold rationales, 116 claims; "cited" = all cited docs). TF-IDF (unigrams +
bigrams, the VeriSci retriever) is the baseline row. Fusion weights are tuned on the *train* part of
the split (628 claims) and then reported on validation, so the validation numbers are not fitted.
Latency: one claim per call, warm, p50/p95 over the validation claims. Build: wall time and peak RSS
of a lexical-only build in a child process, plus the dense build time recorded in the manifest.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sciverify.data.datasets import resolve_data_dir
from sciverify.data.io import read_claims
from sciverify.data.records import Claim
from sciverify.data.splits import split_claims
from sciverify.retrieval.base import RetrievalConfig, top_k
from sciverify.retrieval.evaluate import CUTOFFS, evaluate_hits
from sciverify.retrieval.index import CorpusIndex, ensure_default_index
from sciverify.retrieval.methods import fuse_scores, make_retriever

__all__: list[str] = []


def _table(title: str, rows: list[tuple[str, list[float]]]) -> None:
    print(f"\n{title}")
    head = "".join(f"{'R@' + str(k):>7}" for k in CUTOFFS) + f"{'MRR':>7}"
    print(f"{'method':<26}{head}")
    for name, values in rows:
        print(f"{name:<26}" + "".join(f"{v:>7.3f}" for v in values))


def _hits(index: CorpusIndex, scores: np.ndarray, k: int = 20) -> list:
    return [top_k(index, row, k) for row in scores]


def _doc_vector_variants(index: CorpusIndex, q: np.ndarray) -> dict[str, np.ndarray]:
    """Scores of per-abstract vectors made different ways from the stored title/sentence embeddings."""
    sent = np.asarray(index.all_sentence_embeddings, dtype=np.float32)
    titles = np.asarray(index.title_embeddings, dtype=np.float32)
    starts = index.sentence_starts()
    mean = np.add.reduceat(sent, starts, axis=0)
    mean /= np.linalg.norm(mean, axis=1, keepdims=True).clip(1e-12)
    both = titles + mean
    both /= np.linalg.norm(both, axis=1, keepdims=True).clip(1e-12)
    sims = q @ sent.T
    return {
        "dense title": q @ titles.T,
        "dense mean(sent)": q @ mean.T,
        "dense title+mean": q @ both.T,
        "dense maxsim(sent)": np.maximum.reduceat(sims, starts, axis=1),
        "dense maxsim(sent,title)": np.maximum(np.maximum.reduceat(sims, starts, axis=1), q @ titles.T),
    }


def _tune_fusion(
    index: CorpusIndex, claims: list[Claim], lexical: np.ndarray, dense: dict[str, np.ndarray]
) -> tuple[RetrievalConfig, float]:
    """Grid search on ``claims`` (train split): objective recall@3 on evidence docs, then MRR."""
    best: tuple[float, float, RetrievalConfig] | None = None
    for mode in ("doc", "maxsim"):
        for fusion in ("score", "rrf"):
            for weight in np.round(np.arange(0.0, 1.01, 0.1), 2):
                config = RetrievalConfig(
                    method="fusion", dense_mode=mode, fusion=fusion, fusion_weight=float(weight)
                )
                report = evaluate_hits(claims, _hits(index, fuse_scores(lexical, dense[mode], config)))
                key = (report.recall[3], report.mrr)
                if best is None or key > best[:2]:
                    best = (*key, config)
    assert best is not None
    return best[2], best[0]


def quality(index: CorpusIndex, split: tuple[list[Claim], list[Claim]]) -> RetrievalConfig:
    train, validation = split
    texts = {name: [c.text for c in part] for name, part in (("train", train), ("val", validation))}
    retrievers = {m: make_retriever(index, RetrievalConfig(method=m)) for m in ("tfidf", "bm25")}
    scores = {m: {p: r.scores(texts[p]) for p in texts} for m, r in retrievers.items()}
    rows: dict[str, dict[str, list[float]]] = {"evidence": {}, "cited": {}}

    def add(name: str, val_scores: np.ndarray) -> None:
        hits = _hits(index, val_scores)
        for relevance in rows:
            rows[relevance][name] = evaluate_hits(validation, hits, relevance).row()

    add("tfidf (baseline, paper)", scores["tfidf"]["val"])
    add("bm25", scores["bm25"]["val"])
    config = RetrievalConfig()
    if index.has_dense:
        from sciverify.retrieval.embedder import get_embedder

        embedder = get_embedder(index.config.max_length)
        q = {p: embedder.encode(t) for p, t in texts.items()}
        variants = {p: _doc_vector_variants(index, q[p]) for p in q}
        for name, val_scores in variants["val"].items():
            add(name, val_scores)
        doc_mode = make_retriever(index, RetrievalConfig(method="dense", dense_mode="doc"))
        dense = {
            p: {"doc": doc_mode.scores_for(q[p]), "maxsim": variants[p]["dense maxsim(sent,title)"]}
            for p in q
        }
        config, train_r3 = _tune_fusion(index, train, scores["bm25"]["train"], dense["train"])
        print(
            f"fusion tuned on train split: mode={config.dense_mode} fusion={config.fusion} "
            f"weight={config.fusion_weight} (train R@3 {train_r3:.3f})"
        )
        add(
            f"fusion {config.fusion} w={config.fusion_weight} {config.dense_mode}",
            fuse_scores(scores["bm25"]["val"], dense["val"][config.dense_mode], config),
        )
        for weight in (0.3, 0.5):
            fixed = RetrievalConfig(method="fusion", fusion="rrf", fusion_weight=weight, dense_mode="maxsim")
            add(
                f"fusion rrf w={weight} maxsim",
                fuse_scores(scores["bm25"]["val"], dense["val"]["maxsim"], fixed),
            )
    oracle = make_retriever(index, RetrievalConfig(method="oracle"), claims=validation)
    hits = oracle.retrieve(texts["val"], 20)
    for relevance in rows:
        rows[relevance]["oracle (gold docs)"] = evaluate_hits(validation, hits, relevance).row()
    n_ev = evaluate_hits(validation, hits, "evidence").n_claims
    _table(f"validation split, relevant = evidence docs ({n_ev} claims)", list(rows["evidence"].items()))
    _table(f"validation split, relevant = cited docs ({len(validation)} claims)", list(rows["cited"].items()))
    return config


def latency(index: CorpusIndex, claims: list[Claim], fusion: RetrievalConfig) -> None:
    print("\nquery latency, one claim per call, warm (ms)")
    print(f"{'method':<26}{'p50':>8}{'p95':>8}{'setup s':>9}")
    methods = [RetrievalConfig(method="tfidf"), RetrievalConfig(method="bm25")]
    if index.has_dense:
        methods += [
            RetrievalConfig(method="dense", dense_mode="doc"),
            RetrievalConfig(method="dense", dense_mode="maxsim"),
            fusion,
        ]
    for config in methods:
        t0 = time.perf_counter()
        retriever = make_retriever(index, config)
        setup = time.perf_counter() - t0
        retriever.retrieve([claims[0].text], config.k)
        times = []
        for claim in claims:
            t = time.perf_counter()
            retriever.retrieve([claim.text], config.k)
            times.append((time.perf_counter() - t) * 1000)
        name = config.method + (f" ({config.dense_mode})" if config.method in ("dense", "fusion") else "")
        print(f"{name:<26}{np.percentile(times, 50):>8.1f}{np.percentile(times, 95):>8.1f}{setup:>9.2f}")


_BUILD_CHILD = """
import json, sys, time
from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index
t = time.perf_counter()
build_index(sys.argv[1], sys.argv[2], IndexConfig(dense=False), progress=False)
build = time.perf_counter() - t
t = time.perf_counter()
index = CorpusIndex.open(sys.argv[2])
opened = time.perf_counter() - t
index.bm25.scores("warm up")
times = []
for row in range(0, len(index), max(1, len(index) // 200)):
    text = index.title(row)
    t = time.perf_counter()
    scores = index.bm25.scores(text)
    scores.argpartition(-3)[-3:]
    times.append(time.perf_counter() - t)
times.sort()
status = open("/proc/self/status").read()  # VmHWM: this process's own peak (ru_maxrss includes the parent's)
rss = int(status.split("VmHWM:")[1].split()[0]) / 1024
p50, p95 = 1000 * times[len(times) // 2], 1000 * times[int(len(times) * 0.95)]
stats = {"build_s": build, "open_s": opened, "peak_rss_mb": rss, "bm25_p50_ms": p50, "bm25_p95_ms": p95}
print(json.dumps(stats))
"""


def _du(path: Path) -> dict[str, float]:
    sizes: dict[str, float] = {}
    for f in path.rglob("*"):
        if f.is_file():
            part = f.relative_to(path).parts[0] if len(f.relative_to(path).parts) > 1 else f.name
            sizes[part] = sizes.get(part, 0) + f.stat().st_size / 2**20
    return sizes


def build_cost(corpus: Path, label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "index"
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD_CHILD, str(corpus), str(out)],
            capture_output=True,
            text=True,
            check=True,
        )
        stats = json.loads(proc.stdout.strip().splitlines()[-1])
        sizes = _du(out)
    print(
        f"\n{label}: lexical build {stats['build_s']:.1f} s, peak RSS {stats['peak_rss_mb']:.0f} MB, "
        f"open {stats['open_s'] * 1000:.1f} ms, BM25 query p50 {stats['bm25_p50_ms']:.1f} ms "
        f"p95 {stats['bm25_p95_ms']:.1f} ms"
    )
    print(
        "  on disk (MB): "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]))
    )


def synthetic_corpus(source: Path, n_docs: int, out: Path) -> None:
    """``n_docs`` abstracts cycled from ``source`` with fresh ids and one unique token each, streamed."""
    import orjson

    lines = [orjson.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
    with out.open("wb") as handle:
        for i in range(n_docs):
            rec = dict(lines[i % len(lines)])
            rec["doc_id"] = f"syn{i}"
            rec["title"] = f"{rec['title']} q{i:x}"
            handle.write(orjson.dumps(rec) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, help="index directory (default: the SciFact default index)")
    parser.add_argument("--data", type=Path, help="SciFact data directory")
    parser.add_argument("--scale", type=int, default=0, help="also build a synthetic corpus of N abstracts")
    parser.add_argument("--scale-corpus", type=Path, help="also build this (large) corpus, lexical only")
    parser.add_argument("--skip-quality", action="store_true", help="only the build measurements")
    args = parser.parse_args()
    data = resolve_data_dir(args.data)
    if args.skip_quality:
        _scale(args, data.corpus)
        return
    t = time.perf_counter()
    index = CorpusIndex.open(args.index) if args.index else ensure_default_index(progress=True)
    print(f"index: {index!r} (opened in {time.perf_counter() - t:.2f} s)")
    manifest = index.manifest
    print(
        f"recorded build: {manifest['build_seconds']} s with dense={manifest['components']['dense']} "
        f"(embedding dominates; 2 shared cores)"
    )
    split = split_claims(read_claims(data.train))
    fusion = quality(index, split)
    latency(index, split.validation, fusion)
    print(f"\nprocess peak RSS so far: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    build_cost(data.corpus, f"SciFact corpus ({len(index)} abstracts)")
    _scale(args, data.corpus)


def _scale(args: argparse.Namespace, source: Path) -> None:
    if args.scale_corpus:
        size = args.scale_corpus.stat().st_size / 2**20
        build_cost(args.scale_corpus, f"{args.scale_corpus.name} ({size:.0f} MB)")
    if args.scale:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "synthetic.jsonl"
            synthetic_corpus(source, args.scale, corpus)
            size = corpus.stat().st_size / 2**20
            build_cost(corpus, f"synthetic corpus ({args.scale} abstracts, {size:.0f} MB)")


if __name__ == "__main__":
    main()
