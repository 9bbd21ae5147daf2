"""Every error leaves the server as small JSON: ``{"error": code, "message": text}``; never a traceback.

Expected failures raise :class:`ApiError` (or a Starlette ``HTTPException``); validation errors are
reduced to location + message (the offending input is not echoed back); anything else is logged with
its traceback on the server and answered with a generic 500.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

__all__ = ["ApiError", "install_error_handlers"]

log = logging.getLogger("sciverify.serving")

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "rate_limited",
    503: "unavailable",
}


class ApiError(Exception):
    """An expected failure with its HTTP status, a stable code and a message meant for the client."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.extra = extra or {}


def _json(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **extra}, status_code=status, headers=headers)


#: The detail FastAPI gives a body its parser raised on (anything but a JSON syntax error).
_FASTAPI_PARSE_ERROR = "There was an error parsing the body"

#: Location parts that name a member of a union type, not a field (``id: int | str`` -> ``id.int``).
_UNION_TAGS = frozenset({"int", "str", "float", "bool", "list", "dict", "none"})


def _location(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [
        str(p)
        for p in loc
        if p not in ("body", "query", "path") and str(p) not in _UNION_TAGS and "[" not in str(p)
    ]
    return ".".join(parts) or "body"


def _log_gone(request: Request) -> None:
    """One line, no traceback: a client that hangs up mid-request is routine, not a server error."""
    from sciverify.serving.logs import redact_target

    log.info(
        "client went away during %s %s; request dropped", request.method, redact_target(request.url.path)
    )


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return _json(exc.status, exc.code, exc.message, exc.headers, **exc.extra)

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, _exc: ClientDisconnect) -> Response:
        _log_gone(request)
        return Response(status_code=400)  # nobody reads it: the client has gone

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> Response:
        if isinstance(exc.__cause__, ClientDisconnect):  # FastAPI wraps a body read cut short as a 400
            _log_gone(request)
            return Response(status_code=400)
        if isinstance(exc.__cause__, UnicodeDecodeError):
            # FastAPI reports a JSON body that is not UTF-8 as a 400 parse error: it is a text rule.
            return _json(
                422,
                "invalid_request",
                f"body: text is not valid UTF-8 (byte {exc.__cause__.start}: a lone surrogate or a "
                "broken byte sequence); send UTF-8 text",
            )
        if exc.status_code == 400 and exc.detail == _FASTAPI_PARSE_ERROR:
            # FastAPI answers a body its parser gives up on (JSON nested deeper than the interpreter's
            # recursion limit, say) with 400; it is a body that does not parse, like any other: 422.
            deep = isinstance(exc.__cause__, RecursionError)
            why = "nested too deeply to parse" if deep else "the body could not be parsed"
            return _json(422, "invalid_request", f"body: not valid JSON ({why})")
        code = _CODES.get(exc.status_code, "error")
        detail = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return _json(exc.status_code, code, detail, dict(exc.headers) if exc.headers else None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"field": _location(e.get("loc", ())), "message": str(e.get("msg", "invalid"))}
            for e in exc.errors()[:20]
        ]
        # Our own checks (value errors, e.g. a lone surrogate) say more than "not an integer" for a union.
        errors = exc.errors()[:20]
        ours = [d for d, e in zip(details, errors, strict=True) if e.get("type") == "value_error"]
        first = (ours or details or [{"field": "body", "message": "invalid"}])[0]
        return _json(422, "invalid_request", f"{first['field']}: {first['message']}", details=details)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        from sciverify.serving.logs import redact_target

        log.error("unhandled error on %s %s", request.method, redact_target(request.url.path), exc_info=exc)
        return _json(500, "internal_error", "internal server error; the details are in the server log")
