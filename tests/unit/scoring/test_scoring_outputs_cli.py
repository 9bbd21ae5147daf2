"""Output files, the public report, the CLI commands, and the torch-free import of sciverify.scoring."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sciverify.scoring as scoring
from sciverify.cli import app
from sciverify.scoring import OUTPUT_FILES, evaluate_files, render_html, write_outputs

GOLDEN = Path(__file__).parents[2] / "golden" / "data"
GOLD = GOLDEN / "worked_example_gold.jsonl"
PRED = GOLDEN / "worked_example_pred.jsonl"
FAMILY_KEYS = {"abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label"}


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture()
def with_confidence(tmp_path):
    pred = tmp_path / "conf.jsonl"
    pred.write_text(
        json.dumps(
            {
                "id": 52,
                "evidence": {
                    "11": {"label": "SUPPORT", "sentences": [11, 0, 1], "confidence": 0.9},
                    "16": {"label": "SUPPORT", "sentences": [3], "confidence": 0.95},
                },
            }
        )
        + "\n"
    )
    return pred


def test_write_outputs_writes_every_file(tmp_path, with_confidence):
    result = evaluate_files(GOLD, with_confidence, n_boot=300, seed=1)
    written = write_outputs(result, tmp_path / "out")
    assert set(written) == set(OUTPUT_FILES)
    metrics = json.loads(written["metrics.json"].read_text())
    assert FAMILY_KEYS <= set(metrics)
    assert metrics["ranking"]["average_precision"] == pytest.approx((1 / 2) / 2)
    assert metrics["ci"]["n_boot"] == 300 and set(metrics["ci"]["sentence_label"]) == {
        "precision",
        "recall",
        "f1",
    }
    assert metrics["per_claim"][0]["id"] == 52
    assert "abstract_* families average over the claims with at least one gold evidence abstract" in written[
        "summary"
    ].read_text().replace("\n", " ")
    params = written["params"].read_text()
    assert "sha256:" in params and "cap: leaderboard" in params and "seed: 1" in params
    assert written["errlog"].read_text() == "no problems\n"
    assert "sentence_label" in written["confidence"].read_text()


def test_html_report_is_self_contained_and_public_mode_hides_gold(with_confidence):
    result = evaluate_files(GOLD, with_confidence, n_boot=100)
    private = render_html(result)
    public = render_html(result, public=True)
    for page in (private, public):
        assert "<svg" in page and "<script" not in page
        assert not re.search(r"""(src|href)\s*=""", page)
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in page
    assert "claim 52" in private and "sets: [0, 1] [11]" in private
    assert "claim 52" not in public and "[0, 1]" not in public and "Per claim" not in public
    assert str(GOLDEN) not in public


def test_public_outputs_leave_out_per_claim_information(tmp_path):
    result = evaluate_files(GOLD, PRED, n_boot=0)
    written = write_outputs(result, tmp_path, public=True)
    assert "debug" not in written and not (tmp_path / "debug").exists()
    metrics = json.loads(written["metrics.json"].read_text())
    assert "per_claim" not in metrics
    assert metrics["params"]["gold"] == GOLD.name
    for name in ("summary", "params", "errlog", "report.html"):
        assert str(GOLDEN) not in written[name].read_text(), name


def test_cli_evaluate_json_and_outdir(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(GOLD),
            str(PRED),
            "--format",
            "json",
            "--bootstrap",
            "200",
            "--seed",
            "3",
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert FAMILY_KEYS <= set(payload)
    assert payload["abstract_rationalized"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert payload["sentence_selection"]["precision"] == 0.2
    assert {"counts", "macro", "ci", "ranking"} <= set(payload)
    assert payload["n_problems"] == 1 and payload["problems"][0]["line"] == 1
    assert {p.name for p in (tmp_path / "o").iterdir()} == set(OUTPUT_FILES)
    # what it wrote, on stderr (stdout stays one JSON document): each file by name, with what it holds
    lines = result.stderr.splitlines()
    assert lines[0] == f"wrote 7 files to {tmp_path / 'o'}:"
    assert [line.split()[0] for line in lines[1:8]] == list(OUTPUT_FILES)
    assert lines[7].startswith("  report.html  ") and "browser" in lines[7]


def test_cli_text_table_and_cap():
    result = CliRunner().invoke(app, ["evaluate", str(GOLD), str(PRED), "--no-bootstrap", "--cap", "3"])
    assert result.exit_code == 0, result.output
    assert "abstract_rationalized" in result.stdout and "0.5000" in result.stdout
    assert "wrote" not in result.stderr, "without -o nothing is written"


def test_cli_strict_fails_with_file_and_line():
    proc = run_cli("evaluate", str(GOLD), str(PRED), "--strict", "--no-bootstrap")
    assert proc.returncode == 2
    assert f"{PRED}:1:" in proc.stderr and "REFUTES" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_garbage_input_never_shows_a_traceback(tmp_path):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\xff{{{\n[1,2\n\xef\xbb\xbf\n")
    lenient = run_cli("evaluate", str(GOLD), str(garbage), "--no-bootstrap")
    assert lenient.returncode == 0 and "Traceback" not in lenient.stderr
    assert "invalid JSON" in lenient.stderr
    bad_gold = run_cli("evaluate", str(garbage), str(PRED))
    assert bad_gold.returncode == 2 and "Traceback" not in bad_gold.stderr
    assert f"{garbage}:1:" in bad_gold.stderr
    missing = run_cli("evaluate", str(GOLD), str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "file not found" in missing.stderr
    bad_cap = run_cli("evaluate", str(GOLD), str(PRED), "--cap", "zero")
    assert bad_cap.returncode == 2 and "cap must be" in bad_cap.stderr and "Traceback" not in bad_cap.stderr


def test_cli_oracle_and_compare(tmp_path):
    runner = CliRunner()
    for rationales in ("gold", "none"):
        out = tmp_path / f"{rationales}.jsonl"
        result = runner.invoke(app, ["oracle", str(GOLD), "-o", str(out), "--rationales", rationales])
        assert result.exit_code == 0, result.output
    line = json.loads((tmp_path / "gold.jsonl").read_text())
    assert line == {
        "id": 52,
        "evidence": {
            "11": {"label": "SUPPORT", "sentences": [11, 0, 1]},
            "15": {"label": "SUPPORT", "sentences": [4]},
        },
    }
    result = runner.invoke(
        app,
        [
            "compare",
            str(GOLD),
            str(tmp_path / "gold.jsonl"),
            str(tmp_path / "none.jsonl"),
            "--bootstrap",
            "300",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["abstract_label_only"]["f1"]["diff"] == 0.0
    assert payload["sentence_selection"]["f1"]["diff"] == 1.0
    assert payload["n_boot"] == 300 and "p_value" in payload["sentence_label"]["recall"]
    text = runner.invoke(
        app,
        [
            "compare",
            str(GOLD),
            str(tmp_path / "gold.jsonl"),
            str(tmp_path / "none.jsonl"),
            "--bootstrap",
            "100",
        ],
    )
    assert text.exit_code == 0 and "95% interval" in text.stdout


def test_import_does_not_load_torch():
    code = (
        "import sys, sciverify.scoring; "
        "print(sorted(m for m in ('torch', 'transformers', 'onnxruntime', 'rich') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_exported_members_exist():
    for name in scoring.__all__:
        assert hasattr(scoring, name), name
