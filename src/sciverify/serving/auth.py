"""Submitter tokens: random, shown once, stored only as a sha256 digest.

A token carries 256 bits from :func:`secrets.token_urlsafe`, so a plain (unsalted) sha256 is enough:
there is nothing to brute-force, and the digest can be looked up directly by an index.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from sciverify.errors import InputError
from sciverify.serving.db import Database
from sciverify.serving.tables import Submitter

__all__ = ["TOKEN_PREFIX", "add_submitter", "authenticate", "hash_token", "new_token"]

#: Makes tokens recognisable in a secret scanner and in a mistaken paste.
TOKEN_PREFIX = "svk_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._\-]{0,99}$")


def new_token() -> str:
    """A fresh API token (prefix + 43 url-safe characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The hex sha256 digest stored in place of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def add_submitter(db: Database, name: str) -> str:
    """Register ``name`` and return its token; the token itself is not stored anywhere.

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
        session.add(Submitter(name=name, token_hash=hash_token(token)))
        try:
            session.flush()
        except IntegrityError:
            raise InputError(f"submitter {name!r} already exists") from None
    return token


def authenticate(db: Database, token: str | None) -> Submitter | None:
    """The submitter owning ``token``, or None (malformed, unknown)."""
    if not token or len(token) > 200:
        return None
    digest = hash_token(token.strip())
    with db.read() as session:
        return session.scalar(select(Submitter).where(Submitter.token_hash == digest))
