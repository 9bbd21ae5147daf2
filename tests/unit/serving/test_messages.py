"""Messages that say what is wrong, on a real server with a real database: a compressed or binary upload
is called that, a UTF-8 file with one stray NUL is told about the NUL, a claim id of 10^30 is printed as
written, a multipart body without its closing boundary is called truncated, and the operator's commands
print times with their zone."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serving_doubles import FakeVerifier, oracle_lines, serve_in_thread

from sciverify.serving.auth import add_submitter


@pytest.fixture()
def board(tmp_path: Path, scifact_dir: Path, gold_file: Path) -> Iterator[tuple[str, str, object]]:
    """(base URL, a team's token, the settings) of a live server with the hidden gold."""
    from sciverify.serving.app import create_app
    from sciverify.serving.db import Database
    from sciverify.serving.settings import Settings

    settings = Settings(
        data_dir=tmp_path / "serve",
        leaderboard_gold=gold_file,
        corpus=scifact_dir / "corpus.jsonl",
        n_boot=200,
        submissions_per_hour=100,
        submissions_per_day=100,
    )
    db = Database(settings.resolved_db_url())
    db.migrate()
    token = add_submitter(db, "team")
    db.dispose()
    with serve_in_thread(create_app(settings, verifier=FakeVerifier())) as port:
        yield f"http://127.0.0.1:{port}", token, settings


def _upload(base: str, token: str, content: bytes) -> httpx.Response:
    return httpx.post(
        f"{base}/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("predictions.jsonl", content)},
        timeout=60,
    )


def _zip(content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("predictions.jsonl", content)
    return out.getvalue()


def test_uploads_are_called_what_they_are(board, gold_file: Path) -> None:
    base, token, _ = board
    good = oracle_lines(gold_file)
    lines = good.splitlines(keepends=True)
    stray_nul = b"".join(lines[:4]) + lines[4].replace(b'"evidence"', b'"evid\x00ence"') + b"".join(lines[5:])
    cases = [
        (gzip.compress(good), "gzip-compressed data, not text", 1),
        (_zip(good), "a ZIP archive, not text", 1),
        (bz2.compress(good), "bzip2-compressed data, not text", 1),
        (random.Random(51).randbytes(3000), "binary data, not text", None),
        (stray_nul, "has a NUL byte", 5),
        (good.decode().encode("utf-16-le"), "it looks like UTF-16, little-endian", 1),
        (good.replace(b'"evidence"', '"évidence"'.encode("latin-1"), 1), "Latin-1", 1),
    ]
    for content, says, line in cases:
        r = _upload(base, token, content)
        assert r.status_code == 422, r.text
        (problem,) = r.json()["problems"]
        assert says in problem["message"], (says, problem)
        assert "UTF-16" not in problem["message"] or "UTF-16" in says, problem
        if line is not None:
            assert problem["line"] == line, problem


def test_a_big_id_is_printed_as_written(board, gold_file: Path) -> None:
    base, token, _ = board
    big = 10**30
    content = oracle_lines(gold_file) + json.dumps({"id": big, "evidence": {}}).encode() + b"\n"
    r = _upload(base, token, content)
    assert r.status_code == 422, r.text
    messages = " ".join(p["message"] for p in r.json()["problems"])
    assert str(big) in messages and "e+30" not in messages, messages


def test_a_truncated_multipart_body_says_it_is_truncated(board, gold_file: Path) -> None:
    base, token, _ = board
    boundary = "cut-short"
    whole = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.jsonl"\r\n\r\n'.encode()
        + oracle_lines(gold_file)
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {
        "Authorization": f"Bearer {token}",
        "content-type": f"multipart/form-data; boundary={boundary}",
    }
    for body in (whole[: len(whole) // 2], whole[: -len(f"--{boundary}--\r\n")]):
        r = httpx.post(f"{base}/api/submissions", content=body, headers=headers, timeout=60)
        assert r.status_code == 422 and r.json()["error"] == "truncated_form", r.text
        assert "truncated" in r.json()["message"] and "attach" not in r.json()["message"]
    r = httpx.post(f"{base}/api/submissions", content=whole, headers=headers, timeout=60)
    assert r.status_code == 201, r.text  # the same form, whole, is stored


def test_operator_commands_print_times_with_their_zone(board) -> None:
    from datetime import datetime

    from sciverify.serving.server import close_phase_cli, list_submitters_cli

    _, _, settings = board
    closed = close_phase_cli(settings)  # type: ignore[arg-type]
    for key in ("opened_at", "closed_at"):
        assert datetime.fromisoformat(closed[key]).utcoffset() is not None, closed
        assert closed[key].endswith("+00:00"), closed
    listing = list_submitters_cli(settings)  # type: ignore[arg-type]
    team = listing.splitlines()[1]
    assert team.startswith("team") and team.count(" UTC") == 1, listing  # created (no expiry, no revocation)
