"""The Ray engine on a real local Ray (one start for the module): an index and predictions identical
to the single-process ones, and faults (a worker killed mid-build, an unreachable cluster) as one
line with nothing half-written left behind; a worker killed mid-build is replaced and its block
retried once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the scale extra (ray) is not installed")

from sciverify.errors import EngineError  # noqa: E402
from sciverify.pipeline.engines import RayEngine  # noqa: E402
from sciverify.retrieval.builder import build_index  # noqa: E402
from sciverify.retrieval.layout import IndexConfig  # noqa: E402

DOCS = 8  # the first SciFact abstracts: ~70 sentences, a few seconds of embedding
CLAIMS = (1134, 1135, 1403, 1404, 1306)  # claims citing those abstracts
CONFIG = IndexConfig(split_sentences=True, embed_chunk=16)  # several blocks per column, over both actors
SRC = str(Path(__file__).resolve().parents[3] / "src")


@pytest.fixture(scope="module")
def engine() -> Iterator[RayEngine]:
    started = RayEngine(workers=2, num_cpus=2)
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def corpus(scifact, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SciFact abstracts given as one string each, so the Ray build splits sentences too."""
    out = tmp_path_factory.mktemp("ray-corpus") / "corpus.jsonl"
    with scifact.corpus.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for _, line in zip(range(DOCS), src, strict=False):
            row = json.loads(line)
            row["abstract"] = " ".join(row["abstract"])
            dst.write(json.dumps(row) + "\n")
    return out


@pytest.fixture(scope="module")
def builds(corpus: Path, engine: RayEngine, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ray-builds")
    local = build_index(corpus, root / "local", CONFIG, progress=False)
    on_ray = build_index(corpus, root / "ray", CONFIG, progress=False, engine=engine)
    return local, on_ray


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_ray_index_is_byte_identical_to_the_single_process_one(builds: tuple[Path, Path]) -> None:
    local, on_ray = (_files(p) for p in builds)
    assert sorted(local) == sorted(on_ray)
    assert "dense/sentences.npy" in local and "bm25/params.index.json" in local
    for name in local:
        if name != "manifest.json":
            assert local[name] == on_ray[name], name
    a, b = (json.loads(files["manifest.json"]) for files in (local, on_ray))
    for volatile in ("created_utc", "build_seconds", "build_timings"):
        a.pop(volatile), b.pop(volatile)
    assert a == b


def test_ray_predictions_equal_single_process_in_input_order(
    builds: tuple[Path, Path], engine: RayEngine, scifact, tmp_path: Path
) -> None:
    from sciverify.pipeline.run import predict_claims, read_claim_texts

    claims_path = tmp_path / "claims.jsonl"
    wanted = {str(c) for c in CLAIMS}
    rows = [json.loads(x) for x in scifact.root.joinpath("claims_train.jsonl").read_text().splitlines()]
    picked = sorted((r for r in rows if str(r["id"]) in wanted), key=lambda r: -r["id"])  # not sorted by id
    claims_path.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    claims = read_claim_texts(claims_path)
    index_dir = builds[1]
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    seen: list[int] = []
    predict_claims(claims, local_out, index_dir=index_dir, block_size=2)
    predict_claims(claims, ray_out, index_dir=index_dir, block_size=2, engine=engine, on_progress=seen.append)
    assert ray_out.read_bytes() == local_out.read_bytes()
    assert [json.loads(x)["id"] for x in ray_out.read_text().splitlines()] == [r["id"] for r in picked]
    assert seen == [2, 2, 1]
    assert any(json.loads(x)["evidence"] for x in ray_out.read_text().splitlines())


@dataclass(frozen=True)
class _DiesOnSecondBlock:
    """Wraps a stage so that the worker process exits (as if OOM-killed) on its second block."""

    stage: Any

    def __call__(self) -> Callable[[Any], Any]:
        fn = self.stage()
        calls = [0]

        def run(block: Any) -> Any:
            calls[0] += 1
            if calls[0] == 2:
                os._exit(1)
            return fn(block)

        return run


@dataclass(frozen=True)
class _AlwaysDies:
    """Wraps a stage so that every worker exits (as if OOM-killed) on its first block."""

    stage: Any

    def __call__(self) -> Callable[[Any], Any]:
        def run(block: Any) -> Any:
            os._exit(1)

        return run


class _KillingEngine(RayEngine):
    def map(self, stage: Any, blocks: Any) -> Iterator[Any]:
        return super().map(_DiesOnSecondBlock(stage), blocks)


class _DeadlyEngine(RayEngine):
    def map(self, stage: Any, blocks: Any) -> Iterator[Any]:
        return super().map(_AlwaysDies(stage), blocks)


def _joined(engine: RayEngine, kind: type[RayEngine]) -> RayEngine:
    from ray import cloudpickle  # Ray pickles with its own copy of cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    joined = replace(engine)  # Ray is already up: the copy joins it, and does not own it
    joined.__class__ = kind
    return joined


def test_a_killed_worker_is_replaced_and_its_block_retried(
    corpus: Path, engine: RayEngine, builds: tuple[Path, Path], tmp_path: Path
) -> None:
    out = build_index(
        corpus, tmp_path / "index", CONFIG, progress=False, engine=_joined(engine, _KillingEngine)
    )
    local, retried = _files(builds[0]), _files(out)
    assert sorted(local) == sorted(retried)
    for name in local:
        if name != "manifest.json":
            assert local[name] == retried[name], name


def test_a_block_whose_worker_dies_twice_fails_in_one_line_and_leaves_no_index(
    corpus: Path, engine: RayEngine, tmp_path: Path
) -> None:
    out = tmp_path / "index"
    with pytest.raises(EngineError) as err:
        build_index(corpus, out, CONFIG, progress=False, engine=_joined(engine, _DeadlyEngine))
    message = str(err.value)
    assert "a Ray worker died while running block 0" in message and "retried" in message
    assert "\n" not in message
    assert not out.exists() and not list(tmp_path.glob(".index.building-*"))


def test_unreachable_address_is_one_line(corpus: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciverify",
            "index",
            str(corpus),
            "-o",
            str(tmp_path / "idx"),
            "--no-dense",
            "--engine",
            "ray",
            "--address",
            "ray://127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert lines[-1].startswith("error: cannot start or reach the Ray cluster at 'ray://127.0.0.1:9'")
    assert "Traceback" not in done.stderr and not (tmp_path / "idx").exists()
