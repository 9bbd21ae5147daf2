"""Where the SciFact data lives, and how to fetch and verify the official release.

Lookup order for the data directory: an explicit path (CLI flag), then ``SCIVERIFY_DATA``, then
``../shared/data/scifact`` (next to the working directory or to the source checkout), then the
per-user directory that ``sciverify data fetch`` writes to.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from sciverify.errors import DataFormatError

__all__ = [
    "OFFICIAL_FILES",
    "OFFICIAL_URL",
    "DataPaths",
    "data_dir_lines",
    "fetch_scifact",
    "resolve_data_dir",
    "sha256_file",
    "user_data_dir",
    "verify_files",
]

OFFICIAL_URL = "https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz"

#: sha256 of each file of the official release; a fetched file must match byte for byte.
OFFICIAL_FILES: dict[str, str] = {
    "corpus.jsonl": "b8d6c89624cb2ed74dee8938effc4f5d8bd2086887880af8110d64be4ceade62",
    "claims_train.jsonl": "f4c8fa82d8bd0653a9cc8d61a6ea48c25eacea64e90af5dbf390ebb1b74372f0",
    "claims_test.jsonl": "558930d75215c73f84a28fe538307d6d397c9de1ec7239514cf45f80d75d2ca3",
    "claims_dev.jsonl": "86f0435d08fdb65d1aa41d1472684f57e6e71930626497bdf4d7a9ec1a632217",
}


@dataclass(frozen=True)
class DataPaths:
    """The files of one SciFact-format data directory."""

    root: Path

    @property
    def corpus(self) -> Path:
        return self.root / "corpus.jsonl"

    @property
    def train(self) -> Path:
        return self.root / "claims_train.jsonl"

    @property
    def dev(self) -> Path:
        return self.root / "claims_dev.jsonl"

    @property
    def test(self) -> Path:
        return self.root / "claims_test.jsonl"


def user_data_dir() -> Path:
    """Per-user data directory (XDG), where fetched data and the default index live."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sciverify"


def _candidates() -> list[Path]:
    source_root = Path(__file__).resolve().parents[3]
    return [
        Path.cwd() / ".." / "shared" / "data" / "scifact",
        source_root / ".." / "shared" / "data" / "scifact",
        user_data_dir() / "scifact",
    ]


def resolve_data_dir(explicit: str | Path | None = None) -> DataPaths:
    """The data directory by the documented lookup order; raises a clear error when none has a corpus."""
    if explicit is not None:
        root = Path(explicit)
        if not (root / "corpus.jsonl").exists():
            raise DataFormatError("no corpus.jsonl in this data directory", root)
        return DataPaths(root)
    env = os.environ.get("SCIVERIFY_DATA")
    if env:
        root = Path(env)
        if not (root / "corpus.jsonl").exists():
            raise DataFormatError("SCIVERIFY_DATA points to a directory without corpus.jsonl", root)
        return DataPaths(root)
    for root in _candidates():
        if (root / "corpus.jsonl").exists():
            return DataPaths(root.resolve())
    raise DataFormatError(
        "SciFact data not found: pass --data DIR, set SCIVERIFY_DATA, or run `sciverify data fetch`"
    )


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_files(root: str | Path) -> dict[str, str]:
    """Check every official file present in ``root``; returns name -> "ok" | "missing" | "MISMATCH"."""
    status = {}
    for name, expected in OFFICIAL_FILES.items():
        path = Path(root) / name
        if not path.exists():
            status[name] = "missing"
        else:
            status[name] = "ok" if sha256_file(path) == expected else "MISMATCH"
    return status


def data_dir_lines(root: str | Path) -> list[str]:
    """What ``sciverify data where`` prints (Rich markup): the directory, then each official file's check."""
    from rich.markup import escape

    lines = [f"data directory: {escape(str(root))}"]
    for name, status in verify_files(root).items():
        colour = {"ok": "green", "missing": "yellow"}.get(status, "red")
        lines.append(f"  {name:<22} [{colour}]{status}[/]")
    return lines


def fetch_scifact(dest: str | Path | None = None, url: str = OFFICIAL_URL, timeout: float = 60.0) -> Path:
    """Download the official release tarball, verify every file's sha256, and install it into ``dest``.

    Files are checked before anything is moved into place, so a corrupt or tampered download never
    replaces good data.
    """
    target = Path(dest) if dest is not None else user_data_dir() / "scifact"
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "data.tar.gz"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, archive.open("wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as exc:
            raise DataFormatError(f"could not download {url}: {exc}") from None
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(Path(tmp) / "x", filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise DataFormatError(f"downloaded file is not a valid tar.gz archive: {exc}", url) from None
        found: dict[str, Path] = {}
        for path in (Path(tmp) / "x").rglob("*.jsonl"):
            if path.name in OFFICIAL_FILES:
                found[path.name] = path
        for name in ("corpus.jsonl", "claims_train.jsonl"):
            if name not in found:
                raise DataFormatError(f"archive has no {name}", url)
        for name, path in found.items():
            actual = sha256_file(path)
            if actual != OFFICIAL_FILES[name]:
                raise DataFormatError(
                    f"sha256 mismatch for {name}: expected {OFFICIAL_FILES[name]}, got {actual}", url
                )
        from sciverify.data.io import atomic_writer

        for name, path in found.items():  # each file whole or not at all, even on Ctrl-C
            with path.open("rb") as source, atomic_writer(target / name) as out:
                shutil.copyfileobj(source, out)
    return target
