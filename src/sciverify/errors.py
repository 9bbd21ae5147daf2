"""Every error sciverify raises on purpose, so callers (CLI, web) can catch by family.

    SciverifyError
    ├── DataFormatError      an input file is malformed; carries path and line
    ├── ArtifactError        an index or model directory is missing, damaged or from another version
    ├── ConfigError          a configuration value is invalid
    ├── InputError           a claim or request is unusable (empty, too long, ...)
    ├── EndpointError        a model server cannot be used (unreachable, rejects the key, no such model, ...)
    ├── EngineError          a distributed engine failed: cluster unreachable, a worker died
    └── MissingDependencyError  an optional extra is not installed; says what to pip install
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ArtifactError",
    "ConfigError",
    "DataFormatError",
    "EndpointError",
    "EngineError",
    "InputError",
    "MissingDependencyError",
    "SciverifyError",
]


class SciverifyError(Exception):
    """Base class: the CLI prints these as one clear line instead of a traceback."""


class DataFormatError(SciverifyError):
    """A record in an input file is malformed. ``path`` and ``line`` say where (line is 1-based)."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(f"{where}{message}")


class ArtifactError(SciverifyError):
    """An on-disk artifact (index, model) cannot be used as it is."""


class ConfigError(SciverifyError):
    """A configuration value is invalid."""


class EngineError(SciverifyError):
    """The engine running a heavy step (Ray) could not start or lost a worker; nothing was written."""


class InputError(SciverifyError):
    """A claim or request cannot be processed as given."""


class EndpointError(SciverifyError):
    """An OpenAI-compatible model server cannot serve the run: unreachable, rejects the API key, does not
    serve the model, or keeps failing. The message names the URL and never contains the key."""


class MissingDependencyError(SciverifyError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"{package} is not installed; install it with: pip install 'sciverify[{extra}]'")
