"""Access-log hygiene: the server's access log records method, path and status, never a query string
nor a token-shaped path segment.

A query string can carry what must not be written down (a token pasted into a URL, a claim someone
checks); the path alone says what was asked for. A path segment can carry a token too
(``/api/submissions/<token>``): such a request is refused (``app.HeadersMiddleware``), and its segment is
replaced here, by the same rule (:func:`~sciverify.serving.auth.looks_like_token`). uvicorn's access
logger passes the full target as the third argument of its record; the filter rewrites it.
"""

from __future__ import annotations

import logging
from urllib.parse import unquote

from sciverify.serving.auth import looks_like_token

__all__ = ["ACCESS_LOGGER", "RedactQuery", "install_access_log_redaction", "redact_target"]

ACCESS_LOGGER = "uvicorn.access"


def redact_target(target: str) -> str:
    """``/path?anything`` -> ``/path?<redacted>``, and every token-shaped segment of the path ->
    ``<redacted>``; a target without either is unchanged."""
    path, sep, _ = target.partition("?")
    path = "/".join("<redacted>" if looks_like_token(unquote(part)) else part for part in path.split("/"))
    return f"{path}?<redacted>" if sep else path


class RedactQuery(logging.Filter):
    """Rewrite uvicorn access records (``client, method, target, http_version, status``) in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_target(args[2]), *args[3:])
        return True


def install_access_log_redaction() -> None:
    """Attach the filter to the access logger (idempotent); call after uvicorn configured logging."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())
