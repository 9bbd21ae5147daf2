"""Running the server from the command line: settings from flags, logging, uvicorn."""

from __future__ import annotations

import logging
from typing import Any

from sciverify.serving.settings import Settings

__all__ = ["add_submitter_cli", "run_server", "settings_from_args"]


def settings_from_args(**flags: Any) -> Settings:
    """Settings from the environment, overridden by every flag that was actually given."""
    from pydantic import ValidationError

    from sciverify.errors import ConfigError

    given = {key: value for key, value in flags.items() if value is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise ConfigError(
            f"invalid setting {where}: {first.get('msg')} (flags or SCIVERIFY_* variables)"
        ) from None


def add_submitter_cli(settings: Settings, name: str) -> str:
    """Migrate the database if needed, register ``name``, return the new token."""
    from sciverify.serving.auth import add_submitter
    from sciverify.serving.db import Database

    db = Database(settings.resolved_db_url())
    try:
        db.migrate()
        return add_submitter(db, name)
    finally:
        db.dispose()


def _preflight(settings: Settings) -> None:
    """Surface configuration errors as one clear line before uvicorn starts (the lifespan repeats these)."""
    from sciverify.serving.app import corpus_path
    from sciverify.serving.db import Database
    from sciverify.serving.leaderboard import Leaderboard

    db = Database(settings.resolved_db_url())
    try:
        db.migrate()
        Leaderboard(
            db,
            gold=settings.leaderboard_gold,
            corpus=corpus_path(settings),
            n_boot=settings.n_boot,
            seed=settings.seed,
            per_hour=settings.submissions_per_hour,
        ).check()
    finally:
        db.dispose()


def run_server(settings: Settings) -> None:
    """Serve until interrupted. Access logs carry method, path and status only, never bodies."""
    import uvicorn

    from sciverify.serving.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _preflight(settings)
    app = create_app(settings)
    uvicorn.run(
        app, host=settings.host, port=settings.port, log_level="info", backlog=4096, timeout_keep_alive=30
    )
