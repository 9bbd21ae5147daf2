"""Verification behind the web app: a bounded worker pool, micro-batching and a small LRU cache.

Model inference is CPU-bound (~100-300 ms a claim), so it must never run on the event loop. Requests
are put on a queue; ``workers`` tasks each take the next claim plus whatever else is already waiting
with the same ``k`` (up to ``batch_size``) and hand the lot to ``Verifier.verify_batch`` on a worker
thread. Identical claims in flight share one computation, and recent answers come from the cache.

Admission control: a claim that needs the models is admitted only if a worker can be expected to
start it within ``deadline`` seconds (the wait is estimated from the claims ahead of it and a moving
average of model time per claim) and fewer than ``queue_limit`` claims are waiting. Otherwise
:class:`Overloaded` is raised at once, with the expected wait as its ``retry_after``: under overload a
client hears "busy, retry in N s" immediately instead of watching a spinner for half a minute, and
the requests that are accepted stay fast. A claim that still waited past twice the deadline (the
estimate was wrong) is shed when a worker reaches it. Cache hits and shared claims never queue.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from sciverify.data.records import Abstract, VerifiedAbstract

__all__ = ["Overloaded", "VerifierLike", "VerifierUnavailable", "VerifyService"]

log = logging.getLogger("sciverify.serving")


class VerifierLike(Protocol):
    """What the service needs from ``sciverify.pipeline.verify.Verifier`` (tests may pass a double)."""

    @property
    def default_k(self) -> int:
        """Candidates judged when a request names no ``k`` (the pipeline's tuned k)."""
        ...

    def verify_batch(self, claims: Sequence[str], k: int | None = None) -> list[list[VerifiedAbstract]]: ...

    def get_abstract(self, doc_id: str) -> Abstract | None: ...


class Overloaded(Exception):
    """A worker cannot be expected to start the claim within the deadline; retry after ``retry_after`` s."""

    def __init__(self, retry_after: int = 1) -> None:
        super().__init__(f"overloaded; retry after {retry_after} s")
        self.retry_after = retry_after


class VerifierUnavailable(Exception):
    """The verifier could not be loaded (the reason is in the server log)."""


_Key = tuple[str, int]
_Item = tuple[_Key, "asyncio.Future[list[VerifiedAbstract]]", float]
#: Weight of the newest batch in the moving average of model time per claim.
_EWMA = 0.3


class VerifyService:
    """Owns the verifier, its threads, the queue and the cache for one app instance."""

    def __init__(
        self,
        verifier: VerifierLike | None = None,
        *,
        loader: Callable[[], VerifierLike] | None = None,
        workers: int = 2,
        queue_limit: int = 2000,
        cache_size: int = 1024,
        batch_size: int = 8,
        deadline: float | None = None,
    ) -> None:
        if verifier is None and loader is None:
            raise ValueError("give a verifier or a loader")
        self._verifier = verifier
        self._loader = loader
        self._workers = workers
        self._queue_limit = queue_limit
        self._cache_size = cache_size
        self._batch_size = batch_size
        self._deadline = deadline
        self._per_claim: float | None = None  # moving average of model seconds per claim in a batch
        self._running = 0  # claims being computed right now
        self._cache: OrderedDict[_Key, list[VerifiedAbstract]] = OrderedDict()
        self._inflight: dict[_Key, asyncio.Future[list[VerifiedAbstract]]] = {}
        self._queue: asyncio.Queue[_Item] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._executor: ThreadPoolExecutor | None = None
        self._load_task: asyncio.Task[VerifierLike | None] | None = None
        self._load_error: BaseException | None = None
        self.stats = {"requests": 0, "cache_hits": 0, "shared": 0, "batches": 0, "claims_run": 0, "shed": 0}

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self, *, preload: bool = True) -> None:
        """Start the worker tasks; with ``preload`` begin loading the verifier in the background."""
        self._executor = ThreadPoolExecutor(
            max_workers=self._workers + 1, thread_name_prefix="sciverify-verify"
        )
        self._queue = asyncio.Queue()
        self._tasks = [asyncio.create_task(self._worker()) for _ in range(self._workers)]
        if preload and self._verifier is None:
            self._ensure_load_task()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self._executor is not None:
            await asyncio.to_thread(self._executor.shutdown, wait=True, cancel_futures=True)

    @property
    def status(self) -> str:
        """``ready``, ``loading``, ``not_loaded`` or ``failed``."""
        if self._verifier is not None:
            return "ready"
        if self._load_error is not None:
            return "failed"
        return "loading" if self._load_task is not None else "not_loaded"

    def info(self) -> dict[str, Any]:
        """Index facts from the verifier, when it offers them."""
        info = getattr(self._verifier, "index_info", None)
        return dict(info) if isinstance(info, dict) else {}

    def counters(self) -> dict[str, int]:
        """Request, cache and batch counters plus the claims waiting and being computed right now."""
        waiting = self._queue.qsize() if self._queue is not None else 0
        return {**self.stats, "waiting": waiting, "running": self._running, "cached": len(self._cache)}

    def _ensure_load_task(self) -> asyncio.Task[VerifierLike | None]:
        if self._load_task is None:
            self._load_task = asyncio.create_task(self._load())
        return self._load_task

    async def _load(self) -> VerifierLike | None:
        """Load once; a failure is kept (and logged here, with its traceback) rather than raised."""
        assert self._loader is not None and self._executor is not None
        loop = asyncio.get_running_loop()
        try:
            verifier = await loop.run_in_executor(self._executor, self._loader)
        except Exception as exc:
            self._load_error = exc
            log.error("loading the verifier failed", exc_info=exc)
            return None
        self._verifier = verifier
        log.info("verifier ready")
        return verifier

    async def verifier(self) -> VerifierLike:
        """The loaded verifier, waiting for the background load if needed."""
        if self._verifier is not None:
            return self._verifier
        if self._load_error is None:
            loaded = await asyncio.shield(self._ensure_load_task())
            if loaded is not None:
                return loaded
        raise VerifierUnavailable()

    # -- requests ---------------------------------------------------------------------------------
    async def verify(self, claim: str, k: int, *, admitted: bool = False) -> list[VerifiedAbstract]:
        """Verified abstracts for one claim (cached, shared, queued); ``admitted``: the request was
        already admitted as a whole (:meth:`verify_many`), so this claim skips the admission check."""
        self.stats["requests"] += 1
        key = (claim, k)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            self.stats["cache_hits"] += 1
            return cached
        pending = self._inflight.get(key)
        if pending is not None:
            self.stats["shared"] += 1
            return await asyncio.shield(pending)
        await self.verifier()
        assert self._queue is not None
        if not admitted:
            self._admit()
        future: asyncio.Future[list[VerifiedAbstract]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        self._queue.put_nowait((key, future, time.monotonic()))
        try:
            return await asyncio.shield(future)
        finally:
            if future.done():
                self._inflight.pop(key, None)

    def expected_wait(self) -> float | None:
        """Seconds until a worker can be expected to start a newly queued claim (None: no estimate yet)."""
        if self._per_claim is None or self._queue is None:
            return None
        ahead = self._queue.qsize() + self._running
        return ahead * self._per_claim / self._workers

    def _admit(self) -> None:
        """Raise :class:`Overloaded` unless a worker can be expected to start one more claim in time.

        Before the first batch has given an estimate, at most one batch per worker may wait.
        """
        assert self._queue is not None
        waiting = self._queue.qsize()
        wait = self.expected_wait()
        if wait is None:
            late = self._deadline is not None and waiting + self._running >= self._workers * self._batch_size
        else:
            late = self._deadline is not None and wait > self._deadline
        if late or waiting >= self._queue_limit:
            self.stats["shed"] += 1
            over = (wait or 1.0) - (self._deadline or 0.0)
            raise Overloaded(max(1, min(60, math.ceil(over))))

    async def verify_many(self, claims: Sequence[str], k: int) -> list[list[VerifiedAbstract]]:
        """Verify several claims through the same queue (so a batch cannot starve single requests).

        Admission is decided once for the request, before any of its claims is queued: the claims of one
        request must not shed each other.
        """
        if len(claims) > 1 and any(
            (c, k) not in self._cache and (c, k) not in self._inflight for c in claims
        ):
            await self.verifier()
            self._admit()
            return list(await asyncio.gather(*(self.verify(claim, k, admitted=True) for claim in claims)))
        return list(await asyncio.gather(*(self.verify(claim, k) for claim in claims)))

    async def resolve_k(self, k: int | None) -> int:
        """``k``, or the verifier's tuned default when the request and the settings name none."""
        return k if k is not None else (await self.verifier()).default_k

    async def get_abstract(self, doc_id: str) -> Abstract | None:
        verifier = await self.verifier()
        return verifier.get_abstract(doc_id)

    def _remember(self, key: _Key, value: list[VerifiedAbstract]) -> None:
        if self._cache_size <= 0:
            return
        self._cache[key] = value
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    async def _worker(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            first = self._take_fresh(await self._queue.get())
            if first is None:
                continue
            batch = [first]
            deferred: list[_Item] = []
            while len(batch) < self._batch_size and not self._queue.empty():
                item = self._take_fresh(self._queue.get_nowait())
                if item is not None:
                    (batch if item[0][1] == first[0][1] else deferred).append(item)
            for item in deferred:
                self._queue.put_nowait(item)
            k = first[0][1]
            claims = [key[0] for key, _, _ in batch]
            self._running += len(batch)
            started = time.monotonic()
            try:
                results = await loop.run_in_executor(self._executor, self._run, claims, k)
            except Exception:
                self._running -= len(batch)
                if len(batch) == 1:
                    self._settle(batch[0], None, sys.exc_info()[1])
                    continue
                # One bad claim must not fail its neighbours: redo the batch one claim at a time.
                for item in batch:
                    try:
                        single = await loop.run_in_executor(self._executor, self._run, [item[0][0]], k)
                    except Exception as exc:
                        self._settle(item, None, exc)
                    else:
                        self._settle(item, single[0], None)
                continue
            self._running -= len(batch)
            sample = (time.monotonic() - started) / len(batch)
            self._per_claim = (
                sample if self._per_claim is None else (1 - _EWMA) * self._per_claim + _EWMA * sample
            )
            self.stats["batches"] += 1
            for item, result in zip(batch, results, strict=True):
                self._settle(item, result, None)

    def _take_fresh(self, item: _Item) -> _Item | None:
        """The item, or None after shedding it because it waited past twice the deadline."""
        if self._deadline is not None and time.monotonic() - item[2] > 2 * self._deadline:
            self.stats["shed"] += 1
            self._settle(item, None, Overloaded(max(1, math.ceil(self.expected_wait() or 1.0))))
            return None
        return item

    def _run(self, claims: list[str], k: int) -> list[list[VerifiedAbstract]]:
        verifier = self._verifier
        assert verifier is not None
        results = verifier.verify_batch(claims, k)
        if len(results) != len(claims):
            raise RuntimeError("verify_batch returned a different number of results")
        self.stats["claims_run"] += len(claims)
        return results

    def _settle(
        self,
        item: _Item,
        result: list[VerifiedAbstract] | None,
        error: BaseException | None,
    ) -> None:
        key, future, _ = item
        self._inflight.pop(key, None)
        if error is None:
            assert result is not None
            self._remember(key, result)
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]
