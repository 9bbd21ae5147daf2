"""Tokens the operator controls: revoke, expiry, the list; credentials in URLs refused by their shape."""

from __future__ import annotations

import secrets
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from serving_doubles import oracle_lines

from sciverify.errors import InputError
from sciverify.serving.auth import (
    add_submitter,
    authenticate,
    list_submitters,
    looks_like_token,
    parse_expiry,
    revoke_submitter,
)
from sciverify.serving.db import Database

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc)  # noqa: UP017


@pytest.fixture()
def db(tmp_path: Path):
    database = Database(f"sqlite:///{tmp_path / 't.db'}")
    database.migrate()
    yield database
    database.dispose()


def test_a_revoked_token_is_refused_and_listed(db) -> None:
    token = add_submitter(db, "team r")
    assert authenticate(db, token).name == "team r"
    info = revoke_submitter(db, "team r")
    assert info.state() == "revoked" and info.revoked_at is not None
    assert authenticate(db, token) is None
    assert revoke_submitter(db, "team r").revoked_at == info.revoked_at  # revoking again keeps the time
    with pytest.raises(InputError, match="no submitter 'nobody'"):
        revoke_submitter(db, "nobody")


def test_an_expired_token_is_refused(db) -> None:
    past = add_submitter(db, "old", expires_at=datetime.now(timezone.utc) - timedelta(seconds=1))  # noqa: UP017
    future = add_submitter(db, "new", expires_at=datetime.now(timezone.utc) + timedelta(days=1))  # noqa: UP017
    assert authenticate(db, past) is None
    assert authenticate(db, future).name == "new"
    states = {i.name: i.state() for i in list_submitters(db)}
    assert states == {"old": "expired", "new": "active"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", NOW + timedelta(days=30)),
        ("12h", NOW + timedelta(hours=12)),
        ("2w", NOW + timedelta(weeks=2)),
        ("2026-12-31", datetime(2027, 1, 1, tzinfo=timezone.utc)),  # noqa: UP017 - through that day
        ("2026-12-01T08:30", datetime(2026, 12, 1, 8, 30, tzinfo=timezone.utc)),  # noqa: UP017
    ],
)
def test_expiry_forms(text: str, expected: datetime) -> None:
    assert parse_expiry(text, NOW) == expected


@pytest.mark.parametrize("text", ["soon", "2025-01-01", "0d", "-3d"])
def test_bad_expiry_is_one_clear_error(text: str) -> None:
    with pytest.raises(InputError, match="--expires"):
        parse_expiry(text, NOW)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, timeout=120
    )


def test_the_cli_adds_with_expiry_lists_and_revokes(tmp_path: Path) -> None:
    data = ("--data-dir", str(tmp_path))
    added = _cli("leaderboard", "add-submitter", "Team A", "--expires", "30d", *data)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip().splitlines()[-1]
    assert _cli("leaderboard", "add-submitter", "Team B", *data).returncode == 0
    listed = _cli("leaderboard", "list", *data)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["name", "state", "created", "expires", "revoked", "uploads"]
    team_a = next(line for line in lines if line.startswith("Team A"))
    assert " active " in team_a and team_a.count("-") >= 2 and "svk_" not in listed.stdout
    revoked = _cli("leaderboard", "revoke", "Team A", *data)
    assert revoked.returncode == 0 and "token revoked at" in revoked.stdout
    assert " revoked " in next(
        line for line in _cli("leaderboard", "list", *data).stdout.splitlines() if "Team A" in line
    )
    db = Database(f"sqlite:///{tmp_path / 'sciverify.db'}")
    try:
        assert authenticate(db, token) is None
    finally:
        db.dispose()
    for bad in (("revoke", "Nobody"), ("add-submitter", "Team C", "--expires", "yesterday")):
        r = _cli("leaderboard", *bad, *data)
        assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) <= 2


def test_a_revoked_team_cannot_upload(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "gone")
    revoke_submitter(client.app.state.db, "gone")
    r = client.post(
        "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("p.jsonl", oracle_lines(gold_file))},
    )
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"


# -- credentials in URLs, by rule ----------------------------------------------------------------------
def test_the_token_shape_rule() -> None:
    for value in (
        "svk_" + secrets.token_urlsafe(32),
        secrets.token_urlsafe(32),
        secrets.token_hex(20),
        "SVK_x",
    ):
        assert looks_like_token(value), value
    for value in (
        "2",
        "hello",
        "abcdefghijklmnopqrstuvwxyz",
        "ALDH1 expression is associated",
        "12345678901234567890",
        "aaaaaaaaaaaaaaaaaaaaaaaa1",
    ):
        assert not looks_like_token(value), value


@pytest.mark.parametrize("name", ["bearer", "secret", "t", "password", "x", "Authorization"])
def test_any_parameter_carrying_a_token_is_refused(make_client, gold_file: Path, name: str) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "careless")
    for target, method in (
        (f"/api/submissions?{name}={token}", "post"),
        (f"/api/health?{name}={token}", "get"),
    ):
        r = (
            getattr(client, method)(target, files={"file": ("p.jsonl", b"{}\n")})
            if method == "post"
            else client.get(target)
        )
        assert r.status_code == 400 and r.json()["error"] == "token_in_url", (target, r.text)
        assert token not in r.text
    # a secret of another format, on a route that authenticates
    other = "x9Tq_2LmVb7kPz-4RwN8sYc1HdJ6fGa0"  # fixed: a random one has no digit 0.4 % of the time
    r = client.get(f"/api/submissions/abc?{name}={other}", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400 and r.json()["error"] == "token_in_url"
    # the request's own bearer token echoed in the URL, on any route
    r = client.get(f"/leaderboard?{name}={token[4:]}", headers={"Authorization": f"Bearer {token[4:]}"})
    assert r.status_code == 400


def test_ordinary_query_strings_pass(make_client) -> None:
    client = make_client(board=True)
    assert client.get("/api/submissions/abc?page=2&sort=f1").status_code == 404  # not found, not refused
    assert client.get("/export?claim=ALDH1%20expression%20predicts%20outcome&format=json").status_code != 400


def test_migration_0004_keeps_older_tokens_working(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from sciverify.serving.auth import hash_token
    from sciverify.serving.db import migrations_dir

    db = Database(f"sqlite:///{tmp_path / 'old.db'}")
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0003")
    with db.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO submitters (id, name, token_hash, created_at) VALUES (1, 'old', ?, '2025-01-01')",
            (hash_token("svk_old"),),
        )
        conn.exec_driver_sql(
            "INSERT INTO phases (key, opened_at, started_at, closed_at)"
            " VALUES ('k', '2025-01-01', '2025-01-01', '2025-02-01')"
        )
    db.migrate()
    try:
        assert authenticate(db, "svk_old").name == "old"
        assert [i.state() for i in list_submitters(db)] == ["active"]
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT private_ids, private_spent_at FROM phases").one() == (
                None,
                None,
            )
    finally:
        db.dispose()
