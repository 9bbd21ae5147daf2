"""Bad input on the command line: one clear line naming the file and line or claim id, exit status 2, no
traceback, nothing half-written, and the check done before any model loads.

Every command runs as a real subprocess (``python -m sciverify``). Where a test must show that a check
happens *before* the models load, it also points ``--index`` at a directory that does not exist: had the
command got as far as loading, the error would be about the index instead.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parents[1] / "golden" / "data"
GOLD = GOLDEN / "worked_example_gold.jsonl"
PRED = GOLDEN / "worked_example_pred.jsonl"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single error line of a failed command (and the checks every failure must pass)."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert lines and lines[0].startswith("error: "), done.stderr
    return " ".join(x.strip() for x in lines)  # Rich may wrap one long line


@pytest.fixture()
def claims(tmp_path: Path) -> Path:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"id": 1, "claim": "ALDH1 expression is associated with poor prognosis."}\n')
    return path


def test_predict_into_an_existing_directory_fails_before_computing(tmp_path: Path, claims: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    done = run_cli("predict", str(claims), "-o", str(target), "--index", str(tmp_path / "no-index"))
    line = one_error_line(done)
    assert f"{target}: is a directory" in line and "no-index" not in line
    assert not (tmp_path / "out.tmp").exists() and list(target.iterdir()) == []


def test_predict_into_a_missing_directory_creates_nothing(tmp_path: Path, claims: Path) -> None:
    target = tmp_path / "missing" / "dir" / "p.jsonl"
    done = run_cli("predict", str(claims), "-o", str(target), "--index", str(tmp_path / "no-index"))
    line = one_error_line(done)
    assert f"directory {target.parent} does not exist" in line
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": "c7", "claim": "x" * 1200}, "claim 'c7' is 1200 characters long; the limit is 1000"),
        ({"id": 8, "claim": 42}, "claim 8: 'claim' must be a string, got int"),
        ({"id": "", "claim": "fine"}, "missing or invalid 'id'"),
    ],
)
def test_predict_names_the_line_and_claim_before_loading_models(
    tmp_path: Path, record: dict[str, object], message: str
) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"id": 1, "claim": "A fine claim."}\n' + json.dumps(record) + "\n")
    out = tmp_path / "p.jsonl"
    done = run_cli("predict", str(path), "-o", str(out), "--index", str(tmp_path / "no-index"))
    line = one_error_line(done)
    assert f"{path}:2: " in line and message in line
    assert not out.exists() and not (tmp_path / "p.jsonl.tmp").exists()


def test_the_claim_limit_is_configurable_for_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"id": 5, "claim": "' + "y" * 60 + '"}\n')
    done = run_cli("predict", str(path), "-o", str(tmp_path / "p.jsonl"), "--index", str(tmp_path / "none"),
                   env={"SCIVERIFY_MAX_CLAIM_CHARS": "50"})
    assert "claim 5 is 60 characters long; the limit is 50" in one_error_line(done)
    done = run_cli("verify", "z" * 60, "--index", str(tmp_path / "none"),
                   env={"SCIVERIFY_MAX_CLAIM_CHARS": "50"})
    line = one_error_line(done)
    assert "60 characters long; the limit is 50" in line and "none" not in line


def test_evaluate_into_an_existing_file_is_refused_and_a_directory_is_refreshed(tmp_path: Path) -> None:
    existing = tmp_path / "report.txt"
    existing.write_text("keep me\n")
    done = run_cli("evaluate", str(GOLD), str(PRED), "-o", str(existing), "--no-bootstrap")
    assert f"{existing}: exists and is a file; -o takes a directory" in one_error_line(done)
    assert existing.read_text() == "keep me\n"
    outdir = tmp_path / "out"
    outdir.mkdir()
    (outdir / "summary").write_text("stale\n")
    (outdir / "notes.md").write_text("mine\n")
    done = run_cli("evaluate", str(GOLD), str(PRED), "-o", str(outdir), "--no-bootstrap")
    assert done.returncode == 0, done.stderr
    assert (outdir / "summary").read_text() != "stale\n", "output files are replaced"
    assert (outdir / "notes.md").read_text() == "mine\n", "other files are left alone"
    missing = tmp_path / "nope" / "out"
    done = run_cli("evaluate", str(GOLD), str(PRED), "-o", str(missing), "--no-bootstrap")
    assert "does not exist" in one_error_line(done) and not (tmp_path / "nope").exists()


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_cap_takes_only_its_two_values(command: str) -> None:
    files = [str(GOLD), str(PRED)] + ([str(PRED)] if command == "compare" else [])
    done = run_cli(command, *files, "--cap", "7", "--bootstrap", "100")
    assert "--cap must be 'leaderboard' or 3, got '7'" in one_error_line(done)
    assert run_cli(command, *files, "--cap", "3", "--bootstrap", "100").returncode == 0


def test_not_enough_info_label_gets_a_precise_message(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    entry = {"label": "NOT_ENOUGH_INFO", "sentences": [0]}
    pred.write_text(json.dumps({"id": 52, "evidence": {"11": entry}}) + "\n")
    done = run_cli("evaluate", str(GOLD), str(pred), "--no-bootstrap", "--strict")
    line = one_error_line(done)
    assert "label 'NOT_ENOUGH_INFO' is not a prediction label" in line
    assert "leave the abstract out of `evidence`" in line and "did you mean" not in line


def test_duplicate_sentence_indices_are_in_the_errlog(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    entry = {"label": "SUPPORT", "sentences": [11, 11, 11, 0]}
    pred.write_text(json.dumps({"id": 52, "evidence": {"11": entry}}) + "\n")
    out = tmp_path / "out"
    done = run_cli("evaluate", str(GOLD), str(pred), "--no-bootstrap", "-o", str(out))
    assert done.returncode == 0, done.stderr
    errlog = (out / "errlog").read_text()
    assert re.search(rf"{re.escape(str(pred))}:1: .*sentence 11 listed 3 times", errlog), errlog
    assert "sentence 11 listed 3 times" in done.stderr
    strict = run_cli("evaluate", str(GOLD), str(pred), "--no-bootstrap", "--strict")
    assert "sentence 11 listed 3 times" in one_error_line(strict)


def test_plain_flags_take_no_value_in_help() -> None:
    from typer.main import get_command

    from sciverify.cli import app

    group = get_command(app)
    names = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        names += [[name, sub] for sub in subcommands] if subcommands else [[name]]
    for path in names:
        done = run_cli(*path, "--help")
        assert done.returncode == 0, (path, done.stderr)
        assert "<bool>" not in done.stdout, path
    assert "--json  " in run_cli("verify", "--help").stdout


@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "cord19", str(Path(__file__).parent / "data" / "sources" / "fixtures" / "metadata.csv")],
        ["oracle", str(GOLD)],
        ["instruct-pairs", str(GOLD)],
    ],
)
def test_other_writers_refuse_a_missing_directory(tmp_path: Path, command: list[str]) -> None:
    target = tmp_path / "missing" / "out.jsonl"
    args = [*command, str(target)] if command[0] == "instruct-pairs" else [*command, "-o", str(target)]
    assert f"directory {target.parent} does not exist" in one_error_line(run_cli(*args))
    assert not (tmp_path / "missing").exists()
