"""Bounded scoring on a real server: a full queue sheds with 503 + Retry-After, a team has one upload in
flight (429), a retry with the same idempotency key waits for the first, and a file that runs past the
time budget is answered as invalid. Scoring is held on an event, so nothing here depends on timing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from serving_doubles import FakeVerifier, heavy_lines, oracle_lines, serve_in_thread

from sciverify.serving.auth import add_submitter


@contextmanager
def _held(tmp_path: Path, gold_file: Path, scifact_dir: Path, **values: Any) -> Iterator[Any]:
    """A live server whose scoring waits for an event; yields (url, app, event, sizes scored in order)."""
    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    settings = Settings(
        data_dir=tmp_path / "serve",
        leaderboard_gold=gold_file,
        corpus=scifact_dir / "corpus.jsonl",
        n_boot=200,
        scoring_workers=1,
        **values,
    )
    app = create_app(settings, verifier=FakeVerifier())
    release = threading.Event()
    order: list[int] = []
    with serve_in_thread(app) as port:
        lb = app.state.leaderboard
        real = lb.score

        def held(content: bytes, filename: str) -> Any:
            order.append(len(content))
            release.wait(timeout=30)
            return real(content, filename)

        lb.score = held
        try:
            yield f"http://127.0.0.1:{port}", app, release, order
        finally:
            release.set()


@pytest.fixture()
def held_board(
    tmp_path: Path, gold_file: Path, scifact_dir: Path
) -> Iterator[tuple[str, Any, threading.Event]]:
    """A live server with one scoring slot and one waiting place, whose scoring waits for an event."""
    with _held(tmp_path, gold_file, scifact_dir, scoring_queue=1) as (url, app, release, _):
        yield url, app, release


def _wait_admitted(app: Any, n: int) -> None:
    deadline = time.monotonic() + 20
    while app.state.scoring_queue.admitted < n and time.monotonic() < deadline:
        time.sleep(0.01)
    assert app.state.scoring_queue.admitted == n


def test_a_full_queue_sheds_and_a_team_has_one_upload_in_flight(held_board, gold_file: Path) -> None:
    url, app, release = held_board
    tokens = [add_submitter(app.state.db, f"team {i}") for i in range(3)]
    content = oracle_lines(gold_file)
    answers: dict[int, httpx.Response] = {}

    def upload(i: int, key: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {tokens[i]}"}
        if key:
            headers["Idempotency-Key"] = key
        files = {"file": ("p.jsonl", content)}
        return httpx.post(url + "/api/submissions", headers=headers, files=files, timeout=30)

    def keep(i: int, key: str | None = None) -> None:
        answers[i] = upload(i, key)

    first = threading.Thread(target=keep, args=(0, "k0"))
    first.start()
    _wait_admitted(app, 1)  # team 0 holds the slot
    second = threading.Thread(target=keep, args=(1,))
    second.start()
    _wait_admitted(app, 2)  # team 1 waits in the queue
    shed = upload(2)
    assert shed.status_code == 503 and shed.json()["error"] == "overloaded"
    assert int(shed.headers["Retry-After"]) >= 1
    files = {"file": ("p.jsonl", content)}
    form = httpx.post(url + "/leaderboard/submit", data={"token": tokens[2]}, files=files, timeout=30)
    assert form.status_code == 503 and int(form.headers["Retry-After"]) >= 1 and "queue is full" in form.text
    again = upload(0, "another-key")
    assert again.status_code == 429 and again.json()["error"] == "upload_in_flight"
    assert int(again.headers["Retry-After"]) >= 1
    # The same upload retried (same key) waits for the first and gets the same row.
    retry: list[httpx.Response] = []
    same = threading.Thread(target=lambda: retry.append(upload(0, "k0")))
    same.start()
    release.set()
    for t in (first, second, same):
        t.join(timeout=30)
    assert answers[0].status_code == answers[1].status_code == 201
    assert retry[0].status_code == 201 and retry[0].headers["Idempotent-Replayed"] == "true"
    assert retry[0].json()["id"] == answers[0].json()["id"]
    # Room again: the shed team's retry is scored.
    assert upload(2).status_code == 201
    assert app.state.scoring_queue.counters() == {"admitted": 0, "capacity": 2, "shed": 2, "busy": 1}


def test_an_upload_past_the_time_budget_is_invalid_and_counts(make_client, gold_file: Path) -> None:
    client = make_client(board=True, scoring_budget=1e-9)
    token = add_submitter(client.app.state.db, "slow")
    r = client.post(
        "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("p.jsonl", oracle_lines(gold_file))},
    )
    assert r.status_code == 422
    (problem,) = r.json()["problems"]
    assert "within the 1e-09 s allowed for one upload; nothing was scored" in problem["message"]


def test_heavy_files_from_five_teams_keep_another_team_out_for_one_file_at_most(
    tmp_path: Path, gold_file: Path, scifact_dir: Path
) -> None:
    """Five tokens send valid files of nearly the upload limit; another team's ordinary file must be
    admitted while one heavy file is being scored, and scored next: it waits one file's scoring time,
    not the queue of heavy files (the server that counted uploads let all five in and answered the
    sixth team 503 until they were done)."""
    heavy = heavy_lines(gold_file, scifact_dir / "corpus.jsonl", 1_000_000)
    light = oracle_lines(gold_file)
    limit = len(heavy) + 4096
    with _held(tmp_path, gold_file, scifact_dir, max_upload_bytes=limit) as (url, app, release, order):
        tokens = [add_submitter(app.state.db, f"heavy {i}") for i in range(5)]
        other = add_submitter(app.state.db, "another team")
        answers: dict[str, httpx.Response] = {}

        def upload(token: str, content: bytes) -> httpx.Response:
            files = {"file": ("p.jsonl", content)}
            auth = {"Authorization": f"Bearer {token}"}
            return httpx.post(url + "/api/submissions", headers=auth, files=files, timeout=60)

        def keep(name: str, token: str, content: bytes) -> threading.Thread:
            thread = threading.Thread(target=lambda: answers.__setitem__(name, upload(token, content)))
            thread.start()
            return thread

        threads = [keep("heavy 0", tokens[0], heavy)]
        _wait_admitted(app, 1)  # scoring the first heavy file
        threads.append(keep("heavy 1", tokens[1], heavy))
        _wait_admitted(app, 2)  # one heavy file may wait behind it ...
        for i in (2, 3, 4):  # ... the others are told when to come back
            shed = upload(tokens[i], heavy)
            assert shed.status_code == 503 and int(shed.headers["Retry-After"]) >= 1, shed.text
        threads.append(keep("other", other, light))
        _wait_admitted(app, 3)  # the other team is in, though heavy files fill the queue
        release.set()
        for t in threads:
            t.join(timeout=60)
    statuses = {name: r.status_code for name, r in answers.items()}
    assert statuses == {"heavy 0": 201, "heavy 1": 201, "other": 201}
    # scored in fair order: the other team's file right after the one being scored when it came
    assert order == [len(heavy), len(light), len(heavy)]


def test_with_every_place_taken_a_newcomer_first_in_fair_order_takes_the_last_place(
    tmp_path: Path, gold_file: Path, scifact_dir: Path
) -> None:
    """One slot and one waiting place, both held by heavy files: another team's ordinary file comes
    before the waiting heavy one in the fair order, so it takes that place (the heavy file's client is
    told 503 with Retry-After) and is scored next."""
    heavy = heavy_lines(gold_file, scifact_dir / "corpus.jsonl", 300_000)
    light = oracle_lines(gold_file)
    values = {"scoring_queue": 1, "max_upload_bytes": len(heavy) + 4096}
    with _held(tmp_path, gold_file, scifact_dir, **values) as (url, app, release, order):
        answers: dict[str, httpx.Response] = {}
        threads = []
        for name, content in (("heavy 0", heavy), ("heavy 1", heavy), ("other", light)):
            token = add_submitter(app.state.db, name)

            def send(name: str = name, token: str = token, content: bytes = content) -> None:
                files = {"file": ("p.jsonl", content)}
                auth = {"Authorization": f"Bearer {token}"}
                answers[name] = httpx.post(url + "/api/submissions", headers=auth, files=files, timeout=60)

            threads.append(threading.Thread(target=send))
            threads[-1].start()
            if name != "other":
                _wait_admitted(app, len(threads))
        threads[1].join(timeout=30)  # evicted: answered at once, while scoring is still held
        assert answers["heavy 1"].status_code == 503 and int(answers["heavy 1"].headers["Retry-After"]) >= 1
        _wait_admitted(app, 2)
        release.set()
        for t in threads:
            t.join(timeout=60)
    assert answers["heavy 0"].status_code == answers["other"].status_code == 201
    assert order == [len(heavy), len(light)]
