"""Every refusal seen: the guards' refusals and closes counted by kind, logged one line per client
address per interval, and exposed for scraping (``GET /metrics``).

Why: the guards worked, but silently. A crowd's 20 connection-cap refusals and 12 head-deadline closes
left no line in the server log (a closed connection has no request, so no access-log line), and 503s
told the operator nothing about who was shed. A line per refusal would let the same crowd flood the
log, so each address gets at most one line per interval: the first refusal is logged at once, the
rest of the interval's are added up and logged when it ends, with their counts by kind.

Kinds (the names in the log and in ``/metrics``):

=====================  ==============================================================================
``connection_cap``     a connection refused with 503: its address already holds the most allowed
``head_deadline``      a connection closed: its request head did not arrive in time
``idle_deadline``      a kept-alive connection closed after its idle time (routine for browsers; counted)
``write_deadline``     a connection dropped: its client read nothing of its response for the write time
``body_deadline``      a request answered 408: its body paused or took too long
``body_too_large``     a request answered 413
``token_in_url``       a request answered 400: a token in its URL
``shed_claims``        a request needing the models answered 503 (overloaded, or the verifier unready)
``shed_uploads``       an upload answered 503 (every scoring place taken)
``rate_limited``       an upload answered 429 (the team's limits, or its upload in flight)
=====================  ==============================================================================

Everything here runs on the server's event loop (protocol callbacks and ASGI middleware), so no lock
is needed; the flush at the end of an interval is a timer on the same loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter

__all__ = ["KINDS", "RefusalLog"]

log = logging.getLogger("sciverify.serving.guards")

KINDS = (
    "connection_cap",
    "head_deadline",
    "idle_deadline",
    "write_deadline",
    "body_deadline",
    "body_too_large",
    "token_in_url",
    "shed_claims",
    "shed_uploads",
    "rate_limited",
)
#: Addresses with counts waiting for their line; past this, new addresses are added up as one.
MAX_ADDRESSES = 4096
_OTHERS = "other addresses"


class RefusalLog:
    """Counts of refusals since start (``totals``) and their rate-limited log lines."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self.totals: Counter[str] = Counter({kind: 0 for kind in KINDS})
        self._pending: dict[str, Counter[str]] = {}
        self._last: dict[str, float] = {}
        self._timer: asyncio.TimerHandle | None = None

    def note(self, kind: str, address: str) -> None:
        """One refusal of ``kind`` for ``address``: counted, and logged now if the address has had no
        line for an interval, else added to the line its interval will end with."""
        self.totals[kind] += 1
        now = time.monotonic()
        if now - self._last.get(address, -1e18) >= self.interval:
            self._last[address] = now
            counts = self._pending.pop(address, Counter())
            counts[kind] += 1
            self._emit(address, counts, first=True)
            return
        if address not in self._pending and len(self._pending) >= MAX_ADDRESSES:
            address = _OTHERS
        self._pending.setdefault(address, Counter())[kind] += 1
        self._schedule(now)

    def flush(self, everything: bool = False) -> None:
        """Log the addresses whose interval has ended (all of them with ``everything``, at shutdown)."""
        self._timer = None
        now = time.monotonic()
        for address in list(self._pending):
            if everything or now - self._last.get(address, -1e18) >= self.interval:
                self._last[address] = now
                self._emit(address, self._pending.pop(address), first=False)
        # forget addresses quiet for a whole interval: their next refusal is logged at once
        for address, when in list(self._last.items()):
            if now - when >= self.interval and address not in self._pending:
                del self._last[address]
        if self._pending:
            self._schedule(now)

    def metrics(self) -> str:
        """The totals in the Prometheus text format."""
        lines = [
            "# HELP sciverify_refusals_total Connections and requests refused or closed by a guard, by kind.",
            "# TYPE sciverify_refusals_total counter",
        ]
        lines += [
            f'sciverify_refusals_total{{kind="{kind}"}} {self.totals[kind]}' for kind in sorted(self.totals)
        ]
        return "\n".join(lines) + "\n"

    def _schedule(self, now: float) -> None:
        if self._timer is not None or not self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a direct call): the next note or flush logs it
            return
        due = min(self._last.get(a, now) for a in self._pending) + self.interval
        self._timer = loop.call_later(max(due - now, 0.0), self.flush)

    def _emit(self, address: str, counts: Counter[str], *, first: bool) -> None:
        listed = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
        when = "" if first else f" in the last {self.interval:g} s"
        level = logging.INFO if set(counts) == {"idle_deadline"} else logging.WARNING
        log.log(level, "refused or closed for %s%s: %s", address, when, listed)
