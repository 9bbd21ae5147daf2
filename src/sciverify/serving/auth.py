"""Submitter tokens: random, shown once, stored only as a sha256 digest; revocable, optionally expiring.

A token carries 256 bits from :func:`secrets.token_urlsafe`, so a plain (unsalted) sha256 is enough:
there is nothing to brute-force, and the digest can be looked up directly by an index. The operator
controls every token: ``add_submitter(..., expires_at=...)`` gives one an end, :func:`revoke_submitter`
ends it at once, :func:`list_submitters` shows which are live. A revoked or expired token is refused
exactly like an unknown one (401).

:func:`looks_like_token` is the rule by which the server refuses credentials in URLs: not a list of
parameter names, but the shape of the value (this server's token format, or a long high-entropy string).
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from sciverify.errors import InputError
from sciverify.serving.db import Database
from sciverify.serving.tables import Submission, Submitter, as_utc, utcnow

__all__ = [
    "TOKEN_PREFIX",
    "SubmitterInfo",
    "add_submitter",
    "authenticate",
    "hash_token",
    "list_submitters",
    "looks_like_token",
    "new_token",
    "parse_expiry",
    "revoke_submitter",
]

#: Makes tokens recognisable in a secret scanner and in a mistaken paste.
TOKEN_PREFIX = "svk_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._\-]{0,99}$")


def new_token() -> str:
    """A fresh API token (prefix + 43 url-safe characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The hex sha256 digest stored in place of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


_SECRET_CHARS = re.compile(r"^[A-Za-z0-9_\-+/=.~]+$")
_DURATION = re.compile(r"^(\d{1,6})\s*([hdw])$")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def looks_like_token(value: str) -> bool:
    """Whether ``value`` has the shape of a credential: this server's token format (``svk_`` + ...), or
    at least 20 characters of a base64/hex alphabet, mixing letters and digits, with the per-character
    entropy of random text (at least 3 bits). Words, numbers, ids and sentences do not qualify."""
    text = value.strip()
    if text.lower().startswith(TOKEN_PREFIX):
        return True
    if len(text) < 20 or not _SECRET_CHARS.match(text):
        return False
    if not (any(c.isalpha() for c in text) and any(c.isdigit() for c in text)):
        return False
    counts = Counter(text)
    entropy = -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
    return entropy >= 3.0


_aware = as_utc


def parse_expiry(text: str, now: datetime | None = None) -> datetime:
    """An expiry from the operator: a duration (``12h``, ``30d``, ``2w``) from now, an ISO date (the
    token works through that day, UTC) or an ISO date-time (UTC unless it says otherwise).

    Raises:
        InputError: unreadable, or not in the future.
    """
    now = now or utcnow()
    raw = text.strip()
    duration = _DURATION.match(raw.lower())
    if duration:
        when = now + int(duration.group(1)) * _UNITS[duration.group(2)]
    else:
        try:
            parsed = datetime.fromisoformat(raw)
        except ValueError:
            raise InputError(
                f"--expires must be a duration (12h, 30d, 2w) or an ISO date or date-time, got {text!r}"
            ) from None
        if len(raw) == 10:  # a date: through the end of that day
            parsed = parsed + timedelta(days=1)
        when = _aware(parsed) or parsed
    if when <= now:
        raise InputError(f"--expires {text!r} is not in the future")
    return when


@dataclass(frozen=True)
class SubmitterInfo:
    """What the operator sees of a team (never its token)."""

    name: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    uploads: int

    def state(self, now: datetime | None = None) -> str:
        """``active``, ``expired`` or ``revoked``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or utcnow()):
            return "expired"
        return "active"


def add_submitter(db: Database, name: str, expires_at: datetime | None = None) -> str:
    """Register ``name`` and return its token; the token itself is not stored anywhere. With
    ``expires_at``, the token is refused from that time on.

    Raises:
        InputError: the name is malformed or already taken.
    """
    name = name.strip()
    if not _NAME.match(name):
        raise InputError(
            "submitter name must be 1-100 characters: letters, digits, space, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    token = new_token()
    with db.write() as session, session.begin():
        if session.scalar(select(Submitter.id).where(Submitter.name == name)) is not None:
            raise InputError(f"submitter {name!r} already exists")
        session.add(Submitter(name=name, token_hash=hash_token(token), expires_at=expires_at))
        try:
            session.flush()
        except IntegrityError:
            raise InputError(f"submitter {name!r} already exists") from None
    return token


def revoke_submitter(db: Database, name: str) -> SubmitterInfo:
    """Refuse ``name``'s token from now on (its uploads stay on the board). Revoking again keeps the
    first time.

    Raises:
        InputError: no such team.
    """
    with db.write() as session, session.begin():
        row = session.scalar(select(Submitter).where(Submitter.name == name.strip()))
        if row is None:
            raise InputError(f"no submitter {name!r} (see `sciverify leaderboard list`)")
        if row.revoked_at is None:
            row.revoked_at = utcnow()
        session.flush()
        uploads = session.scalar(select(func.count(Submission.id)).where(Submission.submitter_id == row.id))
        return _info(row, int(uploads or 0))


def _info(row: Submitter, uploads: int) -> SubmitterInfo:
    created = _aware(row.created_at)
    assert created is not None
    return SubmitterInfo(row.name, created, _aware(row.expires_at), _aware(row.revoked_at), uploads)


def list_submitters(db: Database) -> list[SubmitterInfo]:
    """Every team, oldest first, with its token's expiry and revocation and its number of uploads."""
    with db.read() as session:
        uploads = dict(
            session.execute(
                select(Submission.submitter_id, func.count(Submission.id)).group_by(Submission.submitter_id)
            ).all()
        )
        rows = session.scalars(select(Submitter).order_by(Submitter.id)).all()
        return [_info(r, int(uploads.get(r.id, 0))) for r in rows]


def authenticate(db: Database, token: str | None) -> Submitter | None:
    """The submitter owning ``token``, or None (malformed, unknown, revoked or expired)."""
    if not token or len(token) > 200:
        return None
    digest = hash_token(token.strip())
    with db.read() as session:
        row = session.scalar(select(Submitter).where(Submitter.token_hash == digest))
    if row is None or row.revoked_at is not None:
        return None
    expires = _aware(row.expires_at)
    if expires is not None and expires <= utcnow():
        return None
    return row
