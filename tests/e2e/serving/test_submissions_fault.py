"""Leaderboard durability: 20 concurrent submissions, then SIGKILL mid-way and a restart.

Each upload comes from a team of its own (a team has one upload in flight at a time), and the scoring
queue is large enough that none is shed: what is tested is the writes.

Every submission the server acknowledged (201) must be in the database after the kill, with the
same scores and the same file hash, and no row may be half written.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from serving_e2e import add_submitter, predictions_for, start_server

ENV = {
    "SCIVERIFY_PRELOAD_VERIFIER": "false",
    "SCIVERIFY_SUBMISSIONS_PER_HOUR": "1000",
    "SCIVERIFY_SUBMISSIONS_PER_DAY": "1000",
    "SCIVERIFY_GOLD_PUBLIC": "true",  # every scored row on the board: what the durability checks read
    "SCIVERIFY_N_BOOT": "1000",
    "SCIVERIFY_SCORING_QUEUE": "64",
}


def _teams(data: Path, n: int) -> list[str]:
    """Tokens of ``n`` more teams, registered through the library on the server's database."""
    from sciverify.serving.auth import add_submitter as add
    from sciverify.serving.db import Database

    db = Database(f"sqlite:///{data / 'sciverify.db'}")
    try:
        db.migrate()
        return [add(db, f"team {i}") for i in range(n)]
    finally:
        db.dispose()


def _submit(url: str, token: str, content: bytes, i: int) -> tuple[int, dict | None]:
    try:
        r = httpx.post(
            url + "/api/submissions",
            headers={"Authorization": f"Bearer {token}"},
            files={"file": (f"run{i}.jsonl", content)},
            data={"system": f"run {i}"},
            timeout=120,
        )
    except httpx.HTTPError:
        return -1, None
    return r.status_code, r.json()


def _check_rows(db_path: Path) -> dict[str, sqlite3.Row]:
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = {r["public_id"]: r for r in conn.execute("SELECT * FROM submissions")}
    for r in rows.values():
        assert hashlib.sha256(r["content"]).hexdigest() == r["sha256"]
        assert len(r["content"]) == r["size"]
        assert r["status"] in ("scored", "invalid")
        if r["status"] == "scored":
            assert r["scores"] and r["counts"] and r["report_html"]
    conn.close()
    return rows


def test_concurrent_submissions_then_sigkill(tmp_path: Path, hidden_gold: Path) -> None:
    data = tmp_path / "serve"
    tokens = [add_submitter(data, "durable team"), *_teams(data, 39)]
    args = ("--leaderboard-gold", str(hidden_gold))
    n_claims = len(hidden_gold.read_text().splitlines())
    files = [predictions_for(hidden_gold, keep=(i * 7) % n_claims) for i in range(40)]

    # 1. Twenty concurrent submissions: all acknowledged, all stored, all ranked.
    server = start_server(data, args=args, env=ENV)
    try:
        server.wait_ready(timeout=120, verifier=False)
        with ThreadPoolExecutor(20) as pool:
            first = list(pool.map(lambda i: _submit(server.url, tokens[i], files[i], i), range(20)))
        assert [s for s, _ in first] == [201] * 20, first
        board = httpx.get(server.url + "/api/leaderboard", timeout=60).json()
        assert len(board["entries"]) == 20

        # 2. Twenty more, killed with SIGKILL once some have been acknowledged.
        acked: dict[str, dict] = {}
        lock = threading.Lock()

        def fire(i: int) -> None:
            status, body = _submit(server.url, tokens[i], files[i], i)
            if status == 201 and body:
                with lock:
                    acked[body["id"]] = body

        threads = [threading.Thread(target=fire, args=(i,)) for i in range(20, 40)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 90
        while len(acked) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        for t in threads:
            t.join()
    finally:
        server.stop()
    assert 3 <= len(acked) < 20, f"the kill should land mid-way ({len(acked)} acknowledged)"
    acked.update({body["id"]: body for _, body in first})

    # 3. The database after the kill: every acknowledged row intact, no half rows.
    rows = _check_rows(data / "sciverify.db")
    for sid, body in acked.items():
        assert sid in rows, f"acknowledged submission {sid} lost"
        assert rows[sid]["sha256"] == body["sha256"]

    # 4. Restart: the server serves the same scores for every acknowledged submission.
    again = start_server(data, args=args, env=ENV)
    try:
        again.wait_ready(timeout=120, verifier=False)
        for sid, body in acked.items():
            owner = tokens[int(body["system"].split()[1])]
            served = httpx.get(  # the file's hash: shown to its owner
                f"{again.url}/api/submissions/{sid}", headers={"Authorization": f"Bearer {owner}"}, timeout=30
            ).json()
            assert (
                served["sha256"]
                == body["sha256"]
                == hashlib.sha256(files[int(body["system"].split()[1])]).hexdigest()
            )
            assert served["metrics"] == body["metrics"]
        after = _submit(again.url, tokens[0], files[0], 0)
        assert after[0] == 201
    finally:
        again.stop()
