"""Admission control for the verification service: who waits for the models, and for how long.

Admission control keeps the requests that are accepted fast without wasting model time on the ones
that are not. The service keeps an estimate of when each claim will be answered: the time left on
each worker's batch in flight, the claims ahead in the FIFO taken in batches, and a moving average
of model time per claim. Then, for a request that needs the models:

- a cache hit, or a claim a worker is computing right now, is answered (never shed: it costs no model
  time and the answer is at most one batch away);
- a claim already waiting in the FIFO is joined when its answer is expected within ``deadline``;
  otherwise 503 with ``Retry-After`` set to when it is expected (the claim keeps its place);
- a new claim is admitted when it can be expected to start within ``deadline`` (or a worker is idle);
  otherwise it is queued anyway as a *reservation* while the FIFO has room (``queue_limit``), and the
  client gets 503 with ``Retry-After`` set to when its answer is expected: its retry finds the answer
  in the cache (or joins the claim when the estimate was short) instead of being refused again behind
  the same queue. Past ``queue_limit`` nothing is queued and ``Retry-After`` is when the FIFO will
  have room.

So a shed client's claim is computed once, in arrival order, and nobody holds a connection open
behind a long queue.

The estimate decides admission, and the deadline holds whatever the estimate said: a request whose claim
has not started (been taken by a worker) within ``deadline`` of the request's arrival is answered 503
with ``Retry-After`` at that moment, its claim keeping its place; a request arriving while the verifier
loads waits for the load at most as long. An estimate can be wrong (the first batches, a CPU shared with
other work, a verifier still loading); the wait of an accepted request cannot.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from dataclasses import dataclass

from sciverify.data.records import VerifiedAbstract

__all__ = ["Admission", "Overloaded"]

_Key = tuple[str, int]
#: Longest Retry-After ever sent (seconds); a client asks again at least this often.
_MAX_RETRY = 60


class Overloaded(Exception):
    """A worker cannot be expected to start the claim within the deadline; retry after ``retry_after`` s."""

    def __init__(self, retry_after: int = 1) -> None:
        super().__init__(f"overloaded; retry after {retry_after} s")
        self.retry_after = retry_after


@dataclass
class _Job:
    """One (claim, k) waiting for or being computed by the models."""

    key: _Key
    future: asyncio.Future[list[VerifiedAbstract]]
    #: Set when a worker takes the claim (or the service stops): the deadline is on this.
    started: asyncio.Event


class Admission:
    """The estimates, admission and deadline of :class:`~sciverify.serving.verify_service.VerifyService`
    (a base class: the state is the service's, the rules are here)."""

    _deadline: float | None
    _per_claim: float | None  # moving average of model seconds per claim in a batch
    _busy: list[tuple[float, int] | None]
    _waiting: OrderedDict[_Key, _Job]
    _batch_size: int
    _workers: int
    _queue_limit: int
    _cache_size: int
    _computing: dict[_Key, _Job]
    _wake: asyncio.Event | None
    stats: dict[str, int]

    def _enqueue(self, key: _Key) -> _Job:
        raise NotImplementedError

    # -- estimates --------------------------------------------------------------------------------
    def _batch_limit(self) -> int:
        """Claims a worker takes at once: ``batch_size``, fewer when a batch that size is expected to take
        longer than the deadline. So an accepted claim's answer is due within twice the deadline: at most
        the deadline to start, at most about the deadline in its batch. Before the first estimate (a cold
        model's first batch can take many times a warm one's) one claim at a time."""
        per = self._per_claim
        if self._deadline is None:
            return self._batch_size
        if per is None:
            return 1
        return max(1, min(self._batch_size, int(self._deadline / per))) if per > 0 else self._batch_size

    def _schedule(self, extra: int = 0) -> list[tuple[float, float]]:
        """Expected (start, end), in seconds from now, of every claim in the FIFO and then of
        ``extra`` claims appended to it: workers free up as their batches in flight end, and each
        takes the next :meth:`_batch_limit` claims. Needs the moving average (``_per_claim``)."""
        per = self._per_claim
        assert per is not None
        now = time.monotonic()
        free = [0.0 if b is None else max(0.0, b[0] + b[1] * per - now) for b in self._busy]
        out: list[tuple[float, float]] = []
        left = len(self._waiting) + extra
        size = self._batch_limit()
        while left > 0:
            n = min(size, left)
            i = min(range(len(free)), key=free.__getitem__)
            start, free[i] = free[i], free[i] + n * per
            out.extend([(start, free[i])] * n)
            left -= n
        return out

    def expected_wait(self) -> float | None:
        """Seconds until a worker can be expected to start a newly queued claim (None: no estimate yet)."""
        if self._per_claim is None or self._wake is None:
            return None
        return self._schedule(1)[-1][0]

    @staticmethod
    def _retry_after(seconds: float) -> int:
        return max(1, min(_MAX_RETRY, math.ceil(seconds)))

    def _shed(self, seconds: float) -> Overloaded:
        self.stats["shed"] += 1
        return Overloaded(self._retry_after(seconds))

    def _cutoff(self, since: float | None) -> float | None:
        """When a request that arrived at ``since`` (None: now) must have started (None: no deadline)."""
        if self._deadline is None:
            return None
        return (time.monotonic() if since is None else since) + self._deadline

    @staticmethod
    def _left(cutoff: float | None) -> float | None:
        return None if cutoff is None else cutoff - time.monotonic()

    def _note_wait(self, cutoff: float) -> None:
        """Keep the longest wait an accepted request had for its claim to start (``/api/health``)."""
        assert self._deadline is not None
        waited = time.monotonic() - (cutoff - self._deadline)
        self.stats["longest_wait_ms"] = max(self.stats["longest_wait_ms"], round(1000 * waited))

    async def _started_by(self, jobs: list[_Job], cutoff: float) -> None:
        """Return once a worker has taken one of ``jobs``; at ``cutoff``, refuse the request (503 with
        Retry-After: when its first claim is expected) while its claims keep their places."""
        if any(job.started.is_set() for job in jobs):
            return
        waits = [asyncio.ensure_future(job.started.wait()) for job in jobs]
        try:
            done, _ = await asyncio.wait(
                waits, timeout=max(0.0, cutoff - time.monotonic()), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for wait in waits:
                wait.cancel()
        if done:
            return
        self.stats["expired"] += 1
        due = 1.0
        if self._per_claim is not None and jobs[0].key in self._waiting:
            due = self._schedule()[list(self._waiting).index(jobs[0].key)][1]
        raise self._shed(due)

    def _check_join(self, key: _Key, within: float | None) -> None:
        """A claim already in the FIFO is joined when its answer is expected ``within`` the time the
        request has left; otherwise the client is told when it will be (the claim keeps its place)."""
        if within is None or self._per_claim is None:
            return
        position = list(self._waiting).index(key)
        end = self._schedule()[position][1]
        if end > within:
            raise self._shed(end)

    def _admit(self, keys: list[_Key], within: float | None) -> None:
        """Raise :class:`Overloaded` unless the first of ``keys`` (claims no one has asked for yet) can
        be expected to start ``within`` the time the request has left (None: no deadline); a refused
        request's claims are queued as reservations while the FIFO has room, and ``Retry-After`` says
        when their answers are due.

        Before the first batch has given an estimate, one claim per worker is admitted (and taken alone).
        """
        overflow = len(self._waiting) + len(keys) - self._queue_limit
        if overflow > 0 and self._waiting:
            # come back when workers have taken enough of the FIFO to make room for these claims
            room = 1.0
            if self._per_claim is not None:
                room = self._schedule()[min(overflow, len(self._waiting)) - 1][0]
            raise self._shed(room)
        if within is None:
            return
        idle = not self._waiting and any(b is None for b in self._busy)
        if idle:
            return
        if self._per_claim is None:
            ahead = len(self._waiting) + len(self._computing)
            if ahead < self._workers * self._batch_limit():
                return
            raise self._shed(1.0)
        plan = self._schedule(len(keys))
        start = plan[len(self._waiting)][0]
        if start <= within:
            return
        if self._cache_size > 0:  # the answer can wait in the cache for the retry
            for key in keys:
                self._enqueue(key)
            self.stats["reserved"] += len(keys)
        raise self._shed(plan[-1][1])
