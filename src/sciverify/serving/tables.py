"""Database tables of the leaderboard: who may submit, and what they submitted.

A submission row holds the uploaded bytes, their sha256 and the scores together, written in one
transaction, so after a crash a row is either complete or absent. Scores are kept per gold file
(``gold_sha256``): if the server is pointed at another gold file, older scores are not mixed in.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ["Base", "Phase", "Submission", "Submitter", "as_utc", "iso_utc", "new_public_id", "utcnow"]


def new_public_id() -> str:
    """An opaque submission id for URLs (72 random bits): unlike a row number, it says nothing about
    how many uploads, valid or not, came before."""
    import secrets

    return secrets.token_urlsafe(9)


def utcnow() -> datetime:
    """Timezone-aware now, so SQLite and PostgreSQL rows compare the same way."""
    return datetime.now(timezone.utc)  # noqa: UP017 - explicit for readers


def as_utc(value: datetime | None) -> datetime | None:
    """A stored time with its zone: SQLite hands back naive datetimes, and every time stored here is
    UTC, so an operator's output never prints a time without saying which zone it is in."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=timezone.utc)  # noqa: UP017 - explicit for readers


def iso_utc(value: datetime) -> str:
    """A stored time in ISO 8601 with its zone (``2026-11-26T10:00:00+00:00``)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)  # noqa: UP017
    return aware.isoformat()


class Base(DeclarativeBase):
    """Declarative base; the schema itself is created by the Alembic migrations, not by ``create_all``."""


class Submitter(Base):
    """A team allowed to submit. Only the sha256 of its token is stored; the token is shown once."""

    __tablename__ = "submitters"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    #: After this time the token is refused (None: it does not expire).
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: When the operator revoked the token (``sciverify leaderboard revoke``); refused from then on.
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    submissions: Mapped[list[Submission]] = relationship(back_populates="submitter")


class Submission(Base):
    """One uploaded prediction file with its outcome: ``scored`` (with scores) or ``invalid`` (problems)."""

    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: The id the public sees (URLs, API); the row number stays inside the server.
    public_id: Mapped[str] = mapped_column(String(16), nullable=False, unique=True, default=new_public_id)
    submitter_id: Mapped[int] = mapped_column(ForeignKey("submitters.id"), nullable=False, index=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=utcnow, index=True
    )
    system: Mapped[str] = mapped_column(String(100), nullable=False, default="")
    filename: Mapped[str] = mapped_column(String(255), nullable=False)
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    content: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    #: The phase the row was scored in: the gold file's sha256, or with a private part, a digest of the
    #: gold's sha256 and the private claim ids (``Leaderboard.phase_key``).
    gold_sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    #: Aggregate metrics with bootstrap intervals on the public part of the gold; None when invalid.
    scores: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: Per-claim count matrix (gold order) for paired tests. Derived from the gold: never served.
    counts: Mapped[list[Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: Validation problems about the submitted file: [{"line": int|None, "message": str}].
    problems: Mapped[list[Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: The scorer's HTML report: public mode for a public gold; for a hidden gold the full report, which
    #: only the operator sees (``sciverify leaderboard inspect``).
    report_html: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: Hidden gold: the team's released F1s (rounded, per family) after this upload; None before any.
    released: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: Hidden gold: this upload changed the team's released figures (it beat them by the margin).
    sets_release: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    #: Metrics on the private part of the gold, computed for every scored upload and shown to nobody
    #: before the phase is closed; None without a private part.
    private_scores: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: Per-claim counts on the private part (never served).
    private_counts: Mapped[list[Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: sha256 of the client's ``Idempotency-Key`` (unique per team): a retried upload finds this row.
    idempotency_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: The team chose this upload for the final (private) ranking.
    chosen: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)

    submitter: Mapped[Submitter] = relationship(back_populates="submissions")


class Phase(Base):
    """One leaderboard phase (a gold file and its private part): open until the operator closes it.

    Closing publishes the ranking on the private part; the server reads ``closed_at`` on each request,
    so ``sciverify leaderboard close`` takes effect on a running server.
    """

    __tablename__ = "phases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    #: The last time a server started on this phase: ``close`` closes the most recently started one.
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False, default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: The claim ids the final ranking is computed on (the private part, or the whole hidden gold
    #: without one); None for a public gold and for phases recorded before migration 0004.
    private_ids: Mapped[list[str] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    #: When the close published the gold of ``private_ids``: from then on they are spent, and a later
    #: phase must hold back other claims (``phase.open_phase`` refuses one that shares any).
    private_spent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: The gold file a server started this phase with (migration 0005): the close writes the spent
    #: record beside it (``serving.spent``).
    gold_path: Mapped[str | None] = mapped_column(String(4096), nullable=True)
    #: Claim id -> sha256 of its gold line, for ``private_ids`` (migration 0005): once spent, a later
    #: phase holding a claim with the same content is refused, whatever its file or ids.
    spent_digests: Mapped[dict[str, str] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
