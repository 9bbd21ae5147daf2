"""Shared fixtures: where the real SciFact data is, and tiny inline records for fast unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciverify.data.datasets import DataPaths, resolve_data_dir


@pytest.fixture(scope="session")
def scifact() -> DataPaths:
    """The real SciFact data (the test suite runs on real data, beside the repository)."""
    return resolve_data_dir()


@pytest.fixture()
def write_jsonl(tmp_path: Path):
    """Write lines (already strings) to a file in tmp_path and return its path."""

    def _write(name: str, lines: list[str]) -> Path:
        path = tmp_path / name
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path

    return _write
