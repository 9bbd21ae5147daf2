"""The side-by-side runner of ONNX calls: order, real concurrency, nesting and errors."""

from __future__ import annotations

import os
import threading
import time

import pytest

from sciverify.models.parallel import map_calls, usable_cores


def test_results_come_back_in_input_order() -> None:
    assert map_calls(lambda x: x * x, list(range(50))) == [x * x for x in range(50)]
    assert map_calls(lambda x: x, []) == []
    assert map_calls(lambda x: x + 1, [41]) == [42]


@pytest.mark.skipif(usable_cores() < 2, reason="needs two cores")
def test_calls_really_run_side_by_side() -> None:
    # Both calls must be inside fn at once to pass the barrier; run one after the other, the first
    # would wait for the second until the timeout and break the barrier.
    barrier = threading.Barrier(2, timeout=10)
    names = map_calls(lambda _: (barrier.wait(), threading.current_thread().name)[1], [0, 1])
    assert len(set(names)) == 2


def test_a_call_made_from_inside_the_pool_runs_inline() -> None:
    def outer(x: int) -> list[int]:
        return map_calls(lambda y: x * 10 + y, [1, 2, 3])

    assert map_calls(outer, [1, 2]) == [[11, 12, 13], [21, 22, 23]]


def test_an_error_in_a_call_reaches_the_caller() -> None:
    def fail(x: int) -> int:
        if x == 3:
            raise ValueError("bad item 3")
        return x

    with pytest.raises(ValueError, match="bad item 3"):
        map_calls(fail, [1, 2, 3, 4])


@pytest.mark.skipif(not hasattr(os, "fork") or usable_cores() < 2, reason="needs fork and two cores")
def test_a_forked_child_gets_a_working_pool() -> None:
    # the parent's pool exists with every worker started (the barrier needs two at once), then idle: a
    # child that reused it would count those workers as its own and wait on them for ever
    barrier = threading.Barrier(2, timeout=10)
    assert map_calls(lambda x: (barrier.wait(), x + 1)[1], [1, 2]) == [2, 3]
    time.sleep(0.2)
    pid = os.fork()
    if pid == 0:  # child: the parent's pool threads are gone; a fresh pool must serve the calls
        code = 1
        try:
            code = 0 if map_calls(lambda x: x * 2, [1, 2, 3]) == [2, 4, 6] else 1
        finally:
            os._exit(code)  # never return into the parent's test session
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's calls never ran: it waited on the parent's pool")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(done[1]) == 0
