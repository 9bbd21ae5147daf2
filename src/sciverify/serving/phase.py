"""A leaderboard phase: open while teams upload, closed by the operator, then its private ranking.

While a phase is open the private part's figures are stored with every upload and served to nobody.
``sciverify leaderboard close`` sets ``closed_at`` in the database; a running server reads it on each
upload and page, refuses further uploads and publishes the final ranking: one entry per team, its
*chosen* upload (``POST /api/submissions/{id}/choose``) or, if it chose none, the upload its public
standing rests on (the one that set its current release; before any release, its best public score).
Picking each team's best upload *by private score* would reward the team that uploaded most, which is
the overfitting the private part exists to measure, so the private figures never choose.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from sciverify.errors import InputError
from sciverify.serving.board_view import competition_ranks
from sciverify.serving.db import Database
from sciverify.serving.tables import Phase, Submission, Submitter, utcnow

if TYPE_CHECKING:
    from sciverify.serving.leaderboard import Leaderboard

__all__ = ["choose_submission", "close_phase", "final_entries", "open_phase", "phase_closed_at"]


def open_phase(db: Database, key: str) -> None:
    """Record that a server starts on phase ``key`` (a restart keeps its open or closed state)."""
    with db.write() as session, session.begin():
        phase = session.scalar(select(Phase).where(Phase.key == key))
        if phase is None:
            now = utcnow()
            session.add(Phase(key=key, opened_at=now, started_at=now))
        else:
            phase.started_at = utcnow()


def phase_closed_at(db: Database, key: str) -> datetime | None:
    """When the phase was closed, or None while it is open."""
    with db.read() as session:
        return session.scalar(select(Phase.closed_at).where(Phase.key == key))


def close_phase(db: Database) -> dict[str, Any]:
    """Close the open phase a server started on most recently; what was closed, for the operator.

    Raises:
        InputError: no phase is open.
    """
    with db.write() as session, session.begin():
        phase = session.scalar(
            select(Phase).where(Phase.closed_at.is_(None)).order_by(Phase.started_at.desc()).limit(1)
        )
        if phase is None:
            raise InputError("no open leaderboard phase in this database (start `sciverify serve` first)")
        phase.closed_at = utcnow()
        rows = session.execute(
            select(Submission.submitter_id).where(
                Submission.gold_sha256 == phase.key, Submission.status == "scored"
            )
        ).all()
        return {
            "phase": phase.key[:12],
            "opened_at": phase.opened_at.isoformat(),
            "closed_at": phase.closed_at.isoformat(),
            "scored_uploads": len(rows),
            "teams": len({r[0] for r in rows}),
        }


def choose_submission(db: Database, key: str, submitter_id: int, public_id: str) -> Submission | None:
    """Mark the team's scored upload ``public_id`` as its choice for the final ranking (and no other).

    Returns None when the team has no scored upload with that id in this phase.
    """
    with db.write() as session, session.begin():
        row = session.scalar(
            select(Submission).where(
                Submission.public_id == public_id,
                Submission.submitter_id == submitter_id,
                Submission.gold_sha256 == key,
                Submission.status == "scored",
            )
        )
        if row is None:
            return None
        session.execute(
            update(Submission)
            .where(Submission.submitter_id == submitter_id, Submission.gold_sha256 == key)
            .values(chosen=False)
        )
        row.chosen = True
        session.flush()
        return row


def _pick(rows: list[Any], rank_by: str) -> tuple[Any, str]:
    """The team's upload for the final ranking and why it was picked."""
    chosen = [r for r in rows if r.chosen]
    if chosen:
        return chosen[-1], "chosen"
    released = [r for r in rows if r.sets_release]
    if released:
        return released[-1], "released"
    best = max(rows, key=lambda r: (r.scores[rank_by]["f1"], -r.id))
    return best, "best public"


def final_entries(lb: Leaderboard) -> list[dict[str, Any]]:
    """The ranking on the private part (the whole gold when there is none), one entry per team."""
    with lb.db.read() as session:
        rows = session.execute(
            select(
                Submission.id,
                Submission.public_id,
                Submission.submitter_id,
                Submission.system,
                Submission.created_at,
                Submission.scores,
                Submission.private_scores,
                Submission.released,
                Submission.sets_release,
                Submission.chosen,
                Submitter.name,
            )
            .join(Submitter)
            .where(Submission.status == "scored", Submission.gold_sha256 == lb.phase_key)
            .order_by(Submission.id)
        ).all()
    teams: dict[int, list[Any]] = {}
    for r in rows:
        teams.setdefault(r.submitter_id, []).append(r)
    picked = []
    for team_rows in teams.values():
        row, why = _pick(team_rows, lb.rank_by)
        final = row.private_scores if lb.has_private else row.scores
        if final is not None:
            picked.append((row, why, final))
    picked.sort(key=lambda t: (-t[2][lb.rank_by]["f1"], -t[2]["abstract_rationalized"]["f1"], t[0].id))
    ranks = competition_ranks([t[2][lb.rank_by]["f1"] for t in picked])
    return [
        {
            "rank": rank,
            "submission_id": row.public_id,
            "submitter": row.name,
            "system": row.system,
            "created_at": row.created_at.replace(microsecond=0).isoformat(),
            "picked": why,
            "metrics": final,
            "released": row.released,
        }
        for rank, (row, why, final) in zip(ranks, picked, strict=True)
    ]
