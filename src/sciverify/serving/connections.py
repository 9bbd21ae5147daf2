"""Every connection bounded in time and in number, below the app: uvicorn's HTTP/1.1 protocol with a
request-head deadline, an idle deadline and a cap on open connections per client address.

uvicorn arms its keep-alive timer only after a response and cancels it on any byte, so a connection that
never completes a request head (sends nothing, or trickles header bytes) is never closed by it, and the
app cannot see such a connection at all: no request exists yet. This protocol closes it instead:

- a request head (request line and headers) must be complete within ``header_timeout`` seconds of the
  connection opening, or, on a kept-alive connection, of the head's first byte;
- a connection waiting for its next request with nothing sent is closed after ``keep_alive`` seconds;
- a client address holding ``per_client`` connections open gets ``503`` with ``Retry-After`` on its next
  one, which is closed at once;
- a response is written into a bounded kernel send buffer (``send_buffer`` bytes), and a client that
  reads none of it for ``write_timeout`` seconds has its connection dropped with a reset, which frees
  what the kernel still holds for it. Without this a client that never read kept about 1.7 MB per
  socket in the kernel (the Swagger bundle fitted whole in loopback's autotuned buffers), and after the
  server closed the socket that memory stayed, outside the per-address count. Any close by a deadline
  with bytes still unsent is such a reset too.

Every refusal and deadline close is counted and logged, rate-limited, by
:class:`~sciverify.serving.guards.RefusalLog`.

Once a head is complete the request belongs to the app, whose body limits (``serving.limits``) bound
the body. Behind a reverse proxy every client has the proxy's address: raise the cap there (or set it
to 0) and let the proxy bound its clients.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from sciverify.serving.guards import RefusalLog

__all__ = ["ConnectionLimits", "bounded_protocol"]


@dataclass(frozen=True)
class ConnectionLimits:
    """Seconds for a request head and for an idle connection (None: no head deadline), and the
    connections one address may hold open (None: no cap)."""

    header_timeout: float | None
    keep_alive: float
    per_client: int | None
    #: Bytes of kernel send buffer per connection (None: the system's autotuned default).
    send_buffer: int | None = None
    #: Seconds a response may wait for its client to read before the connection is dropped (None: never).
    write_timeout: float | None = None


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
    refusals: ClassVar[RefusalLog | None]

    _timer: asyncio.TimerHandle | None = None
    _write_timer: asyncio.TimerHandle | None = None
    _head_due: bool = False
    _counted: bool = False
    _peer: str = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._peer = self.client[0] if self.client else ""
        cap = self.limits.per_client
        if cap is not None and self.open_per_client[self._peer] >= cap:
            self._note("connection_cap")
            transport.write(_refusal(cap))
            transport.close()
            return
        if self.limits.send_buffer is not None:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.limits.send_buffer)
        self.open_per_client[self._peer] += 1
        self._counted = True
        self._arm_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self._cancel_write()
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

    def pause_writing(self) -> None:
        """The transport's buffer is full: the client is not reading. Give it ``write_timeout``."""
        super().pause_writing()
        if self.limits.write_timeout is not None and self._write_timer is None:
            self._write_timer = self.loop.call_later(self.limits.write_timeout, self._write_expired)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel_write()

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
        head = self._head_due
        self._timer = None
        self._head_due = False
        if self._between_requests() and not self.transport.is_closing():
            self._note("head_deadline" if head else "idle_deadline")
            self._close_now()

    def _cancel_write(self) -> None:
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _write_expired(self) -> None:
        self._write_timer = None
        if not self.transport.is_closing() or self.transport.get_write_buffer_size():
            self._note("write_deadline")
            self._drop()

    def _close_now(self) -> None:
        """Close; with bytes still unsent (the client is not reading), drop instead, so that neither
        asyncio's buffer nor the kernel's keeps them after the close."""
        if self.transport.get_write_buffer_size() or _unsent(self.transport):
            self._drop()
        else:
            self.transport.close()

    def _drop(self) -> None:
        """Reset the connection: a zero linger makes the kernel discard its send buffer at once."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.transport.abort()

    def _note(self, kind: str) -> None:
        if self.refusals is not None:
            self.refusals.note(kind, self._peer)


def _unsent(transport: asyncio.Transport) -> int:
    """Bytes the kernel still holds unsent for this socket (Linux's SIOCOUTQ; 0 where unknown)."""
    import fcntl
    import termios

    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
    except (OSError, ValueError):
        return 0
    return int(struct.unpack("i", raw)[0])


def bounded_protocol(limits: ConnectionLimits, refusals: RefusalLog | None = None) -> type[asyncio.Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` holding ``limits``, its own per-address counts
    (one class per server, so two servers in one process do not share counts) and the app's
    :class:`~sciverify.serving.guards.RefusalLog`."""
    namespace: dict[str, Any] = {"limits": limits, "open_per_client": Counter(), "refusals": refusals}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), namespace)
