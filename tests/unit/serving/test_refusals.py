"""Every refusal seen, and no response parked in the kernel, on a real uvicorn server with real sockets:
20 cap refusals and 12 head-deadline closes become counted log lines (one per address per interval)
and /metrics totals; shed claims are counted as such; six clients that never read their 4 MB response
leave nothing in the server's kernel once the write deadline has passed."""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serving_doubles import FakeVerifier, serve_in_thread

INTERVAL = 1.0


@pytest.fixture()
def make_server(tmp_path: Path) -> Iterator[object]:
    from contextlib import ExitStack

    from fastapi.responses import Response

    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    with ExitStack() as stack:

        def make(verifier: object | None = None, **overrides: object) -> int:
            values: dict[str, object] = {"data_dir": tmp_path / "serve", "refusal_log_interval": INTERVAL}
            values.update(overrides)
            app = create_app(Settings(**values), verifier=verifier or FakeVerifier())  # type: ignore[arg-type]

            @app.get("/big")
            async def big() -> Response:  # a large answer, as the Swagger bundle is
                return Response(b"x" * (4 * 1024 * 1024), media_type="application/octet-stream")

            return stack.enter_context(serve_in_thread(app))

        yield make


@pytest.fixture()
def guard_lines() -> Iterator[list[str]]:
    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Capture()
    logger = logging.getLogger("sciverify.serving.guards")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield lines
    logger.removeHandler(handler)


def _counts(lines: list[str], address: str) -> dict[str, int]:
    """The counts the log lines give for ``address``, added up."""
    out: dict[str, int] = {}
    for line in lines:
        if f"for {address}" in line:
            for kind, n in re.findall(r"(\w+) (\d+)", line.split(": ", 1)[1]):
                out[kind] = out.get(kind, 0) + int(n)
    return out


def _metrics(port: int) -> dict[str, int]:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    return {k: int(v) for k, v in re.findall(r'sciverify_refusals_total\{kind="(\w+)"\} (\d+)', text)}


def test_cap_refusals_and_head_deadlines_are_counted_lines(make_server, guard_lines: list[str]) -> None:
    port = make_server(header_timeout=1.0, keep_alive_timeout=30.0, connections_per_client=4)
    held = [socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0)) for _ in range(4)]
    time.sleep(0.2)
    for _ in range(20):  # the cap: 503 and closed
        extra = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
        assert extra.recv(100).startswith(b"HTTP/1.1 503")
        extra.close()
    slow = [
        socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.3", 0))
        for _ in range(4)
    ]
    for s in slow:
        s.sendall(b"GET /api/health HTTP/1.1\r\n")  # a head that never completes
    time.sleep(2.5)  # the 1 s head deadline closes the 4 held sockets of 127.0.0.2 too (they sent nothing)
    more = [
        socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.3", 0))
        for _ in range(4)
    ]
    time.sleep(2.5 + INTERVAL)  # their deadline, then the end of the address's interval
    for s in held + slow + more:
        s.close()
    cap = _counts(guard_lines, "127.0.0.2")
    head = _counts(guard_lines, "127.0.0.3")
    assert cap.get("connection_cap") == 20 and cap.get("head_deadline") == 4, guard_lines
    assert head.get("head_deadline") == 8, guard_lines
    # rate-limited: 28 refusals of 127.0.0.2 in at most a few lines, not 28
    assert sum("for 127.0.0.2" in line for line in guard_lines) <= 4, guard_lines
    totals = _metrics(port)
    assert totals["connection_cap"] == 20 and totals["head_deadline"] == 12, totals


def test_shed_claims_are_counted(make_server, guard_lines: list[str]) -> None:
    port = make_server(
        verifier=FakeVerifier(delay=2.0), verify_workers=1, verify_queue=1, verify_deadline=0.2
    )
    from concurrent.futures import ThreadPoolExecutor

    def ask(i: int) -> int:
        url = f"http://127.0.0.1:{port}/api/verify"
        return httpx.post(url, json={"claim": f"claim {i}"}, timeout=30).status_code

    with ThreadPoolExecutor(6) as pool:  # six at once against one slow worker and a 0.2 s deadline
        statuses = list(pool.map(ask, range(6)))
    assert 503 in statuses, statuses
    time.sleep(INTERVAL + 0.5)
    shed = statuses.count(503)
    assert _metrics(port)["shed_claims"] == shed
    assert _counts(guard_lines, "127.0.0.1").get("shed_claims") == shed, guard_lines


def _server_send_queue(port: int, peer: str) -> list[int]:
    """tx_queue of the server's sockets connected to ``peer`` (from /proc/net/tcp): bytes its kernel
    holds unsent or unacknowledged for each."""
    want_local = f"{port:04X}"
    want_peer = "".join(f"{int(x):02X}" for x in reversed(peer.split(".")))
    out = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, tx = fields[1], fields[2], fields[4].split(":")[0]
        if local.endswith(":" + want_local) and remote.startswith(want_peer + ":"):
            out.append(int(tx, 16))
    return out


def _six_unread(port: int, peer: str) -> list[socket.socket]:
    socks = []
    for _ in range(6):
        s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(peer, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")  # and never read
        socks.append(s)
    return socks


@pytest.mark.skipif(not Path("/proc/net/tcp").is_file(), reason="needs Linux's /proc/net/tcp")
def test_clients_that_never_read_park_nothing_past_the_write_deadline(make_server) -> None:
    """The six-socket measurement: with the system's buffers and no write deadline (as the server was)
    and with the default bounded buffer (64 KiB) and a 1 s write deadline."""
    before = make_server(send_buffer_bytes=0, write_timeout=0, keep_alive_timeout=30.0)
    socks = _six_unread(before, "127.0.0.4")
    time.sleep(3.0)
    held_before = _server_send_queue(before, "127.0.0.4")  # still held: nothing bounds it
    for s in socks:
        s.close()

    port = make_server(
        write_timeout=1.0, keep_alive_timeout=1.0, data_dir=Path("/tmp") / f"w{time.time_ns()}"
    )
    socks = _six_unread(port, "127.0.0.5")
    time.sleep(0.5)
    during = _server_send_queue(port, "127.0.0.5")
    time.sleep(2.5)  # past the 1 s write deadline, with slack
    after = _server_send_queue(port, "127.0.0.5")
    reset = 0
    for s in socks:
        s.settimeout(2)
        try:
            while s.recv(1 << 20):
                pass
        except ConnectionResetError:
            reset += 1
        s.close()
    print(
        f"server kernel send queue, 6 unread 4 MB answers: before {sum(held_before)} bytes "
        f"({max(held_before, default=0)} max per socket) after 3 s; bounded {sum(during)} bytes at 0.5 s, "
        f"{sum(after)} bytes ({len(after)} sockets) after the deadline"
    )
    assert sum(held_before) > sum(during), (held_before, during)
    assert max(during, default=0) <= 4 * 64 * 1024, during  # the bounded buffer (the kernel doubles it)
    assert sum(after) == 0, after
    assert reset == 6  # each connection was reset, not closed after a flush that never comes
    assert _metrics(port)["write_deadline"] == 6
    assert httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=10).status_code == 200
