"""Admission control: a claim that cannot start within the deadline is refused at once (503 +
Retry-After); accepted claims stay fast; health and static files never wait behind the models."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from serving_doubles import FakeVerifier

from sciverify.serving.verify_service import Overloaded, VerifyService


@asynccontextmanager
async def started(fake: FakeVerifier, **options: Any) -> AsyncIterator[VerifyService]:
    """A running service over ``fake``, warmed by one claim so that it has its estimate of model time."""
    svc = VerifyService(fake, **options)
    await svc.start()
    try:
        await svc.verify("warm-up", 5)
        yield svc
    finally:
        await svc.stop()


async def answer_or_refusal(request: Awaitable[object]) -> object:
    """The answer, or the :class:`Overloaded` refusal in its place."""
    try:
        return await request
    except Overloaded as exc:
        return exc


def test_claims_past_the_deadline_are_refused_at_once() -> None:
    fake = FakeVerifier(delay=0.3)

    async def main() -> tuple[list, list[float]]:
        async with started(fake, workers=1, batch_size=1, cache_size=0, deadline=0.5) as svc:
            assert svc.expected_wait() == 0.0

            async def timed(claim: str) -> tuple[object, float]:
                t0 = time.monotonic()
                out = await answer_or_refusal(svc.verify(claim, 5))
                return out, time.monotonic() - t0

            pairs = await asyncio.gather(*(timed(f"c{i}") for i in range(12)))
            return [p[0] for p in pairs], [p[1] for p in pairs]

    outcomes, latencies = asyncio.run(main())
    shed = [t for o, t in zip(outcomes, latencies, strict=True) if isinstance(o, Overloaded)]
    served = [t for o, t in zip(outcomes, latencies, strict=True) if isinstance(o, list)]
    assert shed and served
    assert max(shed) < 0.1, "a refused claim is told at once"
    # admitted: at most the deadline of waiting plus its own model time (and scheduling slack)
    assert max(served) < 0.5 + 0.3 + 0.3, served
    assert all(o.retry_after >= 1 for o in outcomes if isinstance(o, Overloaded))


def test_overload_is_503_with_retry_after_and_health_stays_fast(make_client) -> None:
    client = make_client(
        verifier=FakeVerifier(delay=2.0),
        verify_workers=1,
        verify_queue=1,
        verify_batch=1,
        verify_deadline=0,
        cache_size=0,
    )
    results: list = []

    def post(claim: str) -> None:
        results.append(client.post("/api/verify", json={"claim": claim}))

    threads = [threading.Thread(target=post, args=(f"busy {i}",)) for i in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.15)  # the first one runs, the second one waits in the queue
    t0 = time.monotonic()
    refused = client.post("/api/verify", json={"claim": "one too many"})
    elapsed = time.monotonic() - t0
    assert refused.status_code == 503 and elapsed < 1.0  # not behind a 2 s claim
    assert int(refused.headers["Retry-After"]) >= 1 and refused.json()["error"] == "overloaded"
    assert "busy" in refused.json()["message"]
    page = client.get("/", params={"claim": "one more"})
    assert page.status_code == 503 and "Retry-After" in page.headers
    for path in ("/api/health", "/static/app.js", "/static/app.css"):
        t0 = time.monotonic()
        assert client.get(path).status_code == 200
        assert time.monotonic() - t0 < 1.0, path  # never behind a 2 s claim, even on busy cores
    assert client.get("/api/health").json()["queue"]["shed"] >= 2
    for t in threads:
        t.join()
    assert [r.status_code for r in results] == [200, 200]


def test_the_claims_of_one_request_do_not_shed_each_other() -> None:
    fake = FakeVerifier(delay=0.2)

    async def main() -> tuple[list, object]:
        async with started(fake, workers=1, batch_size=2, cache_size=0, deadline=0.3) as svc:
            batch = asyncio.create_task(svc.verify_many([f"p{i}" for i in range(6)], 5))
            await asyncio.sleep(0.05)
            single = await answer_or_refusal(svc.verify("latecomer", 5))
            return await batch, single

    results, single = asyncio.run(main())
    assert len(results) == 6 and all(isinstance(r, list) for r in results)
    assert isinstance(single, Overloaded), "a request arriving behind the batch is refused at once"


def test_a_refused_claim_keeps_its_place_and_its_retry_finds_the_answer() -> None:
    fake = FakeVerifier(delay=0.2)

    async def main() -> tuple[object, object, dict[str, int]]:
        async with started(fake, workers=1, batch_size=1, cache_size=8, deadline=0.25) as svc:
            # about 0.2 s a claim
            ahead = [asyncio.create_task(svc.verify(f"ahead {i}", 5)) for i in range(2)]
            await asyncio.sleep(0.05)  # the first is taken by the worker, the second waits
            refused = await answer_or_refusal(svc.verify("late", 5))
            # asking again before the answer is due: refused again, and nothing is queued twice
            with pytest.raises(Overloaded):
                await svc.verify("late", 5)
            await asyncio.gather(*ahead)
            while svc.counters()["waiting"] or svc.counters()["running"]:
                await asyncio.sleep(0.05)
            retried = await svc.verify("late", 5)
            return refused, retried, svc.counters()

    refused, retried, counters = asyncio.run(main())
    assert isinstance(refused, Overloaded), "a claim behind the queue must be refused"
    assert refused.retry_after >= 1
    assert isinstance(retried, list) and retried
    assert [b for b in fake.batches if b == ["late"]] == [["late"]], "computed once, for the retry"
    assert counters["reserved"] == 1 and counters["cache_hits"] == 1 and counters["shed"] == 2


def test_a_claim_being_computed_is_shared_when_new_claims_are_refused() -> None:
    fake = FakeVerifier(delay=0.3)

    async def main() -> tuple[list, list[object]]:
        async with started(fake, workers=1, batch_size=1, cache_size=8, deadline=0.1) as svc:
            first = asyncio.create_task(svc.verify("popular", 5))
            while svc.counters()["running"] == 0:
                await asyncio.sleep(0.01)
            # the batch in flight alone is past the deadline
            behind = [await answer_or_refusal(svc.verify(f"b{i}", 5)) for i in range(4)]
            again = await svc.verify("popular", 5)  # shared, not refused
            return [await first, again], behind

    answers, behind = asyncio.run(main())
    assert answers[0] == answers[1]
    assert all(isinstance(b, Overloaded) for b in behind)
    assert sum(b == ["popular"] for b in fake.batches) == 1


def test_admission_counts_the_batch_in_flight() -> None:
    fake = FakeVerifier(delay=0.4)

    async def main() -> object:
        async with started(fake, workers=1, batch_size=4, cache_size=0, deadline=0.2) as svc:
            # about 0.4 s a claim in a batch of one
            busy = asyncio.create_task(svc.verify("p0", 5))
            while svc.counters()["running"] < 1:
                await asyncio.sleep(0.01)
            # nothing waits, but the worker's batch in flight has far more than 0.2 s left
            single = await answer_or_refusal(svc.verify("next", 5))
            await busy
            return single

    single = asyncio.run(main())
    assert isinstance(single, Overloaded)
    assert ["next"] not in fake.batches, "without a cache to keep it, a refused claim is not computed"


def test_stopping_refuses_the_claims_still_waiting_or_running() -> None:
    """A server going away answers every open request (503 with Retry-After), so none hangs."""
    fake = FakeVerifier(delay=0.5)

    async def main() -> list[object]:
        svc = VerifyService(fake, workers=1, batch_size=1, cache_size=0, deadline=0)
        await svc.start()
        pending = [asyncio.create_task(answer_or_refusal(svc.verify(f"s{i}", 5))) for i in range(2)]
        await asyncio.sleep(0.1)  # the first runs, the second waits
        await svc.stop()
        return await asyncio.wait_for(asyncio.gather(*pending), timeout=5)

    outcomes = asyncio.run(main())
    assert all(isinstance(o, Overloaded) and o.retry_after >= 1 for o in outcomes), outcomes


def test_an_accepted_claim_never_waits_past_its_deadline_when_the_estimate_is_wrong() -> None:
    """The estimate says 20 ms a claim, the models now take 400 ms: admission lets the whole crowd in,
    and the deadline sheds each request whose claim has not started in time (503 + Retry-After)."""
    fake = FakeVerifier(delay=0.02)
    deadline, margin = 0.5, 0.4

    async def main() -> tuple[list[tuple[object, float]], dict[str, int]]:
        async with started(fake, workers=1, batch_size=1, cache_size=64, deadline=deadline) as svc:
            for i in range(3):  # a settled estimate of fast claims
                await svc.verify(f"fast {i}", 5)
            fake.delay = 0.4
            assert svc.expected_wait() is not None and svc.expected_wait() < 0.1

            async def timed(claim: str) -> tuple[object, float]:
                t0 = time.monotonic()
                out = await answer_or_refusal(svc.verify(claim, 5))
                return out, time.monotonic() - t0

            pairs = await asyncio.gather(*(timed(f"slow {i}") for i in range(12)))
            return list(pairs), svc.counters()

    pairs, counters = asyncio.run(main())
    served = [t for o, t in pairs if isinstance(o, list)]
    shed = [(o, t) for o, t in pairs if isinstance(o, Overloaded)]
    assert served and shed, pairs
    # accepted: its claim started within the deadline, then one batch of model time
    assert max(served) < deadline + 0.4 + margin, served
    assert counters["longest_wait_ms"] <= 1000 * (deadline + margin), counters
    # shed at the deadline, not after a longer wait; told when to come back
    assert all(t < deadline + margin and o.retry_after >= 1 for o, t in shed), shed
    assert counters["expired"] == len(shed) and counters["expired"] >= 8, counters


def test_a_request_is_not_held_past_its_deadline_by_a_loading_verifier(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    def slow_load() -> FakeVerifier:
        time.sleep(2.0)
        return FakeVerifier()

    settings = Settings(data_dir=tmp_path / "serve", verify_deadline=0.3)
    with TestClient(create_app(settings, loader=slow_load), raise_server_exceptions=False) as client:
        t0 = time.monotonic()
        r = client.post("/api/verify", json={"claim": "ALDH1 predicts outcome"})
        assert time.monotonic() - t0 < 0.3 + 0.5
        assert r.status_code == 503 and r.json()["error"] == "overloaded" and r.headers["Retry-After"] == "2"
        while client.get("/api/health").json()["verifier"] != "ready":
            time.sleep(0.1)
        r = client.post("/api/verify", json={"claim": "ALDH1 predicts outcome"})
        assert r.status_code == 200 and r.json()["supporting"]


def test_no_batch_is_expected_to_outlast_the_deadline() -> None:
    """Claims a worker takes at once shrink when a full batch would take longer than the deadline, so an
    accepted claim waits at most the deadline to start and about the deadline in its batch."""
    fake = FakeVerifier(delay=0.02)

    async def main() -> list[list[str]]:
        async with started(fake, workers=1, batch_size=8, cache_size=0, deadline=0.5) as svc:
            await svc.verify_many([f"fast {i}" for i in range(8)], 5)  # 8 fit: 20 ms a claim
            fake.delay = 0.6  # now about 0.6 s a claim (the fake sleeps once a batch)
            await svc.verify("slow", 5)
            fake.batches.clear()
            await svc.verify_many([f"p{i}" for i in range(6)], 5)
            return list(fake.batches)

    batches = asyncio.run(main())
    assert batches and max(len(b) for b in batches) <= 2, batches


def test_before_any_estimate_one_claim_per_worker_is_admitted_and_taken_alone() -> None:
    """A cold model's first batch can take many times a warm one's; before the first estimate a full
    batch per worker was admitted (8 claims, 16-17 s on a loaded machine). Now one claim per worker."""
    fake = FakeVerifier(delay=0.3)

    async def main() -> list[object]:
        svc = VerifyService(fake, workers=2, batch_size=4, cache_size=0, deadline=1.0)
        await svc.start()
        try:
            return list(await asyncio.gather(*(answer_or_refusal(svc.verify(f"c{i}", 5)) for i in range(8))))
        finally:
            await svc.stop()

    outcomes = asyncio.run(main())
    assert sum(isinstance(o, list) for o in outcomes) == 2, outcomes
    assert all(o.retry_after >= 1 for o in outcomes if isinstance(o, Overloaded))
    assert sorted(len(b) for b in fake.batches) == [1, 1], fake.batches
