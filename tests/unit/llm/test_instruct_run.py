"""`instruct-run` against a fake OpenAI-compatible server: outputs, scores, failures, resume, kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai import Act, FakeServer

from sciverify.errors import DataFormatError, EndpointError
from sciverify.models.llm import LlmConfig
from sciverify.pipeline.instruct_run import read_prompted_pairs, run_instruct, select_pairs
from sciverify.scoring.instruct import InstructPair, read_instruct_outputs

SRC = Path(__file__).resolve().parents[3] / "src"


def cfg(server: FakeServer, **kw) -> LlmConfig:
    base = dict(
        base_url=server.url, model="fake-model", timeout=5.0, backoff=0.01, max_backoff=0.05, concurrency=3
    )
    base.update(kw)
    return LlmConfig(**base)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def gold_answer(pair: InstructPair) -> str:
    return json.dumps({"verdict": pair.verdict, "evidence": list(pair.evidence)})


def test_every_pair_answered_recorded_and_scored(
    pairs_file: Path, gold_pairs: list[InstructPair], tmp_path: Path
) -> None:
    by_prompt = {p.prompt: gold_answer(p.pair) for p in read_prompted_pairs(pairs_file)}
    plan = lambda n, body: Act(text=by_prompt[body["messages"][-1]["content"]])  # noqa: E731
    out = tmp_path / "outputs.jsonl"
    with FakeServer(plan) as server:
        result = run_instruct(pairs_file, out, cfg(server, system="You are careful."))
    rows = records(out)
    assert len(rows) == 12 and {(r["claim_id"], r["doc_id"]) for r in rows} == {
        (p.claim_id, p.doc_id) for p in gold_pairs
    }
    assert set(rows[0]) >= {"claim_id", "doc_id", "output", "usage", "latency_ms"}
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "You are careful."}
    assert result.progress.done == 12 and result.progress.completion_tokens == 240
    report = result.report
    assert report is not None and report.accuracy == 1.0 and report.evidence_token_f1 == 1.0


def test_failed_for_good_is_recorded_scored_unparseable_and_retried_on_resume(
    pairs_file: Path, gold_pairs: list[InstructPair], tmp_path: Path
) -> None:
    bad_claim = gold_pairs[0].claim
    out = tmp_path / "outputs.jsonl"

    def flaky(n: int, body: dict) -> Act:
        if bad_claim in body["messages"][-1]["content"]:
            return Act(503, b'{"error": {"message": "overloaded"}}')
        return Act()

    with FakeServer(flaky) as server:
        first = run_instruct(pairs_file, out, cfg(server, max_retries=1))
    n_bad = sum(1 for p in gold_pairs if p.claim == bad_claim)
    failed = [r for r in records(out) if r["output"] is None]
    assert len(failed) == n_bad == first.progress.failed
    assert failed[0]["error"] == "HTTP 503: overloaded (gave up after 2 attempts)"
    assert first.report is not None and first.report.unparseable == n_bad
    with FakeServer() as server:
        second = run_instruct(pairs_file, out, cfg(server))
    assert len(server.requests) == n_bad and second.progress.skipped == 12 - n_bad
    outputs = read_instruct_outputs(out)  # the retry replaces the failed record: no duplicate error
    assert len(outputs) == 12 and all(o.text is not None for o in outputs)
    assert second.report is not None and second.report.unparseable == 0


def test_resume_skips_answered_pairs_and_repairs_a_torn_line(pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "outputs.jsonl"
    with FakeServer() as server:
        run_instruct(pairs_file, out, cfg(server), limit=5)
    before = out.read_bytes()
    with out.open("ab") as fh:
        fh.write(b'{"claim_id": 99, "doc_id": 1, "outp')  # a crash in the middle of a write
    with FakeServer() as server:
        result = run_instruct(pairs_file, out, cfg(server))
    assert len(server.requests) == 7 and result.progress.skipped == 5
    assert out.read_bytes().startswith(before) and len(records(out)) == 12


def test_sample_is_seeded_and_kept_in_file_order(pairs_file: Path) -> None:
    pairs = read_prompted_pairs(pairs_file)
    a = select_pairs(pairs, sample=5, seed=3)
    assert [p.pair.key for p in a] == [p.pair.key for p in select_pairs(pairs, sample=5, seed=3)]
    assert [p.pair.key for p in a] != [p.pair.key for p in select_pairs(pairs, sample=5, seed=4)]
    order = [p.pair.key for p in pairs]
    assert [order.index(p.pair.key) for p in a] == sorted(order.index(p.pair.key) for p in a)
    assert len(select_pairs(pairs, sample=5, seed=3, limit=2)) == 2


def test_not_a_pairs_file_is_one_clear_error(scifact, tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r"claims_train\.jsonl:1: not a pairs file"):
        read_prompted_pairs(scifact.root / "claims_train.jsonl")
    bad = tmp_path / "bad.jsonl"
    good = json.dumps(
        {
            "claim_id": 1,
            "doc_id": 2,
            "sentences": ["a"],
            "prompt": "p",
            "expected": {"verdict": "NEI", "evidence": []},
        }
    )
    bad.write_text(good + "\n" + good.replace('"claim_id": 1', '"claim_id": 3').replace('"p"', "7") + "\n")
    with pytest.raises(DataFormatError, match=r"bad\.jsonl:2: prompt must be a non-empty string"):
        read_prompted_pairs(bad)


def test_fatal_endpoint_error_keeps_answers_already_received(pairs_file: Path, tmp_path: Path) -> None:
    plan = lambda n, body: Act(401, b'{"error": {"message": "key revoked"}}') if n > 4 else Act()  # noqa: E731
    out = tmp_path / "outputs.jsonl"
    with FakeServer(plan) as server:
        with pytest.raises(EndpointError, match="key revoked"):
            run_instruct(pairs_file, out, cfg(server, concurrency=1))
    assert len(records(out)) == 4


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_cli_kill_9_mid_run_then_resume_loses_no_answer(pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "outputs.jsonl"
    with FakeServer(lambda n, body: Act(delay=0.4)) as server:
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sciverify",
                "instruct-run",
                str(pairs_file),
                "-o",
                str(out),
                "--base-url",
                server.url,
                "--model",
                "fake-model",
                "--concurrency",
                "2",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 90
        while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 4):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        kept = out.read_bytes()
        n_kept = len(kept.splitlines())
        assert 4 <= n_kept < 12 and kept.endswith(b"\n")
        sent_before = len(server.requests)
        done = run_cli(
            "instruct-run", str(pairs_file), "-o", str(out), "--base-url", server.url, "--model", "fake-model"
        )
    assert done.returncode == 0, done.stderr
    assert f"resuming: {n_kept} of 12 pairs already answered" in done.stderr
    assert len(server.requests) - sent_before == 12 - n_kept
    assert out.read_bytes().startswith(kept) and len(read_instruct_outputs(out)) == 12
    assert "pairs 12  parsed 12" in done.stdout


def test_cli_errors_are_one_line(pairs_file: Path, tmp_path: Path, scifact) -> None:
    unreachable = run_cli(
        "instruct-run",
        str(pairs_file),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    )
    assert unreachable.returncode == 2 and "Traceback" not in unreachable.stderr
    assert "error: cannot reach http://127.0.0.1:9/v1" in unreachable.stderr
    claims_file = str(scifact.root / "claims_train.jsonl")
    claims = run_cli(
        "instruct-run",
        claims_file,
        "-o",
        str(tmp_path / "o.jsonl"),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    )
    assert claims.returncode == 2 and "claims_train.jsonl:1: not a pairs file" in claims.stderr
