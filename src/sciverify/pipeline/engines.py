"""Where the heavy steps run: in this process, or on a Ray actor pool (``sciverify[scale]``).

Both engines run the *same* stage objects (``retrieval.stages``, ``pipeline.run.PredictStage``) on the
same blocks and yield results in block order, so an index or a predictions file does not depend on
the engine that produced it. A stage is called once per worker to build its function, so a Ray actor
loads the embedder or the verifier's models once and then serves block after block.

Ray is imported only here and only when asked for. Without ``address`` Ray starts on this machine
with a small footprint (``num_cpus`` CPUs, a small object store, no dashboard); with
``address="auto"`` or ``"ray://host:10001"`` it joins an existing cluster. A block whose worker dies
is retried once on a fresh actor. A cluster that cannot be reached or a block whose worker dies twice
becomes one :class:`~sciverify.errors.EngineError` line; the
callers write their outputs through a temporary path, so nothing half-written is left.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sciverify.errors import ConfigError, EngineError, MissingDependencyError, SciverifyError
from sciverify.retrieval.stages import run_in_process

__all__ = ["ENGINES", "LocalEngine", "RayEngine", "make_engine"]

ENGINES = ("local", "ray")
#: Object store of a Ray started by sciverify on this machine: blocks are a few MB, so 128 MiB is plenty.
LOCAL_OBJECT_STORE_BYTES = 128 * 1024**2


class LocalEngine:
    """Runs each stage in this process, block after block."""

    name = "local"

    def map(self, stage: Callable[[], Callable[[Any], Any]], blocks: Iterable[Any]) -> Iterator[Any]:
        return run_in_process(stage, blocks)

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _StageActor:
    """One Ray actor: builds the stage's function once, then applies it to each block it is sent."""

    def __init__(self, stage: Callable[[], Callable[[Any], Any]]) -> None:
        self._fn = stage()

    def run(self, block: Any) -> Any:
        return self._fn(block)

    def pid(self) -> int:
        return os.getpid()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass
class RayEngine:
    """A pool of ``workers`` Ray actors per stage, each with ``cpus_per_worker`` CPUs.

    At most ``2 * workers`` blocks are in flight, so memory stays bounded however long the input; the
    results are read back in submission order. A block whose worker dies is run once more on a fresh
    actor (a block's result depends only on the block, so it is the same); a second death fails the
    run.
    """

    address: str | None = None
    workers: int = 2
    num_cpus: int = 2
    cpus_per_worker: float = 1.0
    name: str = "ray"

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")
        try:
            import ray
        except ImportError:
            raise MissingDependencyError("ray", "scale") from None
        self._ray = ray
        self._started = False
        if ray.is_initialized():
            return
        try:
            if self.address is None:
                ray.init(
                    num_cpus=self.num_cpus,
                    object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    # Ray runs its workers at niceness 15 by default; on a machine shared with other
                    # work that starves the actors (measured 10x slower), so they get the driver's.
                    _system_config={"worker_niceness": 0},
                )
            else:
                ray.init(address=self.address, log_to_driver=False, logging_level=logging.ERROR)
        except Exception as exc:
            where = f"the Ray cluster at {self.address!r}" if self.address else "a local Ray"
            raise EngineError(f"cannot start or reach {where}: {_first_line(exc)}") from None
        self._started = True

    def map(self, stage: Callable[[], Callable[[Any], Any]], blocks: Iterable[Any]) -> Iterator[Any]:
        ray = self._ray
        from ray.exceptions import RayActorError, RayError, RayTaskError

        actor_class = ray.remote(num_cpus=self.cpus_per_worker, max_restarts=0)(_StageActor)
        actors = [actor_class.remote(stage) for _ in range(self.workers)]
        # (block number, the block itself for a retry, its result, the actor slot, the actor)
        inflight: deque[tuple[int, Any, Any, int, Any]] = deque()
        submitted = 0

        def fetch(number: int, ref: Any) -> Any:
            try:
                return ray.get(ref)
            except RayActorError:
                raise
            except RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, SciverifyError):
                    raise cause from None
                raise EngineError(f"block {number} failed on a Ray worker: {_first_line(exc)}") from None
            except RayError as exc:
                raise EngineError(f"Ray failed on block {number}: {_first_line(exc)}") from None

        def collect() -> Any:
            number, block, ref, slot, actor = inflight.popleft()
            try:
                return fetch(number, ref)
            except RayActorError:
                pass
            # The worker died (killed, out of memory): the block runs once more, as the first task of
            # a fresh actor that also takes the dead one's place. If the slot was already refilled
            # (another block of the dead actor came first) and that actor dies too, it may have died
            # of a later block queued before this one, so the block gets a fresh actor of its own.
            while True:
                fresh = actors[slot] is actor
                if fresh:
                    with contextlib.suppress(Exception):
                        ray.kill(actor)
                    actors[slot] = actor_class.remote(stage)
                actor = actors[slot]
                try:
                    return fetch(number, actor.run.remote(block))
                except RayActorError:
                    if fresh:
                        raise EngineError(
                            f"a Ray worker died while running block {number} "
                            f"({stage.__class__.__name__}), and again when the block was retried; "
                            "nothing was written: rerun the command"
                        ) from None

        try:
            for block in blocks:
                slot = submitted % len(actors)
                actor = actors[slot]
                inflight.append((submitted, block, actor.run.remote(block), slot, actor))
                submitted += 1
                if len(inflight) >= 2 * len(actors):
                    yield collect()
            while inflight:
                yield collect()
        finally:
            for actor in actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor)

    def close(self) -> None:
        """Shut Ray down if this engine started it (a cluster it joined keeps running)."""
        if self._started:
            self._ray.shutdown()
            self._started = False

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_engine(name: str, address: str | None = None, workers: int = 2) -> LocalEngine | RayEngine:
    """The engine called ``name`` (``local`` or ``ray``); ``address`` and ``workers`` are Ray's."""
    if name == "local":
        if address is not None:
            raise ConfigError("--address needs --engine ray")
        return LocalEngine()
    if name == "ray":
        return RayEngine(address=address, workers=workers, num_cpus=max(2, workers))
    raise ConfigError(f"--engine must be one of {', '.join(ENGINES)}, got {name!r}")
