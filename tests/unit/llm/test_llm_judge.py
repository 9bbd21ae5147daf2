"""The LLM judge: answers mapped to sentence indices, endpoint faults as one error, the pipeline wiring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import Act, FakeServer

from sciverify.data.records import Label
from sciverify.errors import ConfigError, EndpointError
from sciverify.models.llm import LlmConfig, LlmJudge
from sciverify.pipeline.config import PipelineConfig

SRC = Path(__file__).resolve().parents[3] / "src"
ABSTRACTS = [
    ("ALDH1 marks breast cancer stem cells.", "ALDH1 positivity predicts poor prognosis (HR = 1.93)."),
    ("Mice were fed a high-fat diet.", "Weight gain was measured weekly."),
    ("We sequenced 40 genomes.",),
]


def cfg(server: FakeServer, **kw) -> LlmConfig:
    base = dict(base_url=server.url, model="fake-model", timeout=5.0, backoff=0.01, max_backoff=0.05)
    base.update(kw)
    return LlmConfig(**base)


def test_judge_maps_verdicts_and_evidence_and_counts_what_it_drops() -> None:
    answers = [
        'Sure! ```json\n{"verdict": "supports", "evidence": ["aldh1 positivity predicts poor prognosis '
        '(HR=1.93)", "ALDH1 is everywhere"]}\n```',
        '{"verdict": "CONTRADICT", "evidence": ["Weight gain was measured weekly."]}',
        "I cannot tell.",
    ]

    def plan(n: int, body: dict) -> Act:
        prompt = body["messages"][-1]["content"]
        return Act(text=next(a for a, s in zip(answers, ABSTRACTS, strict=True) if s[0] in prompt))

    with FakeServer(plan) as server:
        judge = LlmJudge(cfg(server, concurrency=3))
        out = judge.judge("ALDH1 predicts poor prognosis.", ABSTRACTS)
    assert [a.label for a in out] == [Label.SUPPORT, Label.CONTRADICT, None]
    assert [a.sentences for a in out] == [(1,), (1,), ()]
    assert out[0].dropped_evidence == 1 and out[2].error == "no JSON object found"
    assert (judge.stats.answers, judge.stats.unparseable, judge.stats.dropped_evidence) == (3, 1, 1)
    assert "Claim: ALDH1 predicts poor prognosis." in server.requests[0]["messages"][-1]["content"]


def test_a_failing_endpoint_is_one_error_never_an_empty_result() -> None:
    with FakeServer(lambda n, body: Act(502, b"<html><body>Bad Gateway</body></html>")) as server:
        with pytest.raises(EndpointError, match=r"HTTP 502: Bad Gateway \(gave up after 2 attempts\)"):
            LlmJudge(cfg(server, max_retries=1)).judge("claim", ABSTRACTS)
    with pytest.raises(EndpointError, match="cannot reach"):
        LlmJudge(LlmConfig(base_url="http://127.0.0.1:9/v1", model="m")).judge("claim", ABSTRACTS)
    with pytest.raises(ConfigError, match="--model"):
        LlmJudge(LlmConfig(base_url="http://127.0.0.1:9/v1"))


def test_pipeline_toml_carries_the_llm_judge(tmp_path: Path) -> None:
    base = PipelineConfig()
    assert "[llm]" not in base.dumps_toml()  # files of the default judge are unchanged
    cfg = base.with_judge(
        "llm",
        base_url="http://127.0.0.1:8080/v1",
        model="smollm2",
        concurrency=2,
        json_schema=True,
        timeout=None,
    )
    path = tmp_path / "pipeline.toml"
    cfg.dump_toml(path)
    text = path.read_text()
    assert 'judge = "llm"' in text and "[llm]" in text and 'model = "smollm2"' in text
    loaded = PipelineConfig.load_toml(path)
    assert loaded == cfg and loaded.llm.concurrency == 2 and loaded.llm.timeout == 120.0
    path.write_text(text.replace("concurrency = 2", "concurency = 2"))
    with pytest.raises(ConfigError, match="unknown llm settings: concurency"):
        PipelineConfig.load_toml(path)
    with pytest.raises(ConfigError, match="judge must be 'models' or 'llm'"):
        base.with_judge("gpt")


def default_index_missing() -> str | None:
    from sciverify.retrieval.index import default_index_dir

    path = default_index_dir()
    return None if (path / "manifest.json").exists() else f"default index not built at {path}"


@pytest.mark.skipif(default_index_missing() is not None, reason=str(default_index_missing()))
def test_verifier_with_the_llm_judge_on_the_real_index() -> None:
    from sciverify.pipeline.verify import Verifier

    claim = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
    with FakeServer() as server:  # answers SUPPORT with each abstract's first sentence
        config = PipelineConfig().with_judge("llm", base_url=server.url, model="fake-model").with_k(3)
        verifier = Verifier.load(config=config)
        assert verifier.selector is None and verifier.labeler is None  # the models are not loaded
        results = verifier.verify(claim)
    assert len(server.requests) == 3 and len(results) == 3
    assert all(r.label is Label.SUPPORT and [s.index for s in r.rationale] == [0] for r in results)
    assert results[0].rationale[0].text == verifier.get_abstract(str(results[0].doc_id)).sentences[0]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.skipif(default_index_missing() is not None, reason=str(default_index_missing()))
def test_cli_verify_judge_llm_json_and_unreachable_endpoint() -> None:
    claim = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
    with FakeServer() as server:
        done = run_cli(
            "verify",
            claim,
            "--judge",
            "llm",
            "--base-url",
            server.url,
            "--model",
            "fake-model",
            "-k",
            "2",
            "--json",
        )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert len(body["supporting"] + body["refuting"]) == 2 and body["llm_judge"] == {
        "model": "fake-model",
        "answers": 2,
        "unparseable": 0,
        "dropped_evidence": 0,
    }
    assert "LLM judge fake-model: 2 answers, 0 unparseable" in done.stderr
    down = run_cli("verify", claim, "--judge", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m")
    assert down.returncode == 2 and "Traceback" not in down.stderr
    assert down.stderr.strip().startswith("error: cannot reach http://127.0.0.1:9/v1")


@pytest.mark.skipif(default_index_missing() is not None, reason=str(default_index_missing()))
def test_cli_predict_judge_llm_writes_leaderboard_predictions(tmp_path: Path) -> None:
    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        json.dumps({"id": 7, "claim": "ALDH1 expression is associated with poorer prognosis."})
        + "\n"
        + json.dumps({"id": 8, "claim": "Vitamin D supplementation prevents fractures."})
        + "\n"
    )
    out = tmp_path / "pred.jsonl"
    with FakeServer() as server:
        done = run_cli(
            "predict",
            str(claims),
            "-o",
            str(out),
            "--judge",
            "llm",
            "--base-url",
            server.url,
            "--model",
            "fake-model",
            "-k",
            "2",
        )
    assert done.returncode == 0, done.stderr
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["id"] for p in preds] == [7, 8] and len(server.requests) == 4
    for p in preds:
        assert len(p["evidence"]) == 2
        assert all(e["label"] == "SUPPORT" and e["sentences"] == [0] for e in p["evidence"].values())
