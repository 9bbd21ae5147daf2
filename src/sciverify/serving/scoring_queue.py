"""Admission to the leaderboard's scoring slots: bounded work, a bounded queue, one upload per team.

Scoring is CPU-bound and runs on ``workers`` threads. Without a bound, every upload waits its turn, so
under a crowd each answer takes as long as the whole queue ahead of it (30 clients: p95 4.4 s for a file
scored in 0.15 s). Here at most ``workers + waiting`` uploads are admitted at once; the next is answered
``503 overloaded`` at once with ``Retry-After`` (the expected wait, from a moving average of the time
one scoring takes), so an accepted upload waits for at most ``waiting / workers`` scorings before its
own. A team has at most one upload admitted: a second one while the first is in flight is ``429
upload_in_flight``, unless it repeats the first one's idempotency key, in which case it waits for the
first and is answered with the stored row (a client retrying a lost answer sees one upload).

Each scoring also has a time budget (``Leaderboard.score``), so one file cannot hold a slot for long.
All state lives on the event loop's thread: no locks.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["QueueFull", "ScoringQueue", "TeamBusy"]

T = TypeVar("T")


class QueueFull(Exception):
    """Every scoring slot is taken and the queue is full; retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


class TeamBusy(Exception):
    """The team already has an upload in flight."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


@dataclass
class _InFlight:
    key: str | None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class ScoringQueue:
    """``workers`` uploads scored at once, ``waiting`` more queued, one per team (see the module)."""

    def __init__(self, workers: int, waiting: int) -> None:
        self.workers = workers
        self.waiting = waiting
        self._slots = asyncio.Semaphore(workers)
        self._teams: dict[int, _InFlight] = {}
        #: Moving average of one scoring's seconds (starts at a typical small file's).
        self.mean_seconds = 0.5
        self.shed = 0
        self.busy = 0

    @property
    def capacity(self) -> int:
        return self.workers + self.waiting

    @property
    def admitted(self) -> int:
        return len(self._teams)

    def _wait_estimate(self, ahead: int) -> int:
        """Seconds until ``ahead`` admitted uploads have been scored, at least 1."""
        return max(1, math.ceil(self.mean_seconds * max(1, ahead) / self.workers))

    @asynccontextmanager
    async def admit(self, team: int, key: str | None = None) -> AsyncIterator[None]:
        """Hold one admission for ``team`` while the body runs.

        Raises:
            TeamBusy: the team has an upload in flight with another (or no) idempotency key.
            QueueFull: ``capacity`` uploads are admitted already.
        """
        while (current := self._teams.get(team)) is not None:
            if key is None or current.key != key:
                self.busy += 1
                raise TeamBusy(self._wait_estimate(1))
            await current.done.wait()  # the same upload retried: the caller then finds the stored row
        if self.admitted >= self.capacity:
            self.shed += 1
            raise QueueFull(self._wait_estimate(self.admitted - self.workers + 1))
        mine = _InFlight(key)
        self._teams[team] = mine
        try:
            yield
        finally:
            del self._teams[team]
            mine.done.set()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a worker thread once a slot is free; its time feeds the estimate."""
        async with self._slots:
            started = time.monotonic()
            try:
                return await asyncio.to_thread(fn, *args)
            finally:
                self.mean_seconds = 0.8 * self.mean_seconds + 0.2 * (time.monotonic() - started)

    def counters(self) -> dict[str, int]:
        """For /api/health: admitted now, capacity, refusals so far."""
        return {"admitted": self.admitted, "capacity": self.capacity, "shed": self.shed, "busy": self.busy}
