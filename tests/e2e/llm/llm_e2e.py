"""Whether the real llama.cpp server can run here."""

from __future__ import annotations

from sciverify.errors import SciverifyError


def llm_server_missing() -> str | None:
    try:
        import llama_cpp.server  # noqa: F401

        from sciverify.models.llm_local import smollm2_gguf

        smollm2_gguf()
    except (ImportError, SciverifyError) as exc:
        return f"llm-server extra not installed ({exc})"
    return None
