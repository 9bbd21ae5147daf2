"""The verification queue: micro-batching, cache, shared in-flight work, shedding, error isolation."""

from __future__ import annotations

import asyncio

import pytest
from serving_doubles import FakeVerifier

from sciverify.serving.verify_service import Overloaded, VerifierUnavailable, VerifyService


def run(coro):
    return asyncio.run(coro)


def test_concurrent_claims_are_batched_and_all_answered() -> None:
    fake = FakeVerifier(delay=0.05)

    async def main() -> list:
        svc = VerifyService(fake, workers=1, batch_size=8, cache_size=0)
        await svc.start()
        try:
            return await asyncio.gather(*(svc.verify(f"claim {i}", 10) for i in range(20)))
        finally:
            await svc.stop()

    results = run(main())
    assert len(results) == 20 and all(len(r) == 2 for r in results)
    sizes = [len(b) for b in fake.batches]
    assert sum(sizes) == 20 and max(sizes) == 8 and len(sizes) < 20


def test_cache_and_in_flight_sharing() -> None:
    fake = FakeVerifier(delay=0.05)

    async def main() -> dict:
        svc = VerifyService(fake, workers=2, cache_size=4)
        await svc.start()
        try:
            await asyncio.gather(*(svc.verify("same claim", 10) for _ in range(5)))
            await svc.verify("same claim", 10)
            await svc.verify("same claim", 5)
            return dict(svc.stats)
        finally:
            await svc.stop()

    stats = run(main())
    assert sum(len(b) for b in fake.batches) == 2  # one per distinct (claim, k)
    assert stats["shared"] == 4 and stats["cache_hits"] == 1


def test_cache_is_bounded() -> None:
    fake = FakeVerifier()

    async def main() -> None:
        svc = VerifyService(fake, workers=1, cache_size=2)
        await svc.start()
        for c in ("a", "b", "c", "a"):
            await svc.verify(c, 10)
        await svc.stop()

    run(main())
    assert [b[0] for b in fake.batches] == ["a", "b", "c", "a"]


def test_queue_limit_sheds_load() -> None:
    fake = FakeVerifier(delay=0.2)

    async def main() -> list:
        svc = VerifyService(fake, workers=1, queue_limit=2, batch_size=1, cache_size=0)
        await svc.start()
        try:
            return await asyncio.gather(*(svc.verify(f"c{i}", 10) for i in range(6)), return_exceptions=True)
        finally:
            await svc.stop()

    outcomes = run(main())
    assert any(isinstance(o, Overloaded) for o in outcomes)
    assert any(isinstance(o, list) for o in outcomes)


def test_one_bad_claim_does_not_fail_its_batch() -> None:
    fake = FakeVerifier(delay=0.02, fail_on="bad")

    async def main() -> list:
        svc = VerifyService(fake, workers=1, batch_size=8, cache_size=0)
        await svc.start()
        try:
            return await asyncio.gather(
                *(svc.verify(c, 10) for c in ("ok1", "ok2", "bad one", "ok3", "ok4")), return_exceptions=True
            )
        finally:
            await svc.stop()

    outcomes = run(main())
    assert [isinstance(o, RuntimeError) for o in outcomes] == [False, False, True, False, False]


def test_loader_runs_once_in_background_and_failure_is_reported() -> None:
    calls = []

    def loader() -> FakeVerifier:
        calls.append(1)
        return FakeVerifier()

    def broken() -> FakeVerifier:
        raise OSError("index missing at /private/dir")

    async def main() -> tuple[str, str]:
        svc = VerifyService(loader=loader, workers=1)
        await svc.start(preload=True)
        await asyncio.gather(svc.verify("x", 10), svc.verify("y", 10))
        bad = VerifyService(loader=broken, workers=1)
        await bad.start(preload=False)
        with pytest.raises(VerifierUnavailable):
            await bad.verify("x", 10)
        await svc.stop()
        await bad.stop()
        return svc.status, bad.status

    assert run(main()) == ("ready", "failed")
    assert calls == [1]


def test_verifier_unavailable_is_503(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    def broken() -> FakeVerifier:
        raise OSError("index missing at /private/dir")

    app = create_app(Settings(data_dir=tmp_path), loader=broken)
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.post("/api/verify", json={"claim": "x"})
        assert r.status_code == 503 and r.json()["error"] == "verifier_unavailable"
        # with a k of its own the request fails later, at verification, with the same answer
        r = client.post("/api/verify", json={"claim": "x", "k": 3})
        assert r.status_code == 503 and r.json()["error"] == "verifier_unavailable"
        assert "/private/dir" not in r.text
        assert client.get("/api/health").json()["status"] == "degraded"
        assert client.get("/api/abstracts/11").status_code == 503
