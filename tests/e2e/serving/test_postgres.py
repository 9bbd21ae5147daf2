"""The same migrations and a leaderboard round trip on a real PostgreSQL started for the test.

Skipped, with the reason, when PostgreSQL's server binaries are missing or no unprivileged user can
run them (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_e2e import add_submitter, predictions_for


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_user() -> list[str]:
    """Command prefix that runs PostgreSQL binaries as a non-root user."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root and there is no 'postgres' user to run PostgreSQL as")
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root without runuser; cannot start PostgreSQL as another user")
    return [runuser, "-u", "postgres", "--"]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    binaries = {name: shutil.which(name) or f"/usr/local/bin/{name}" for name in ("initdb", "pg_ctl")}
    if not all(Path(p).exists() for p in binaries.values()):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found")
    prefix = _as_user()
    # Not under pytest's tmp dir: that is private to root, and PostgreSQL runs as another user.
    base = Path(tempfile.mkdtemp(prefix="sciverify-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    if prefix:
        uid = pwd.getpwnam("postgres").pw_uid
        for p in (base, sock):
            os.chown(p, uid, -1)
    port = _free_port()
    init = subprocess.run(
        [*prefix, binaries["initdb"], "-D", str(data), "-A", "trust", "-U", "sciverify", "--no-sync"],
        capture_output=True,
        text=True,
    )
    if init.returncode != 0:
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    opts = f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = subprocess.run(
        [
            *prefix,
            binaries["pg_ctl"],
            "-D",
            str(data),
            "-o",
            opts,
            "-l",
            str(base / "log"),
            "-w",
            "-t",
            "60",
            "start",
        ],
        capture_output=True,
        text=True,
    )
    if start.returncode != 0:
        pytest.skip(f"pg_ctl start failed: {start.stderr.strip()[-300:]}")
    try:
        yield f"postgresql+psycopg://sciverify@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, binaries["pg_ctl"], "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
        )
        shutil.rmtree(base, ignore_errors=True)


def test_migrations_and_submission_round_trip(
    postgres_url: str, tmp_path: Path, hidden_gold: Path, scifact_root: Path
) -> None:
    from fastapi.testclient import TestClient
    from sqlalchemy import inspect

    from sciverify.serving.app import create_app
    from sciverify.serving.db import Database
    from sciverify.serving.settings import Settings

    token = add_submitter(tmp_path, "pg team", db_url=postgres_url)  # the CLI migrates first
    db = Database(postgres_url)
    assert db.backend == "postgresql"
    assert {"submitters", "submissions", "alembic_version"} <= set(inspect(db.engine).get_table_names())
    db.migrate()  # idempotent
    db.dispose()

    settings = Settings(
        db_url=postgres_url,
        leaderboard_gold=hidden_gold,
        corpus=scifact_root / "corpus.jsonl",
        n_boot=500,
        preload_verifier=False,
        submissions_per_hour=2,
    )
    content = predictions_for(hidden_gold, keep=60)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        headers = {"Authorization": f"Bearer {token}"}
        r = client.post(
            "/api/submissions",
            headers=headers,
            files={"file": ("pg.jsonl", content)},
            data={"system": "pg run"},
        )
        assert r.status_code == 201, r.text
        sid = r.json()["id"]
        assert client.get(f"/api/submissions/{sid}").json()["metrics"] == r.json()["metrics"]
        entries = client.get("/api/leaderboard").json()["entries"]
        assert [e["submission_id"] for e in entries] == [sid]
        bad = client.post("/api/submissions", headers=headers, files={"file": ("bad.jsonl", b"nope\n")})
        assert bad.status_code == 422 and bad.json()["problems"][0]["line"] == 1
        limited = client.post("/api/submissions", headers=headers, files={"file": ("pg.jsonl", content)})
        assert limited.status_code == 429  # the rate limit holds on PostgreSQL too (row lock + count)
        assert client.get("/api/health").json()["database"] == "ok"
