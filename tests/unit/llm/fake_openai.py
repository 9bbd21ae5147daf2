"""A small OpenAI-compatible server on 127.0.0.1 that misbehaves on request, for the client's fault tests.

It is a real HTTP server (a thread in the test process), so connection resets, half-sent bodies and slow
answers reach the client exactly as they would from a broken proxy or an overloaded model server. Each
POST to ``/v1/chat/completions`` asks ``plan(n, body)`` (``n`` counts requests from 1) what to do; the
default answers SUPPORT with the abstract's first sentence copied.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Act:
    """What the server does for one request."""

    status: int = 200
    body: bytes | None = None  # None = a normal completion built from ``text``
    text: str | None = None  # None = the default answer for the prompt
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False  # announce the full length, send half, close
    finish_reason: str = "stop"


def default_answer(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    abstract = prompt.split("Abstract:\n", 1)[1].strip().splitlines()
    return json.dumps({"verdict": "SUPPORT", "evidence": abstract[:1]})


class FakeServer:
    def __init__(
        self,
        plan: Callable[[int, dict[str, Any]], Act] | None = None,
        models: tuple[str, ...] = ("fake-model",),
        key: str | None = None,
    ) -> None:
        self.plan = plan or (lambda n, body: Act())
        self.models = models
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str | None] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None, truncate: bool = False
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                ctype = "text/html" if body.lstrip().startswith(b"<") else "application/json"
                self.send_header("Content-Type", ctype)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if truncate:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def _authorised(self) -> bool:
                auth = self.headers.get("Authorization")
                with server._lock:
                    server.auth_headers.append(auth)
                if server.key is not None and auth != f"Bearer {server.key}":
                    self._send(401, json.dumps({"error": {"message": "Incorrect API key provided"}}).encode())
                    return False
                return True

            def do_GET(self) -> None:  # noqa: N802
                if not self._authorised():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    data = [{"id": m, "object": "model"} for m in server.models]
                    self._send(200, json.dumps({"object": "list", "data": data}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self._authorised():
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                with server._lock:
                    server.requests.append(body)
                    n = len(server.requests)
                act = server.plan(n, body)
                if act.delay:
                    time.sleep(act.delay)
                if act.body is not None:
                    self._send(act.status, act.body, act.headers, act.truncate)
                    return
                text = act.text if act.text is not None else default_answer(body)
                payload = {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": act.finish_reason,
                        }
                    ],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                }
                self._send(act.status, json.dumps(payload).encode(), act.headers, act.truncate)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
