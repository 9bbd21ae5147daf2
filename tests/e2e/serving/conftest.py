"""Fixtures for the serving end-to-end tests: real `sciverify serve` subprocesses on loopback ports.

The shared server runs the real Verifier on the real default SciFact index; tests that need it are
skipped (with the reason) when that index has not been built on this machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

from load_verify import ServerProcess, start_server  # noqa: E402


@pytest.fixture(scope="session")
def scifact_root() -> Path:
    from sciverify.data.datasets import resolve_data_dir

    try:
        root = resolve_data_dir(None).root
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"SciFact data not available: {exc}")
    return root


@pytest.fixture(scope="session")
def hidden_gold(scifact_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixed validation split of claims_train.jsonl, used as the leaderboard's hidden gold."""
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims

    ids = {c.id for c in split_claims(read_claims(scifact_root / "claims_train.jsonl")).validation}
    out = tmp_path_factory.mktemp("gold") / "hidden_gold.jsonl"
    lines = (scifact_root / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    out.write_text("".join(x + "\n" for x in lines if json.loads(x)["id"] in ids), encoding="utf-8")
    return out


def default_index_ready() -> str | None:
    """None when the default index exists, else the reason to skip."""
    try:
        from sciverify.retrieval.index import default_index_dir
    except ImportError as exc:
        return f"retrieval index module unavailable: {exc}"
    path = default_index_dir()
    if not path.exists():
        return f"the default SciFact index is not built at {path} (build it with `sciverify index`)"
    return None


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory, hidden_gold: Path) -> Iterator[ServerProcess]:
    """One real server (real verifier, real default index, SQLite) for the whole session."""
    reason = default_index_ready()
    if reason:
        pytest.skip(reason)
    server = start_server(
        tmp_path_factory.mktemp("serve"),
        args=("--leaderboard-gold", str(hidden_gold)),
        env={"SCIVERIFY_N_BOOT": "1000"},
    )
    try:
        server.wait_ready(timeout=600)
        yield server
    finally:
        server.stop()


def add_submitter(data_dir: Path, name: str, db_url: str | None = None) -> str:
    """Run the real CLI command and return the token it prints once."""
    cmd = [
        sys.executable,
        "-m",
        "sciverify",
        "leaderboard",
        "add-submitter",
        name,
        "--data-dir",
        str(data_dir),
    ]
    if db_url:
        cmd += ["--db", db_url]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    match = re.search(r"svk_[A-Za-z0-9_\-]+", out)
    assert match, out
    return match.group(0)


def predictions_for(gold: Path, keep: int) -> bytes:
    """A valid submission: gold rationales (oracle) for the first ``keep`` claims, nothing for the rest."""
    from sciverify.data.io import prediction_to_json, read_claims
    from sciverify.scoring import oracle_predictions

    golds = read_claims(gold)
    preds = oracle_predictions(golds)
    rows = [prediction_to_json(p) if i < keep else {"id": p.id, "evidence": {}} for i, p in enumerate(preds)]
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)
