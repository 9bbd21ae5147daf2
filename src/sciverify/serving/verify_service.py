"""Verification behind the web app: a bounded worker pool, micro-batching, a small LRU cache and
admission control with reservations and a deadline (:mod:`sciverify.serving.admission`).

Model inference is CPU-bound (~100-300 ms a claim), so it must never run on the event loop. Claims
that need the models wait in one FIFO; ``workers`` tasks each take the oldest claim plus the next ones
with the same ``k`` (up to ``batch_size``) and hand the lot to ``Verifier.verify_batch`` on a worker
thread. Identical claims share one computation, and recent answers come from the cache.

The model threads run ``nice`` OS priority steps below the event loop, so the cheap answers (cache hits,
503s, health) are not queued behind inference for the CPU.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from sciverify.data.records import Abstract, VerifiedAbstract
from sciverify.pipeline.searched import Searched
from sciverify.serving.admission import Admission, Overloaded, _Job, _Key

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


class VerifierUnavailable(Exception):
    """The verifier could not be loaded (the reason is in the server log)."""


#: Weight of the newest batch in the moving average of model time per claim.
_EWMA = 0.3
#: Retry-After while the verifier is still loading (how long the load has left is not known).
_LOADING_RETRY = 2


def _lower_priority(nice: int) -> None:
    """Run this model thread (and the threads it starts) ``nice`` steps below the event loop.

    Under overload the models would otherwise take the CPU from the thread that answers cache hits,
    health checks and 503s, and every accepted request would queue behind them; lowered, they still
    use every cycle the event loop leaves idle. Linux keeps a priority per thread and new threads
    inherit it; elsewhere this does nothing.
    """
    if nice and hasattr(os, "setpriority"):
        try:
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
        except OSError:
            pass


class VerifyService(Admission):
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
        nice: int = 0,
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
        self._nice = nice
        self._per_claim: float | None = None  # moving average of model seconds per claim in a batch
        self._cache: OrderedDict[_Key, list[VerifiedAbstract]] = OrderedDict()
        self._waiting: OrderedDict[_Key, _Job] = OrderedDict()  # the FIFO, oldest first
        self._computing: dict[_Key, _Job] = {}
        #: When each worker's batch in flight started and how many claims it holds (None: idle).
        self._busy: list[tuple[float, int] | None] = [None] * workers
        self._wake: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._executor: ThreadPoolExecutor | None = None
        self._load_task: asyncio.Task[VerifierLike | None] | None = None
        self._load_error: BaseException | None = None
        self.stats = {
            "requests": 0,
            "cache_hits": 0,
            "shared": 0,
            "batches": 0,
            "claims_run": 0,
            "shed": 0,
            "reserved": 0,
            "expired": 0,
            "longest_wait_ms": 0,
        }

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self, *, preload: bool = True) -> None:
        """Start the worker tasks; with ``preload`` begin loading the verifier in the background."""
        self._executor = ThreadPoolExecutor(
            max_workers=self._workers + 1,
            thread_name_prefix="sciverify-verify",
            initializer=_lower_priority,
            initargs=(self._nice,),
        )
        self._wake = asyncio.Event()
        self._tasks = [asyncio.create_task(self._worker(i)) for i in range(self._workers)]
        if preload and self._verifier is None:
            self._ensure_load_task()

    async def stop(self) -> None:
        """Stop the workers. Claims still waiting or running are refused as if overloaded (a 503 that
        says when to retry), so no request stays open on a server that is going away."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        for job in [*self._waiting.values(), *self._computing.values()]:
            job.started.set()
            if not job.future.done():
                job.future.set_exception(Overloaded(1))
        self._waiting.clear()
        self._computing.clear()
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

    def conformance(self) -> dict[str, Any]:
        """The models' canaries on this CPU (:mod:`sciverify.models.conformance`): the loaded verifier's
        report, or the refusal that stopped it loading; empty before either."""
        report = getattr(self._verifier, "conformance", None)
        summary = getattr(report, "summary", None)
        if callable(summary):
            return dict(summary())
        from sciverify.models.conformance import ConformanceError

        if isinstance(self._load_error, ConformanceError):
            return {"ok": False, "error": str(self._load_error)}
        return {}

    def counters(self) -> dict[str, int]:
        """Request, cache and batch counters plus the claims waiting and being computed right now."""
        return {
            **self.stats,
            "waiting": len(self._waiting),
            "running": len(self._computing),
            "cached": len(self._cache),
        }

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
    async def verify(
        self, claim: str, k: int, *, admitted: bool = False, since: float | None = None
    ) -> list[VerifiedAbstract]:
        """Verified abstracts for one claim (cached, shared, queued) for a request that arrived at
        ``since`` (``time.monotonic()``; None: now); ``admitted``: the request was already admitted as a
        whole (:meth:`verify_many`), so this claim skips the admission check and the deadline."""
        key = (claim, k)
        cutoff = None if admitted else self._cutoff(since)
        if self._verifier is None and key not in self._cache:
            await self._loaded(cutoff)
        found = self._lookup(key, admit=not admitted, cutoff=cutoff)
        if isinstance(found, list):
            return found
        if cutoff is not None:
            await self._started_by([found], cutoff)
            self._note_wait(cutoff)
        return await asyncio.shield(found.future)

    async def verify_many(
        self, claims: Sequence[str], k: int, *, since: float | None = None
    ) -> list[list[VerifiedAbstract]]:
        """Verify several claims through the same queue (so a batch cannot starve single requests).

        Admission and the deadline are decided once for the request: the claims of one request must not
        shed each other, and the request has started when the first of its claims has.
        """
        if len(claims) == 1:
            return [await self.verify(claims[0], k, since=since)]
        cutoff = self._cutoff(since)
        keys = [(c, k) for c in claims]
        new = list(dict.fromkeys(key for key in keys if not self._known(key)))
        if new:
            if self._verifier is None:
                await self._loaded(cutoff)
                new = [key for key in new if not self._known(key)]
            if new:
                self._admit(new, self._left(cutoff))
        found = [self._lookup(key, admit=False, cutoff=None) for key in keys]
        jobs = [f for f in found if isinstance(f, _Job)]
        if cutoff is not None and jobs:
            await self._started_by(jobs, cutoff)
            self._note_wait(cutoff)
        return list(await asyncio.gather(*(_answer(f) for f in found)))

    def _lookup(self, key: _Key, *, admit: bool, cutoff: float | None) -> list[VerifiedAbstract] | _Job:
        """The cached answer, or the job computing ``key``, waiting for a worker or newly queued. With
        ``admit`` (a request not yet admitted), joining a waiting claim and queueing a new one go through
        admission against the time left until ``cutoff``. No await: two requests never queue a claim
        twice."""
        self.stats["requests"] += 1
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            self.stats["cache_hits"] += 1
            return cached
        job = self._computing.get(key)
        if job is None:
            job = self._waiting.get(key)
            if job is not None and admit:
                self._check_join(key, self._left(cutoff))
        if job is not None:
            self.stats["shared"] += 1
            return job
        if admit:
            self._admit([key], self._left(cutoff))
        return self._enqueue(key)

    async def _loaded(self, cutoff: float | None) -> None:
        """Wait for the verifier to load, until ``cutoff`` at most: a request is not held past its deadline
        by a load either (503 with Retry-After instead)."""
        if self._verifier is not None:
            return
        if cutoff is not None and self._load_error is None:
            try:
                await asyncio.wait_for(
                    asyncio.shield(self._ensure_load_task()), max(0.0, cutoff - time.monotonic())
                )
            except TimeoutError:
                self.stats["shed"] += 1
                raise Overloaded(_LOADING_RETRY) from None
        await self.verifier()

    def _known(self, key: _Key) -> bool:
        return key in self._cache or key in self._computing or key in self._waiting

    def _enqueue(self, key: _Key) -> _Job:
        if key in self._waiting:
            return self._waiting[key]
        job = _Job(key, asyncio.get_running_loop().create_future(), asyncio.Event())
        # a reservation nobody awaits must not log "exception never retrieved" when it fails
        job.future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._waiting[key] = job
        assert self._wake is not None
        self._wake.set()
        return job

    async def resolve_k(self, k: int | None, *, since: float | None = None) -> int:
        """``k``, or the verifier's tuned default when the request and the settings name none (waiting
        for the verifier's load at most until the deadline of a request that arrived at ``since``)."""
        if k is not None:
            return k
        await self._loaded(self._cutoff(since))
        return (await self.verifier()).default_k

    async def get_abstract(self, doc_id: str) -> Abstract | None:
        verifier = await self.verifier()
        return verifier.get_abstract(doc_id)

    async def searched(self) -> Searched | None:
        """The corpus the verifier searches (name, size, years), when it says."""
        verifier = await self.verifier()
        searched = getattr(verifier, "searched", None)
        return searched if isinstance(searched, Searched) else None

    async def paper_link(self, abstract: Abstract) -> str:
        """An address of the abstract's paper, when the verifier knows how to make one."""
        verifier = await self.verifier()
        link = getattr(verifier, "paper_link", None)
        if link is not None:
            return str(link(abstract))
        return abstract.meta.link() if abstract.meta is not None else ""

    def _remember(self, key: _Key, value: list[VerifiedAbstract]) -> None:
        if self._cache_size <= 0:
            return
        self._cache[key] = value
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    # -- workers ----------------------------------------------------------------------------------
    def _take_batch(self) -> list[_Job]:
        """The oldest waiting claim plus the next ones with the same k, up to ``batch_size`` (fewer when
        that many would outlast the deadline: :meth:`_batch_limit`)."""
        first = next(iter(self._waiting.values()))
        k = first.key[1]
        batch = [job for job in self._waiting.values() if job.key[1] == k][: self._batch_limit()]
        for job in batch:
            del self._waiting[job.key]
            self._computing[job.key] = job
            job.started.set()
        return batch

    async def _worker(self, index: int) -> None:
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        while True:
            while not self._waiting:
                self._wake.clear()
                await self._wake.wait()
            batch = self._take_batch()
            if self._waiting:
                self._wake.set()  # another idle worker may take the rest
            k = batch[0].key[1]
            claims = [job.key[0] for job in batch]
            started = time.monotonic()
            self._busy[index] = (started, len(batch))
            try:
                results = await loop.run_in_executor(self._executor, self._run, claims, k)
            except Exception:
                if len(batch) == 1:
                    self._settle(batch[0], None, sys.exc_info()[1])
                    continue
                # One bad claim must not fail its neighbours: redo the batch one claim at a time.
                for job in batch:
                    try:
                        single = await loop.run_in_executor(self._executor, self._run, [job.key[0]], k)
                    except Exception as exc:
                        self._settle(job, None, exc)
                    else:
                        self._settle(job, single[0], None)
                continue
            finally:
                self._busy[index] = None
            sample = (time.monotonic() - started) / len(batch)
            self._per_claim = (
                sample if self._per_claim is None else (1 - _EWMA) * self._per_claim + _EWMA * sample
            )
            self.stats["batches"] += 1
            for job, result in zip(batch, results, strict=True):
                self._settle(job, result, None)

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
        job: _Job,
        result: list[VerifiedAbstract] | None,
        error: BaseException | None,
    ) -> None:
        self._computing.pop(job.key, None)
        job.started.set()
        if error is None:
            assert result is not None
            self._remember(job.key, result)
        if job.future.done():
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(result)  # type: ignore[arg-type]


async def _answer(found: list[VerifiedAbstract] | _Job) -> list[VerifiedAbstract]:
    """A looked-up answer, or the job's once it is computed (shielded: one request giving up does not
    cancel a computation others share)."""
    if isinstance(found, list):
        return found
    return await asyncio.shield(found.future)
