"""The CLI commands: `leaderboard add-submitter` prints a token once; `serve` and `close` fail in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sciverify.serving.auth import authenticate
from sciverify.serving.db import Database


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, timeout=120
    )


def test_add_submitter_prints_a_working_token_once(tmp_path: Path) -> None:
    first = _cli("leaderboard", "add-submitter", "Team CLI", "--data-dir", str(tmp_path))
    assert first.returncode == 0, first.stderr
    token = first.stdout.strip().splitlines()[-1]
    assert token.startswith("svk_")
    db = Database(f"sqlite:///{tmp_path / 'sciverify.db'}")
    try:
        assert authenticate(db, token).name == "Team CLI"
    finally:
        db.dispose()
    again = _cli("leaderboard", "add-submitter", "Team CLI", "--data-dir", str(tmp_path))
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr


def test_serve_with_a_missing_gold_file_fails_in_one_line(tmp_path: Path) -> None:
    r = _cli(
        "serve",
        "--data-dir",
        str(tmp_path),
        "--leaderboard-gold",
        str(tmp_path / "nope.jsonl"),
        "--port",
        "0",
    )
    assert r.returncode == 2
    assert "leaderboard gold file not found" in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0, r.stderr  # the one line, with no library log lines before it


def test_verbose_lets_the_libraries_log_lines_through(tmp_path: Path) -> None:
    gold = str(tmp_path / "nope.jsonl")
    r = _cli("--verbose", "serve", "--data-dir", str(tmp_path), "--leaderboard-gold", gold)
    assert r.returncode == 2
    assert "INFO alembic" in r.stderr and r.stderr.strip().splitlines()[-1].startswith("error:")


def test_serve_with_a_bad_private_ids_file_names_file_and_line(tmp_path: Path, gold_file: Path) -> None:
    ids = tmp_path / "private.txt"
    ids.write_text("# the private claims\nnot-a-claim\n")
    r = _cli(
        "serve",
        "--data-dir",
        str(tmp_path),
        "--leaderboard-gold",
        str(gold_file),
        "--leaderboard-private-ids",
        str(ids),
        "--port",
        "0",
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "private.txt:2: claim id 'not-a-claim' is not in the leaderboard gold" in " ".join(
        r.stderr.split()
    )


def test_close_without_an_open_phase_is_one_line(tmp_path: Path) -> None:
    r = _cli("leaderboard", "close", "--data-dir", str(tmp_path))
    assert r.returncode == 2 and "no open leaderboard phase" in r.stderr and "Traceback" not in r.stderr
