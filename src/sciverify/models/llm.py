"""A language model behind any OpenAI-compatible endpoint, used as a claim-verification judge.

Two callers share this module: ``sciverify instruct-run`` sends the instruction-style SciFact prompt of
every gold pair (:mod:`sciverify.pipeline.instruct_run`), and the pipeline's ``llm`` judge asks the model
about each retrieved abstract (:class:`LlmJudge`). Both need a batch client that survives a real server:
bounded concurrency, a per-request timeout, retries with exponential back-off and full jitter on 429,
5xx and connection errors (a ``Retry-After`` header wins over the back-off), and a clear split between
errors that concern one request (retried, then recorded as failed) and errors that concern the whole
endpoint (401, no such model, unreachable: one :class:`~sciverify.errors.EndpointError`, the run stops).

The API key comes from an environment variable and only ever goes into the ``Authorization`` header; it
is never part of a message, a log line or a record.

The prompt and the answer's lenient extractor are the instruction scorer's
(:mod:`sciverify.data.instruct_prompt`, :func:`sciverify.data.instruct_parse.extract_verdict_json`), so the
judge and the scorer agree on what a model was asked and said.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sciverify.data.instruct_parse import extract_verdict_json
from sciverify.data.instruct_prompt import InstructPair, evidence_tokens, instruct_prompt
from sciverify.data.records import Label
from sciverify.errors import EndpointError, MissingDependencyError
from sciverify.models.base import JUDGES, JudgeAnswer, JudgeStats
from sciverify.models.llm_config import LlmConfig

__all__ = [
    "VERDICT_SCHEMA",
    "ChatClient",
    "Completion",
    "EvidenceMatch",
    "JudgeAnswer",
    "JudgeStats",
    "LlmConfig",
    "LlmJudge",
    "RequestFailed",
    "judge_prompt",
    "match_evidence",
]

#: The answer's shape as a JSON schema, sent as ``response_format`` with ``json_schema = true``.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["SUPPORT", "CONTRADICT", "NEI"]},
        "evidence": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "evidence"],
    "additionalProperties": False,
}

_SCHEMA_MODES = ("json_schema", "json_object")
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_MAX_RETRY_AFTER = 120.0


@dataclass(frozen=True)
class Completion:
    """One answer: the text, the token counts the server reported, and how long it took."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    finish_reason: str | None
    attempts: int

    def usage(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


class RequestFailed(Exception):
    """One request failed for good (retries spent, or an answer the server cannot give); the run goes on."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


def _snippet(text: str, limit: int = 160) -> str:
    """A one-line excerpt of a response body (an HTML error page becomes its visible words)."""
    import re

    if "<" in text and ">" in text:
        text = re.sub(r"<[^>]{0,2000}>", " ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error_message(body: str) -> str:
    """The server's own error message from a JSON error body, else an excerpt of the body."""
    import json

    try:
        obj = json.loads(body)
    except ValueError:
        return _snippet(body)
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return _snippet(err["message"])
        if isinstance(err, str):
            return _snippet(err)
        if isinstance(obj.get("detail"), str):
            return _snippet(obj["detail"])
    return _snippet(body)


class ChatClient:
    """An async client for ``/v1/chat/completions``; use as ``async with ChatClient(config) as c``.

    ``transport`` lets tests hand in an httpx transport; normal use talks to the network.
    """

    def __init__(self, config: LlmConfig, *, transport: Any = None, rng: random.Random | None = None) -> None:
        config.check()
        try:
            import httpx
        except ImportError:  # pragma: no cover - httpx is a dependency of the llm extra
            raise MissingDependencyError("httpx", "llm") from None
        self.config = config
        self._httpx = httpx
        headers = {"Content-Type": "application/json"}
        key = config.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        limits = httpx.Limits(
            max_connections=config.concurrency, max_keepalive_connections=config.concurrency
        )
        self._client = httpx.AsyncClient(
            base_url=config.api_root,
            headers=headers,
            timeout=httpx.Timeout(config.timeout),
            limits=limits,
            transport=transport,
        )
        self._rng = rng or random.Random()
        self._schema_step = 0
        self.notes: list[str] = []

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    def _where(self) -> str:
        return self.config.api_root

    def _fatal(self, status: int, body: str) -> EndpointError:
        msg = _error_message(body)
        if status in (401, 403):
            hint = f"; set ${self.config.api_key_env} (or --api-key-env VAR)"
            return EndpointError(f"{self._where()} refused the request ({status}: {msg}){hint}")
        if status == 404:
            return EndpointError(
                f"{self._where()}/chat/completions: not found (404: {msg}); is --base-url the server's "
                f"OpenAI-compatible root and --model {self.config.model!r} a model it serves?"
            )
        return EndpointError(f"{self._where()} rejected the request ({status}: {msg})")

    async def check(self) -> None:
        """Fail fast, with one clear line, when the server is unreachable, refuses the key or does not
        serve the model. A server without ``/v1/models`` is given the benefit of the doubt."""
        httpx = self._httpx
        try:
            response = await self._client.get("/models")
        except httpx.TransportError as exc:
            raise EndpointError(f"cannot reach {self._where()}: {type(exc).__name__}: {exc}") from None
        if response.status_code in (401, 403):
            raise self._fatal(response.status_code, response.text)
        if response.status_code != 200:
            return
        try:
            data = response.json().get("data", [])
            names = [m.get("id") for m in data if isinstance(m, dict)]
        except (ValueError, AttributeError):
            return
        if names and self.config.model not in names:
            raise EndpointError(
                f"{self._where()} does not serve model {self.config.model!r}; it serves: "
                + ", ".join(str(n) for n in names[:10])
            )

    def _payload(self, messages: list[dict[str, str]], mode: str | None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if mode == "json_schema":  # the OpenAI form (vLLM, hosted APIs)
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT_SCHEMA},
            }
        elif mode == "json_object":  # llama.cpp's form: a JSON object constrained by a schema
            payload["response_format"] = {"type": "json_object", "schema": VERDICT_SCHEMA}
        return payload

    def messages(self, prompt: str) -> list[dict[str, str]]:
        """The chat messages for one prompt (the optional system message first)."""
        out = [{"role": "system", "content": self.config.system}] if self.config.system else []
        return out + [{"role": "user", "content": prompt}]

    @property
    def schema_mode(self) -> str | None:
        """The ``response_format`` form sent now: None when off or when the server took neither form."""
        if not self.config.json_schema or self._schema_step >= len(_SCHEMA_MODES):
            return None
        return _SCHEMA_MODES[self._schema_step]

    async def _once(self, messages: list[dict[str, str]]) -> tuple[str, int, int, str | None]:
        httpx = self._httpx
        mode = self.schema_mode
        try:
            response = await self._client.post("/chat/completions", json=self._payload(messages, mode))
        except httpx.TimeoutException:
            raise _Retryable(f"no answer within {self.config.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise _Retryable(f"connection failed: {type(exc).__name__}: {exc}") from None
        status = response.status_code
        if mode is not None and status >= 400 and "response_format" in response.text:
            # this form of the schema is refused (llama.cpp answers 500 to the OpenAI form): say so once,
            # try the next form, at last none
            if mode == self.schema_mode:
                self._schema_step += 1
                then = (
                    f"trying response_format type {self.schema_mode}"
                    if self.schema_mode
                    else "sending prompts without it"
                )
                self.notes.append(
                    f"the server rejected response_format type {mode} "
                    f"({status}: {_error_message(response.text)}); {then}"
                )
            return await self._once(messages)
        if status in _RETRY_STATUS:
            raise _Retryable(
                f"HTTP {status}: {_error_message(response.text)}",
                _retry_after(response.headers.get("retry-after")),
            )
        if status >= 400:
            raise self._fatal(status, response.text)
        try:
            body = response.json()
            choice = body["choices"][0]
            text = choice["message"]["content"]
            usage = body.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError):
            kind = "an HTML page" if "<html" in response.text[:500].lower() else "a non-JSON body"
            if response.text.lstrip().startswith("{"):
                kind = "JSON without choices[0].message.content"
            raise _Retryable(f"HTTP {status} with {kind}: {_snippet(response.text, 80)!r}") from None
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        return (
            text,
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            choice.get("finish_reason"),
        )

    async def complete(self, prompt: str) -> Completion:
        """The model's answer to one prompt; RequestFailed after the retries, EndpointError when the
        endpoint itself is unusable (401, 404, a 4xx that retrying cannot fix)."""
        messages = self.messages(prompt)
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                text, p_tok, c_tok, finish = await self._once(messages)
            except _Retryable as exc:
                if attempt > self.config.max_retries:
                    raise RequestFailed(f"{exc.reason} (gave up after {attempt} attempts)", attempt) from None
                delay = exc.retry_after
                if delay is None:
                    cap = min(self.config.max_backoff, self.config.backoff * 2 ** (attempt - 1))
                    delay = self._rng.uniform(0, cap)
                await asyncio.sleep(delay)
                continue
            latency = (time.perf_counter() - started) * 1000
            return Completion(text, p_tok, c_tok, round(latency, 1), finish, attempt)


# ---------------------------------------------------------------- the judge


def judge_prompt(claim: str, sentences: Sequence[str]) -> str:
    """The instruction-style SciFact prompt for one claim and one abstract (the one ``instruct-pairs``
    writes), so the judge asks the model exactly what ``instruct-run`` measures."""
    return instruct_prompt(InstructPair(0, 0, claim, "", tuple(sentences), "NEI", ()))


@dataclass(frozen=True)
class EvidenceMatch:
    """Evidence strings mapped to abstract sentence indices; ``dropped`` matched no sentence."""

    indices: tuple[int, ...]
    dropped: int


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(evidence_tokens(text))


def _contains(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    n = len(inner)
    return any(outer[i : i + n] == inner for i in range(len(outer) - n + 1))


def match_evidence(evidence: Sequence[str], sentences: Sequence[str], min_fragment: int = 5) -> EvidenceMatch:
    """Map copied evidence back to sentence indices, compared as the scorer's tokens (lower case, letters
    and digits only), so case, spacing and punctuation slips still match.

    Per evidence string, in order: the sentence with exactly its tokens; else every sentence (of at least
    three tokens) it contains whole, for sentences pasted together; else the one sentence containing it
    when it is a fragment of at least ``min_fragment`` tokens. Anything else is dropped and counted.
    """
    sent_tokens = [_tokens(s) for s in sentences]
    found: list[int] = []
    dropped = 0
    for item in evidence:
        tokens = _tokens(item)
        if not tokens:
            dropped += 1
            continue
        hits = [i for i, s in enumerate(sent_tokens) if s == tokens]
        if not hits:
            hits = [i for i, s in enumerate(sent_tokens) if len(s) >= 3 and _contains(tokens, s)]
        if not hits and len(tokens) >= min_fragment:
            holders = [i for i, s in enumerate(sent_tokens) if _contains(s, tokens)]
            hits = holders[:1] if len(holders) == 1 else []
        if not hits:
            dropped += 1
        found.extend(i for i in hits if i not in found)
    return EvidenceMatch(tuple(found), dropped)


_LABELS = {"SUPPORT": Label.SUPPORT, "CONTRADICT": Label.CONTRADICT}


@JUDGES.register("llm")
class LlmJudge:
    """Verdict and evidence sentences for each (claim, abstract) pair, asked concurrently.

    An unreachable or misconfigured endpoint raises EndpointError; so does a request that fails for good,
    because a verdict list with holes would read as "no evidence found".
    """

    def __init__(self, config: LlmConfig, *, transport: Any = None) -> None:
        config.check()
        config.api_key()
        self.config = config
        self._transport = transport
        self.stats = JudgeStats()
        self._checked = False

    def judge(self, claim: str, abstracts: Sequence[Sequence[str]]) -> list[JudgeAnswer]:
        """One answer per abstract (given as its sentences), in input order."""
        if not abstracts:
            return []
        return asyncio.run(self._judge(claim, abstracts))

    async def _judge(self, claim: str, abstracts: Sequence[Sequence[str]]) -> list[JudgeAnswer]:
        async with ChatClient(self.config, transport=self._transport) as client:
            if not self._checked:
                await client.check()
                self._checked = True
            gate = asyncio.Semaphore(self.config.concurrency)

            async def one(sentences: Sequence[str]) -> Completion:
                async with gate:
                    return await client.complete(judge_prompt(claim, sentences))

            try:
                done = await asyncio.gather(*(one(s) for s in abstracts))
            except RequestFailed as exc:
                raise EndpointError(f"{self.config.api_root}: {exc.reason}") from None
            for note in client.notes:
                if note not in self.stats.notes:
                    self.stats.notes.append(note)
        return [self._answer(c.text, s) for c, s in zip(done, abstracts, strict=True)]

    def _answer(self, text: str, sentences: Sequence[str]) -> JudgeAnswer:
        self.stats.answers += 1
        parsed = extract_verdict_json(text)
        if parsed.verdict is None:
            self.stats.unparseable += 1
            return JudgeAnswer(None, (), 0, text, parsed.error)
        label = _LABELS.get(parsed.verdict)
        if label is None:
            return JudgeAnswer(None, (), 0, text)
        match = match_evidence(parsed.evidence, sentences)
        self.stats.dropped_evidence += match.dropped
        return JudgeAnswer(label, match.indices, match.dropped, text)
