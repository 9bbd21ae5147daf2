"""Connections bounded below the app, on a real uvicorn server with real sockets (loopback): slow request
heads and idle connections are closed within the documented time while another client is served, and one
address cannot hold more than its share of connections. Attackers connect from other loopback addresses
(127.0.0.2, 127.0.0.3) so that the per-address cap does not touch the client being served."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_doubles import FakeVerifier, serve_in_thread

HEAD = 1.0
IDLE = 1.0
#: Scheduling slack on a loaded machine (the server closes at the deadline; the client sees it later).
SLACK = 2.0


@pytest.fixture()
def make_server(tmp_path: Path) -> Iterator[object]:
    from contextlib import ExitStack

    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    with ExitStack() as stack:

        def make(**overrides: object) -> int:
            values: dict[str, object] = {"data_dir": tmp_path / f"serve{len(overrides)}"}
            values.update(overrides)
            app = create_app(Settings(**values), verifier=FakeVerifier())  # type: ignore[arg-type]
            return stack.enter_context(serve_in_thread(app))

        yield make


def _connect(port: int, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    sock.setblocking(False)
    return sock


def _closed(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (whatever it sent before is read and dropped)."""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def _served(port: int) -> None:
    """A normal client's round trip: health and a verification, on one kept-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/health")
    r = conn.getresponse()
    assert r.status == 200 and json.loads(r.read())["status"] == "ok"
    conn.request(
        "POST",
        "/api/verify",
        body=b'{"claim": "ALDH1 predicts outcome"}',
        headers={"content-type": "application/json"},
    )
    r = conn.getresponse()
    assert r.status == 200 and json.loads(r.read())["supporting"]
    conn.close()


def test_slow_heads_and_idle_connections_are_closed_while_others_are_served(make_server) -> None:
    port = make_server(header_timeout=HEAD, keep_alive_timeout=IDLE, connections_per_client=64)
    started = time.monotonic()
    slow = [_connect(port, "127.0.0.2") for _ in range(20)]
    for sock in slow:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    idle = [_connect(port, "127.0.0.3") for _ in range(3)]  # connect and send nothing
    kept = [_connect(port, "127.0.0.3") for _ in range(3)]  # one request, then nothing
    for sock in kept:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    kept_at = time.monotonic()
    closed_after: dict[int, float] = {}
    served = 0
    # the slow heads keep trickling a header line every 0.2 s: never silent, never complete
    while len(closed_after) < 26 and time.monotonic() - started < HEAD + IDLE + 3 * SLACK:
        for i, sock in enumerate(slow + idle + kept):
            if i in closed_after:
                continue
            if _closed(sock):
                closed_after[i] = time.monotonic() - (kept_at if i >= 23 else started)
            elif i < 20:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    closed_after[i] = time.monotonic() - started
        _served(port)
        served += 1
        time.sleep(0.2)
    for sock in slow + idle + kept:
        sock.close()
    assert len(closed_after) == 26, f"still open: {sorted(set(range(26)) - set(closed_after))}"
    assert max(closed_after[i] for i in range(20)) < HEAD + SLACK, closed_after
    assert max(closed_after[i] for i in range(20, 23)) < HEAD + SLACK, closed_after
    assert max(closed_after[i] for i in range(23, 26)) < IDLE + SLACK, closed_after
    assert min(closed_after.values()) >= min(HEAD, IDLE) - 0.1, "closed before the deadline"
    assert served >= 3
    _served(port)


def test_a_slow_head_on_a_kept_alive_connection_is_closed(make_server) -> None:
    port = make_server(header_timeout=HEAD, keep_alive_timeout=30.0)
    sock = _connect(port, "127.0.0.2")
    sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    time.sleep(0.3)
    assert not _closed(sock)  # answered and kept alive (its idle limit is 30 s)
    sock.sendall(b"GET /api/health HTTP/1.1\r\n")
    t0 = time.monotonic()
    while not _closed(sock) and time.monotonic() - t0 < HEAD + SLACK + 1:
        sock.sendall(b"X-Slow: 1\r\n")
        time.sleep(0.2)
    assert HEAD - 0.1 <= time.monotonic() - t0 < HEAD + SLACK
    sock.close()


def test_one_address_cannot_hold_more_than_its_connections(make_server) -> None:
    port = make_server(header_timeout=30.0, keep_alive_timeout=30.0, connections_per_client=4)
    held = [_connect(port, "127.0.0.2") for _ in range(4)]
    time.sleep(0.2)
    assert not any(_closed(s) for s in held)
    extra = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
    answer = b""
    while chunk := extra.recv(65536):
        answer += chunk
    extra.close()
    assert answer.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in answer.lower()
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"] == "too_many_connections"
    _served(port)  # another address is not affected
    held.pop().close()
    time.sleep(0.3)
    again = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0))
    again.request("GET", "/api/health")
    assert again.getresponse().status == 200
    again.close()
    for sock in held:
        sock.close()
