"""The default index build: sentence embedding with one session per core against one multi-threaded
session, and (``--full``) a whole build checked byte for byte against an installed index.

Embedding the SciFact corpus's 46k titles and sentences is most of ``./scripts/setup``. The builder
used to run one batch at a time on a session with one intra-operator thread per core; it now runs
the batches of a block side by side on one single-threaded session per core. The batches are the
same (texts, order, padding, size 64), so the vectors must be the same bytes: this script checks
that, then times both ways on the same sentences, alternating which goes first.

Run (default index already built, e.g. by ``./scripts/setup``):
    python benchmarks/bench_index_build.py [--sentences 4096] [--repeats 2] [--full]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["main"]


def _texts(index_dir: Path, n: int) -> list[str]:
    from sciverify.retrieval.dense_build import decode_range

    blob = np.load(index_dir / "sentences.blob.npy", mmap_mode="r")
    offsets = np.load(index_dir / "sentences.offsets.npy", mmap_mode="r")
    return decode_range(blob, offsets, 0, min(n, len(offsets) - 1))


def _embed(texts: list[str], sessions: int, chunk: int) -> tuple[float, float, np.ndarray]:
    """Wall seconds, CPU seconds (all threads) and vectors for ``texts`` embedded as the builder does:
    blocks of ``chunk``, batch 64. CPU seconds say more than wall time on a machine shared with other
    work, whose load moves the wall time of both ways by more than their difference."""
    from sciverify.retrieval.stages import EmbedStage

    embed = EmbedStage(128, 64, sessions=sessions)()
    start, cpu = time.perf_counter(), time.process_time()
    vectors = np.concatenate([embed(texts[i : i + chunk]) for i in range(0, len(texts), chunk)])
    return time.perf_counter() - start, time.process_time() - cpu, vectors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sentences", type=int, default=4096, help="first N sentences of the corpus")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="also build the whole default index and compare")
    args = parser.parse_args()

    from sciverify.retrieval.index import default_index_dir
    from sciverify.retrieval.layout import IndexConfig

    cores = os.cpu_count() or 1
    index_dir = default_index_dir()
    texts = _texts(index_dir, args.sentences)
    chunk = IndexConfig().embed_chunk
    times: dict[int, list[float]] = {1: [], cores: []}
    cpus: dict[int, list[float]] = {1: [], cores: []}
    first: dict[int, np.ndarray] = {}
    for repeat in range(args.repeats):
        for sessions in ((1, cores) if repeat % 2 == 0 else (cores, 1)):
            seconds, cpu, vectors = _embed(texts, sessions, chunk)
            times[sessions].append(seconds)
            cpus[sessions].append(cpu)
            first.setdefault(sessions, vectors)
    same = first[1].tobytes() == first[cores].tobytes()
    print(f"{len(texts)} sentences, {cores} cores, load average {os.getloadavg()[0]:.1f} at the end")
    labels = {1: "before: 1 session x all cores", cores: f"after: {cores} sessions x 1 thread"}
    for sessions, label in labels.items():
        median = statistics.median(times[sessions])
        print(f"  {label:<36} {median:7.1f} s  {len(texts) / median:6.0f} sentences/s  "
              f"CPU {statistics.median(cpus[sessions]):6.1f} s  "
              f"runs: {', '.join(f'{t:.1f}' for t in times[sessions])}")
    print(f"  speed-up x{statistics.median(times[1]) / statistics.median(times[cores]):.2f}; "
          f"vectors identical bytes: {same}")
    if not args.full:
        return
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.retrieval.index import build_index

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "index"
        start = time.perf_counter()
        build_index(resolve_data_dir(None).corpus, out, IndexConfig(), progress=False)
        seconds = time.perf_counter() - start
        dense = sorted(p.name for p in (index_dir / "dense").iterdir())
        match, differ, missing = filecmp.cmpfiles(index_dir / "dense", out / "dense", dense, shallow=False)
        print(f"full default index build: {seconds / 60:.1f} min; dense files identical to {index_dir}: "
              f"{match} (different: {differ}, missing: {missing}); load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
