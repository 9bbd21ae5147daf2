"""Scale benchmark: build time, size, memory and query latency of one synthetic corpus at several sizes.

Usage:
    python benchmarks/bench_scale.py --sizes 5000 100000 --dense title --ray-at 100000 --ann-at 100000 \\
        --keep /scratch/scale [--queries 200] [--verify-queries 40] [--deadline 2026-01-01T07:00] \\
        [--also-serve ~/.local/share/sciverify/index/scifact-v1]
    python benchmarks/bench_scale.py --sizes 1000000 --dense none --keep /scratch/scale

The corpus: N abstracts made by resampling SciFact (seeded): each synthetic abstract takes a real
SciFact abstract's sentence count, draws that many sentences from the whole SciFact sentence pool,
and a title from the title pool with one made-up token appended (so the vocabulary grows with N as it
does in real text). By default the abstracts are written already split into sentences (as the
ingest commands write them); ``--split`` writes each abstract as one string, so the build runs the
sentence splitter, the step Ray spreads over its actors (pysbd: ~10 abstracts/s on a loaded core,
which is why the size curve does not use it).

``--dense`` picks what is embedded (MiniLM int8): ``none`` (BM25 and text only), ``title`` (one short
text per abstract, the doc vectors; sentence vectors of retrieved abstracts are computed when a
claim retrieves them) or ``sentences`` (every sentence, about 9 per abstract). From 200,000 abstracts
the build also writes an HNSW graph of the doc vectors (usearch) that the dense side searches instead
of the exact scan. Embedding is resumable: with ``--keep``, a build stopped by ``--deadline`` (or
killed) leaves its finished blocks beside the index and the next run continues from them.

Each build runs in a child process (peak RSS = its own ``VmHWM``); then a second child opens the
index and times BM25 alone over ``--queries`` SciFact claims, twice (the first pass reads posting
lists from disk and is printed on a line of its own; the table has the second), and, with
embeddings, ``Verifier.verify`` (the shipped models, fusion retrieval, k = 5) over
``--verify-queries`` claims, one claim per call after one warm-up; its ``VmHWM`` is the serving
process's peak RSS (models included). ``--ray-at`` sizes are built a second time with Ray (2 actors)
for a side-by-side comparison on the same corpus;
``--ann-at`` sizes are served a second time with an HNSW graph added to the one-process index (the
"build s" of that row is the graph's alone); ``--also-serve`` adds rows for existing indexes (e.g.
the SciFact index with every sentence embedded).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from sciverify.data.datasets import resolve_data_dir

__all__: list[str] = []

_BUILD = """
import json, sys, time
from sciverify.pipeline.engines import make_engine
from sciverify.retrieval.builder import build_index
from sciverify.retrieval.layout import IndexConfig
corpus, out, engine, workers, options = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
t = time.perf_counter()
with make_engine(engine, None, workers) as runner:
    build_index(corpus, out, IndexConfig(**json.loads(options)), progress=False, engine=runner)
wall = time.perf_counter() - t
status = open("/proc/self/status").read()
print(wall, int(status.split("VmHWM:")[1].split()[0]) / 1024)
"""

_GRAPH_BUILD = """
import sys, time
import numpy as np
from sciverify.retrieval.ann import build_ann
src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
base = np.load(src, mmap_mode="r")
rng = np.random.default_rng(7)
shape = (n, base.shape[1])
vectors = np.lib.format.open_memmap(out + ".vectors.npy", mode="w+", dtype=np.float16, shape=shape)
for start in range(0, n, 65536):
    stop = min(n, start + 65536)
    rows = np.asarray(base[rng.integers(0, len(base), stop - start)], dtype=np.float32)
    rows += rng.normal(0.0, 0.02, rows.shape).astype(np.float32)
    vectors[start:stop] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
vectors.flush()
t = time.perf_counter()
build_ann(np.load(out + ".vectors.npy", mmap_mode="r"), __import__("pathlib").Path(out))
wall = time.perf_counter() - t
status = open("/proc/self/status").read()
print(wall, int(status.split("VmHWM:")[1].split()[0]) / 1024)
"""

_GRAPH_SEARCH = """
import json, sys, time
import numpy as np
from pathlib import Path
from sciverify.retrieval.ann import AnnIndex
from sciverify.retrieval.embedder import get_embedder
path, n, claims = sys.argv[1], int(sys.argv[2]), json.loads(open(sys.argv[3]).read())
q = get_embedder().encode(claims)
t = time.perf_counter()
graph = AnnIndex(Path(path), n)
opened = (time.perf_counter() - t) * 1000
times = []
for row in q:
    t = time.perf_counter()
    graph.search(row[None, :], 256)
    times.append((time.perf_counter() - t) * 1000)
status = open("/proc/self/status").read()
rss = int(status.split("VmHWM:")[1].split()[0]) / 1024
print(opened, np.percentile(times, 50), np.percentile(times, 95), rss)
"""

_SERVE = """
import json, sys, time
import numpy as np
from sciverify.retrieval.base import RetrievalConfig
from sciverify.retrieval.methods import make_retriever
from sciverify.retrieval.index import CorpusIndex
index_dir, claims, n_verify = sys.argv[1], json.loads(open(sys.argv[2]).read()), int(sys.argv[3])
t = time.perf_counter()
index = CorpusIndex.open(index_dir)
out = {"open_ms": (time.perf_counter() - t) * 1000}
bm25 = make_retriever(index, RetrievalConfig(method="bm25", k=5))
for rep in range(2):  # the first pass reads the posting lists from disk; the second is reported
    times = []
    for claim in claims:
        t = time.perf_counter()
        bm25.retrieve([claim], 5)
        times.append((time.perf_counter() - t) * 1000)
    out["bm25" if rep else "bm25_cold"] = [float(np.percentile(times, 50)), float(np.percentile(times, 95))]
if index.has_dense and n_verify:
    from sciverify.pipeline.verify import Verifier
    t = time.perf_counter()
    verifier = Verifier.load(index_dir, progress=False)
    verifier.verify(claims[-1])
    out["load_s"] = time.perf_counter() - t
    times = []
    for claim in claims[:n_verify]:
        t = time.perf_counter()
        verifier.verify(claim)
        times.append((time.perf_counter() - t) * 1000)
    out["verify"] = [float(np.percentile(times, 50)), float(np.percentile(times, 95))]
status = open("/proc/self/status").read()
out["rss_mib"] = int(status.split("VmHWM:")[1].split()[0]) / 1024
print(json.dumps(out))
"""


def make_corpus(source: Path, n: int, out: Path, seed: int = 13, split: bool = False) -> None:
    """Write ``n`` synthetic abstracts resampled from SciFact (see the module docstring)."""
    rows = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines()]
    pool = [s.strip() for r in rows for s in r["abstract"] if s.strip()]
    lengths = [len(r["abstract"]) for r in rows]
    titles = [r["title"] for r in rows]
    rng = random.Random(seed)
    tmp = out.with_name(out.name + ".part")
    with tmp.open("w", encoding="utf-8") as handle:
        for i in range(n):
            sentences = [rng.choice(pool) for _ in range(rng.choice(lengths))]
            title = f"{rng.choice(titles)} z{i:x}q"
            abstract: str | list[str] = " ".join(sentences) if split else sentences
            handle.write(json.dumps({"doc_id": f"syn{i}", "title": title, "abstract": abstract}) + "\n")
    tmp.rename(out)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _blocks(cache: Path) -> int:
    return len(list(cache.glob("*-*.npy"))) if cache.exists() else 0


def _build(corpus: Path, out: Path, engine: str, workers: int, options: dict, timeout: float | None) -> str:
    """Build in a child; returns "wall rss" or a one-line reason it did not finish."""
    command = [sys.executable, "-c", _BUILD, str(corpus), str(out), engine, str(workers), json.dumps(options)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        cache = out.with_name(f".{out.name}.embed-cache")
        return f"stopped at the deadline; {_blocks(cache)} embedding blocks kept for a resumed run"
    if done.returncode != 0:
        return "failed: " + " ".join(done.stderr.strip().splitlines()[-1:])
    return done.stdout.split("\n")[-2] if done.stdout.endswith("\n") else done.stdout


def _child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter (its own peak RSS, nothing shared with this process)."""
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False)


def _serve_row(head: str, index: Path, claims_file: Path, n_verify: int) -> None:
    """Open ``index`` in a child process, time BM25 and verify there, print one table row."""
    served = _child(_SERVE, str(index), str(claims_file), str(n_verify))
    if served.returncode != 0:
        print(f"{head} serving failed: {served.stderr.strip().splitlines()[-1:]}", flush=True)
        return
    s = json.loads(served.stdout.strip().splitlines()[-1])
    verify = s.get("verify", [float("nan")] * 2)
    cold = s["bm25_cold"]
    print(f"{'':>9} {'':>6} (BM25 first pass, cold page cache: p50 {cold[0]:.2f} ms, p95 {cold[1]:.2f} ms)")
    print(
        f"{head} {_size(index) / 2**20:>9.0f} {s['open_ms']:>7.1f} {s['bm25'][0]:>8.2f} "
        f"{s['bm25'][1]:>8.2f} {verify[0]:>10.0f} {verify[1]:>10.0f} {s['rss_mib']:>9.0f}",
        flush=True,
    )


def _graph_probe(work: Path, n: int, claims_file: Path) -> None:
    sources = sorted(work.glob("index-*-title-local/dense/titles.npy"), key=lambda p: p.stat().st_size)
    if not sources:
        print("graph probe: no title index to take vectors from", flush=True)
        return
    out = work / f"probe-{n}.usearch"
    built = _child(_GRAPH_BUILD, str(sources[-1]), str(n), str(out))
    if built.returncode != 0:
        print(f"graph probe failed: {built.stderr.strip().splitlines()[-1:]}", flush=True)
        return
    wall, rss = (float(x) for x in built.stdout.split()[-2:])
    searched = _child(_GRAPH_SEARCH, str(out), str(n), str(claims_file))
    if searched.returncode != 0:
        print(f"graph probe search failed: {searched.stderr.strip().splitlines()[-1:]}", flush=True)
        return
    opened, p50, p95, serve_rss = (float(x) for x in searched.stdout.split()[-4:])
    print(
        f"graph probe, {n} vectors from {sources[-1].parent.parent.name} (+ noise): build {wall:.0f} s, "
        f"peak RSS {rss:.0f} MiB, {out.stat().st_size / 2**20:.0f} MiB on disk; open {opened:.1f} ms, "
        f"256 neighbours p50 {p50:.2f} ms, p95 {p95:.2f} ms, searching process peak RSS {serve_rss:.0f} MiB",
        flush=True,
    )


def _with_graph(index: Path, out: Path) -> None:
    """The same index plus an HNSW graph of its doc vectors (files hard-linked, the graph written in a
    temporary copy), for sizes below ``ANN_MIN_DOCS`` where the build itself keeps the exact scan; the
    build time reported is the graph's."""
    from sciverify.retrieval.ann import ANN_FILE, build_ann
    from sciverify.retrieval.layout import doc_vector_column

    if not (index / "manifest.json").exists():
        return
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(index, tmp, copy_function=os.link)
    manifest = json.loads((tmp / "manifest.json").read_text())
    name = doc_vector_column(manifest["components"].get("sentence_vectors", True))
    # a graph the build already made is a hard link to the kept index's file: write a new file instead
    (tmp / "dense" / ANN_FILE).unlink(missing_ok=True)
    started = time.perf_counter()
    build_ann(np.load(tmp / "dense" / f"{name}.npy", mmap_mode="r"), tmp / "dense" / ANN_FILE)
    manifest["build_seconds"] = round(time.perf_counter() - started, 2)
    manifest.pop("bench_rss_mib", None)  # the graph is built here, not in a measured child
    manifest["components"]["ann"] = True
    manifest["config"]["ann"] = "on"
    (tmp / "manifest.json").unlink()  # a hard link to the original's: write a new file instead
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    tmp.rename(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000])
    parser.add_argument("--ray-at", type=int, nargs="*", default=[], help="sizes also built with Ray")
    parser.add_argument(
        "--ann-at", type=int, nargs="*", default=[], help="sizes also served from an HNSW graph (below 200k)"
    )
    parser.add_argument(
        "--also-serve", type=Path, nargs="*", default=[], help="existing indexes to serve as reference rows"
    )
    parser.add_argument(
        "--graph-probe",
        type=int,
        help="also build and search an HNSW graph of this many vectors made from the largest title index's"
        " vectors (each a real title vector plus small noise): the graph at a size not embedded for real",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--dense", choices=["none", "title", "sentences"], default="title")
    parser.add_argument("--split", action="store_true", help="abstracts as one string (runs pysbd)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--verify-queries", type=int, default=50)
    parser.add_argument("--keep", type=Path, help="keep corpora and indexes here (and reuse them)")
    parser.add_argument("--deadline", help="UTC time (ISO) at which a running build is stopped")
    args = parser.parse_args()
    data = resolve_data_dir(None)
    claims = [
        json.loads(x)["claim"] for x in data.root.joinpath("claims_train.jsonl").read_text().splitlines()
    ][: max(args.queries, args.verify_queries + 1)]
    deadline = datetime.fromisoformat(args.deadline).replace(tzinfo=UTC) if args.deadline else None
    options = {
        "dense": args.dense != "none",
        "dense_text": "title" if args.dense == "none" else args.dense,
        "split_sentences": args.split,
    }
    work = args.keep or Path(tempfile.mkdtemp(prefix="sciverify-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    claims_file = work / "claims.json"
    claims_file.write_text(json.dumps(claims), encoding="utf-8")
    print(f"dense text: {args.dense}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC", flush=True)
    print(
        f"{'abstracts':>9} {'engine':>6} {'build s':>8} {'build RSS':>9} {'index MiB':>9} {'open ms':>7} "
        f"{'BM25 p50':>8} {'BM25 p95':>8} {'verify p50':>10} {'verify p95':>10} {'serve RSS':>9}",
        flush=True,
    )
    try:
        for extra in args.also_serve:
            manifest = json.loads((extra / "manifest.json").read_text())
            head = f"{len(np.load(extra / 'structured.npy', mmap_mode='r')):>9} {'ref':>6} "
            head += f"{manifest['build_seconds']:>8.0f} {'':>9}"
            print(f"reference: {extra} ({manifest['config'].get('dense_text', 'sentences')})", flush=True)
            _serve_row(head, extra, claims_file, args.verify_queries)
        for n in args.sizes:
            corpus = work / f"synthetic-{n}{'-split' if args.split else ''}.jsonl"
            if not corpus.exists():
                make_corpus(data.corpus, n, corpus, split=args.split)
            engines = ["local", "ray"] if n in args.ray_at else ["local"]
            if n in args.ann_at and args.dense != "none":
                engines.append("+ANN")
            for engine in engines:
                out = work / f"index-{n}-{args.dense}-{engine}"
                if engine == "+ANN" and not (out / "manifest.json").exists():
                    _with_graph(work / f"index-{n}-{args.dense}-local", out)
                if (out / "manifest.json").exists():
                    manifest = json.loads((out / "manifest.json").read_text())
                    build = f"{manifest['build_seconds']} {manifest.get('bench_rss_mib', float('nan'))}"
                else:
                    timeout = None
                    if deadline is not None:
                        timeout = max(1.0, (deadline - datetime.now(UTC)).total_seconds())
                    build = _build(corpus, out, engine, args.workers, options, timeout)
                    if build[0].isdigit():  # remember the build's own figures beside the kept index
                        manifest = json.loads((out / "manifest.json").read_text())
                        manifest["bench_rss_mib"] = float(build.split()[1])
                        (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
                if not build[0].isdigit():
                    print(f"{n:>9} {engine:>6} {build}", flush=True)
                    continue
                wall, rss = (float(x) for x in build.split()[:2])
                _serve_row(
                    f"{n:>9} {engine:>6} {wall:>8.0f} {rss:>9.0f}", out, claims_file, args.verify_queries
                )
            a, b = (work / f"index-{n}-{args.dense}-{e}" for e in ("local", "ray"))
            if n in args.ray_at and (a / "manifest.json").exists() and (b / "manifest.json").exists():
                same = all((a / p.relative_to(b)).read_bytes() == p.read_bytes() for p in b.rglob("*.npy"))
                print(f"{n:>9} identical .npy files across engines: {same}", flush=True)
        if args.graph_probe:
            _graph_probe(work, args.graph_probe, claims_file)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
