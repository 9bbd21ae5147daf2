"""Where a language model is and how to talk to it: the ``[llm]`` section of ``pipeline.toml``.

Kept apart from the client (:mod:`sciverify.models.llm`) so that reading a pipeline configuration loads no
network code, and so that the judge registry (:mod:`sciverify.models.base`) can name its settings type.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sciverify.errors import ConfigError

__all__ = ["LlmConfig"]


@dataclass(frozen=True)
class LlmConfig:
    """Where the model is and how to talk to it; stored in ``pipeline.toml`` under ``[llm]`` (no secrets).

    Attributes:
        base_url: the server's OpenAI-compatible root, e.g. ``http://127.0.0.1:8080/v1`` (``/v1`` is
            added when missing).
        model: the model name the server knows.
        api_key_env: environment variable holding the key; unset = no ``Authorization`` header.
        timeout: seconds for one request (connect, send, wait, read).
        max_retries: retries after the first attempt for 429, 5xx, timeouts and broken connections.
        backoff: first back-off in seconds; doubles each retry, capped at ``max_backoff``, full jitter.
        concurrency: requests in flight at once.
        temperature, max_tokens: sampling settings sent with every request.
        json_schema: send ``response_format`` with :data:`sciverify.models.llm.VERDICT_SCHEMA`.
        system: an optional system message put before every prompt.
    """

    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    max_retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    concurrency: int = 4
    temperature: float = 0.0
    max_tokens: int = 512
    json_schema: bool = False
    system: str = ""

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.backoff < 0 or self.max_backoff < 0:
            raise ConfigError("llm.timeout must be > 0, llm.backoff and llm.max_backoff >= 0")
        if self.max_retries < 0 or self.concurrency < 1 or self.max_tokens < 1:
            raise ConfigError("llm.max_retries must be >= 0, llm.concurrency and llm.max_tokens >= 1")
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"llm.temperature must be in [0, 2], got {self.temperature}")

    def check(self) -> None:
        """ConfigError unless a URL and a model are set (they have no sensible default)."""
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"the LLM judge needs --base-url http(s)://HOST[:PORT]/v1, got {self.base_url!r}"
            )
        if not self.model:
            raise ConfigError("the LLM judge needs --model NAME (the name the server serves)")

    @property
    def api_root(self) -> str:
        root = self.base_url.rstrip("/")
        return root if root.endswith("/v1") else root + "/v1"

    def api_key(self) -> str | None:
        """The key from :attr:`api_key_env`; ConfigError when a non-default variable is named but unset."""
        key = os.environ.get(self.api_key_env)
        if key is None and self.api_key_env != "OPENAI_API_KEY":
            raise ConfigError(f"--api-key-env {self.api_key_env}: that environment variable is not set")
        return key or None
