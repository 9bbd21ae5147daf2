"""A dead server is named as such: exit status, a hint for a segfault, and the end of its log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from llm_e2e import server_death


def test_a_running_server_has_no_death_to_report() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert server_death(SimpleNamespace(proc=proc, log=None)) is None
    finally:
        proc.kill()
        proc.wait()


def test_a_segfaulted_server_says_so_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("loading model\nllama_new_context: ok\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    proc.wait()
    message = server_death(SimpleNamespace(proc=proc, log=log))
    assert message is not None
    assert "died with status -11" in message and "segfault" in message and "setup-llm" in message
    assert "llama_new_context: ok" in message
