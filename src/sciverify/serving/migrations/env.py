"""Alembic environment for the serving database.

The app (and the CLI) hands a live connection in ``config.attributes["connection"]``; running
``alembic`` by hand works too, with ``-x url=...`` or ``sqlalchemy.url`` set in the config.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from sciverify.serving.tables import Base

target_metadata = Base.metadata


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    section = context.config.get_section(context.config.config_ini_section) or {}
    url = context.get_x_argument(as_dictionary=True).get("url")
    if url:
        section["sqlalchemy.url"] = url
    connectable = engine_from_config(section, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with connectable.connect() as conn:
        _run(conn)


def run_migrations_offline() -> None:
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
