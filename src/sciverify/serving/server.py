"""Running the server from the command line: settings from flags, logging, uvicorn."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciverify.serving.settings import Settings

if TYPE_CHECKING:
    from sciverify.serving.db import Database

__all__ = [
    "add_submitter_cli",
    "list_submitters_cli",
    "revoke_submitter_cli",
    "close_phase_cli",
    "inspect_submission_cli",
    "run_server",
    "settings_from_args",
    "uvicorn_config",
]


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


@contextmanager
def _database(settings: Settings) -> Iterator[Database]:
    """The operator commands' database, migrated to the current schema, closed afterwards."""
    from sciverify.serving.db import Database

    db = Database(settings.resolved_db_url())
    try:
        db.migrate()
        yield db
    finally:
        db.dispose()


def add_submitter_cli(settings: Settings, name: str, expires: str | None = None) -> str:
    """Migrate the database if needed, register ``name`` (its token ending at ``expires``: a duration
    such as ``30d`` or an ISO date), return the new token."""
    from sciverify.serving.auth import add_submitter, parse_expiry

    expires_at = parse_expiry(expires) if expires is not None else None
    with _database(settings) as db:
        return add_submitter(db, name, expires_at)


def revoke_submitter_cli(settings: Settings, name: str) -> str:
    """Revoke ``name``'s token; one line for the operator saying since when.

    Raises:
        InputError: no such team.
    """
    from sciverify.serving.auth import revoke_submitter

    with _database(settings) as db:
        info = revoke_submitter(db, name)
    assert info.revoked_at is not None
    return (
        f"submitter {info.name!r}: token revoked at {info.revoked_at:%Y-%m-%d %H:%M:%S} UTC; "
        f"its {info.uploads} upload(s) stay on the board"
    )


def list_submitters_cli(settings: Settings) -> str:
    """Every team as a text table: name, state (active, expired, revoked), expiry, revocation,
    uploads. Tokens are not stored, so none is shown."""
    from sciverify.serving.auth import list_submitters

    with _database(settings) as db:
        infos = list_submitters(db)
    if not infos:
        return "no submitters (add one with `sciverify leaderboard add-submitter NAME`)"

    def when(value: Any) -> str:
        return "-" if value is None else f"{value:%Y-%m-%d %H:%M} UTC"

    rows = [("name", "state", "created", "expires", "revoked", "uploads")]
    rows += [
        (i.name, i.state(), when(i.created_at), when(i.expires_at), when(i.revoked_at), str(i.uploads))
        for i in infos
    ]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def close_phase_cli(settings: Settings) -> dict[str, Any]:
    """Close the open leaderboard phase of the database (the one a server started on last): uploads stop and
    the final ranking on the private part is published at /leaderboard/final.

    Raises:
        InputError: no phase is open.
    """
    from sciverify.serving.phase import close_phase

    with _database(settings) as db:
        return close_phase(db)


def inspect_submission_cli(
    settings: Settings, submission_id: str, out_dir: Path | None = None
) -> dict[str, Any]:
    """The operator's view of one upload (by its public id, or its row number): exact scores on the
    public and private parts, released figures, problems; with ``out_dir``,
    the uploaded file and the stored report are written there too (the report of a hidden gold is the
    full one, with per-claim gold: it must not be published).

    Raises:
        InputError: no such submission.
    """
    from sqlalchemy import select

    from sciverify.errors import InputError
    from sciverify.serving.tables import Submission, Submitter, iso_utc

    with _database(settings) as db:
        where = Submission.public_id == submission_id
        if submission_id.isdigit() and len(submission_id) < 10:
            where = where | (Submission.id == int(submission_id))
        with db.read() as session:
            found = session.execute(select(Submission, Submitter.name).join(Submitter).where(where)).first()
    if found is None:
        raise InputError(f"no submission {submission_id} in {settings.resolved_db_url()}")
    row, name = found
    view: dict[str, Any] = {
        "id": row.public_id,
        "row": row.id,
        "submitter": name,
        "system": row.system,
        "filename": row.filename,
        "sha256": row.sha256,
        "created_at": iso_utc(row.created_at),
        "status": row.status,
        "gold_sha256": row.gold_sha256,
        "scores": row.scores,
        "private_scores": row.private_scores,
        "chosen": row.chosen,
        "released": row.released,
        "sets_release": row.sets_release,
        "problems": row.problems,
    }
    if out_dir is not None:
        from sciverify.data.io import atomic_writer, write_text_atomic

        with atomic_writer(out_dir / f"submission-{row.public_id}.jsonl") as handle:
            handle.write(row.content)
        if row.report_html:
            write_text_atomic(out_dir / f"submission-{row.public_id}-report.html", row.report_html)
        view["written_to"] = str(out_dir)
    return view


def _preflight(settings: Settings) -> None:
    """Surface configuration errors as one clear line before uvicorn starts (the lifespan repeats these)."""
    from sciverify.serving.app import build_leaderboard

    with _database(settings) as db:
        board = build_leaderboard(db, settings)
        try:
            board.check()
            if board.enabled:
                from sciverify.serving.phase import refuse_spent

                refuse_spent(board, reuse=settings.reuse_spent_gold)
        finally:
            board.close()


def run_server(settings: Settings) -> None:
    """Serve until interrupted. Access logs carry method, path and status only, never bodies."""
    import uvicorn

    from sciverify.logs import LOG_FORMAT
    from sciverify.serving.app import create_app

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    _preflight(settings)
    uvicorn.Server(uvicorn_config(create_app(settings), settings.host, settings.port)).run()


def uvicorn_config(app: Any, host: str, port: int) -> Any:
    """The uvicorn configuration the server runs with: the HTTP protocol bounds every connection by the
    app's settings (``serving.connections``), and access-log redaction is installed on return (uvicorn
    configures logging while building the config)."""
    import math

    import uvicorn

    from sciverify.serving.connections import ConnectionLimits, bounded_protocol
    from sciverify.serving.logs import install_access_log_redaction

    settings = getattr(getattr(app, "state", None), "settings", None)
    if not isinstance(settings, Settings):
        settings = Settings()
    limits = ConnectionLimits(
        header_timeout=settings.header_timeout or None,
        keep_alive=settings.keep_alive_timeout,
        per_client=settings.connections_per_client or None,
        send_buffer=settings.send_buffer_bytes or None,
        write_timeout=settings.write_timeout or None,
    )
    refusals = getattr(getattr(app, "state", None), "refusals", None)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        backlog=4096,
        http=bounded_protocol(limits, refusals),
        # uvicorn's own keep-alive timer (whole seconds) fires after the protocol's, which counts the
        # close and resets a connection whose client left bytes unread
        timeout_keep_alive=max(1, math.ceil(settings.keep_alive_timeout) + 1),
    )
    install_access_log_redaction()
    return config
