"""Many claims in one ``sciverify verify`` call: real models, real claims, the real CLI as a subprocess.

The models load once (counted in process); each claim is answered whole and in order; a bad claim is
named by its argument or stdin line while the rest are still answered; Ctrl-C leaves only whole answers.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

CLAIM_52 = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."
GOLD_DOC_52 = 45638119  # claims_train.jsonl, claim 52: SUPPORT
MIGRAINE = "Antidepressants increase the severity of migraines."


def _run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "sciverify", "verify", *args], input=stdin,
                          capture_output=True, timeout=600, env={**os.environ, **(env or {})})


def test_the_models_load_once_for_every_claim() -> None:
    import io

    from rich.console import Console

    from sciverify.pipeline.many import answer_each, claim_inputs
    from sciverify.pipeline.verify import load_verifier

    loads: list[int] = []

    def load():  # type: ignore[no-untyped-def]
        loads.append(1)
        return load_verifier()

    out, problems = io.StringIO(), []
    tally = answer_each(claim_inputs([CLAIM_52, "  ", MIGRAINE], []), load, k=None, as_json=True, out=out,
                        console=Console(file=io.StringIO()), problem=problems.append)
    assert loads == [1] and tally.answered == 2 and tally.failed == ["claim 2"]
    assert [p.where for p in problems] == ["claim 2"] and "claim is empty" in problems[0].problem
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["claim"] for a in answers] == [CLAIM_52, MIGRAINE]
    assert GOLD_DOC_52 in [r["doc_id"] for r in answers[0]["supporting"]]
    assert tally.failed_line() == "1 of 3 claims could not be checked (claim 2); the others were answered"


def test_stdin_claims_are_answered_in_order_and_a_bad_line_is_named() -> None:
    bad = [b"x" * 3000, b"Caf\xe9 lowers blood pressure."]
    lines = [CLAIM_52.encode(), b"", b"   ", *bad, MIGRAINE.encode()]
    done = _run("-", "--json", stdin=b"\n".join(lines) + b"\n")
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert "Traceback" not in stderr
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [a["claim"] for a in answers] == [CLAIM_52, MIGRAINE], "blank lines skipped, bad lines left out"
    assert GOLD_DOC_52 in [r["doc_id"] for r in answers[0]["supporting"]]
    assert answers[1]["verdict"] in ("supported", "refuted", "conflicting", "not enough evidence")
    errors = [" ".join(x.split()) for x in stderr.split("error: ")[1:]]  # Rich may wrap a long line
    assert errors[0].startswith("stdin line 4: claim is 3000 characters long; the limit is 1000")
    assert errors[1].startswith("stdin line 5: claim is not valid UTF-8 text")
    assert errors[2] == ("2 of 4 claims could not be checked (stdin line 4, stdin line 5); "
                         "the others were answered"), errors


def test_several_arguments_show_one_view_each_at_80_columns() -> None:
    done = _run(CLAIM_52, MIGRAINE, env={"COLUMNS": "80"})
    stdout = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    lines = stdout.splitlines()
    rules = [n for n, line in enumerate(lines) if line.startswith("──") and line.rstrip().endswith("──")]
    assert [lines[n].strip("─ ") for n in rules] == ["claim 1", "claim 2"]
    assert lines[rules[0] + 1].startswith("claim: ALDH1") and lines[rules[1] + 1] == f"claim: {MIGRAINE}"
    first = "\n".join(lines[rules[0]:rules[1]])
    assert f"doc {GOLD_DOC_52}" in next(x for x in first.splitlines() if x.startswith("╭")), first
    assert max(len(line) for line in lines) <= 80
    # nothing usable at all: one line per claim and the closing line, and no model is loaded
    done = _run("", "  ", "--index", "/nonexistent/index")
    stderr = " ".join(done.stderr.decode().split())
    assert done.returncode == 2 and done.stdout == b""
    assert "error: claim 1: claim is empty" in stderr and "error: claim 2: claim is empty" in stderr
    assert "error: 2 of 2 claims could not be checked (claim 1, claim 2)" in stderr
    assert "nonexistent" not in stderr, "the claims are checked before the models load"
    done = _run("-", stdin=b"\n\n")
    assert done.returncode == 2 and "no claim given" in done.stderr.decode()


def test_ctrl_c_between_claims_leaves_only_whole_answers(tmp_path: Path) -> None:
    running = subprocess.Popen(
        [sys.executable, "-m", "sciverify", "verify", "-", "--json"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert running.stdin is not None and running.stdout is not None
        running.stdin.write(CLAIM_52.encode() + b"\n")
        running.stdin.flush()
        ready, _, _ = select.select([running.stdout], [], [], 600)
        assert ready, "the first claim was not answered in 10 minutes"
        first = running.stdout.readline()  # answered while stdin is still open: read as it comes
        running.send_signal(signal.SIGINT)  # waiting for the next line
        stdout, stderr = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 130, stderr.decode()
    assert json.loads(first)["claim"] == CLAIM_52 and stdout == b""
    lines = [x for x in stderr.decode().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted"), lines
