"""No access-log line keeps a piece of a token longer than 8 characters: the forms a red team used on a
real uvicorn server, every route and static file still logged whole, and 1,000 random wrappings of
random tokens (seeded) through the same filter the server installs."""

from __future__ import annotations

import http.client
import logging
import random
import secrets
import string
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from serving_doubles import FakeVerifier, serve_with_access_log

from sciverify.serving.logs import MAX_KEPT, RedactQuery, redact, redact_target


def _pieces(token: str) -> set[str]:
    """Every piece of ``token`` one character longer than the log may keep."""
    n = MAX_KEPT + 1
    return {token[i : i + n] for i in range(len(token) - n + 1)}


def _leaks(token: str, line: str) -> list[str]:
    """The pieces of ``token`` longer than 8 characters found in ``line`` (as written or decoded)."""
    texts = (line, unquote(line))
    return sorted(p for p in _pieces(token) if any(p in t for t in texts))


def _access_line(client: str, method: str, target: str) -> str:
    """One uvicorn access record, through the filter the server installs, as a handler would print it."""
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        (client, method, target, "1.1", 400),
        None,
    )
    RedactQuery().filter(record)
    return record.getMessage()


# -- the red team's forms, on a real server -------------------------------------------------------------
def _red_team_targets(token: str) -> list[str]:
    third = len(token) // 3
    return [
        f"/api/submissions/%22{token}%22",
        f"/Bearer%20{token}",
        f"/token:{token}",
        f"/x,{token}",
        f"/%23{token}",
        f"/%ff{token}",
        f"/api/submissions/{token[:third]}/{token[third : 2 * third]}/{token[2 * third :]}",
        f"/{token[:third]}/{token[third : 2 * third]}/{token[2 * third :]}",
        f"/api/abstracts/{quote(token, safe='')}",
        f"/api/abstracts/{''.join(f'%{ord(c):02X}' for c in token)}",  # every character encoded
        f"/api/abstracts/%2522{token}%2522",  # encoded twice
        f"/leaderboard?next=/x,{token}",
    ]


@pytest.fixture()
def live_server(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    app = create_app(Settings(data_dir=tmp_path / "serve"), verifier=FakeVerifier())
    with serve_with_access_log(app) as (port, lines):
        yield port, lines


def test_the_red_team_forms_leave_no_piece_of_the_token_in_the_access_log(live_server) -> None:
    port, lines = live_server
    token = "svk_" + secrets.token_urlsafe(32)
    targets = _red_team_targets(token)
    statuses = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for target in targets:
        conn.request("GET", target)
        r = conn.getresponse()
        body = r.read()
        statuses.append(r.status)
        assert token.encode() not in body and r.status < 500, (target, r.status, body)
    conn.close()
    deadline = time.monotonic() + 5
    while len(lines) < len(targets) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(lines) >= len(targets), lines
    for line in lines:
        assert _leaks(token, line) == [], line
    # a token with other characters around it is refused by the same runs the log redacts
    assert statuses[:6] == [400] * 6, statuses
    assert any("/api/submissions/%22<redacted>%22" in line for line in lines), lines
    assert any("/x,<redacted>" in line for line in lines), lines


def test_every_route_and_static_file_is_logged_whole(tmp_path: Path) -> None:
    """The vocabulary covers the app's own paths: an operator reads them as they were asked for."""
    from sciverify.serving.app import create_app, package_dir
    from sciverify.serving.settings import Settings

    app = create_app(Settings(data_dir=tmp_path / "serve"), verifier=FakeVerifier())
    paths = [p.replace("{doc_id}", "4983") for p in app.openapi()["paths"] if "{submission_id}" not in p]
    paths += ["/docs", "/openapi.json", "/leaderboard.csv", "/leaderboard/submit", "/leaderboard/final"]
    static = package_dir() / "static"
    paths += ["/static/" + p.relative_to(static).as_posix() for p in static.rglob("*") if p.is_file()]
    paths += ["/docs-static/" + p.name for p in (static / "swagger-ui").glob("*") if p.is_file()]
    assert len(paths) > 15
    for path in paths:
        assert redact_target(path) == path, path


def test_ordinary_text_is_kept_and_queries_are_not() -> None:
    assert redact_target("/api/health") == "/api/health"
    assert redact_target("/abstracts/4983") == "/abstracts/4983"
    assert redact_target("/api/abstracts/13734012") == "/api/abstracts/13734012"
    # a long number may be a piece of a hex secret
    assert redact_target("/api/abstracts/195689316") == "/api/abstracts/<redacted>"
    assert redact_target("/?claim=x") == "/?<redacted>"
    assert redact_target("/leaderboard/submissions/AbCdEf123456") == "/leaderboard/submissions/<redacted>"
    assert redact("127.0.0.1:53422") == "127.0.0.1:53422" and redact("[::1]:8000") == "[::1]:8000"
    # a decoded line break or quote cannot forge a line or a field
    assert redact_target("/a%0A127.0.0.1%20-%20%22GET") == "/a%0A127.0.0.1%20-%20%22GET"


# -- 1,000 random wrappings ------------------------------------------------------------------------------
_WRAPPERS = [
    ('"', '"'), ("'", "'"), ("Bearer ", ""), ("bearer%20", ""), ("token:", ""), ("x,", ""), ("#", ""),
    ("\xff", ""), ("<", ">"), ("(", ")"), ("[", "]"), ("{", "}"), ("Authorization: Bearer ", ""),
    ("?t=", ""), ("", ";"), ("", "."), ("%", "%"), ("\\", "\\"), ("\u00e9", "\u00e9"), (" ", " "),
    ("ab", "cd"), ("1", "2"), ("-", "_"), ("\t", "\n"),
]  # fmt: skip
_PUNCT = "!\"#$%&'()*+,.:;<=>?@[\\]^`{|}~ \t"


def _encode(text: str, rng: random.Random) -> str:
    """Percent-encode a random subset of ``text`` (once, or twice: ``%2541``), as a client or proxy
    might; characters a request line cannot carry raw are always encoded."""
    out = []
    for ch in text:
        raw = ch.encode("utf-8")
        roll = rng.random()
        if roll < 0.15 or ord(ch) > 126 or ch in " \t\n":
            out.append("".join(f"%{b:02X}" for b in raw))
        elif roll < 0.2:
            out.append("".join(f"%25{b:02X}" for b in raw))
        else:
            out.append(ch)
    return "".join(out)


def _wrapping(token: str, rng: random.Random) -> tuple[str, str, str]:
    """One random way a token ends up in an access-log record: (client, method, target)."""
    before, after = rng.choice(_WRAPPERS)
    extra = "".join(rng.choice(_PUNCT) for _ in range(rng.randint(0, 3)))
    text = before + extra + token + rng.choice(["", extra[::-1]]) + after
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(0, 4)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    joiner = rng.choice(["/", "/", "//", "/x/", "/%2F", ";", ","])
    body = joiner.join(pieces)
    prefix = rng.choice(
        ["/", "/api/submissions/", "/leaderboard/submissions/", "/api/abstracts/", "/static/"]
    )
    where = rng.random()
    if where < 0.6:
        target = _encode(prefix + body, rng)
    elif where < 0.8:
        target = _encode(prefix, rng) + "?" + _encode(body, rng)
    else:
        target = "/api/health"
        method = _encode(body, rng)[:200]
        return "127.0.0.1:40000", method, target
    return rng.choice(["127.0.0.1:40000", "[::1]:5000"]), rng.choice(["GET", "POST"]), target


def test_no_piece_of_a_token_survives_1000_random_wrappings() -> None:
    rng = random.Random(51)
    alphabet = string.ascii_letters + string.digits + "-_"
    seen_forms = 0
    for i in range(1000):
        if i % 2:
            token = "svk_" + "".join(rng.choice(alphabet) for _ in range(43))
        else:  # a secret of another format: hex, or base64 without the prefix
            token = "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice([24, 32, 40, 64])))
        client, method, target = _wrapping(token, rng)
        line = _access_line(client, method, target)
        assert _leaks(token, line) == [], (target, line)
        if _leaks(token, target) or _leaks(token, method):  # a long piece was there: a marker replaced it
            assert "<redacted>" in line, (target, line)
            seen_forms += 1
    assert seen_forms > 900  # nearly every wrapping held a piece longer than 8 characters
