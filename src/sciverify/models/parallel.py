"""Run independent ONNX calls side by side, one core each.

A claim's transformer work is a handful of small, independent calls: the label model once per labelled
abstract (and a per-sentence cross-encoder would add one per candidate). Each call is a few sequences of
under a hundred tokens, too small for onnxruntime to split well across cores. On two cores, a claim's
label-model calls one after another with two intra-op threads each took 98 ms (median); the same calls
two at a time on single-threaded sessions took 70 ms (``benchmarks/bench_parallel.py``).
Every call still sees exactly the inputs it saw before, so the outputs are identical to the last bit;
only the order in which the cores take them changes.

The pool is process-wide and created on first use, so the web service's worker threads and the CLI
share one set of threads sized to the cores this process may run on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["map_calls", "usable_cores"]

T = TypeVar("T")
R = TypeVar("R")

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_local = threading.local()


def usable_cores() -> int:
    """The cores this process may run on (CPU affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                max_workers=usable_cores(), thread_name_prefix="sciverify-onnx", initializer=_mark_worker
            )
        return _pool


def _mark_worker() -> None:
    _local.in_pool = True


def _forget_pool() -> None:
    """A forked child inherits the pool but not its threads, and the pool would count the parent's idle
    workers as its own and wait for them for ever: start a new pool on first use instead."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def map_calls(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]``, with the calls spread over the pool; results in input order.

    A single item, a single core, or a call made from inside the pool (which would wait on itself) runs
    in the calling thread.
    """
    if len(items) < 2 or usable_cores() < 2 or getattr(_local, "in_pool", False):
        return [fn(x) for x in items]
    return list(_get_pool().map(fn, items))
