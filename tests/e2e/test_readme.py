"""The README runs as written: every command of its ``bash`` blocks and its Python example.

Commands run in a fresh directory with the shipped models, the default index and the real data. Only what
must change is changed, and said here: ``../shared/data/scifact`` becomes the data directory the tests use
(the README assumes a clone beside ``shared/``), the 300 test claims for ``predict`` become their first
:data:`PREDICT_CLAIMS` (the command is the same; the full run is the main job, timed in
docs/benchmarks.md), paths of repository files become absolute, ``sciverify`` and ``.venv/bin/X`` become
this interpreter's, and the leaderboard keeps its database in the test's directory. Commands that set the
machine up, run this suite or start a server (and what needs the walk-through's server or files: a team's
predictions and upload, ``leaderboard close``) are in :data:`NOT_RUN`; a command of a program this test
cannot run fails it, so a command added to the README is either run here or skipped on purpose. The
leaderboard walk-through runs whole, in order, as written, its server on a free port while the next command
runs; its upload goes to that port, with the token ``add-submitter`` printed as ``$TOKEN`` (what a team
would set).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
PREDICT_CLAIMS = 5
#: Commands not run, by their first words: set-up (run before this suite), the suite itself, a server and
#: what needs one.
NOT_RUN = (
    "./scripts/setup",
    "./scripts/test",
    "source .venv/bin/activate",
    "sciverify serve",
    "sciverify predict claims.jsonl",
    "curl ",
    "sciverify leaderboard close",
)


def bash_commands(text: str) -> list[str]:
    """Every command line of the ``bash`` blocks, in order (comment-only lines left out)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        for line in block.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    return commands


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def as_run(command: str, data: Path, work: Path) -> list[str]:
    """The argument vector the command runs as here (see the module docstring for every substitution)."""
    args = shlex.split(command.replace("../shared/data/scifact", str(data)), comments=True)
    program, args = args[0], args[1:]
    if program in ("sciverify", ".venv/bin/sciverify"):
        argv = [sys.executable, "-m", "sciverify"]
    elif program.startswith(".venv/bin/"):
        argv = [str(Path(sys.executable).parent / program.removeprefix(".venv/bin/"))]
    elif program == "curl":  # the walk-through's upload, to its server
        argv = ["curl"]
    else:
        raise AssertionError(f"the README runs {program!r}: teach this test how to run it, or skip it")
    if args[:1] == ["predict"] and args[1] == str(data / "claims_test.jsonl"):
        head = work / "claims_test_head.jsonl"
        head.write_text("".join(Path(args[1]).read_text().splitlines(True)[:PREDICT_CLAIMS]))
        args[1] = str(head)
    return argv + [str(ROOT / a) if not a.startswith("-") and (ROOT / a).exists() else a for a in args]


def test_every_readme_command_is_run_or_skipped_on_purpose(scifact, tmp_path: Path) -> None:
    commands = bash_commands(README.read_text(encoding="utf-8"))
    run = [c for c in commands if not c.startswith(NOT_RUN)]
    assert len(run) >= 6, run
    for command in run:
        as_run(command, scifact.root, tmp_path)  # raises for a program it cannot run
    assert "sciverify evaluate ../shared/data/scifact/claims_train.jsonl" in " ".join(run)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize(
    "command", [c for c in bash_commands(README.read_text(encoding="utf-8")) if not c.startswith(NOT_RUN)]
)
def test_readme_command_runs(command: str, scifact, workdir: Path) -> None:
    env = {**os.environ, "SCIVERIFY_DATA_DIR": str(workdir / "serve"), "SCIVERIFY_DATA": str(scifact.root)}
    done = subprocess.run(as_run(command, scifact.root, workdir), cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(port: int, server: subprocess.Popen[bytes], log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text(encoding="utf-8", errors="replace")[-2000:]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"the server did not answer on port {port} in {seconds:.0f} s")


def test_readme_leaderboard_walk_through_runs_as_written(scifact, tmp_path: Path) -> None:
    section = README.read_text(encoding="utf-8").split("## Leaderboard phases", 1)[1].split("\n## ", 1)[0]
    commands = bash_commands(section)
    steps = [" ".join(c.split()[:2]) for c in commands]
    assert steps == ["sciverify leaderboard"] * 3 + ["sciverify serve", "sciverify predict", "curl -s",
                                                     "sciverify leaderboard"], steps
    env = {**os.environ, "SCIVERIFY_DATA_DIR": str(tmp_path / "serve"), "SCIVERIFY_DATA": str(scifact.root)}
    server = None
    token, port = "", 0
    try:
        for command in commands:
            if command.startswith("curl"):  # the team's upload: its token, the server's port
                command = command.replace("$TOKEN", token).replace("localhost:8000", f"127.0.0.1:{port}")
            argv = as_run(command, scifact.root, tmp_path)
            if command.startswith("sciverify serve"):
                port = _free_port()
                log = tmp_path / "serve.log"
                with open(log, "wb") as out:
                    server = subprocess.Popen([*argv, "--port", str(port)], cwd=tmp_path, env=env,
                                              stdout=out, stderr=subprocess.STDOUT)
                _wait_for(port, server, log)
                continue
            # the team's predictions of 181 claims: about 20 s on idle cores, minutes on busy ones
            limit = 1200 if command.startswith("sciverify predict") else 300
            done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=limit)
            assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
            if "add-submitter" in command:
                token = done.stdout.strip().splitlines()[-1]
                assert token.startswith("svk_"), done.stdout
            if command.startswith("curl"):
                upload = json.loads(done.stdout)
                assert upload["submitter"] == "Team A" and upload["status"] == "scored", upload
                assert upload["gold"] == "hidden" and upload["metrics"] is None, upload
        closed = json.loads(done.stdout)  # the phase the server opened: Team A's upload, half the gold spent
        assert closed["scored_uploads"] == 1 and closed["teams"] == 1, closed
        assert 0 < closed["private_claims_spent"] < 181, closed
    finally:
        if server is not None:
            server.terminate()  # Ctrl-C's signal; a server still loading its models may not stop at once
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=30)


def test_readme_python_example_runs(workdir: Path) -> None:
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "the README has no Python example"
    for code in blocks:
        done = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (code, done.stderr[-3000:])
        assert done.stdout.strip(), "the example prints what it found"
