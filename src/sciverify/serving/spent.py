"""Spent claims: once a close publishes a claim's gold, no later phase may score on it, on this database
or on any other.

Why two records. The close has always recorded the published claims in the database
(``phases.private_ids``, ``private_spent_at``); but a server started with a fresh data directory, or
another ``--db``, never saw that database, and the same gold opened a new phase. So the close also
writes a *spent record beside the gold*, ``<gold>.spent.json``, which every server started with that
gold reads, whatever its database. Both records name each published claim by its id and the sha256 of
its gold line (:func:`claim_digests`), and a claim is spent when a claim with the same content was
published: a renamed copy of the gold, or the same claims renumbered in another file, is refused on a
database that saw the close; the same file (with its record beside it) is refused on any database.

What is checked is every claim the new phase scores: the private part, and also the public part and a
public (``--gold-public``) gold. A published claim is known to everyone, so it cannot rank anybody,
privately or publicly: its figure measures who downloaded the gold.

Deliberate reuse (a practice gold tried again, a walk-through rehearsed) is the operator's explicit
choice: ``sciverify serve --reuse-spent-gold`` (``SCIVERIFY_REUSE_SPENT_GOLD=1``) starts anyway and logs
one warning line with the count; deleting the record beside the gold does *not* help on a database that
saw the close. Restarting the closed phase itself on its own database is always allowed: it serves the
final ranking again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import select

from sciverify.errors import ConfigError
from sciverify.serving.db import Database
from sciverify.serving.tables import Phase, iso_utc

__all__ = ["SPENT_SUFFIX", "SpentClash", "check_spent", "claim_digests", "spent_path", "write_spent_record"]

log = logging.getLogger("sciverify.serving")

#: The spent record's name beside its gold: ``test_gold.jsonl`` -> ``test_gold.jsonl.spent.json``.
SPENT_SUFFIX = ".spent.json"


def spent_path(gold: Path) -> Path:
    """Where the spent record of ``gold`` lives: beside it."""
    return gold.with_name(gold.name + SPENT_SUFFIX)


def claim_digests(gold: Path) -> dict[str, str]:
    """Claim id -> sha256 of the claim's gold line, re-serialised with sorted keys (so spacing and key
    order do not matter, and any change to the claim's text or evidence does)."""
    out: dict[str, str] = {}
    for line in gold.read_bytes().splitlines():
        if line.strip():
            obj = json.loads(line)
            canonical = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
            out[str(obj["id"])] = hashlib.sha256(canonical).hexdigest()
    return out


@dataclass(frozen=True)
class SpentClash:
    """Claims of a new phase published by an earlier close: how many, which phase, where it is recorded."""

    shared: frozenset[str]
    phase: str
    closed_at: str
    where: str


def _read_record(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        phases = data["phases"]
        assert isinstance(phases, list)
        return phases
    except (OSError, ValueError, KeyError, AssertionError, TypeError):
        raise ConfigError(
            f"the spent record {path} is unreadable; it says which claims of this gold were published: "
            "restore it, or start with --reuse-spent-gold to score on them knowingly"
        ) from None


def write_spent_record(gold: Path, phase: str, closed_at: datetime, digests: dict[str, str]) -> Path:
    """Add one closed phase's published claims to the record beside ``gold`` (written atomically).

    Raises:
        OSError: the record cannot be written (the gold's directory is read-only, the gold is gone).
    """
    from sciverify.data.io import write_text_atomic

    path = spent_path(gold)
    phases = [p for p in _read_record(path) if p.get("phase") != phase]
    phases.append({"phase": phase, "closed_at": iso_utc(closed_at), "claims": dict(sorted(digests.items()))})
    text = json.dumps({"format": 1, "gold": gold.name, "phases": phases}, indent=1) + "\n"
    write_text_atomic(path, text)
    return path


def _shared(new: dict[str, str], spent_ids: set[str], spent_digests: set[str]) -> frozenset[str]:
    return frozenset(i for i, d in new.items() if d in spent_digests or i in spent_ids)


def check_spent(
    db: Database, key: str, gold: Path, digests: dict[str, str], *, reuse: bool = False
) -> SpentClash | None:
    """Refuse to start phase ``key`` when any claim it scores (``digests``: every claim of the gold,
    public and private parts alike) was published by an earlier close, as recorded in this database
    or beside the gold. With ``reuse`` the clash is logged and returned instead of raised.

    The phase itself on its own database (same ``key``, closed there) is exempt: a restart serves its
    final ranking again. The same key on a database that never saw the close is a new phase.

    Raises:
        ConfigError: one line naming the count, the spent phase and where it is recorded.
    """
    clash = _clash(db, key, gold, digests)
    if clash is None:
        return None
    if reuse:
        log.warning(
            "reusing a spent gold: %d of its %d claims were published when phase %s closed (%s); "
            "its scores rank nobody",
            len(clash.shared), len(digests), clash.phase, clash.closed_at,
        )  # fmt: skip
        return clash
    raise ConfigError(
        f"{len(clash.shared)} of this gold's {len(digests)} claims were published when phase {clash.phase} "
        f"closed ({clash.closed_at}; recorded {clash.where}): they are spent, and no later phase may score "
        "on them. Remove them from the gold (their ids are in the record), or start with "
        "--reuse-spent-gold to practise on it knowingly"
    )


def _clash(db: Database, key: str, gold: Path, digests: dict[str, str]) -> SpentClash | None:
    with db.read() as session:
        rows = session.execute(
            select(Phase.key, Phase.private_ids, Phase.spent_digests, Phase.private_spent_at).where(
                Phase.private_spent_at.is_not(None)
            )
        ).all()
    closed_here = any(row.key == key for row in rows)
    for other, ids, spent, when in rows:
        if other == key:
            continue
        # phases closed before migration 0005 recorded ids only
        shared = _shared(digests, set() if spent else set(ids or ()), set((spent or {}).values()))
        if shared:
            return SpentClash(shared, other[:12], f"{when:%Y-%m-%d}", "in this database")
    record = spent_path(gold)
    for entry in _read_record(record):
        if entry.get("phase") == key and closed_here:
            continue
        shared = _shared(digests, set(), set(dict(entry.get("claims") or {}).values()))
        if shared:
            phase, closed = str(entry.get("phase", ""))[:12], str(entry.get("closed_at", ""))[:10]
            return SpentClash(shared, phase, closed, f"in {record}")
    return None
