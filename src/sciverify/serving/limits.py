"""Request-body size and time limits enforced before any route runs.

A declared ``Content-Length`` above the limit is refused at once; a body sent without one (chunked) is
counted as it streams and refused as soon as it crosses the limit, so a client can never make the
server buffer more than the limit. Upload routes get a larger limit than JSON routes.

A body must also keep arriving: a wait of more than ``idle`` seconds for its next part, or more than
``total`` seconds for the whole of it, is answered ``408 request_timeout`` and the connection is closed,
so a client trickling a body (or sending headers and then nothing) holds a connection for a bounded
time. uvicorn closes idle keep-alive connections itself (``timeout_keep_alive``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import orjson
from starlette.exceptions import HTTPException

__all__ = ["BodyLimitMiddleware", "BodyTimeout", "BodyTooLarge"]

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyTooLarge(HTTPException):
    """Raised inside ``receive`` when a streamed body crosses its limit.

    An ``HTTPException`` so that body parsers re-raise it unchanged instead of wrapping it as a 400.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than the limit of {limit} bytes")
        self.limit = limit


class BodyTimeout(HTTPException):
    """Raised inside ``receive`` when a body stops arriving (idle) or takes too long (total).

    An ``HTTPException`` for the same reason as :class:`BodyTooLarge`; its ``Connection: close``
    header makes uvicorn drop the connection once the 408 is sent.
    """

    def __init__(self, message: str) -> None:
        super().__init__(408, message, headers={"Connection": "close"})


def _too_large_body(limit: int) -> bytes:
    return orjson.dumps(
        {"error": "payload_too_large", "message": f"request body is larger than the limit of {limit} bytes"}
    )


class BodyLimitMiddleware:
    """Pure ASGI middleware: ``limit_for(path)`` gives the byte limit for each request path."""

    def __init__(
        self,
        app: Any,
        limit_for: Callable[[str], int],
        idle: float | None = None,
        total: float | None = None,
    ) -> None:
        self.app = app
        self.limit_for = limit_for
        self.idle = idle
        self.total = total

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
        deadline = None if self.total is None else time.monotonic() + self.total
        done = False

        async def timed_receive() -> Message:
            """``receive`` within the idle and total limits, while the body is still arriving."""
            if done:
                message: Message = await receive()  # after the body: only a disconnect can come
                return message
            wait = self.idle
            if deadline is not None:
                left = deadline - time.monotonic()
                wait = left if wait is None else min(wait, left)
            if wait is None:
                message = await receive()
                return message
            try:
                message = await asyncio.wait_for(receive(), timeout=max(wait, 0.0))
            except TimeoutError:
                limits = [f"{self.idle:g} s between parts" if self.idle is not None else ""]
                limits.append(f"{self.total:g} s in all" if self.total is not None else "")
                allowed = " and ".join(x for x in limits if x)
                raise BodyTimeout(
                    f"the request body did not arrive in time (at most {allowed}); send it without pauses"
                ) from None
            return message

        async def counted_receive() -> Message:
            nonlocal seen, done
            message: Message = await timed_receive()
            if message["type"] == "http.request":
                done = not message.get("more_body", False)
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
