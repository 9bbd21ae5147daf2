"""Uploads: retried uploads with an idempotency key (on a real server, the answer lost after the commit),
file names that used to be a 500, the Unicode rules on form fields, file facts for owners only, and
no filesystem path in /api/health."""

from __future__ import annotations

import hashlib
import socket
import sqlite3
import struct
import threading
import time
from pathlib import Path

import httpx
import pytest
from serving_doubles import FakeVerifier, empty_lines, oracle_lines, serve_in_thread

from sciverify.serving.auth import add_submitter


def multipart(parts: list[tuple[bytes, bytes, bytes | None]]) -> tuple[bytes, str]:
    """A multipart body built byte by byte: (name, value, filename or None) per part."""
    boundary = b"sciverify-test-boundary"
    out = []
    for name, value, filename in parts:
        disposition = b'form-data; name="' + name + b'"'
        if filename is not None:
            disposition += b'; filename="' + filename + b'"'
        out.append(
            b"--" + boundary + b"\r\nContent-Disposition: " + disposition + b"\r\n\r\n" + value + b"\r\n"
        )
    out.append(b"--" + boundary + b"--\r\n")
    return b"".join(out), "multipart/form-data; boundary=" + boundary.decode()


def _rows(db_path: Path) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT id, public_id, idempotency_key, sha256 FROM submissions").fetchall()
    finally:
        conn.close()


# -- idempotent uploads on a real server -------------------------------------------------------------
@pytest.fixture()
def live_board(tmp_path: Path, gold_file: Path, scifact_dir: Path):
    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    settings = Settings(
        data_dir=tmp_path / "serve",
        leaderboard_gold=gold_file,
        corpus=scifact_dir / "corpus.jsonl",
        n_boot=200,
        submissions_per_day=2,
    )
    app = create_app(settings, verifier=FakeVerifier())
    with serve_in_thread(app) as port:
        yield f"http://127.0.0.1:{port}", port, app, tmp_path / "serve" / "sciverify.db"


def test_a_retry_after_a_lost_answer_returns_the_stored_upload(live_board, gold_file: Path) -> None:
    url, port, app, db_path = live_board
    token = add_submitter(app.state.db, "retrier")
    content = oracle_lines(gold_file)
    body, ctype = multipart([(b"system", b"first try", None), (b"file", content, b"preds.jsonl")])
    request = (
        b"POST /api/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: Bearer {token}\r\nIdempotency-Key: upload-0001\r\n".encode()
        + f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(request)
    deadline = time.monotonic() + 60
    while not _rows(db_path) and time.monotonic() < deadline:  # the commit
        time.sleep(0.01)
    assert len(_rows(db_path)) == 1, "the upload was not stored"
    # the connection dies after the commit, before the client read a byte of the answer
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()

    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "upload-0001"}
    files = {"file": ("preds.jsonl", content)}
    retry = httpx.post(url + "/api/submissions", headers=headers, files=files, timeout=60)
    assert retry.status_code == 201, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    stored = _rows(db_path)
    assert len(stored) == 1 and retry.json()["id"] == stored[0][1]
    assert retry.json()["sha256"] == hashlib.sha256(content).hexdigest() == stored[0][3]
    assert retry.json()["system"] == "first try"  # the stored upload, as it was
    assert stored[0][2] == hashlib.sha256(b"upload-0001").hexdigest()  # the key itself is not kept

    # the retry spent no slot: the daily budget of 2 still has one, and only one, left
    other = {"Authorization": f"Bearer {token}", "Idempotency-Key": "upload-0002"}
    assert httpx.post(url + "/api/submissions", headers=other, files=files, timeout=60).status_code == 201
    third = {"Authorization": f"Bearer {token}", "Idempotency-Key": "upload-0003"}
    assert httpx.post(url + "/api/submissions", headers=third, files=files, timeout=60).status_code == 429
    # a retry of a stored upload is answered even with the budget spent
    again = httpx.post(url + "/api/submissions", headers=headers, files=files, timeout=60)
    assert again.status_code == 201 and again.json()["id"] == stored[0][1]
    # the same key with another file is a conflict, not a silent replay
    clash = httpx.post(
        url + "/api/submissions",
        headers=headers,
        files={"file": ("p.jsonl", empty_lines(gold_file))},
        timeout=60,
    )
    assert clash.status_code == 409 and clash.json()["error"] == "idempotency_conflict"
    assert len(_rows(db_path)) == 2


def test_simultaneous_retries_store_one_upload(live_board, gold_file: Path) -> None:
    url, _, app, db_path = live_board
    token = add_submitter(app.state.db, "eager")
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "same-upload"}
    content = oracle_lines(gold_file)
    answers: list[httpx.Response] = []

    def send() -> None:
        answers.append(
            httpx.post(
                url + "/api/submissions", headers=headers, files={"file": ("p.jsonl", content)}, timeout=60
            )
        )

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in answers] == [201] * 4
    assert len({r.json()["id"] for r in answers}) == 1 and len(_rows(db_path)) == 1


def test_the_upload_form_carries_a_key_and_a_resent_form_stores_once(make_client, gold_file: Path) -> None:
    import re

    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "form team")
    page = client.get("/leaderboard/submit").text
    key = re.search(r'name="idempotency_key" value="([^"]+)"', page).group(1)
    assert key != re.search(r'name="idempotency_key" value="([^"]+)"', client.get("/leaderboard/submit").text)
    data = {"token": token, "system": "form", "idempotency_key": key}
    files = {"file": ("p.jsonl", oracle_lines(gold_file))}
    first = client.post("/leaderboard/submit", data=data, files=files)
    second = client.post("/leaderboard/submit", data=data, files=files)
    assert first.status_code == second.status_code == 201
    ids = [re.search(r"Submission (\S+) stored", r.text).group(1) for r in (first, second)]
    assert ids[0] == ids[1]
    assert len(client.get("/api/leaderboard").json()["entries"]) == 1


@pytest.mark.parametrize("key", ["", "x" * 201, "ключ", "has space"])
def test_a_malformed_idempotency_key_is_refused(make_client, gold_file: Path, key: str) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key.encode("utf-8")}
    r = client.post("/api/submissions", headers=headers, files={"file": ("p.jsonl", oracle_lines(gold_file))})
    if key == "":
        assert r.status_code == 201  # no key: an ordinary upload
    else:
        assert r.status_code == 422 and r.json()["error"] == "invalid_idempotency_key"


# -- file names ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["scored", "../x/scored", "scored-public.jsonl", "upload.jsonl", "..", "/", "a/b/../../scored"]
)
def test_any_file_name_is_stored_under_a_name_the_server_chooses(
    make_client, gold_file: Path, name: str
) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    headers = {"Authorization": f"Bearer {token}"}
    api = client.post("/api/submissions", headers=headers, files={"file": (name, oracle_lines(gold_file))})
    assert api.status_code == 201, api.text
    form = client.post(
        "/leaderboard/submit", data={"token": token}, files={"file": (name, oracle_lines(gold_file))}
    )
    assert form.status_code == 201 and "stored and scored" in form.text
    bad = client.post("/api/submissions", headers=headers, files={"file": (name, b"nope\n")})
    assert bad.status_code == 422 and "/" not in bad.json()["problems"][0]["file"]


# -- the Unicode rules on form fields ----------------------------------------------------------------
BAD_TEXT = [
    (b"system", b"\xed\xa0\x80", None, "not valid UTF-8"),  # a lone surrogate, as bytes
    (b"system", b"\xff\xfe", None, "not valid UTF-8"),
    (b"system", b"A\x00B", None, "control character"),
    (b"system", "A\u202eB".encode(), None, "bidirectional"),
    (b"system", "A\u2066B".encode(), None, "bidirectional"),
    (b"file", b"{}\n", "\u202elsnoj.jsonl".encode(), "bidirectional"),
    (b"file", b"{}\n", b"\xed\xa0\x80.jsonl", "not valid UTF-8"),
    (b"file", b"{}\n", b"a\x01b.jsonl", "control character"),
]


@pytest.mark.parametrize(("name", "value", "filename", "message"), BAD_TEXT)
def test_form_text_follows_the_json_apis_rules(
    make_client, gold_file: Path, name, value, filename, message
) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    parts = [(name, value, filename)]
    if name != b"file":
        parts.append((b"file", oracle_lines(gold_file), b"p.jsonl"))
    body, ctype = multipart(parts)
    api = client.post(
        "/api/submissions", content=body, headers={"content-type": ctype, "Authorization": f"Bearer {token}"}
    )
    assert api.status_code == 422 and message in api.json()["message"], api.text
    body, ctype = multipart([(b"token", token.encode(), None), *parts])
    page = client.post("/leaderboard/submit", content=body, headers={"content-type": ctype})
    assert (
        page.status_code == 422
        and message in page.text
        and page.headers["content-type"].startswith("text/html")
    )
    assert client.get("/api/leaderboard").json()["entries"] == []  # nothing stored, garbled or not


def test_form_token_that_is_not_utf8_is_422(make_client) -> None:
    client = make_client(board=True)
    body, ctype = multipart([(b"token", b"svk_\xed\xa0\x80", None), (b"file", b"{}\n", b"p.jsonl")])
    r = client.post("/leaderboard/submit", content=body, headers={"content-type": ctype})
    assert r.status_code == 422 and "not valid UTF-8" in r.text


def test_unicode_names_are_kept_exactly(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    body, ctype = multipart(
        [
            (b"system", "Équipe β — 検証".encode(), None),
            (b"file", oracle_lines(gold_file), "préds.jsonl".encode()),
        ]
    )
    r = client.post(
        "/api/submissions", content=body, headers={"content-type": ctype, "Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 201 and r.json()["system"] == "Équipe β — 検証"


@pytest.mark.parametrize(
    "target", ["/?claim=%ED%A0%80", "/abstracts/%FF", "/api/abstracts/%ED%B0%80", "/leaderboard?x=%C3"]
)
def test_urls_that_are_not_utf8_are_422(make_client, target: str) -> None:
    r = make_client().get(target)
    assert r.status_code == 422 and "not valid UTF-8" in r.json()["message"]


# -- less to read for strangers ----------------------------------------------------------------------
def test_health_names_no_path(make_client) -> None:
    class IndexedVerifier(FakeVerifier):
        index_info = {"documents": 2, "sentences": 5, "format_version": 3, "path": "/srv/secret/index"}

    health = make_client(verifier=IndexedVerifier()).get("/api/health")
    assert health.json()["index"] == {"documents": 2, "sentences": 5, "format_version": 3}
    assert "/srv" not in health.text


def test_ids_are_opaque_and_say_nothing_about_rejected_uploads(make_client, gold_file: Path) -> None:
    client = make_client(board=True, submissions_per_day=10)
    token = add_submitter(client.app.state.db, "t")
    headers = {"Authorization": f"Bearer {token}"}
    ids = []
    for content in (oracle_lines(gold_file), b"broken\n", b"broken\n", empty_lines(gold_file)):
        r = client.post("/api/submissions", headers=headers, files={"file": ("p.jsonl", content)})
        ids.append(r.json().get("id") or r.json().get("submission_id"))
    assert len(set(ids)) == 4 and not any(i.isdigit() for i in ids)
    assert all(len(i) >= 12 for i in ids)
    assert client.get("/api/submissions/1").status_code == 404
    assert client.get(f"/api/submissions/{ids[1]}").status_code == 404  # rejected: not public
    board = client.get("/api/leaderboard").json()
    assert {e["submission_id"] for e in board["entries"]} <= {ids[0], ids[3]}


def test_migration_0003_gives_older_rows_opaque_ids(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from sciverify.serving.db import Database, migrations_dir

    db = Database(f"sqlite:///{tmp_path / 'old.db'}")
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0002")
    with db.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO submitters (id, name, token_hash, created_at) VALUES (1, 'old', 'h', '2025-01-01')"
        )
        for _ in range(3):
            conn.exec_driver_sql(
                "INSERT INTO submissions (submitter_id, created_at, system, filename, size, sha256, content,"
                " status, gold_sha256, scores, counts)"
                " VALUES (1, '2025-01-01', 's', 'f', 1, 'x', x'00', 'scored', 'g', '{}', '[]')"
            )
    db.migrate()
    with db.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT public_id, chosen, private_scores FROM submissions").all()
    db.dispose()
    assert len({r[0] for r in rows}) == 3 and all(r[0] and r[1] == 0 and r[2] is None for r in rows)


# -- messages that say what is wrong, and the token checked first ---------------------------------------
@pytest.mark.parametrize(
    ("filename", "says"), [(None, "has no file name"), (b"", "has an empty file name")]
)
def test_a_file_part_without_a_file_name_says_so(make_client, gold_file: Path, filename, says) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    body, ctype = multipart([(b"file", oracle_lines(gold_file), filename)])  # far over 1024 bytes
    api = client.post(
        "/api/submissions", content=body, headers={"content-type": ctype, "Authorization": f"Bearer {token}"}
    )
    assert api.status_code == 422 and api.json()["error"] == "missing_file", api.text
    assert f"the form part 'file' {says}" in api.json()["message"] and "1024" not in api.text
    body, ctype = multipart([(b"token", token.encode(), None), (b"file", oracle_lines(gold_file), filename)])
    page = client.post("/leaderboard/submit", content=body, headers={"content-type": ctype})
    assert page.status_code == 422 and says in page.text


@pytest.mark.parametrize(
    ("encoding", "guess"),
    [
        ("latin-1", "Latin-1 or Windows-1252"),
        ("utf-16", "UTF-16, little-endian"),  # Python writes a byte-order mark
        ("utf-16-be", "UTF-16, big-endian"),  # none: plain ASCII in UTF-16 is "valid UTF-8" byte by byte
    ],
)
def test_a_file_that_is_not_utf8_says_so(make_client, gold_file: Path, encoding: str, guess: str) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    lines = oracle_lines(gold_file).decode("utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace('"evidence"', '"évidence"') if encoding == "latin-1" else lines[2]
    r = client.post(
        "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("p.jsonl", "".join(lines).encode(encoding))},
    )
    assert r.status_code == 422, r.text
    (problem,) = r.json()["problems"]
    assert "the file is not UTF-8 text" in problem["message"] and guess in problem["message"]
    assert "surrogates" not in r.text
    assert problem["line"] == (3 if encoding == "latin-1" else 1)


def _incomplete_forms(gold_file: Path) -> list[tuple[str, bytes, str]]:
    whole, ctype = multipart([(b"system", b"x", None), (b"file", oracle_lines(gold_file), b"p.jsonl")])
    return [
        ("truncated", whole[: len(whole) // 2], ctype),
        ("no file part", multipart([(b"system", b"x", None)])[0], ctype),
        ("no file name", multipart([(b"file", oracle_lines(gold_file), None)])[0], ctype),
        ("a field not UTF-8", multipart([(b"system", b"\xff\xfe", None)])[0], ctype),
        ("not multipart", b'{"file": "x"}', "application/json"),
    ]


def test_a_revoked_token_with_an_incomplete_form_is_401(make_client, gold_file: Path) -> None:
    from sciverify.serving.auth import revoke_submitter

    client = make_client(board=True)
    db = client.app.state.db
    revoked = add_submitter(db, "gone")
    revoke_submitter(db, "gone")
    live = add_submitter(db, "here")
    for what, body, ctype in _incomplete_forms(gold_file):
        for token, status in ((revoked, 401), ("svk_" + "x" * 40, 401), (live, 422)):
            r = client.post(
                "/api/submissions",
                content=body,
                headers={"content-type": ctype, "Authorization": f"Bearer {token}"},
            )
            assert r.status_code == status, (what, r.text)
    # the form route reads its token from the form: a revoked one read before the broken part is a 401
    _, ctype = multipart([])
    for what, body, _ in _incomplete_forms(gold_file)[:4]:
        head = multipart([(b"token", revoked.encode(), None)])[0].rsplit(b"--sciverify", 1)[0]
        r = client.post("/leaderboard/submit", content=head + body, headers={"content-type": ctype})
        assert r.status_code == 401, (what, r.text[:300])
