"""A leaderboard phase: open while teams upload, closed by the operator, then its private ranking.

While a phase is open the private part's figures are stored with every upload and served to nobody.
``sciverify leaderboard close`` sets ``closed_at`` in the database; a running server reads it on each
upload and page, refuses further uploads and publishes the final ranking: one entry per team, its
*chosen* upload (``POST /api/submissions/{id}/choose``) or, if it chose none, the upload its public
standing rests on (the one that set its current release; before any release, its best public score).
Picking each team's best upload *by private score* would reward the team that uploaded most, which is
the overfitting the private part exists to measure, so the private figures never choose.

Any published function of per-team private scores can be probed by a crowd. Rank groups are a threshold
(the paired bootstrap separates a team from its group's first team at about four claims, not at three),
and thresholds can be straddled: thirty-one tokens, each uploading a good file with one private claim
labelled one way and three certainly-wrong claims, read the probed label from which group each lands in.
No margin or grid changes that; it only moves the threshold. So the close does not pretend to keep the
private part secret: it *publishes* it (:func:`published_gold`, ``GET /api/leaderboard/final/gold``, as
competitions release their test labels) and marks it *spent*, and a later phase whose final ranking would
use any spent claim is refused at start (:func:`refuse_spent`). Probing the ranking after the close
therefore yields nothing that is not published anyway, and what is published can never rank anyone
again. The ranking itself still shows rank groups with coarse figures: they say which differences are
significant, not how to read the gold.

Closing records the claims the ranking was computed on with the phase (``phases.private_ids``,
``private_spent_at``, ``spent_digests``) and beside the gold (:mod:`sciverify.serving.spent`): no later
phase, on this database or another, may score on any of them.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from sciverify.errors import InputError
from sciverify.serving.db import Database
from sciverify.serving.tables import Phase, Submission, Submitter, iso_utc, utcnow

if TYPE_CHECKING:
    from sciverify.serving.leaderboard import Leaderboard

__all__ = [
    "FINAL_GRID",
    "choose_submission",
    "close_phase",
    "final_entries",
    "open_phase",
    "phase_closed_at",
    "published_gold",
    "rank_groups",
    "refuse_spent",
]

#: Figures of the final ranking are multiples of this step, rounded down.
FINAL_GRID = 0.05


def refuse_spent(lb: Leaderboard, *, reuse: bool = False) -> None:
    """Refuse to start ``lb``'s phase when any claim it scores was published by an earlier close, on
    this database or as recorded beside the gold (:func:`sciverify.serving.spent.check_spent`, where the
    rule and the deliberate reuse are explained). A restart of the closed phase itself is allowed.

    Raises:
        ConfigError: one line naming the spent phase, the count and where it is recorded.
    """
    from sciverify.serving.spent import check_spent, claim_digests

    if lb.gold is None:
        return
    check_spent(lb.db, lb.phase_key, lb.gold, claim_digests(lb.gold), reuse=reuse)


def published_gold(lb: Leaderboard) -> bytes:
    """The gold lines of the claims the final ranking is computed on (``lb.final_ids``), as read: what
    the close publishes. Call only once the phase is closed; these claims are then spent."""
    import json

    assert lb.gold is not None
    ids = lb.final_ids
    out = []
    for line in lb.gold.read_text(encoding="utf-8").splitlines():
        if line.strip() and str(json.loads(line)["id"]) in ids:
            out.append(line + "\n")
    return "".join(out).encode("utf-8")


def open_phase(
    db: Database,
    key: str,
    private_ids: frozenset[str] = frozenset(),
    gold: Path | None = None,
) -> None:
    """Record that a server starts on phase ``key`` (a restart keeps its open or closed state), with the
    claim ids its final ranking will be computed on, the gold file, and those claims' digests (what the
    close will record as spent, here and beside the gold)."""
    digests = None
    if gold is not None and private_ids:
        from sciverify.serving.spent import claim_digests

        digests = {i: d for i, d in claim_digests(gold).items() if i in private_ids}
    where = str(gold.resolve()) if gold is not None else None
    with db.write() as session, session.begin():
        phase = session.scalar(select(Phase).where(Phase.key == key))
        if phase is None:
            now = utcnow()
            ids = sorted(private_ids) or None
            session.add(
                Phase(
                    key=key, opened_at=now, started_at=now, private_ids=ids, gold_path=where,
                    spent_digests=digests,
                )
            )  # fmt: skip
        else:
            phase.started_at = utcnow()
            if where is not None:
                phase.gold_path = where
            if phase.spent_digests is None and phase.closed_at is None:
                phase.spent_digests = digests


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
        if phase.private_ids:
            phase.private_spent_at = phase.closed_at
        rows = session.execute(
            select(Submission.submitter_id).where(
                Submission.gold_sha256 == phase.key, Submission.status == "scored"
            )
        ).all()
        closed = {
            "phase": phase.key[:12],
            "opened_at": iso_utc(phase.opened_at),
            "closed_at": iso_utc(phase.closed_at),
            "scored_uploads": len(rows),
            "teams": len({r[0] for r in rows}),
            "private_claims_spent": len(phase.private_ids or ()),
        }
        key, gold, digests, when = phase.key, phase.gold_path, phase.spent_digests, phase.closed_at
    if digests:
        closed["spent_record"] = _record_beside_gold(key, gold, digests, when)
    return closed


def _record_beside_gold(key: str, gold: str | None, digests: dict[str, str], when: datetime) -> str:
    """Write the spent record beside the phase's gold; what happened, for the operator. The close stands
    either way: the database holds the record too."""
    from sciverify.serving.spent import write_spent_record

    if gold is None:
        return "not written: the phase's gold file is unknown (recorded in this database only)"
    try:
        return str(write_spent_record(Path(gold), key, when, digests))
    except OSError as exc:
        return (
            f"not written beside {gold} ({exc.strerror or exc}): recorded in this database only; copy the "
            "record there by hand before serving this gold on another database"
        )


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


def rank_groups(counts: list[Any], rank_by: str, n_boot: int, seed: int) -> list[int]:
    """Group index (0, 1, ...) of each team, given count matrices sorted best first by ``rank_by`` F1.

    A team opens a new group when the paired bootstrap separates it from the first team of the current
    group (the 95% interval of that team's ranking F1 minus this one's lies above 0).
    """
    import numpy as np

    from sciverify.scoring import paired_bootstrap_counts

    groups: list[int] = []
    leader = 0
    for i, matrix in enumerate(counts):
        if i and len(counts[leader]):
            paired = paired_bootstrap_counts(
                np.asarray(counts[leader]), np.asarray(matrix), n_boot=n_boot, seed=seed
            )
            if paired.stats[rank_by]["f1"].low > 0:
                leader = i
        groups.append(groups[-1] + (leader == i) if i else 0)
    return groups


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def final_entries(lb: Leaderboard) -> list[dict[str, Any]]:
    """The ranking on the private part (the whole gold when there is none), one entry per team, in
    rank groups with one coarse figure per group (see the module docstring); nothing exact."""
    from sciverify.scoring import FAMILIES
    from sciverify.serving.release import round_to_grid

    with lb.db.read() as session:
        rows = session.execute(
            select(
                Submission.id,
                Submission.public_id,
                Submission.submitter_id,
                Submission.system,
                Submission.created_at,
                Submission.scores,
                Submission.counts,
                Submission.private_scores,
                Submission.private_counts,
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
        counts = row.private_counts if lb.has_private else row.counts
        if final is not None and counts is not None:
            picked.append((row, why, final, counts))
    picked.sort(key=lambda t: (-t[2][lb.rank_by]["f1"], -t[2]["abstract_rationalized"]["f1"], t[0].id))
    key = (lb.phase_key, tuple(t[0].id for t in picked))
    groups = lb.cached_groups(
        key, lambda: rank_groups([t[3] for t in picked], lb.rank_by, lb.n_boot, lb.seed)
    )
    members: dict[int, list[Any]] = {}
    for group, item in zip(groups, picked, strict=True):
        members.setdefault(group, []).append(item)
    out: list[dict[str, Any]] = []
    for group in sorted(members):
        items = sorted(members[group], key=lambda t: (t[0].name.casefold(), t[0].name, t[0].public_id))
        figures = {
            family: round_to_grid(_median([t[2][family]["f1"] for t in items]), FINAL_GRID)
            for family in FAMILIES
        }
        rank = len(out) + 1
        for row, why, _, _ in items:
            out.append(
                {
                    "rank": rank,
                    "group": group + 1,
                    "submission_id": row.public_id,
                    "submitter": row.name,
                    "system": row.system,
                    "created_at": row.created_at.replace(microsecond=0).isoformat(),
                    "picked": why,
                    "figures": figures,
                    "released": row.released,
                }
            )
    return out
