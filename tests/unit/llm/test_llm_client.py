"""The batch client against a misbehaving OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

import pytest
from fake_openai import Act, FakeServer

from sciverify.errors import ConfigError, EndpointError
from sciverify.models.llm import (
    ChatClient,
    LlmConfig,
    RequestFailed,
    _retry_after,
    match_evidence,
)

PROMPT = "Claim: X causes Y.\n\nAbstract:\nX causes Y in mice.\nNothing else.\n"


def ask(config: LlmConfig, prompt: str = PROMPT, check: bool = False):
    async def go():
        async with ChatClient(config) as client:
            if check:
                await client.check()
            answer = await client.complete(prompt)
            return answer, client.notes

    return asyncio.run(go())


def cfg(server: FakeServer, **kw) -> LlmConfig:
    base = dict(base_url=server.url, model="fake-model", timeout=5.0, backoff=0.01, max_backoff=0.05)
    base.update(kw)
    return LlmConfig(**base)


def test_answer_text_usage_and_latency_come_back() -> None:
    with FakeServer() as server:
        answer, notes = ask(cfg(server), check=True)
    assert json.loads(answer.text) == {"verdict": "SUPPORT", "evidence": ["X causes Y in mice."]}
    assert answer.usage() == {"prompt_tokens": 100, "completion_tokens": 20}
    assert answer.attempts == 1 and answer.latency_ms > 0 and answer.finish_reason == "stop"
    sent = server.requests[0]
    assert sent["model"] == "fake-model" and sent["temperature"] == 0.0 and sent["max_tokens"] == 512
    assert sent["messages"] == [{"role": "user", "content": PROMPT}]
    assert "response_format" not in sent and notes == []


def test_429_storm_honours_retry_after() -> None:
    def plan(n: int, body: dict) -> Act:
        if n <= 3:
            return Act(429, b'{"error": {"message": "slow down"}}', headers={"Retry-After": "0.3"})
        return Act()

    with FakeServer(plan) as server:
        started = time.perf_counter()
        answer, _ = ask(cfg(server, max_retries=4))
        elapsed = time.perf_counter() - started
    assert answer.attempts == 4 and len(server.requests) == 4
    assert elapsed >= 0.9  # three waits of Retry-After: 0.3, not the 0.05 s back-off cap


def test_5xx_then_success_and_5xx_for_good() -> None:
    plan = lambda n, body: Act(503, b'{"error": {"message": "overloaded"}}') if n <= 2 else Act()  # noqa: E731
    with FakeServer(plan) as server:
        answer, _ = ask(cfg(server))
    assert answer.attempts == 3
    with FakeServer(lambda n, body: Act(500, b'{"error": {"message": "boom"}}')) as server:
        with pytest.raises(RequestFailed) as info:
            ask(cfg(server, max_retries=2))
    assert len(server.requests) == 3 and info.value.attempts == 3
    assert info.value.reason == "HTTP 500: boom (gave up after 3 attempts)"


def test_malformed_json_and_html_pages_are_named_not_crashed_on() -> None:
    with FakeServer(lambda n, body: Act(200, b'{"choices": [{"message": ')) as server:
        with pytest.raises(RequestFailed) as info:
            ask(cfg(server, max_retries=1))
    assert "JSON without choices[0].message.content" in info.value.reason
    html = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
    with FakeServer(lambda n, body: Act(502, html)) as server:
        with pytest.raises(RequestFailed) as info:
            ask(cfg(server, max_retries=0))
    assert info.value.reason.startswith("HTTP 502: 502 Bad Gateway 502 Bad Gateway")
    assert "<" not in info.value.reason
    with FakeServer(lambda n, body: Act(200, b"<html><body>maintenance</body></html>")) as server:
        with pytest.raises(RequestFailed) as info:
            ask(cfg(server, max_retries=0))
    assert "an HTML page" in info.value.reason


def test_timeout_is_retried_then_reported() -> None:
    with FakeServer(lambda n, body: Act(delay=1.5)) as server:
        with pytest.raises(RequestFailed) as info:
            ask(cfg(server, timeout=0.3, max_retries=1))
    assert info.value.reason == "no answer within 0.3 s (gave up after 2 attempts)"


def test_truncated_body_is_retried() -> None:
    with FakeServer(lambda n, body: Act(truncate=n == 1)) as server:
        answer, _ = ask(cfg(server))
    assert answer.attempts == 2 and json.loads(answer.text)["verdict"] == "SUPPORT"


def test_length_cut_answer_is_kept_with_its_finish_reason() -> None:
    with FakeServer(lambda n, body: Act(text='{"verdict": "SUPP', finish_reason="length")) as server:
        answer, _ = ask(cfg(server))
    assert answer.text == '{"verdict": "SUPP' and answer.finish_reason == "length"


def test_401_is_one_endpoint_error_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "sk-wrong-secret-123")
    with FakeServer(key="sk-right") as server:
        with pytest.raises(EndpointError) as info:
            ask(cfg(server, api_key_env="MY_LLM_KEY"), check=True)
        with pytest.raises(EndpointError):
            ask(cfg(server, api_key_env="MY_LLM_KEY"))
    message = str(info.value)
    assert "401" in message and "$MY_LLM_KEY" in message and "sk-wrong" not in message
    assert server.auth_headers[0] == "Bearer sk-wrong-secret-123"


def test_key_from_the_environment_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-right")
    with FakeServer(key="sk-right") as server:
        answer, _ = ask(cfg(server), check=True)
    assert answer.attempts == 1


def test_named_key_variable_must_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR"):
        LlmConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="NO_SUCH_KEY_VAR").api_key()


def test_wrong_model_and_unreachable_url() -> None:
    with FakeServer(models=("smollm2", "other")) as server:
        expected = "does not serve model 'fake-model'; it serves: smollm2, other"
        with pytest.raises(EndpointError, match=expected):
            ask(cfg(server), check=True)
    with pytest.raises(EndpointError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        ask(LlmConfig(base_url="http://127.0.0.1:9", model="m"), check=True)
    with pytest.raises(ConfigError, match="--base-url"):
        LlmConfig(base_url="localhost:8080", model="m").check()


def test_json_schema_is_sent_and_a_refusal_is_noted_once() -> None:
    with FakeServer() as server:
        ask(cfg(server, json_schema=True))
    schema = server.requests[0]["response_format"]
    assert schema["type"] == "json_schema"
    assert schema["json_schema"]["schema"]["required"] == ["verdict", "evidence"]

    def llama_cpp(n: int, body: dict) -> Act:  # what llama-cpp-python's server does with each form
        form = body.get("response_format", {}).get("type")
        if form == "json_schema":
            msg = "1 validation error: response_format.type: Input should be 'text' or 'json_object'"
            return Act(500, json.dumps({"error": {"message": msg}}).encode())
        return Act()

    with FakeServer(llama_cpp) as server:
        answer, notes = ask(cfg(server, json_schema=True))
    assert answer.attempts == 1 and len(server.requests) == 2
    assert server.requests[1]["response_format"]["type"] == "json_object"
    assert server.requests[1]["response_format"]["schema"]["required"] == ["verdict", "evidence"]
    assert len(notes) == 1 and notes[0].startswith(
        "the server rejected response_format type json_schema (500: "
    )
    assert notes[0].endswith("; trying response_format type json_object")

    def refuse(n: int, body: dict) -> Act:
        if "response_format" in body:
            return Act(400, b'{"error": {"message": "response_format is not supported"}}')
        return Act()

    with FakeServer(refuse) as server:
        answer, notes = ask(cfg(server, json_schema=True))
    assert answer.attempts == 1 and len(server.requests) == 3
    assert "response_format" not in server.requests[2]
    assert notes[1] == (
        "the server rejected response_format type json_object (400: response_format is not supported); "
        "sending prompts without it"
    )


def test_other_4xx_is_fatal() -> None:
    with FakeServer(lambda n, body: Act(400, b'{"error": {"message": "context length exceeded"}}')) as server:
        with pytest.raises(EndpointError, match=r"rejected the request \(400: context length exceeded\)"):
            ask(cfg(server))


def test_retry_after_parses_seconds_and_dates() -> None:
    assert _retry_after("2") == 2.0
    assert _retry_after("junk") is None and _retry_after(None) is None
    assert _retry_after("100000") == 120.0
    soon = email.utils.formatdate(time.time() + 5, usegmt=True)
    delay = _retry_after(soon)
    assert delay is not None and 3.0 <= delay <= 5.5


SENTENCES = (
    "Breast cancer stem cells express ALDH1.",
    "ALDH1 positivity correlated with poor prognosis (HR = 1.93, p < 0.01).",
    "The study included 577 tumours from three hospitals.",
)


def test_evidence_maps_back_with_the_scorers_tokens() -> None:
    exact = match_evidence(["aldh1 positivity correlated with poor prognosis (HR=1.93, p<0.01)"], SENTENCES)
    assert exact.indices == (1,) and exact.dropped == 0
    pasted = match_evidence([SENTENCES[0] + " " + SENTENCES[2]], SENTENCES)
    assert pasted.indices == (0, 2)
    fragment = match_evidence(["included 577 tumours from three hospitals"], SENTENCES)
    assert fragment.indices == (2,)
    invented = match_evidence(["ALDH1 is a marker", "", SENTENCES[1], SENTENCES[1]], SENTENCES)
    assert invented.indices == (1,) and invented.dropped == 2
