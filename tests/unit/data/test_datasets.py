from __future__ import annotations

import tarfile

import pytest

from sciverify.data.datasets import OFFICIAL_FILES, fetch_scifact, resolve_data_dir, sha256_file
from sciverify.errors import DataFormatError


def test_local_copy_matches_official_checksums(scifact):
    for name in ("corpus.jsonl", "claims_train.jsonl", "claims_test.jsonl"):
        assert sha256_file(scifact.root / name) == OFFICIAL_FILES[name]


def _tarball(tmp_path, scifact, tamper: bool = False):
    src = tmp_path / "release" / "data"
    src.mkdir(parents=True)
    for name in ("corpus.jsonl", "claims_train.jsonl", "claims_test.jsonl"):
        data = (scifact.root / name).read_bytes()
        if tamper and name == "claims_train.jsonl":
            data = data.replace(b"SUPPORT", b"CONTRADICT", 1)
        (src / name).write_bytes(data)
    archive = tmp_path / "data.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src, arcname="data")
    return archive


def test_fetch_verifies_and_installs(tmp_path, scifact):
    archive = _tarball(tmp_path, scifact)
    dest = fetch_scifact(tmp_path / "installed", url=archive.as_uri())
    assert sha256_file(dest / "corpus.jsonl") == OFFICIAL_FILES["corpus.jsonl"]
    assert resolve_data_dir(dest).train.exists()


def test_fetch_rejects_tampered_release(tmp_path, scifact):
    archive = _tarball(tmp_path, scifact, tamper=True)
    with pytest.raises(DataFormatError, match="sha256 mismatch for claims_train.jsonl"):
        fetch_scifact(tmp_path / "installed", url=archive.as_uri())
    assert not (tmp_path / "installed" / "corpus.jsonl").exists()


def test_env_var_wins_over_default(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIVERIFY_DATA", str(tmp_path))
    with pytest.raises(DataFormatError, match="SCIVERIFY_DATA"):
        resolve_data_dir()
