"""Hostile input: text that is not Unicode, loose types, tokens in URLs, and what the access log keeps."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_doubles import FakeVerifier, serve_with_access_log

SURROGATE_BODIES = [
    ("/api/verify", b'{"claim": "ALDH1 \\ud800 prognosis"}'),
    ("/api/verify", b'{"claim": "\\udfff"}'),
    ("/api/predict", b'{"claims": [{"id": 1, "claim": "a \\ud83d b"}]}'),
    ("/api/predict", b'{"claims": [{"id": "\\ud800", "claim": "fine"}]}'),
]


@pytest.mark.parametrize(("path", "body"), SURROGATE_BODIES)
def test_lone_surrogates_are_422_with_a_clear_message(make_client, path: str, body: bytes) -> None:
    client = make_client()
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "invalid_request" and "lone surrogate" in r.json()["message"]
    assert "\\ud" not in r.text.lower()  # the input is not echoed


@pytest.mark.parametrize("path", ["/api/verify", "/api/predict"])
@pytest.mark.parametrize("raw", [b"\xff", b"\xc3", b"\xe2\x82"])
def test_json_bodies_that_are_not_utf8_are_422(make_client, path: str, raw: bytes) -> None:
    body = (
        b'{"claim": "a' + raw + b'"}'
        if path == "/api/verify"
        else b'{"claims": [{"id": 1, "claim": "' + raw + b'"}]}'
    )
    r = make_client().post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422 and "not valid UTF-8" in r.json()["message"], r.text


@pytest.mark.parametrize(
    "body",
    [
        {"claim": "c", "k": True},
        {"claim": "c", "k": "3"},
        {"claim": "c", "k": 3.0},
        {"claim": "c", "include_abstract": "yes"},
        {"claim": "c", "include_abstract": 1},
        {"claim": 12345},
        {"claim": ["c"]},
    ],
)
def test_verify_types_are_strict(make_client, body: dict) -> None:
    r = make_client().post("/api/verify", json=body)
    assert r.status_code == 422 and r.json()["error"] == "invalid_request", (body, r.text)


@pytest.mark.parametrize(
    "body",
    [
        {"claims": [{"id": True, "claim": "a"}]},
        {"claims": [{"id": 1.5, "claim": "a"}]},
        {"claims": [{"id": 1, "claim": "a"}], "k": "2"},
        {"claims": [{"id": 1, "claim": False}]},
    ],
)
def test_predict_types_are_strict(make_client, body: dict) -> None:
    r = make_client().post("/api/predict", json=body)
    assert r.status_code == 422 and r.json()["error"] == "invalid_request", (body, r.text)


def test_strict_types_still_take_the_right_ones(make_client) -> None:
    client = make_client()
    ok = client.post("/api/verify", json={"claim": "c", "k": 2, "include_abstract": True})
    assert ok.status_code == 200 and ok.json()["k"] == 2
    both = client.post("/api/predict", json={"claims": [{"id": 7, "claim": "a"}, {"id": "x", "claim": "b"}]})
    assert [p["id"] for p in both.json()["predictions"]] == [7, "x"]


@pytest.mark.parametrize(
    "target",
    [
        "/api/health?token=svk_SECRET",
        "/?claim=x&access_token=svk_SECRET",
        "/leaderboard?api_key=svk_SECRET",
        "/api/leaderboard?Token=svk_SECRET",
    ],
)
def test_token_in_the_query_string_is_refused(make_client, target: str) -> None:
    r = make_client().get(target)
    assert r.status_code == 400 and r.json()["error"] == "token_in_url"
    assert "SECRET" not in r.text and "Authorization header" in r.json()["message"]


def test_token_in_the_query_string_is_refused_on_upload(make_client) -> None:
    client = make_client(board=True)
    r = client.post("/api/submissions?token=svk_SECRET", files={"file": ("p.jsonl", b"{}\n")})
    assert r.status_code == 400 and r.json()["error"] == "token_in_url"


# -- a real uvicorn server on loopback: keep-alive and the access log ---------------------------------
@pytest.fixture()
def live_server(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    """The app behind the same uvicorn configuration as ``sciverify serve``, in a thread."""
    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    app = create_app(Settings(data_dir=tmp_path / "serve"), verifier=FakeVerifier())
    with serve_with_access_log(app) as (port, lines):
        yield port, lines


def test_bad_text_keeps_the_connection_and_the_log_has_no_query(live_server) -> None:
    port, lines = live_server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.auto_open = 0  # a closed connection must fail the test, not be silently reopened
    conn.connect()
    headers = {"content-type": "application/json"}
    conn.request("POST", "/api/verify", body=b'{"claim": "\\ud800"}', headers=headers)
    bad = conn.getresponse()
    assert bad.status == 422 and b"lone surrogate" in bad.read()
    assert (bad.getheader("connection") or "").lower() != "close"
    conn.request("POST", "/api/verify", body=json.dumps({"claim": "fine"}).encode(), headers=headers)
    good = conn.getresponse()
    assert good.status == 200 and json.loads(good.read())["supporting"]
    conn.request("GET", "/api/health?token=svk_SECRET_IN_URL")
    refused = conn.getresponse()
    assert refused.status == 400
    refused.read()
    conn.request("GET", "/?claim=my+private+claim")
    conn.getresponse().read()
    conn.close()
    time.sleep(0.2)
    logged = "\n".join(lines)
    assert "/api/verify" in logged and "/api/health?<redacted>" in logged
    assert "SECRET_IN_URL" not in logged and "private" not in logged


def test_a_token_in_the_path_is_400_and_never_logged(live_server) -> None:
    """``GET /api/submissions/<token>`` and its kin: refused before any route runs (no 422 that echoes it),
    and the access log keeps the path with the segment replaced."""
    import secrets

    port, lines = live_server
    ours = "svk_" + secrets.token_urlsafe(32)
    other = secrets.token_hex(24)  # a secret of another format: refused by its shape
    targets = [
        ("GET", f"/api/submissions/{ours}"),
        ("POST", f"/api/submissions/{ours}/choose"),
        ("GET", f"/leaderboard/submissions/{other}"),
        ("GET", f"/{other}"),
        ("GET", f"/api/abstracts/{ours}?page=2"),
    ]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for method, target in targets:
        conn.request(method, target)
        r = conn.getresponse()
        body = r.read()
        assert r.status == 400, (target, body)
        assert json.loads(body)["error"] == "token_in_url" and ours.encode() not in body
    conn.request("GET", "/api/submissions/AbCdEf123456")  # a submission id is not token-shaped
    r = conn.getresponse()
    r.read()
    assert r.status != 400
    conn.close()
    deadline = time.monotonic() + 5
    while len(lines) < len(targets) + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    logged = "\n".join(lines)
    assert len(lines) >= len(targets) + 1, logged
    assert ours not in logged and other not in logged and ours[4:] not in logged
    assert "/api/submissions/<redacted>/choose" in logged and "/api/abstracts/<redacted>?<redacted>" in logged
    # an opaque submission id cannot be told from a piece of a token: redacted too (serving.logs)
    assert "/api/submissions/<redacted>" in logged and "AbCdEf123456" not in logged


def test_redaction_keeps_ordinary_targets() -> None:
    from sciverify.serving.logs import redact_target

    assert redact_target("/api/health") == "/api/health"
    assert redact_target("/abstracts/4983") == "/abstracts/4983"
    assert redact_target("/?claim=x") == "/?<redacted>"
    assert redact_target("/a/svk_x/b") == "/a/svk_x/b"  # too short to be a token, or most of one
    assert redact_target("/a/svk_x1234/b") == "/a/<redacted>/b"
