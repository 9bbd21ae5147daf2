"""Run a model on instruction-style gold pairs and collect its answers: the engine of ``instruct-run``.

Every pair's prompt (as ``instruct-pairs`` wrote it) goes to an OpenAI-compatible server through
:class:`sciverify.models.llm.ChatClient`; each answer is appended to the outputs file as soon as it
arrives, one JSON line written with a single ``write`` and ``fsync``'d, so a run killed at any moment
(even ``kill -9``) loses nothing it had received. Re-running with the same outputs file skips every pair
already answered and retries the ones recorded as failed; a torn last line (a crash mid-write on some
file systems) is cut off before appending. The file is what ``evaluate-instruct`` reads: a failed pair
has ``"output": null`` and an ``error``, and scores as unparseable.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sciverify.data.io import iter_jsonl
from sciverify.errors import ConfigError, DataFormatError
from sciverify.models.llm import ChatClient, RequestFailed
from sciverify.models.llm_config import LlmConfig
from sciverify.scoring.instruct import (
    InstructPair,
    InstructReport,
    instruct_prompt,
    read_instruct_gold,
    read_instruct_outputs,
    score_instruct,
)

__all__ = [
    "PromptedPair",
    "RunProgress",
    "RunResult",
    "answered_keys",
    "read_prompted_pairs",
    "run_instruct",
    "select_pairs",
]


@dataclass(frozen=True)
class PromptedPair:
    """A gold pair and the exact prompt the model is sent."""

    pair: InstructPair
    prompt: str


@dataclass
class RunProgress:
    """Live counters of one run (``done`` counts answered and failed requests of this run)."""

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started: float = field(default_factory=time.perf_counter)

    @property
    def elapsed(self) -> float:
        return max(time.perf_counter() - self.started, 1e-9)

    @property
    def requests_per_s(self) -> float:
        return self.done / self.elapsed

    @property
    def tokens_per_s(self) -> float:
        """Generated (completion) tokens per second."""
        return self.completion_tokens / self.elapsed

    def rate_text(self) -> str:
        """The live figures shown beside the progress bar."""
        return (f"{self.requests_per_s:.2f} req/s  {self.tokens_per_s:.1f} tok/s  "
                f"tokens {self.prompt_tokens}+{self.completion_tokens}  failed {self.failed}")

    def done_text(self, out: str | Path) -> str:
        """One line on a finished run: what was appended to ``out``, retries, speed and tokens."""
        return (f"{self.done} answers appended to {out} ({self.failed} failed for good, "
                f"{self.retries} retries, {self.skipped} already there) in {self.elapsed:.1f} s: "
                f"{self.requests_per_s:.2f} requests/s, "
                f"{self.tokens_per_s:.1f} generated tokens/s, tokens {self.prompt_tokens} in + "
                f"{self.completion_tokens} out")


@dataclass(frozen=True)
class RunResult:
    """What a run did, the notes the server earned (e.g. no json_schema support) and the scores."""

    progress: RunProgress
    pairs: tuple[InstructPair, ...]
    notes: tuple[str, ...]
    report: InstructReport | None


def read_prompted_pairs(path: str | Path) -> list[PromptedPair]:
    """Gold pairs with their prompts from a pairs file; anything else is a DataFormatError (file:line)."""
    rows = list(iter_jsonl(path))
    if not rows or not isinstance(rows[0][1], dict) or "expected" not in rows[0][1]:
        where = rows[0][0] if rows else None
        raise DataFormatError(
            "not a pairs file: each line needs claim_id, doc_id, sentences, prompt and expected "
            "(write one with `sciverify instruct-pairs`)",
            path,
            where,
        )
    pairs = read_instruct_gold(path)
    out = []
    for (number, obj), pair in zip(rows, pairs, strict=True):
        prompt = obj.get("prompt")
        if prompt is None:
            prompt = instruct_prompt(pair)
        elif not isinstance(prompt, str) or not prompt.strip():
            raise DataFormatError("prompt must be a non-empty string", path, number)
        out.append(PromptedPair(pair, prompt))
    return out


def select_pairs(
    pairs: Sequence[PromptedPair], *, limit: int | None = None, sample: int | None = None, seed: int = 0
) -> list[PromptedPair]:
    """``sample`` pairs drawn with ``seed`` (kept in file order), then the first ``limit``."""
    chosen = list(pairs)
    if sample is not None:
        if sample < 1:
            raise ConfigError(f"--sample must be at least 1, got {sample}")
        rows = sorted(random.Random(seed).sample(range(len(chosen)), min(sample, len(chosen))))
        chosen = [chosen[i] for i in rows]
    if limit is not None:
        if limit < 1:
            raise ConfigError(f"--limit must be at least 1, got {limit}")
        chosen = chosen[:limit]
    return chosen


def _repair_tail(path: Path) -> None:
    """Cut a torn last line (no newline, not JSON) so appended records start on a line of their own."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        data = fh.read()
        if data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            orjson.loads(data[start:])
        except orjson.JSONDecodeError:
            fh.truncate(start)
        else:
            fh.write(b"\n")
        fh.flush()
        os.fsync(fh.fileno())


def answered_keys(path: str | Path) -> set[tuple[str, str]]:
    """Pairs the outputs file already holds an answer for (a failed record does not count)."""
    path = Path(path)
    if not path.exists():
        return set()
    _repair_tail(path)
    return {o.key for o in read_instruct_outputs(path) if o.text is not None}


class _Appender:
    """Append one JSON record per ``write`` and fsync it: a record is either whole on disk or absent."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, record: dict[str, Any]) -> None:
        os.write(self._fd, orjson.dumps(record) + b"\n")
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


async def _run(
    todo: Sequence[PromptedPair],
    out: _Appender,
    config: LlmConfig,
    progress: RunProgress,
    on_progress: Callable[[RunProgress], None] | None,
    transport: Any,
) -> list[str]:
    async with ChatClient(config, transport=transport) as client:
        await client.check()
        queue: asyncio.Queue[PromptedPair] = asyncio.Queue()
        for item in todo:
            queue.put_nowait(item)

        async def worker() -> None:
            while True:
                try:
                    item = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                pair = item.pair
                record: dict[str, Any] = {"claim_id": pair.claim_id, "doc_id": pair.doc_id}
                try:
                    answer = await client.complete(item.prompt)
                except RequestFailed as exc:
                    record.update(output=None, error=exc.reason, attempts=exc.attempts)
                    progress.failed += 1
                    progress.retries += exc.attempts - 1
                else:
                    record.update(
                        output=answer.text,
                        usage=answer.usage(),
                        latency_ms=answer.latency_ms,
                        finish_reason=answer.finish_reason,
                        attempts=answer.attempts,
                    )
                    progress.prompt_tokens += answer.prompt_tokens
                    progress.completion_tokens += answer.completion_tokens
                    progress.retries += answer.attempts - 1
                record["model"] = config.model
                out.write(record)
                progress.done += 1
                if on_progress is not None:
                    on_progress(progress)

        workers = [asyncio.create_task(worker()) for _ in range(min(config.concurrency, len(todo)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        return list(client.notes)


def run_instruct(
    pairs_path: str | Path,
    out_path: str | Path,
    config: LlmConfig,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    score: bool = True,
    on_start: Callable[[RunProgress], None] | None = None,
    on_progress: Callable[[RunProgress], None] | None = None,
    transport: Any = None,
) -> RunResult:
    """Send every selected pair not yet answered in ``out_path``, append the answers, score the selection.

    Raises EndpointError (one line) when the endpoint is unusable; answers received before are kept.
    """
    config.check()
    config.api_key()
    chosen = select_pairs(read_prompted_pairs(pairs_path), limit=limit, sample=sample, seed=seed)
    out_path = Path(out_path)
    done = answered_keys(out_path)
    todo = [p for p in chosen if p.pair.key not in done]
    progress = RunProgress(total=len(chosen), skipped=len(chosen) - len(todo))
    if on_start is not None:
        on_start(progress)
    notes: list[str] = []
    if todo:
        out = _Appender(out_path)
        try:
            notes = asyncio.run(_run(todo, out, config, progress, on_progress, transport))
        finally:
            out.close()
    gold = tuple(p.pair for p in chosen)
    report = score_instruct(gold, read_instruct_outputs(out_path)) if score and out_path.exists() else None
    return RunResult(progress, gold, tuple(notes), report)
