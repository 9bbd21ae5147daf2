"""Scale benchmark: the same synthetic corpus indexed by one process and by Ray, side by side.

Usage:
    python benchmarks/bench_scale.py --sizes 5000 [--dense] [--workers 2] [--queries 200]

The corpus: N abstracts made by resampling SciFact (seeded): each synthetic abstract takes a real
SciFact abstract's sentence count, draws that many sentences from the whole SciFact sentence pool,
and a title from the title pool with one made-up token appended (so the vocabulary grows with N as it
does in real text). Abstracts are written as one string, so both builds run the sentence splitter,
the step Ray spreads over its actors; ``--dense`` also embeds every sentence (MiniLM, about 100
sentences/s on two idle cores), which at these sizes only fits where the machine has the time.

For each build (a child process, so peak RSS is the build's own ``VmHWM``): wall time, index size on
disk, peak RSS; then, on the built index, open time and the BM25 query latency (p50/p95 over
``--queries`` SciFact claims). ``verify`` latency needs the dense part and is measured only with
``--dense``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sciverify.data.datasets import resolve_data_dir

__all__: list[str] = []

_CHILD = """
import sys, time
from sciverify.pipeline.engines import make_engine
from sciverify.retrieval.builder import build_index
from sciverify.retrieval.layout import IndexConfig
corpus, out, engine = sys.argv[1:4]
workers, dense = int(sys.argv[4]), sys.argv[5] == "1"
t = time.perf_counter()
with make_engine(engine, None, workers) as runner:
    build_index(corpus, out, IndexConfig(dense=dense, split_sentences=True), progress=False, engine=runner)
wall = time.perf_counter() - t
status = open("/proc/self/status").read()
print(wall, int(status.split("VmHWM:")[1].split()[0]) / 1024)
"""


def make_corpus(source: Path, n: int, out: Path, seed: int = 13) -> None:
    """Write ``n`` synthetic abstracts resampled from SciFact (see the module docstring)."""
    rows = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines()]
    pool = [s.strip() for r in rows for s in r["abstract"] if s.strip()]
    lengths = [len(r["abstract"]) for r in rows]
    titles = [r["title"] for r in rows]
    rng = random.Random(seed)
    with out.open("w", encoding="utf-8") as handle:
        for i in range(n):
            text = " ".join(rng.choice(pool) for _ in range(rng.choice(lengths)))
            title = f"{rng.choice(titles)} z{i:x}q"
            handle.write(json.dumps({"doc_id": f"syn{i}", "title": title, "abstract": text}) + "\n")


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _query_latency(index_dir: Path, claims: list[str]) -> tuple[float, float, float]:
    from sciverify.retrieval.base import RetrievalConfig, make_retriever
    from sciverify.retrieval.index import CorpusIndex

    t = time.perf_counter()
    index = CorpusIndex.open(index_dir)
    opened = (time.perf_counter() - t) * 1000
    retriever = make_retriever(index, RetrievalConfig(method="bm25", k=5))
    retriever.retrieve(claims[:1], 5)
    times = []
    for claim in claims:
        t = time.perf_counter()
        retriever.retrieve([claim], 5)
        times.append((time.perf_counter() - t) * 1000)
    return opened, float(np.percentile(times, 50)), float(np.percentile(times, 95))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000])
    parser.add_argument("--engines", nargs="+", default=["local", "ray"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--dense", action="store_true", help="also embed every sentence (slow)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="keep corpora and indexes here instead of a temp dir")
    args = parser.parse_args()
    data = resolve_data_dir(None)
    claims = [
        json.loads(x)["claim"] for x in data.root.joinpath("claims_train.jsonl").read_text().splitlines()
    ]
    claims = claims[: args.queries]
    work = args.keep or Path(tempfile.mkdtemp(prefix="sciverify-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"{'abstracts':>9} {'engine':>6} {'build s':>8} {'peak RSS MiB':>12} {'index MiB':>9} "
        f"{'open ms':>7} {'BM25 p50 ms':>11} {'BM25 p95 ms':>11}"
    )
    try:
        for n in args.sizes:
            corpus = work / f"synthetic-{n}.jsonl"
            if not corpus.exists():
                make_corpus(data.corpus, n, corpus)
            built: dict[str, Path] = {}
            for engine in args.engines:
                out = work / f"index-{n}-{engine}"
                done = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        _CHILD,
                        str(corpus),
                        str(out),
                        engine,
                        str(args.workers),
                        "1" if args.dense else "0",
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    print(f"{n:>9} {engine:>6} failed: {done.stderr.strip().splitlines()[-1:]}")
                    continue
                wall, rss = (float(x) for x in done.stdout.split()[-2:])
                opened, p50, p95 = _query_latency(out, claims)
                print(
                    f"{n:>9} {engine:>6} {wall:>8.1f} {rss:>12.0f} {_size(out) / 2**20:>9.1f} "
                    f"{opened:>7.1f} {p50:>11.2f} {p95:>11.2f}",
                    flush=True,
                )
                built[engine] = out
            if len(built) == 2:
                a, b = built.values()
                same = all((a / p.relative_to(b)).read_bytes() == p.read_bytes() for p in b.rglob("*.npy"))
                print(f"{n:>9} identical .npy files across engines: {same}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
