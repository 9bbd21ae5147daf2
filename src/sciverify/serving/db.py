"""Engines, sessions and migrations for the serving database (SQLite by default, PostgreSQL by URL).

SQLite is opened in WAL mode with ``synchronous=FULL``, so a committed transaction survives a killed
process (and a power cut). pysqlite's own transaction handling is switched off and ``BEGIN`` is issued
by us: plain ``BEGIN`` for readers, ``BEGIN IMMEDIATE`` for writers (``writer_engine``), so a
read-check-then-write (the rate limit) cannot interleave with another writer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from sciverify.errors import ConfigError

__all__ = ["Database", "make_engine", "migrations_dir", "upgrade_head"]

_IMMEDIATE = "sciverify_begin_immediate"


def migrations_dir() -> Path:
    """The Alembic script directory shipped inside the package."""
    return Path(__file__).resolve().parent / "migrations"


def _sqlite_path(url: str) -> Path | None:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with the durability settings described in the module docstring."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError(f"invalid database URL: {exc}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        path = _sqlite_path(url)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(
                    f"cannot create the database directory {path.parent}: {exc.strerror}"
                ) from None
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        _install_sqlite_events(engine)
        return engine
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        try:
            return create_engine(parsed, pool_pre_ping=True)
        except NoSuchModuleError as exc:
            raise ConfigError(f"cannot use database URL: {exc}") from None
    raise ConfigError(f"unsupported database backend {backend!r}: use sqlite:/// or postgresql+psycopg://")


def _install_sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves (see below)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def upgrade_head(engine: Engine) -> None:
    """Bring the schema to the newest migration (run at every start; a no-op when up to date)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


class Database:
    """The engine pair and session factories one app instance uses."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.backend = self.engine.dialect.name
        writer = self.engine.execution_options(**{_IMMEDIATE: True})
        self._reader = sessionmaker(self.engine, expire_on_commit=False)
        self._writer = sessionmaker(writer, expire_on_commit=False)

    def migrate(self) -> None:
        """Run the migrations; an unreachable database becomes one clear ConfigError."""
        from sqlalchemy.exc import DBAPIError

        try:
            upgrade_head(self.engine)
        except DBAPIError as exc:
            shown = self.engine.url.render_as_string(hide_password=True)
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
            raise ConfigError(f"cannot open the database {shown}: {reason}") from None

    def read(self) -> Session:
        """A session for reading (plain BEGIN)."""
        return self._reader()

    def write(self) -> Session:
        """A session whose transaction takes the write lock up front on SQLite."""
        return self._writer()

    def ping(self) -> None:
        """Run ``SELECT 1`` (health check)."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    def dispose(self) -> None:
        self.engine.dispose()
