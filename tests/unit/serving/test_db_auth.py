"""Database: migrations, durability pragmas, constraints; tokens stored only as hashes."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import inspect, select

from sciverify.errors import ConfigError, InputError
from sciverify.serving.auth import add_submitter, authenticate, hash_token
from sciverify.serving.db import Database, migrations_dir
from sciverify.serving.tables import Submitter


@pytest.fixture
def db(tmp_path: Path):
    database = Database(f"sqlite:///{tmp_path / 'x.db'}")
    database.migrate()
    yield database
    database.dispose()


def test_migrations_create_schema_and_are_idempotent(db: Database) -> None:
    db.migrate()
    tables = set(inspect(db.engine).get_table_names())
    assert {"submitters", "submissions", "alembic_version"} <= tables
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0005"
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_migrations_ship_inside_the_package() -> None:
    root = migrations_dir()
    assert (root / "env.py").is_file() and (root / "script.py.mako").is_file()
    assert list((root / "versions").glob("0001_*.py"))
    assert root.parent.name == "serving"


def test_downgrade_to_base_and_back(db: Database) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    with db.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "base")
    assert "submissions" not in inspect(db.engine).get_table_names()
    db.migrate()
    assert "submissions" in inspect(db.engine).get_table_names()


def test_scored_row_without_scores_is_refused(db: Database, tmp_path: Path) -> None:
    add_submitter(db, "team")
    conn = sqlite3.connect(tmp_path / "x.db")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO submissions (submitter_id, created_at, system, filename, size, sha256, content,"
            " status,"
            " gold_sha256) VALUES (1, '2025-01-01', 's', 'f', 1, 'x', x'00', 'scored', 'g')"
        )
    conn.close()


def test_token_is_shown_once_and_stored_hashed(db: Database, tmp_path: Path) -> None:
    token = add_submitter(db, "Team Alpha")
    assert token.startswith("svk_") and len(token) >= 40
    with db.read() as session:
        row = session.scalar(select(Submitter).where(Submitter.name == "Team Alpha"))
    assert row is not None and row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token.encode() not in (tmp_path / "x.db").read_bytes()
    wal = tmp_path / "x.db-wal"
    assert not wal.exists() or token.encode() not in wal.read_bytes()
    assert authenticate(db, token).name == "Team Alpha"
    assert authenticate(db, token + "x") is None
    assert authenticate(db, "") is None and authenticate(db, None) is None
    assert hash_token(token) == row.token_hash


def test_submitter_names(db: Database) -> None:
    add_submitter(db, "ok-name_1.0")
    with pytest.raises(InputError, match="already exists"):
        add_submitter(db, "ok-name_1.0")
    for bad in ("", "   ", "<script>", "x" * 101, "-leading"):
        with pytest.raises(InputError):
            add_submitter(db, bad)
    assert add_submitter(db, "second") != add_submitter(db, "third")


def test_bad_urls_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unsupported database backend"):
        Database("mysql://u@h/db")
    with pytest.raises(ConfigError, match="invalid database URL"):
        Database("::::")
    with pytest.raises(ConfigError, match="cannot open the database"):
        Database("postgresql://u:pw@127.0.0.1:1/db").migrate()


def test_settings_from_environment(monkeypatch, tmp_path: Path) -> None:
    from sciverify.serving.server import settings_from_args

    monkeypatch.setenv("SCIVERIFY_MAX_CLAIM_CHARS", "77")
    monkeypatch.setenv("SCIVERIFY_DATA_DIR", str(tmp_path))
    s = settings_from_args(port=9999, db_url=None)
    assert s.max_claim_chars == 77 and s.port == 9999
    assert s.resolved_db_url() == f"sqlite:///{tmp_path / 'sciverify.db'}"
    monkeypatch.setenv("SCIVERIFY_MAX_K", "zero")
    with pytest.raises(ConfigError, match="max_k"):
        settings_from_args()
