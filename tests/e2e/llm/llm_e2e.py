"""Whether the real llama.cpp server can run here, and what to say when it died."""

from __future__ import annotations

from typing import Any

from sciverify.errors import SciverifyError


def llm_server_missing() -> str | None:
    try:
        import llama_cpp.server  # noqa: F401

        from sciverify.models.llm_local import smollm2_gguf

        smollm2_gguf()
    except (ImportError, SciverifyError) as exc:
        return f"llm-server extra not installed ({exc})"
    return None


def server_death(server: Any, tail_lines: int = 5) -> str | None:
    """None while the server runs; else one message with its exit status and the end of its log."""
    proc = getattr(server, "proc", None)
    if proc is None or proc.poll() is None:
        return None
    status = proc.returncode
    hint = (
        " (a segfault: a llama.cpp build for another CPU; rerun ./scripts/setup-llm)"
        if status in (-11, 139)
        else ""
    )
    tail = ""
    log = getattr(server, "log", None)
    if log is not None and log.exists():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-tail_lines:]
        tail = "; last log lines: " + " | ".join(lines)
    return f"the llama.cpp server died with status {status}{hint}{tail}"
