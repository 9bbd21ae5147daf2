"""Access-log hygiene: every access-log line passes through :func:`redact`, so no log line keeps a
token, whatever surrounds it, however it is encoded and however it is cut up.

Why a rule of its own, and not :func:`~sciverify.serving.auth.looks_like_token` per path segment: that
rule looks at a whole segment, so a token with other characters around it (``/x,<token>``,
``/%22<token>%22``, ``/Bearer%20<token>``, ``/%ff<token>``) or cut over three segments (each shorter
than a secret) was written down whole or in large pieces. A log line cannot tell a secret from an
ordinary word by its shape alone, but it can tell an ordinary word by knowing the words: the server's
own paths are a small vocabulary. So the rule here is the other way round. The text is percent-decoded
(repeatedly, for ``%2541``), cut into *runs* of the characters a token is made of (letters, digits,
``-`` and ``_``), and every run longer than :data:`MAX_KEPT` characters is written as ``<redacted>``
unless each of its ``-``/``_`` parts is a word of the server's paths (:data:`PATH_WORDS`). Long numbers
are redacted too: a hex secret cut into pieces yields runs of digits.
No piece of a token longer than :data:`MAX_KEPT` characters can therefore reach a line, and the paths an
operator reads (``/api/leaderboard/final``, ``/static/swagger-ui/swagger-ui-bundle.js``,
``/api/abstracts/4983``) are kept whole. Opaque submission ids (12 random characters) and doc ids of
more than 8 digits are redacted too: they cannot be told from a piece of a token, and the operator finds
uploads with ``leaderboard list`` and ``inspect``. The result is percent-encoded again for display, so
a decoded control character or line break cannot forge a log line.

A query string is never logged (it can carry a claim someone checks): ``/path?anything`` is written
``/path?<redacted>``.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import quote, unquote

__all__ = [
    "ACCESS_LOGGER",
    "MAX_KEPT",
    "PATH_WORDS",
    "RedactQuery",
    "install_access_log_redaction",
    "redact",
    "redact_target",
    "token_runs",
]

ACCESS_LOGGER = "uvicorn.access"

#: Longest run of token characters written as it stands when it is not made of known words.
MAX_KEPT = 8
#: The words of the server's own paths (routes, mounts, static files), lower case. A run longer than
#: :data:`MAX_KEPT` is kept only when each of its ``-``/``_`` parts is one of these; the
#: tests check that every route and static file of the app is logged whole.
PATH_WORDS = frozenset(
    {
        "abstracts", "api", "app", "bundle", "choose", "css", "csv", "docs", "export", "favicon", "final",
        "gold", "health", "html", "ico", "initializer", "js", "json", "leaderboard", "license", "map",
        "oauth2", "openapi", "png", "predict", "preset", "redirect", "redoc", "report", "standalone",
        "static", "submissions", "submit", "swagger", "ui", "verify", "version", "16x16", "32x32",
        "es", "core", "index",
    }
)  # fmt: skip

_RUN = re.compile(r"[A-Za-z0-9_\-]+")
_PARTS = re.compile(r"[-_]")
_DECODE_ROUNDS = 4
#: Characters written as they are after redaction (everything else is percent-encoded).
_SHOWN = "/:@!$&'()*+,;=~.<>[]"
REDACTED = "<redacted>"


def _harmless(run: str) -> bool:
    """A run of token characters that may be written down: short, or made only of path words
    (``swagger-ui-bundle``, ``favicon-32x32``)."""
    if len(run) <= MAX_KEPT:
        return True
    return all(part.lower() in PATH_WORDS for part in _PARTS.split(run) if part)


def _decoded(text: str) -> str:
    """``text`` percent-decoded until it no longer changes (at most a few rounds); bytes that are not
    UTF-8 become U+FFFD, which separates runs like any other character outside a token."""
    for _ in range(_DECODE_ROUNDS):
        plain = unquote(text, errors="replace")
        if plain == text:
            break
        text = plain
    return text


def token_runs(text: str) -> list[str]:
    """The runs of token characters in ``text`` once percent-decoded: where a token can stand inside
    other characters (``x,<token>``, ``"<token>"``). The URL refusal examines each of them."""
    return _RUN.findall(_decoded(text))


def redact(text: str) -> str:
    """``text`` as it may be logged: decoded, every run of token characters longer than
    :data:`MAX_KEPT` that is not made of path words replaced by ``<redacted>``, and
    percent-encoded again for display. The one rule every access-log field passes through."""
    plain = _RUN.sub(lambda m: m.group(0) if _harmless(m.group(0)) else REDACTED, _decoded(text))
    return quote(plain, safe=_SHOWN)


def redact_target(target: str) -> str:
    """A request target as logged: the path through :func:`redact`, the query string (if any) as
    ``<redacted>``: ``/path?anything`` -> ``/path?<redacted>``."""
    path, sep, _ = target.partition("?")
    return f"{redact(path)}?{REDACTED}" if sep else redact(path)


class RedactQuery(logging.Filter):
    """Rewrite uvicorn access records (``client, method, target, http_version, status``) in place:
    the target through :func:`redact_target`, every other text field through :func:`redact` (an
    unusual method or address is client-chosen text too). The tuple keeps its shape, which uvicorn's
    access formatter unpacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(
                (redact_target(a) if i == 2 else redact(a)) if isinstance(a, str) else a
                for i, a in enumerate(args)
            )
        return True


def install_access_log_redaction() -> None:
    """Attach the filter to the access logger (idempotent); call after uvicorn configured logging."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())
