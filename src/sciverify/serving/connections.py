"""Every connection bounded in time and in number, below the app: uvicorn's HTTP/1.1 protocol with a
request-head deadline, an idle deadline and a cap on open connections per client address.

uvicorn arms its keep-alive timer only after a response and cancels it on any byte, so a connection that
never completes a request head (sends nothing, or trickles header bytes) is never closed by it, and the
app cannot see such a connection at all: no request exists yet. This protocol closes it instead:

- a request head (request line and headers) must be complete within ``header_timeout`` seconds of the
  connection opening, or, on a kept-alive connection, of the head's first byte;
- a connection waiting for its next request with nothing sent is closed after ``keep_alive`` seconds;
- a client address holding ``per_client`` connections open gets ``503`` with ``Retry-After`` on its next
  one, which is closed at once.

Once a head is complete the request belongs to the app, whose body limits (``serving.limits``) bound
the body. Behind a reverse proxy every client has the proxy's address: raise the cap there (or set it
to 0) and let the proxy bound its clients.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ConnectionLimits", "bounded_protocol"]


@dataclass(frozen=True)
class ConnectionLimits:
    """Seconds for a request head and for an idle connection (None: no head deadline), and the
    connections one address may hold open (None: no cap)."""

    header_timeout: float | None
    keep_alive: float
    per_client: int | None


def _refusal(limit: int) -> bytes:
    body = orjson.dumps(
        {
            "error": "too_many_connections",
            "message": f"this address already has {limit} connections open, the limit; "
            "reuse or close one, or retry in 1 s",
        }
    )
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the cap of :class:`ConnectionLimits`; use the
    subclass :func:`bounded_protocol` makes, which holds one server's limits and counts."""

    limits: ClassVar[ConnectionLimits]
    open_per_client: ClassVar[Counter[str]]

    _timer: asyncio.TimerHandle | None = None
    _head_due: bool = False
    _counted: bool = False
    _peer: str = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._peer = self.client[0] if self.client else ""
        cap = self.limits.per_client
        if cap is not None and self.open_per_client[self._peer] >= cap:
            transport.write(_refusal(cap))
            transport.close()
            return
        self.open_per_client[self._peer] += 1
        self._counted = True
        self._arm_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self._counted:
            self._counted = False
            self.open_per_client[self._peer] -= 1
            if self.open_per_client[self._peer] <= 0:
                del self.open_per_client[self._peer]
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._counted and not self._head_due and self._between_requests():
            self._arm_head()  # the first byte of the next head on a kept-alive connection
        super().data_received(data)
        if not self._between_requests():
            self._cancel()  # a head is complete: the request is the app's now

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._between_requests() and not self.transport.is_closing():
            self._arm(self.limits.keep_alive, head=False)

    # -- timers -----------------------------------------------------------------------------------
    def _between_requests(self) -> bool:
        """No request head complete since the last response (or since the connection opened)."""
        return self.cycle is None or self.cycle.response_complete

    def _arm_head(self) -> None:
        if self.limits.header_timeout is None:
            self._cancel()
        else:
            self._arm(self.limits.header_timeout, head=True)

    def _arm(self, seconds: float, *, head: bool) -> None:
        self._cancel()
        self._head_due = head
        self._timer = self.loop.call_later(seconds, self._expired)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._head_due = False

    def _expired(self) -> None:
        self._timer = None
        self._head_due = False
        if self._between_requests() and not self.transport.is_closing():
            self.transport.close()


def bounded_protocol(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` holding ``limits`` and its own per-address
    counts (one class per server, so two servers in one process do not share counts)."""
    namespace: dict[str, Any] = {"limits": limits, "open_per_client": Counter()}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), namespace)
