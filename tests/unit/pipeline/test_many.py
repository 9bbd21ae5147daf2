"""Reading many claims: where each came from, which are skipped, which are named as unusable (no model)."""

from __future__ import annotations

import io

from sciverify.pipeline.many import ClaimInput, Tally, claim_inputs, is_many, stdin_claims


def test_stdin_lines_keep_their_numbers_and_blank_ones_are_skipped() -> None:
    lines = [b"Statins prevent heart attacks.", b"", b"  \t", b"Caf\xe9 helps.", b"y" * 1200, b"Last one"]
    stream = io.BytesIO(b"\n".join(lines))
    got = list(stdin_claims(stream))
    assert [c.where for c in got] == ["stdin line 1", "stdin line 4", "stdin line 5", "stdin line 6"]
    assert got[0] == ClaimInput("stdin line 1", text="Statins prevent heart attacks.")
    assert "not valid UTF-8" in got[1].problem and not got[1].text
    assert got[2].problem.startswith("claim is 1200 characters long; the limit is 1000")
    assert got[3].text == "Last one", "a last line without a newline is a claim too"


def test_arguments_and_stdin_in_order() -> None:
    got = list(claim_inputs(["First claim.", "-", "  "], io.BytesIO(b"From stdin.\n")))
    assert [(c.where, c.text) for c in got] == [("claim 1", "First claim."), ("stdin line 1", "From stdin."),
                                                ("claim 3", "")]
    assert got[2].problem.startswith("claim is empty")
    assert not is_many(["One claim."]) and is_many(["-"]) and is_many(["A.", "B."])


def test_the_closing_line_names_at_most_ten_places() -> None:
    assert Tally(answered=3).failed_line() == ""
    tally = Tally(answered=0, failed=[f"stdin line {n}" for n in range(1, 13)])
    named = ", ".join(f"stdin line {n}" for n in range(1, 11))
    assert tally.failed_line() == f"12 of 12 claims could not be checked ({named} and 2 more)"
