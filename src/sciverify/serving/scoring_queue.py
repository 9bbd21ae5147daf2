"""Admission to the leaderboard's scoring slots: bounded work, a bounded queue, one upload per team, and
a fair order by cost.

Scoring is CPU-bound and runs on ``workers`` threads. Without a bound, every upload waits its turn, so
under a crowd each answer takes as long as the whole queue ahead of it (30 clients: p95 4.4 s for a file
scored in 0.15 s). Here at most ``workers + waiting`` uploads are admitted at once; the next is answered
``503 overloaded`` at once with ``Retry-After``. A team has at most one upload admitted: a second one
while the first is in flight is ``429 upload_in_flight``, unless it repeats the first one's idempotency
key, in which case it waits for the first and is answered with the stored row (a client retrying a lost
answer sees one upload).

Counting uploads is not enough when files differ in size: a valid 5 MB file takes seconds to score
against a fraction of a second for a typical one, so five tokens sending heavy files refilled the five
places as soon as one was scored while another team's upload got one 503 after another. So admission
also counts *cost* (the file's bytes plus a fixed overhead for the gold's own scoring), and the order is
fair:

- uploads wait for a slot in order of their team's *share* (the cost scored for the team recently,
  halving every :data:`SHARE_HALF_LIFE` seconds), then smaller first, then arrival; a team that has
  not been scored lately goes before teams that have;
- an upload is admitted only if the cost that would be scored before it (the uploads running, and those
  waiting ahead of it in that order) is at most one largest file per worker; when every place is taken,
  a newcomer that comes before the last waiting upload in that order takes its place (that upload's
  client is told 503, as it would have been had it come after the newcomer). A newcomer from a team with
  a small share is ahead of every heavy team's waiting file, so it is admitted and starts within one
  file's scoring time; a heavy team's file behind another heavy file is told to come back (503).

The ``Retry-After`` estimates come from a moving average of scoring seconds per unit of cost. Each
scoring also has a time budget (``Leaderboard.score``). All state lives on the event loop's thread: no
locks.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["OVERHEAD_BYTES", "SHARE_HALF_LIFE", "QueueFull", "ScoringQueue", "TeamBusy"]

T = TypeVar("T")

#: Cost of scoring any file, in bytes of file it is worth: the gold's parts are scored and bootstrapped
#: whatever the upload (about 0.15 s, as long as ~70 KB of file takes to read and validate).
OVERHEAD_BYTES = 64 * 1024
#: A team's share of recent scoring halves every this many seconds.
SHARE_HALF_LIFE = 600.0


class QueueFull(Exception):
    """No room for this upload now (places or cost); retry after ``retry_after`` seconds."""

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
    cost: int
    order: tuple[float, int, int]
    running: bool = False
    scored: bool = False
    #: Set when a newcomer earlier in the fair order took this upload's place before it was scored.
    evicted: QueueFull | None = None
    turn: asyncio.Future[None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def waiting(self) -> bool:
        return not (self.running or self.scored) and self.evicted is None


class ScoringQueue:
    """``workers`` uploads scored at once, ``waiting`` more queued, one per team, in a fair order by cost
    (see the module). ``file_bytes``: the largest upload; None turns the cost bound off."""

    def __init__(self, workers: int, waiting: int, file_bytes: int | None = None) -> None:
        self.workers = workers
        self.waiting = waiting
        #: Cost that may be ahead of an admitted upload: one largest file per worker.
        self.cost_bound = None if file_bytes is None else workers * (file_bytes + OVERHEAD_BYTES)
        self._teams: dict[int, _InFlight] = {}
        self._free = workers
        self._slot_waiters: list[tuple[tuple[float, int, int], asyncio.Future[None]]] = []
        self._shares: dict[int, tuple[float, float]] = {}
        self._seq = itertools.count()
        #: Moving average of scoring seconds per unit of cost (starts at 0.5 s for a typical small file).
        self.seconds_per_cost = 0.5 / (OVERHEAD_BYTES + 32 * 1024)
        self.shed = 0
        self.busy = 0

    @property
    def capacity(self) -> int:
        return self.workers + self.waiting

    @property
    def admitted(self) -> int:
        return sum(f.evicted is None for f in self._teams.values())

    def share(self, team: int, now: float | None = None) -> float:
        """The cost scored for ``team`` recently (halving every :data:`SHARE_HALF_LIFE` seconds)."""
        used, at = self._shares.get(team, (0.0, 0.0))
        now = time.monotonic() if now is None else now
        return float(used * 0.5 ** ((now - at) / SHARE_HALF_LIFE))

    def _order(self, team: int, cost: int) -> tuple[float, int, int]:
        """Where an upload stands among those waiting: its team's share, then its cost, then arrival."""
        return (self.share(team), cost, next(self._seq))

    def _eta(self, cost: float) -> int:
        """Seconds to score ``cost`` on all workers, at least 1."""
        return max(1, math.ceil(self.seconds_per_cost * cost / self.workers))

    def _ahead(self, order: tuple[float, int, int]) -> int:
        """Cost that would be scored before an upload of this ``order``: those running, and those
        waiting that come first."""
        return sum(f.cost for f in self._teams.values() if f.running or (f.waiting and f.order < order))

    def _make_room(self, order: tuple[float, int, int]) -> bool:
        """With every place taken, evict the last waiting upload in the fair order if a newcomer of
        ``order`` comes before it (its client is told 503, as it would have been had it come later)."""
        waiting = [f for f in self._teams.values() if f.waiting]
        last = max(waiting, key=lambda f: f.order, default=None)
        if last is None or last.order < order:
            return False
        last.evicted = QueueFull(self._eta(self._ahead(last.order)))
        self.shed += 1
        if last.turn is not None and not last.turn.done():
            last.turn.set_exception(last.evicted)
            self._slot_waiters = [w for w in self._slot_waiters if w[1] is not last.turn]
        return True

    @asynccontextmanager
    async def admit(self, team: int, key: str | None = None, size: int = 0) -> AsyncIterator[None]:
        """Hold one admission for ``team``'s upload of ``size`` bytes while the body runs.

        Raises:
            TeamBusy: the team has an upload in flight with another (or no) idempotency key.
            QueueFull: ``capacity`` uploads are admitted already, or more than ``cost_bound`` would be
                scored before this one.
        """
        while (current := self._teams.get(team)) is not None:
            if key is None or current.key != key:
                self.busy += 1
                raise TeamBusy(self._eta(current.cost))
            await current.done.wait()  # the same upload retried: the caller then finds the stored row
        cost = size + OVERHEAD_BYTES
        order = self._order(team, cost)
        if self.admitted >= self.capacity and not self._make_room(order):
            self.shed += 1
            mean = sum(f.cost for f in self._teams.values()) / max(1, self.admitted)
            raise QueueFull(self._eta(mean))
        ahead = self._ahead(order)
        if self.cost_bound is not None and ahead > self.cost_bound:
            self.shed += 1
            raise QueueFull(self._eta(ahead - self.cost_bound))
        mine = _InFlight(key, cost, order)
        self._teams[team] = mine
        try:
            yield
        finally:
            del self._teams[team]
            mine.done.set()

    async def run(self, fn: Callable[..., T], *args: Any, team: int | None = None) -> T:
        """``fn(*args)`` on a worker thread once a slot is free, ``team``'s admitted upload in its fair
        turn; its time feeds the estimate and the team's share."""
        mine = self._teams.get(team) if team is not None else None
        order = mine.order if mine is not None else (0.0, 0, next(self._seq))
        if mine is not None and mine.evicted is not None:
            raise mine.evicted
        if self._free > 0 and not self._slot_waiters:
            self._free -= 1
        else:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if mine is not None:
                mine.turn = turn
            self._slot_waiters.append((order, turn))
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled() and turn.exception() is None:
                    self._release()  # the slot was handed over as this waiter went away
                else:
                    self._slot_waiters = [w for w in self._slot_waiters if w[1] is not turn]
                raise
        if mine is not None:
            mine.running = True
        started = time.monotonic()
        try:
            return await asyncio.to_thread(fn, *args)
        finally:
            took = time.monotonic() - started
            if mine is not None and team is not None:
                mine.running, mine.scored = False, True
                self._shares[team] = (self.share(team) + mine.cost, time.monotonic())
                self.seconds_per_cost = 0.8 * self.seconds_per_cost + 0.2 * took / mine.cost
            self._release()

    def _release(self) -> None:
        """Hand the freed slot to the first waiter in fair order, or keep it free."""
        if self._slot_waiters:
            self._slot_waiters.sort(key=lambda w: w[0])
            _, turn = self._slot_waiters.pop(0)
            turn.set_result(None)
        else:
            self._free += 1

    def counters(self) -> dict[str, int]:
        """For /api/health: admitted now, capacity, refusals so far."""
        return {"admitted": self.admitted, "capacity": self.capacity, "shed": self.shed, "busy": self.busy}
