"""The public board of a phase: every scored upload ranked by exact F1 (a public gold), or each team's
released figures (a hidden gold). Ties on the ranking F1 share a rank (standard competition ranking),
so the order of tied teams, which is upload order, is the only thing that tells them apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select

from sciverify.scoring import FAMILIES
from sciverify.serving.board_view import competition_ranks
from sciverify.serving.db import Database
from sciverify.serving.tables import Submission, Submitter

__all__ = ["Board", "exact_entries", "released_entries"]


class Board(Protocol):
    """What ranking needs of a leaderboard (:class:`sciverify.serving.leaderboard.Leaderboard`): its
    database, the phase whose uploads it ranks, the ranking metric and the paired test between two rows.
    Named here so that ranking depends on the leaderboard's shape, not on its module."""

    db: Database
    phase_key: str
    rank_by: str

    def p_value(self, top_id: int, other_id: int) -> float: ...


def _iso(value: datetime) -> str:
    return value.replace(microsecond=0).isoformat()


def exact_entries(lb: Board) -> list[dict[str, Any]]:
    """Public gold: scored submissions, best first, each with its paired test against the top entry."""
    with lb.db.read() as session:
        rows = session.execute(
            select(
                Submission.id,
                Submission.public_id,
                Submission.system,
                Submission.created_at,
                Submission.scores,
                Submitter.name,
            )
            .join(Submitter)
            .where(Submission.status == "scored", Submission.gold_sha256 == lb.phase_key)
        ).all()
    ranked = sorted(
        rows, key=lambda r: (-r.scores[lb.rank_by]["f1"], -r.scores["abstract_rationalized"]["f1"], r.id)
    )
    ranks = competition_ranks([r.scores[lb.rank_by]["f1"] for r in ranked])
    out: list[dict[str, Any]] = []
    top = ranked[0].id if ranked else None
    for rank, r in zip(ranks, ranked, strict=True):
        p = None if r.id == top else lb.p_value(top, r.id)  # type: ignore[arg-type]
        out.append(
            {
                "rank": rank,
                "submission_id": r.public_id,
                "submitter": r.name,
                "system": r.system,
                "created_at": _iso(r.created_at),
                "metrics": r.scores,
                "p_value_vs_top": p,
                "differs_from_top": None if p is None else p < 0.05,
            }
        )
    return out


def released_entries(lb: Board) -> list[dict[str, Any]]:
    """Hidden gold: each team's released F1s (from the upload that set them), best first; nothing exact."""
    with lb.db.read() as session:
        rows = session.execute(
            select(
                Submission.id,
                Submission.public_id,
                Submission.submitter_id,
                Submission.system,
                Submission.created_at,
                Submission.released,
                Submitter.name,
            )
            .join(Submitter)
            .where(
                Submission.status == "scored",
                Submission.gold_sha256 == lb.phase_key,
                Submission.sets_release.is_(True),
            )
            .order_by(Submission.id)
        ).all()
    latest = {r.submitter_id: r for r in rows}  # the last release of each team is its current one
    ranked = sorted(
        latest.values(), key=lambda r: (-r.released[lb.rank_by], -r.released["abstract_rationalized"], r.id)
    )
    ranks = competition_ranks([r.released[lb.rank_by] for r in ranked])
    return [
        {
            "rank": rank,
            "submission_id": r.public_id,
            "submitter": r.name,
            "system": r.system,
            "created_at": _iso(r.created_at),
            "metrics": {family: {"f1": r.released[family]} for family in FAMILIES},
            "p_value_vs_top": None,
            "differs_from_top": None,
        }
        for rank, r in zip(ranks, ranked, strict=True)
    ]
