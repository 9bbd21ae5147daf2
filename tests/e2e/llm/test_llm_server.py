"""`instruct-run` and `verify --judge llm` end to end against a real llama.cpp server, a crash included.

Few and small on purpose (a handful of pairs, short answers, generous timeouts): the model runs on the
same two cores as everything else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_e2e import llm_server_missing

from sciverify.data.datasets import DataPaths
from sciverify.scoring.instruct import read_instruct_gold, read_instruct_outputs, write_instruct_pairs

pytestmark = pytest.mark.llm_server
SRC = Path(__file__).resolve().parents[3] / "src"
CLAIM = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."


@pytest.fixture(scope="module")
def pairs_file(scifact: DataPaths, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pairs = read_instruct_gold(scifact.root / "claims_train.jsonl", scifact.corpus)
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    short = sorted(pairs, key=lambda p: sum(len(s) for s in p.sentences))[:4]  # the shortest prompts
    write_instruct_pairs(path, short)
    return path


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_instruct_run_against_llama_cpp(llama_server, pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "outputs.jsonl"
    done = cli(
        "instruct-run",
        str(pairs_file),
        "-o",
        str(out),
        "--base-url",
        llama_server.url,
        "--model",
        "smollm2",
        "--limit",
        "2",
        "--max-tokens",
        "32",
        "--concurrency",
        "1",
        "--timeout",
        "300",
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(isinstance(r["output"], str) and r["output"] for r in rows)
    assert all(r["usage"]["prompt_tokens"] > 100 and 0 < r["usage"]["completion_tokens"] <= 32 for r in rows)
    assert "2 answers appended" in done.stderr and "requests/s" in done.stderr
    assert "pairs 2  parsed" in done.stdout  # scored at the end, whatever the 135M model said
    again = cli("evaluate-instruct", str(pairs_file), str(out), "--format", "json")
    assert again.returncode == 0 and json.loads(again.stdout)["pairs"] == 4  # 2 unanswered count as missing


def test_verify_with_the_llm_judge(llama_server) -> None:
    from sciverify.retrieval.index import default_index_dir

    if not (default_index_dir() / "manifest.json").exists():
        pytest.skip("default index not built")
    done = cli(
        "verify",
        CLAIM,
        "--judge",
        "llm",
        "--base-url",
        llama_server.url,
        "--model",
        "smollm2",
        "-k",
        "2",
        "--max-tokens",
        "48",
        "--timeout",
        "300",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    judge = body["llm_judge"]
    assert judge["model"] == "smollm2" and judge["answers"] == 2
    # whatever it emitted points at real sentences of the abstract
    for result in body["supporting"] + body["refuting"]:
        assert result["label"] in ("SUPPORT", "CONTRADICT")
        assert all(isinstance(s["index"], int) and s["text"] for s in result["rationale"])
    assert "LLM judge smollm2: 2 answers" in done.stderr


def test_server_killed_mid_run_then_resumed(pairs_file: Path, tmp_path: Path) -> None:
    if llm_server_missing():
        pytest.skip(str(llm_server_missing()))
    from sciverify.models.llm_local import LocalLlamaServer

    out = tmp_path / "outputs.jsonl"
    args = [
        "instruct-run",
        str(pairs_file),
        "-o",
        str(out),
        "--model",
        "smollm2",
        "--max-tokens",
        "24",
        "--concurrency",
        "1",
        "--retries",
        "1",
        "--timeout",
        "300",
        "--no-score",
    ]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with LocalLlamaServer(start_timeout=300) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sciverify", *args, "--base-url", server.url],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.time() + 400
        while time.time() < deadline and (not out.exists() or not out.read_text().count("\n")):
            time.sleep(0.2)
        server.kill()  # the server dies under the client
        stdout, stderr = proc.communicate(timeout=300)
        url = server.url
    assert proc.returncode == 0, stderr  # the run goes on: what was not answered is recorded as failed
    first = [json.loads(line) for line in out.read_text().splitlines()]
    answered = [r for r in first if r["output"] is not None]
    failed = [r for r in first if r["output"] is None]
    assert len(first) == 4 and answered and failed
    assert all("connection failed" in r["error"] for r in failed)
    kept = out.read_text()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with LocalLlamaServer(port=port, start_timeout=300):
        done = cli(*args, "--base-url", url)
    assert done.returncode == 0, done.stderr
    assert f"resuming: {len(answered)} of 4 pairs already answered" in done.stderr
    assert out.read_text().startswith(kept)  # nothing received before the crash is lost or rewritten
    outputs = read_instruct_outputs(out)
    assert len(outputs) == 4 and all(o.text is not None for o in outputs)
