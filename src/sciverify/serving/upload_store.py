"""Storing a scored upload: the team's rate limits, its idempotency key and the one transaction.

Apart from :mod:`sciverify.serving.leaderboard` (scoring against the gold, ranking) because storing
needs none of the gold: only the database, the phase the row belongs to and the release rule, which
decides in the same transaction what the upload releases on a hidden gold.

Durability: scoring happens first, outside any transaction; then one transaction re-checks the rate
limit (and the upload's idempotency key) and inserts the row holding the file bytes, their sha256 and
the scores. The HTTP answer is sent only after that commit, so a crash loses nothing acknowledged and
leaves no half-written row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from sciverify.scoring import FAMILIES
from sciverify.serving.db import Database
from sciverify.serving.release import ReleaseRule, ladder_step
from sciverify.serving.tables import Submission, Submitter, utcnow

__all__ = ["IdempotencyConflict", "RateLimited", "ScoredFile", "UploadStore", "key_digest"]


class RateLimited(Exception):
    """The submitter used up its submissions for the current hour or day (``window`` says which)."""

    def __init__(self, retry_after: int, window: str = "hour", limit: int = 0) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after
        self.window = window
        self.limit = limit


class IdempotencyConflict(Exception):
    """The team used this idempotency key before, for a different file."""


@dataclass(frozen=True)
class ScoredFile:
    """The outcome of scoring one upload: public-part metrics and report, or the file's problems;
    and, with a private part, its metrics and counts (stored, never served before the close)."""

    valid: bool
    metrics: dict[str, dict[str, float]] | None
    counts: list[list[int]] | None
    problems: list[dict[str, Any]]
    report_html: str | None
    private_metrics: dict[str, dict[str, float]] | None = None
    private_counts: list[list[int]] | None = None


def key_digest(key: str) -> str:
    """What is stored of a client's idempotency key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class UploadStore:
    """The storage half of :class:`~sciverify.serving.leaderboard.Leaderboard`, which inherits it and
    sets these attributes: the phase key and the release rule only once its gold is checked, so they are
    read at each call, never copied."""

    db: Database
    per_hour: int
    per_day: int
    gold_public: bool
    rule: ReleaseRule
    phase_key: str

    def _recent(
        self, session: Any, submitter_id: int, now: datetime, window: timedelta = timedelta(hours=1)
    ) -> tuple[int, datetime | None]:
        since = now - window
        row = session.execute(
            select(func.count(Submission.id), func.min(Submission.created_at)).where(
                Submission.submitter_id == submitter_id, Submission.created_at > since
            )
        ).one()
        return int(row[0]), row[1]

    def _retry_after(self, oldest: datetime | None, now: datetime, window: timedelta) -> int:
        if oldest is None:
            return 60
        if oldest.tzinfo is None:
            oldest = oldest.replace(tzinfo=now.tzinfo)
        return max(1, int((oldest + window - now).total_seconds()) + 1)

    def _check_budget(self, session: Any, submitter_id: int) -> None:
        now = utcnow()
        for name, window, limit in (
            ("hour", timedelta(hours=1), self.per_hour),
            ("day", timedelta(days=1), self.per_day),
        ):
            n, oldest = self._recent(session, submitter_id, now, window)
            if n >= limit:
                raise RateLimited(self._retry_after(oldest, now, window), name, limit)

    def check_rate(self, submitter_id: int) -> None:
        """Raise :class:`RateLimited` early, before spending CPU on scoring."""
        with self.db.read() as session:
            self._check_budget(session, submitter_id)

    def find_retry(self, submitter_id: int, key: str | None, content: bytes) -> Submission | None:
        """The row an earlier upload with this idempotency key stored, if any.

        Raises:
            IdempotencyConflict: that key came with a different file.
        """
        if not key:
            return None
        with self.db.read() as session:
            return self._retry(session, submitter_id, key_digest(key), content)

    def _retry(self, session: Any, submitter_id: int, digest: str, content: bytes) -> Submission | None:
        row: Submission | None = session.scalar(
            select(Submission).where(
                Submission.submitter_id == submitter_id, Submission.idempotency_key == digest
            )
        )
        if row is not None and row.sha256 != hashlib.sha256(content).hexdigest():
            raise IdempotencyConflict()
        return row

    def store(
        self,
        submitter_id: int,
        system: str,
        filename: str,
        content: bytes,
        scored: ScoredFile,
        idempotency_key: str | None = None,
    ) -> tuple[Submission, bool]:
        """Insert the submission in one transaction (rate limit and idempotency key re-checked under
        the write lock). Returns the row and whether it was stored now (False: an earlier upload with
        the same key, returned as it was, without spending a slot)."""
        digest = key_digest(idempotency_key) if idempotency_key else None
        with self.db.write() as session, session.begin():
            if self.db.backend == "postgresql":
                session.execute(select(Submitter.id).where(Submitter.id == submitter_id).with_for_update())
            if digest is not None:
                earlier = self._retry(session, submitter_id, digest, content)
                if earlier is not None:
                    return earlier, False
            self._check_budget(session, submitter_id)
            released, sets_release = None, False
            if scored.valid and not self.gold_public:
                assert scored.metrics is not None
                before = self._released(session, submitter_id)
                f1 = {family: scored.metrics[family]["f1"] for family in FAMILIES}
                released = ladder_step(before, f1, self.rule)
                sets_release = released is not None and released != before
            row = Submission(
                submitter_id=submitter_id,
                created_at=utcnow(),
                system=system,
                filename=filename,
                size=len(content),
                sha256=hashlib.sha256(content).hexdigest(),
                content=content,
                status="scored" if scored.valid else "invalid",
                gold_sha256=self.phase_key,
                scores=scored.metrics,
                counts=scored.counts,
                problems=scored.problems or None,
                report_html=scored.report_html,
                released=released,
                sets_release=sets_release,
                private_scores=scored.private_metrics,
                private_counts=scored.private_counts,
                idempotency_key=digest,
            )
            session.add(row)
            session.flush()
        return row, True

    def _released(self, session: Any, submitter_id: int) -> dict[str, float] | None:
        """The team's released figures: those stored with its latest scored upload in this phase."""
        released: dict[str, float] | None = session.scalar(
            select(Submission.released)
            .where(
                Submission.submitter_id == submitter_id,
                Submission.status == "scored",
                Submission.gold_sha256 == self.phase_key,
            )
            .order_by(Submission.id.desc())
            .limit(1)
        )
        return released

    def get(self, public_id: str) -> tuple[Submission, str] | None:
        """A submission (by its public id) and its submitter's name."""
        with self.db.read() as session:
            row = session.execute(
                select(Submission, Submitter.name).join(Submitter).where(Submission.public_id == public_id)
            ).first()
        return (row[0], row[1]) if row else None
