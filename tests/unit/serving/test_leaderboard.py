"""Leaderboard over HTTP: tokens, validation problems, scoring, limits, ranking, and a hidden gold."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest
from serving_doubles import empty_lines, oracle_lines

from sciverify.serving.auth import add_submitter


def _token(client, name: str = "team-a") -> str:
    return add_submitter(client.app.state.db, name)


def _post(client, token: str | None, content: bytes, name: str = "preds.jsonl", system: str = "sys"):
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return client.post(
        "/api/submissions", headers=headers, files={"file": (name, content)}, data={"system": system}
    )


def test_perfect_and_empty_submissions_are_scored_and_ranked(make_client, gold_file: Path) -> None:
    client = make_client(board=True, gold_public=True)  # a dev phase: full diagnostics
    token = _token(client)
    perfect = oracle_lines(gold_file)
    r = _post(client, token, perfect, system="oracle")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["status"] == "scored" and body["sha256"] == hashlib.sha256(perfect).hexdigest()
    assert body["size"] == len(perfect)
    for family in ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label"):
        m = body["metrics"][family]
        assert m["f1"] == 1.0 and m["f1_low"] <= m["f1"] <= m["f1_high"]
    r2 = _post(client, token, empty_lines(gold_file), system="nothing")
    assert r2.status_code == 201 and r2.json()["metrics"]["sentence_label"]["f1"] == 0.0
    board = client.get("/api/leaderboard").json()
    assert [e["system"] for e in board["entries"]] == ["oracle", "nothing"]
    top, second = board["entries"]
    assert top["rank"] == 1 and top["differs_from_top"] is None and top["p_value_vs_top"] is None
    assert second["differs_from_top"] is True and second["p_value_vs_top"] < 0.05
    page = client.get("/leaderboard")
    assert page.status_code == 200 and "oracle" in page.text and "yes (p=" in page.text
    sub = client.get(f"/leaderboard/submissions/{body['id']}")
    assert sub.status_code == 200 and "1.000" in sub.text
    report = client.get(f"/leaderboard/submissions/{body['id']}/report")
    assert report.status_code == 200 and "SciFact evaluation" in report.text
    # the file's name, size and hash: its owner's, not the public's (nor another team's)
    anonymous = client.get(f"/api/submissions/{body['id']}").json()
    assert anonymous["sha256"] is None and anonymous["size"] is None and anonymous["filename"] is None
    other = client.get(
        f"/api/submissions/{body['id']}", headers={"Authorization": f"Bearer {_token(client, 'team-z')}"}
    ).json()
    assert other["sha256"] is None
    owner = client.get(f"/api/submissions/{body['id']}", headers={"Authorization": f"Bearer {token}"})
    assert owner.json()["sha256"] == body["sha256"] and owner.json()["size"] == len(perfect)
    assert body["sha256"] not in sub.text and body["sha256"] not in page.text


def test_invalid_file_gets_file_line_problems(make_client) -> None:
    client = make_client(board=True)
    token = _token(client)
    bad = (
        b'{"id": 999999999, "evidence": {}}\n'
        b'{"id": "oops", "evidence": {"11": {"label": "MAYBE"}}}\n'
        b"not json\n"
    )
    r = _post(client, token, bad, name="../../etc/my preds.jsonl")
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "invalid_submission" and body["problems"]
    lines = {p["line"] for p in body["problems"]}
    assert {1, 3} <= lines
    assert all(p["file"] == "my preds.jsonl" for p in body["problems"])
    assert "/tmp" not in r.text and "sciverify-upload" not in r.text
    assert client.get(f"/api/submissions/{body['submission_id']}").status_code == 404
    assert client.get("/api/leaderboard").json()["entries"] == []


def test_auth_size_and_rate_limits(make_client, gold_file: Path) -> None:
    client = make_client(board=True, submissions_per_hour=2, max_upload_bytes=64 * 1024)
    token = _token(client)
    content = empty_lines(gold_file)
    assert _post(client, None, content).status_code == 401
    wrong = _post(client, "svk_not-a-real-token", content)
    assert wrong.status_code == 401 and wrong.json()["error"] == "unauthorized"
    big = _post(client, token, b"x" * (64 * 1024 + 1))
    assert big.status_code == 413 and big.json()["error"] == "payload_too_large"
    huge = _post(client, token, b"x" * (200 * 1024))
    assert huge.status_code == 413
    assert _post(client, token, content).status_code == 201
    assert _post(client, token, b"broken\n").status_code == 422  # invalid uploads count too
    limited = _post(client, token, content)
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    assert limited.json()["error"] == "rate_limited"
    other = _token(client, "team-b")
    assert _post(client, other, content).status_code == 201


def test_upload_page_form(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    token = _token(client)
    form = client.get("/leaderboard/submit")
    assert form.status_code == 200 and 'type="file"' in form.text and 'name="token"' in form.text
    ok = client.post(
        "/leaderboard/submit",
        data={"token": token, "system": "form sys"},
        files={"file": ("p.jsonl", oracle_lines(gold_file))},
    )
    assert ok.status_code == 201 and "stored and scored" in ok.text
    bad = client.post("/leaderboard/submit", data={"token": token}, files={"file": ("p.jsonl", b"{}\n")})
    assert bad.status_code == 422 and "p.jsonl" in bad.text and "problem" in bad.text
    denied = client.post("/leaderboard/submit", data={"token": "nope"}, files={"file": ("p.jsonl", b"{}\n")})
    assert denied.status_code == 401 and "unknown API token" in denied.text


def test_leaderboard_disabled_without_gold(make_client) -> None:
    client = make_client(leaderboard_gold=None)
    r = _post(client, "svk_x", b"{}\n")
    assert r.status_code == 503 and r.json()["error"] == "leaderboard_disabled"
    assert "no leaderboard gold" in client.get("/leaderboard").text


def _gold_needles(gold_file: Path) -> list[str]:
    """Strings that would reveal the gold: each claim's evidence JSON (several spellings) and sets."""
    needles = []
    for line in gold_file.read_text().splitlines():
        raw = json.loads(line)
        if not raw["evidence"]:
            continue
        ev = raw["evidence"]
        needles += [json.dumps(ev), orjson.dumps(ev).decode(), json.dumps(ev, indent=2)]
        for doc, sets in ev.items():
            needles.append(json.dumps({doc: sets}))
            for s in sets:
                needles.append(json.dumps(s))
                needles.append(orjson.dumps(s).decode())
    return needles


@pytest.mark.parametrize("gold_public", [False, True])
def test_gold_is_never_served(make_client, gold_file: Path, gold_public: bool) -> None:
    client = make_client(board=True, gold_public=gold_public)
    token = _token(client)
    responses = [
        _post(client, token, oracle_lines(gold_file)),
        _post(client, token, empty_lines(gold_file)),
        _post(
            client, token, b'{"id": 1, "evidence": {"999999999": {"label": "SUPPORT", "sentences": [0]}}}\n'
        ),
        _post(client, token, b"\xff\xfe not utf8"),
        _post(client, token, b""),
    ]
    ids = [r.json().get("id") for r in responses[:2]]
    for path in [
        "/api/leaderboard",
        "/leaderboard",
        "/leaderboard/submit",
        "/api/health",
        "/openapi.json",
        *(f"/leaderboard/submissions/{i}" for i in ids),
        *(f"/leaderboard/submissions/{i}/report" for i in ids),
        *(f"/api/submissions/{i}" for i in ids),
        f"/static/../{gold_file}",
        f"/{gold_file}",
    ]:
        responses.append(client.get(path))
    needles = _gold_needles(gold_file)
    assert len(needles) > 100
    for r in responses:
        text = r.text
        assert str(gold_file) not in text and gold_file.name not in text, r.url
        assert '"counts"' not in text and "per_claim" not in text, r.url
        for needle in needles:
            assert needle not in text, (r.url, needle)
