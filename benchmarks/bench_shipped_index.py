"""The shipped default index (int8 vectors) against float32 and float16 ones: retrieval on the train claims.

The package ships the SciFact index's vectors as int8 with a scale per row
(:mod:`sciverify.retrieval.shipped_index`); an index built here stores float16; the embedder itself
gives float32. This prints recall@1/3/5/10/20 and MRR of the dense retriever (maxsim over sentences
and title) and of the retriever ``verify`` uses (the tuned fusion with BM25), on all 809 train claims,
for the three forms side by side, all measured in this run:

- float32: the corpus re-embedded here exactly as the builder does (same blocks, batches, sessions),
  kept at the embedder's precision (about 6 minutes on 2 idle cores; cached under ``--cache``);
- float16: those vectors as ``sciverify index --default`` stores them (the same cast, so the same bytes
  as a build on this CPU: ``--built DIR`` checks that against an index built here);
- int8 shipped: the index unpacked from the package, with the unpack's time.

It also prints the lowest cosine between a shipped vector and its float32 original, and the sizes.

Run:
    python benchmarks/bench_shipped_index.py [--data DIR] [--cache DIR] [--built DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["main"]

_COLUMNS = ("titles", "sentences")


def _reference(index_dir: Path, cache: Path) -> dict[str, np.ndarray]:
    """float32 title and sentence vectors of the corpus, embedded as the builder embeds them."""
    from sciverify.retrieval.dense_build import decode_range
    from sciverify.retrieval.index import CorpusIndex
    from sciverify.retrieval.stages import EmbedStage

    index = CorpusIndex.open(index_dir)
    config = index.config
    key = json.dumps(
        [index.manifest["corpus"]["sha256"], index.manifest["embedding"]["embedder"], config.to_json()],
        sort_keys=True,
    )
    where = cache / hashlib.sha256(key.encode()).hexdigest()[:16]
    out: dict[str, np.ndarray] = {}
    embed = None
    for name in _COLUMNS:
        path = where / f"{name}.float32.npy"
        if not path.exists():
            if embed is None:
                embed = EmbedStage(
                    config.max_length, config.embed_batch, sessions=os.cpu_count() or 1, dtype="float32"
                )()
            blob = np.load(index_dir / f"{name}.blob.npy", mmap_mode="r")
            offsets = np.load(index_dir / f"{name}.offsets.npy", mmap_mode="r")
            n, chunk = len(offsets) - 1, config.embed_chunk
            started = time.perf_counter()
            parts = [embed(decode_range(blob, offsets, s, min(n, s + chunk))) for s in range(0, n, chunk)]
            print(f"embedded {n} {name} in float32 in {time.perf_counter() - started:.0f} s")
            where.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.npy")
            np.save(tmp, np.concatenate(parts), allow_pickle=False)
            tmp.rename(path)
        out[name] = np.load(path)
    return out


def _with_vectors(source: Path, target: Path, vectors: dict[str, np.ndarray]) -> Path:
    """A copy of index ``source`` (hard links) whose title and sentence vectors are ``vectors``."""
    from sciverify.retrieval.dense_build import write_doc_vectors
    from sciverify.retrieval.index import CorpusIndex

    shutil.copytree(source, target, copy_function=os.link, ignore=shutil.ignore_patterns("dense"))
    (target / "dense").mkdir()
    for name, matrix in vectors.items():
        np.save(target / "dense" / f"{name}.npy", matrix, allow_pickle=False)
    write_doc_vectors(target, CorpusIndex.open(source).config)
    return target


def _evaluate(index_dir: Path, claims: list, configs: dict) -> dict[str, list[float]]:
    from sciverify.retrieval.evaluate import evaluate_hits
    from sciverify.retrieval.index import CorpusIndex
    from sciverify.retrieval.methods import make_retriever

    index = CorpusIndex.open(index_dir)
    texts = [c.text for c in claims]
    rows = {}
    for label, config in configs.items():
        hits = make_retriever(index, config).retrieve(texts, 20)
        rows[label] = evaluate_hits(claims, hits, "evidence").row()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=None, help="SciFact data directory")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "sciverify" / "bench-shipped-index",
        help="where the float32 reference vectors are kept between runs",
    )
    parser.add_argument("--built", type=Path, default=None, help="an index built here by `sciverify index`")
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.pipeline.config import tuned_config
    from sciverify.retrieval.base import RetrievalConfig
    from sciverify.retrieval.evaluate import CUTOFFS
    from sciverify.retrieval.shipped_index import SHIPPED_DIR, unpack_shipped_index

    data = resolve_data_dir(args.data)
    claims = read_claims(data.train)
    pipeline = tuned_config().retrieval
    configs = {
        "dense maxsim": RetrievalConfig(method="dense", dense_mode="maxsim"),
        f"verify's ({pipeline.method} {pipeline.fusion} w={pipeline.fusion_weight})": pipeline,
        "bm25 (same in all)": RetrievalConfig(method="bm25"),
    }
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        shipped = unpack_shipped_index(data.corpus, tmp / "int8", progress=False)
        unpack_s = time.perf_counter() - started
        reference = _reference(shipped, args.cache)
        forms = {
            "float32": _with_vectors(shipped, tmp / "float32", reference),
            "float16": _with_vectors(
                shipped, tmp / "float16", {k: v.astype(np.float16) for k, v in reference.items()}
            ),
            "int8 shipped": shipped,
        }
        lowest = 1.0
        for name in _COLUMNS:
            back = np.load(shipped / "dense" / f"{name}.npy").astype(np.float32)
            ref = reference[name]
            keep = np.linalg.norm(ref, axis=1) > 0
            cos = (back[keep] * ref[keep]).sum(axis=1) / np.linalg.norm(ref[keep], axis=1)
            lowest = min(lowest, float(cos.min()))
        if args.built is not None:
            same = all(
                np.array_equal(np.load(args.built / "dense" / f"{n}.npy"), reference[n].astype(np.float16))
                for n in _COLUMNS
            )
            print(f"float16 of the float32 reference equals the vectors of {args.built}: {same}")
        results = {form: _evaluate(path, claims, configs) for form, path in forms.items()}
    n_ev = sum(1 for c in claims if c.evidence)
    print(f"\n{len(claims)} train claims, {n_ev} with gold evidence (relevant = evidence docs)")
    print(f"{'retriever':<34}{'form':<14}" + "".join(f"{'R@' + str(k):>7}" for k in CUTOFFS) + f"{'MRR':>7}")
    for label in configs:
        for form in forms:
            print(f"{label:<34}{form:<14}" + "".join(f"{v:>7.3f}" for v in results[form][label]))
        r5 = {form: results[form][label][CUTOFFS.index(5)] for form in forms}
        mrr = {form: results[form][label][-1] for form in forms}
        print(
            f"{'':<34}{'int8 - f32':<14}  R@5 {r5['int8 shipped'] - r5['float32']:+.4f}  "
            f"MRR {mrr['int8 shipped'] - mrr['float32']:+.4f}"
        )
    f32_mb = sum(v.nbytes for v in reference.values()) / 1e6
    dense_mb = sum(p.stat().st_size for p in (SHIPPED_DIR / "dense").iterdir()) / 1e6
    all_mb = sum(p.stat().st_size for p in SHIPPED_DIR.rglob("*") if p.is_file()) / 1e6
    print(
        f"\nlowest cosine, shipped vector vs float32: {lowest:.5f}; vectors {f32_mb:.1f} MB float32, "
        f"{f32_mb / 2:.1f} MB float16, {dense_mb:.1f} MB shipped (int8 + scales); the shipped index "
        f"{all_mb:.1f} MB in all; unpacked in {unpack_s:.1f} s; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
