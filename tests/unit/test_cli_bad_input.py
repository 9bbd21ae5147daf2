"""Bad input on the command line: one clear line naming the file and line or claim id, exit status 2, no
traceback, nothing half-written, and the check done before any model loads.

Every command runs as a real subprocess (``python -m sciverify``). Where a test must show that a check
happens *before* the models load, it also points ``--index`` at a directory that does not exist: had the
command got as far as loading, the error would be about the index instead.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
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


def test_a_missing_output_directory_is_created_only_when_the_output_is_written(
    tmp_path: Path, claims: Path
) -> None:
    target = tmp_path / "missing" / "dir" / "p.jsonl"
    done = run_cli("predict", str(claims), "-o", str(target), "--index", str(tmp_path / "no-index"))
    assert "no-index" in one_error_line(done), "the output check passed; the run failed later"
    assert not (tmp_path / "missing").exists(), "a failed run leaves no directory behind"
    oracle_out = tmp_path / "new" / "dir" / "oracle.jsonl"
    done = run_cli("oracle", str(GOLD), "-o", str(oracle_out))
    assert done.returncode == 0, done.stderr
    assert oracle_out.read_text().count("\n") == len(GOLD.read_text().splitlines())
    assert [p.name for p in oracle_out.parent.iterdir()] == ["oracle.jsonl"], "no temporary file is left"


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
    # the README's `evaluate ... -o out/cv` from a directory without out/: both levels are created
    done = run_cli("evaluate", str(GOLD), str(PRED), "-o", str(tmp_path / "nope" / "cv"), "--no-bootstrap")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "nope" / "cv" / "metrics.json").is_file()


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


def test_ingest_writes_into_a_new_directory(tmp_path: Path) -> None:
    metadata = Path(__file__).parent / "data" / "sources" / "fixtures" / "metadata.csv"
    target = tmp_path / "missing" / "corpus.jsonl"
    done = run_cli("ingest", "cord19", str(metadata), "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert target.stat().st_size > 0 and [p.name for p in target.parent.iterdir()] == ["corpus.jsonl"]


# ---- an output never destroys an input ------------------------------------------------------------


def test_predict_refuses_to_write_over_its_claims_however_named(tmp_path: Path, claims: Path) -> None:
    before = claims.read_bytes()
    link = tmp_path / "hard-link.jsonl"
    os.link(claims, link)
    (tmp_path / "sub").mkdir()
    for target in (claims, tmp_path / "sub" / ".." / claims.name, link):
        done = run_cli("predict", str(claims), "-o", str(target), "--index", str(tmp_path / "no-index"))
        line = one_error_line(done)
        assert "is also an input of this command" in line and "no-index" not in line, line
    assert claims.read_bytes() == before


def test_other_writers_refuse_their_inputs(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(GOLD.read_bytes())
    assert "is also an input" in one_error_line(run_cli("oracle", str(gold), "-o", str(gold)))
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"claim_id": 1, "doc_id": 2, "prompt": "p"}\n')
    done = run_cli("instruct-run", str(pairs), "-o", str(pairs), "--base-url", "http://127.0.0.1:9/v1",
                   "--model", "m")
    assert "is also an input" in one_error_line(done)
    outdir = tmp_path / "out"
    outdir.mkdir()
    pred = outdir / "summary"  # `evaluate -o out` would replace out/summary with its summary
    pred.write_bytes(PRED.read_bytes())
    done = run_cli("evaluate", str(GOLD), str(pred), "-o", str(outdir), "--no-bootstrap")
    assert "is also an input" in one_error_line(done)
    assert gold.read_bytes() == GOLD.read_bytes() and pred.read_bytes() == PRED.read_bytes()
    assert pairs.read_text() == '{"claim_id": 1, "doc_id": 2, "prompt": "p"}\n'


# ---- places nobody can write --------------------------------------------------------------------


@pytest.mark.parametrize("where", ["/proc/sciverify-test/p.jsonl", "/sys/p.jsonl", "FILE/p.jsonl"])
def test_unwritable_outputs_fail_in_one_line_before_any_work(
    tmp_path: Path, claims: Path, where: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n")
    target = where.replace("FILE", str(blocker))
    done = run_cli("predict", str(claims), "-o", target, "--index", str(tmp_path / "no-index"))
    line = one_error_line(done)
    assert target in line and "no-index" not in line, line
    done = run_cli("evaluate", str(GOLD), str(PRED), "-o", str(Path(target).parent / "out"), "--no-bootstrap")
    assert str(Path(target).parent / "out") in one_error_line(done)
    done = run_cli("oracle", str(GOLD), "-o", target)
    assert target in one_error_line(done)
    run_dir = str(Path(target).parent / "run")
    for command in (
        ["index", str(claims), "-o", run_dir, "--no-dense"],
        ["train", "--tiny", "--out", run_dir],
    ):
        assert run_dir in one_error_line(run_cli(*command)), command


def test_train_on_a_gpu_this_machine_lacks_fails_in_one_line_before_any_work(tmp_path: Path) -> None:
    """``--device cuda`` without a CUDA GPU: exit 2 and one line saying so, before the run directory is
    made (``--device auto`` would train on the CPU)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    run_dir = tmp_path / "run"
    for extra in ([], ["--entailment-only"]):
        line = one_error_line(run_cli("train", "--tiny", "--device", "cuda", "--out", str(run_dir), *extra))
        assert "no CUDA GPU" in line and "--device cpu or auto" in line, line
        assert not run_dir.exists()
    assert "device must be one of auto, cpu, cuda" in one_error_line(
        run_cli("train", "--tiny", "--device", "gpu", "--out", str(run_dir))
    )


# ---- input that is not what it claims to be ------------------------------------------------------


def test_a_claim_that_is_not_utf8_fails_before_the_models_load(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sciverify", "verify", b"Caf\xe9 consumption lowers blood pressure.",
         "--index", str(tmp_path / "no-index")],
        capture_output=True, text=True, timeout=300,
    )
    line = one_error_line(done)
    assert "claim is not valid UTF-8 text" in line and "no-index" not in line, line


def test_a_malformed_line_is_named_by_its_own_number_only(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"id": 1, "claim": "A."}\n{"id": 2, "claim": "B."}\n{"id": 3, "claim": \n')
    done = run_cli("predict", str(path), "-o", str(tmp_path / "p.jsonl"), "--index", str(tmp_path / "none"))
    line = one_error_line(done)
    assert f"{path}:3: invalid JSON" in line and "line 2" not in line and "char" not in line, line
    pred = tmp_path / "pred.jsonl"
    pred.write_text(PRED.read_text().splitlines()[0] + "\n\n" + '{"id": 13, "evidence": {\n')
    done = run_cli("evaluate", str(GOLD), str(pred), "--no-bootstrap", "--strict")
    line = one_error_line(done)
    assert f"{pred}:3: invalid JSON" in line and "line 2" not in line, line


def test_an_empty_predictions_file_is_an_error_not_a_score(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    pred.write_text("\n")
    out = tmp_path / "out"
    for command in (
        ["evaluate", str(GOLD), str(pred), "-o", str(out)],
        ["compare", str(GOLD), str(PRED), str(pred)],
    ):
        done = run_cli(*command, "--bootstrap", "10")
        assert f"{pred}: no prediction records in file (is it empty?)" in one_error_line(done)
    assert not out.exists()


# ---- Ctrl-C ---------------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_during_predict_exits_130_in_one_line_and_writes_nothing(tmp_path: Path, scifact) -> None:
    out = tmp_path / "out" / "pred.jsonl"
    running = subprocess.Popen(
        [sys.executable, "-m", "sciverify", "predict", str(scifact.root / "claims_test.jsonl"),
         "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a shell's background job ignores SIGINT, and a child inherits that: restore the default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        while _cpu_seconds(running.pid) < 3.0 and running.poll() is None:  # running: loading or predicting
            time.sleep(0.2)
        running.send_signal(signal.SIGINT)
        stdout, stderr = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 130, (running.returncode, stderr)
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted"), stderr
    assert "Traceback" not in stderr and stdout == ""
    assert not (tmp_path / "out").exists(), "nothing half-written, not even the directory"


# ---- help ------------------------------------------------------------------------------------------


def _all_commands() -> list[tuple[list[str], object]]:
    from typer.main import get_command

    from sciverify.cli import app

    found: list[tuple[list[str], object]] = []
    for name, command in get_command(app).commands.items():  # type: ignore[attr-defined]
        for sub, leaf in (getattr(command, "commands", None) or {None: command}).items():
            found.append(([name, sub] if sub else [name], leaf))
    return found


def test_help_text_survives_its_markup() -> None:
    """Typer reads help as Rich markup: a bracketed word that is not escaped disappears from --help."""
    from rich.text import Text

    for path, command in _all_commands():
        texts = [getattr(command, "help", None) or ""]
        texts += [getattr(p, "help", None) or "" for p in command.params]  # type: ignore[attr-defined]
        for text in texts:
            assert Text.from_markup(text).plain == text.replace("\\[", "["), (path, text)
    assert "with an [llm] section" in " ".join(run_cli("serve", "--help").stdout.split())


def test_help_shows_the_defaults_of_the_judge_options() -> None:
    shown = " ".join(run_cli("verify", "--help").stdout.split())
    for default in ("models, or pipeline.toml's", "4, or pipeline.toml's", "120.0, or pipeline.toml's",
                    "512, or pipeline.toml's", "the tuned k, 5"):
        assert default in shown, default
