"""Helpers for the serving end-to-end tests: server processes, CLI tokens, submission files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))

from load_verify import ServerProcess, load_claims, run_load, start_server  # noqa: E402

__all__ = [
    "ServerProcess",
    "add_submitter",
    "default_index_ready",
    "load_claims",
    "predictions_for",
    "run_load",
    "start_server",
]


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
