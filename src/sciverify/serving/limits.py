"""Request-body size limits enforced before any route runs.

A declared ``Content-Length`` above the limit is refused at once; a body sent without one (chunked) is
counted as it streams and refused as soon as it crosses the limit, so a client can never make the
server buffer more than the limit. Upload routes get a larger limit than JSON routes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from starlette.exceptions import HTTPException

__all__ = ["BodyLimitMiddleware", "BodyTooLarge"]

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyTooLarge(HTTPException):
    """Raised inside ``receive`` when a streamed body crosses its limit.

    An ``HTTPException`` so that body parsers re-raise it unchanged instead of wrapping it as a 400.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than the limit of {limit} bytes")
        self.limit = limit


def _too_large_body(limit: int) -> bytes:
    return orjson.dumps(
        {"error": "payload_too_large", "message": f"request body is larger than the limit of {limit} bytes"}
    )


class BodyLimitMiddleware:
    """Pure ASGI middleware: ``limit_for(path)`` gives the byte limit for each request path."""

    def __init__(self, app: Any, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _reply(send, 400, b'{"error":"bad_request","message":"invalid Content-Length"}')
                    return
                if declared > limit:
                    await _reply(send, 413, _too_large_body(limit))
                    return
        seen = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal seen
            message: Message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await _reply(send, 413, _too_large_body(limit))


async def _reply(send: Callable[..., Any], status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
