"""Save and load a model directory: ``config.json`` + weights (``.npz``/``.json``) + ``manifest.json``.

No pickles: a model directory must be inspectable with numpy and a text editor, and loading one must
never run code. ``config_version`` is checked on load so a directory from an incompatible release is
refused with a clear :class:`ArtifactError` instead of producing silently wrong scores.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.datasets import sha256_file
from sciverify.data.io import write_text_atomic
from sciverify.errors import ArtifactError

__all__ = [
    "CONFIG",
    "MANIFEST",
    "WEIGHTS",
    "git_sha",
    "load_model_dir",
    "read_json",
    "save_model_dir",
    "write_manifest",
]

CONFIG = "config.json"
MANIFEST = "manifest.json"
WEIGHTS = "weights.npz"


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object, turning a missing or corrupt file into an ArtifactError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(f"model file missing: {path}") from None
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ArtifactError(f"{path} must hold a JSON object")
    return data


def save_model_dir(
    out_dir: Path,
    kind: str,
    config_version: int,
    config: Mapping[str, Any],
    arrays: Mapping[str, npt.NDArray[Any]],
) -> None:
    """Write ``config.json`` (with ``kind`` and ``config_version``) and ``weights.npz``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    payload_arrays: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}
    np.savez(out_dir / WEIGHTS, **payload_arrays)
    payload = {"kind": kind, "config_version": config_version, **config}
    write_text_atomic(out_dir / CONFIG, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def load_model_dir(
    model_dir: Path, kind: str, config_version: int
) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """Read a model directory written by :func:`save_model_dir`, checking kind and version."""
    if not model_dir.is_dir():
        raise ArtifactError(f"model directory not found: {model_dir}")
    config = read_json(model_dir / CONFIG)
    if config.get("kind") != kind:
        raise ArtifactError(f"{model_dir} holds a {config.get('kind')!r} model, expected {kind!r}")
    if config.get("config_version") != config_version:
        raise ArtifactError(
            f"{model_dir} was written with config_version {config.get('config_version')!r}; this sciverify "
            f"reads version {config_version}. Retrain with `sciverify train` or use a matching release."
        )
    weights = model_dir / WEIGHTS
    if not weights.exists():
        raise ArtifactError(f"model file missing: {weights}")
    try:
        with np.load(weights, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"cannot read {weights}: {exc}") from None
    return config, arrays


def git_sha(cwd: Path | None = None) -> str | None:
    """The current commit, when run from a git checkout (None otherwise)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd or Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def write_manifest(
    out_dir: Path,
    *,
    seed: int,
    command: str,
    data_files: Mapping[str, Path] | None = None,
    metrics: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Record how a model directory was made: seed, data sha256, command, git SHA, metrics."""
    from sciverify._version import __version__

    manifest: dict[str, Any] = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "sciverify_version": __version__,
        "git_sha": git_sha(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "seed": seed,
        "command": command,
        "data_sha256": {name: sha256_file(p) for name, p in (data_files or {}).items()},
        "metrics": dict(metrics or {}),
    }
    manifest.update(extra or {})
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    return manifest
