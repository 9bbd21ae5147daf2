"""What an index build shows while it runs: a live bar on a terminal, plain lines elsewhere.

A live bar redraws in place, which only a terminal can show: written to a log file or a pipe (a set-up
script, CI) it stays silent until the end, so a ten-minute embedding looks like a hang. Off a terminal
each step therefore prints a line whenever it passes another tenth of its total or advances by a chunk of
a twentieth or more (and, for a step of unknown size, every :data:`UNSIZED_EVERY` seconds), with the rate
and the time left, so no two lines are more than a tenth apart unless one chunk is.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["BuildProgress", "format_duration", "progress_line"]

#: Seconds between two lines for a step whose total is not known in advance (reading the corpus).
UNSIZED_EVERY = 10.0


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``: short enough for a progress line."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def progress_line(description: str, done: int, total: int | None, elapsed: float) -> str:
    """One plain progress line, e.g. ``embedding sentences: 40% (20,000 of 50,000), 310/s, 1m37s left``."""
    rate = done / elapsed if elapsed > 0 else 0.0
    if total is None:
        return f"{description}: {done:,} so far, {rate:,.0f}/s, {format_duration(elapsed)} elapsed"
    share = done / total if total else 1.0
    left = (total - done) / rate if rate > 0 else 0.0
    return (f"{description}: {share:.0%} ({done:,} of {total:,}), {rate:,.0f}/s, "
            f"{format_duration(left)} left")


@dataclass
class _Step:
    description: str
    total: int | None
    started: float = field(default_factory=time.perf_counter)
    done: int = 0
    next_tenth: int = 1  # the next tenth of the total that prints a line
    last_line: float = field(default_factory=time.perf_counter)


class BuildProgress:
    """Progress of the steps of a build: a rich bar when ``stream`` is a terminal, lines otherwise, nothing
    when disabled (tests, servers). Used as a context manager around the build."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout
        self._enabled = enabled
        self._live: Any = None
        self._steps: list[_Step] = []
        if enabled and self._stream.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._live = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TimeRemainingColumn(), transient=False, console=Console(file=self._stream),
            )

    def __enter__(self) -> BuildProgress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def task(self, description: str, total: int | None) -> Any:
        """Start a step; returns the handle :meth:`advance` takes."""
        if self._live is not None:
            return self._live.add_task(description, total=total)
        self._steps.append(_Step(description, total))
        return len(self._steps) - 1

    def advance(self, task: Any, amount: int = 1) -> None:
        if self._live is not None:
            self._live.advance(task, amount)
            return
        if not self._enabled:
            return
        step = self._steps[task]
        step.done += amount
        now = time.perf_counter()
        if step.total is None:
            due = now - step.last_line >= UNSIZED_EVERY
        else:
            # another tenth passed, or a coarse advance (a twentieth or more: a chunk of embeddings), so
            # that chunks of 9 % cannot leave 18 % between two lines by straddling a tenth
            due = step.total > 0 and (step.done * 10 >= step.next_tenth * step.total
                                      or amount * 20 >= step.total)
            if due:
                step.next_tenth = step.done * 10 // step.total + 1
        if due:
            step.last_line = now
            print(progress_line(step.description, step.done, step.total, now - step.started),
                  file=self._stream, flush=True)
