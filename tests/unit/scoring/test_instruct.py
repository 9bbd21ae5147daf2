"""Instruction-style SciFact scoring: JSON extraction from messy text, metrics, gold pairs, files, CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sciverify.cli import app
from sciverify.data.records import Abstract, Claim, EvidenceSet, Label
from sciverify.errors import DataFormatError
from sciverify.scoring.instruct import (
    INSTRUCT_VERDICTS,
    InstructOutput,
    InstructPair,
    ParsedOutput,
    build_instruct_pairs,
    evidence_tokens,
    extract_verdict_json,
    is_pairs_file,
    normalise_verdict,
    read_instruct_gold,
    read_instruct_outputs,
    report_to_json,
    score_instruct,
    token_f1,
    write_instruct_pairs,
)

# ---------------------------------------------------------------- extraction


def test_plain_object() -> None:
    parsed = extract_verdict_json('{"verdict": "SUPPORT", "evidence": ["Sentence one."]}')
    assert parsed == ParsedOutput("SUPPORT", ("Sentence one.",))


def test_code_fence_and_chatter() -> None:
    text = (
        "Sure! Here's my answer, I've checked it:\n```json\n"
        '{\n  "verdict": "CONTRADICT",\n  "evidence": ["A.", "B."]\n}\n```\nLet me know if you need more.'
    )
    parsed = extract_verdict_json(text)
    assert parsed.verdict == "CONTRADICT" and parsed.evidence == ("A.", "B.")
    assert not parsed.normalised


def test_trailing_commas_single_quotes_and_python_literals() -> None:
    parsed = extract_verdict_json("{'verdict': 'NEI', 'evidence': [], 'sure': True, 'x': None,}")
    assert parsed.verdict == "NEI" and parsed.evidence == () and not parsed.evidence_missing
    parsed = extract_verdict_json("{'verdict': 'SUPPORT', 'evidence': ['It\\'s \"fine\".',],}")
    assert parsed.evidence == ("It's \"fine\".",)


def test_bare_keys() -> None:
    assert extract_verdict_json("{verdict: 'SUPPORT', evidence: ['x']}").verdict == "SUPPORT"


def test_braces_and_escapes_inside_strings() -> None:
    text = '{"verdict": "SUPPORT", "evidence": ["Set {a, b} } was {", "caf\\u00e9 \\"q\\"\\nend"]}'
    parsed = extract_verdict_json(text)
    assert parsed.evidence == ("Set {a, b} } was {", 'café "q"\nend')


def test_multiple_objects_first_valid_with_verdict_wins() -> None:
    text = (
        'Example format: {"foo": 1}. Draft: {"verdict": "MAYBE", "evidence": []} '
        'Final: {"verdict": "contradicts", "evidence": "Only one."} and {"verdict": "SUPPORT"}'
    )
    parsed = extract_verdict_json(text)
    assert parsed.verdict == "CONTRADICT" and parsed.normalised
    assert parsed.evidence == ("Only one.",) and parsed.evidence_coerced


def test_nested_verdict_object() -> None:
    parsed = extract_verdict_json('{"answer": {"Verdict": "NEI", "Evidence": []}}')
    assert parsed.verdict == "NEI"


def test_unbalanced_prefix_then_object() -> None:
    parsed = extract_verdict_json('{ oops [ "unterminated {"verdict": "SUPPORT", "evidence": []}')
    assert parsed.verdict == "SUPPORT"


@pytest.mark.parametrize(
    ("raw", "expected", "normalised"),
    [
        ("SUPPORT", "SUPPORT", False),
        ("supports", "SUPPORT", True),
        ("Supported.", "SUPPORT", True),
        ("REFUTES", "CONTRADICT", True),
        ("contradicts", "CONTRADICT", True),
        ("NOT ENOUGH INFO", "NEI", True),
        ("not_enough_info", "NEI", True),
        ("Not-Enough-Information", "NEI", True),
        ("nei", "NEI", True),
        ("NEI", "NEI", False),
        ("MAYBE", None, False),
        (3, None, False),
    ],
)
def test_normalise_verdict(raw: object, expected: str | None, normalised: bool) -> None:
    assert normalise_verdict(raw) == (expected, normalised)


def test_evidence_shapes() -> None:
    missing = extract_verdict_json('{"verdict": "SUPPORT"}')
    assert missing.evidence == () and missing.evidence_missing
    nested = extract_verdict_json('{"verdict": "SUPPORT", "evidence": [["a", "b"], 3, {"x": 1}, ""]}')
    assert nested.evidence == ("a", "b", "3") and nested.evidence_coerced


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no JSON object found"),
        ("The abstract supports the claim.", "no JSON object found"),
        ('{"label": 1}', 'no JSON object with a "verdict" field'),
        ('{"verdict": "probably"}', "unknown verdict 'probably'"),
        ('{"verdict": "SUPPORT", "evidence": ["never closed', "no JSON object found"),
    ],
)
def test_unparseable_reasons(text: str, reason: str) -> None:
    parsed = extract_verdict_json(text)
    assert parsed.verdict is None and parsed.error == reason


def test_non_string_input() -> None:
    assert extract_verdict_json(None).error == "output is not a string"


@pytest.mark.parametrize(
    "garbage",
    [
        "x" * 1_000_000,
        "{" * 1_000_000,
        '{"a":' * 200_000,
        "{'" * 500_000,
        "[" * 1_000_000,
        '{"verdict": "' + "\\" * 1_000_000,
        "".join(chr(32 + (i * 7919) % 95) for i in range(1_000_000)),
    ],
    ids=["letters", "open-braces", "nested-keys", "open-quotes", "brackets", "backslashes", "printable-mix"],
)
def test_megabyte_of_garbage_is_rejected_not_hung(garbage: str) -> None:
    parsed = extract_verdict_json(garbage)
    assert parsed.verdict is None and parsed.error


def test_valid_object_after_megabyte_of_chatter() -> None:
    text = "blah " * 200_000 + '{"verdict": "SUPPORT", "evidence": []}'
    assert extract_verdict_json(text).verdict == "SUPPORT"


_JSONISH = st.text(alphabet=list("{}[]\"':,\\ \nu0aevrdict_SUPORTNEI"), max_size=300)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=500), _JSONISH))
def test_fuzz_never_raises(text: str) -> None:
    parsed = extract_verdict_json(text)
    assert (parsed.verdict is None) != (parsed.error is None)
    assert parsed.verdict is None or parsed.verdict in INSTRUCT_VERDICTS
    assert all(isinstance(s, str) for s in parsed.evidence)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(INSTRUCT_VERDICTS),
    st.lists(st.text(min_size=1, max_size=40).filter(str.strip), max_size=4),
    st.text(alphabet=st.characters(blacklist_characters="{"), max_size=40),
)
def test_fuzz_round_trip_through_chatter(verdict: str, evidence: list[str], chatter: str) -> None:
    text = f"{chatter}\n```json\n{json.dumps({'verdict': verdict, 'evidence': evidence})}\n```\n{chatter}"
    parsed = extract_verdict_json(text)
    assert parsed.verdict == verdict and parsed.evidence == tuple(evidence)


# ---------------------------------------------------------------- metrics


def test_tokens_and_token_f1_hand_checked() -> None:
    tokens = evidence_tokens("The IRR = 1.93; 95% CI, Café_au-lait")
    assert tokens == ["the", "irr", "1", "93", "95", "ci", "café", "au", "lait"]
    assert math.isclose(token_f1(["The cat sat."], ["the cat", "ran fast"]), 4 / 7)
    assert math.isclose(token_f1(["a a b"], ["a b"]), 0.8)  # bag: a matches once
    assert token_f1([], []) == 1.0
    assert token_f1(["..."], []) == 1.0  # no tokens on either side
    assert token_f1(["x"], []) == 0.0 and token_f1([], ["x"]) == 0.0


def _pair(cid: int, verdict: str, evidence: tuple[str, ...]) -> InstructPair:
    return InstructPair(cid, 100 + cid, f"claim {cid}", "title", ("s0", "s1"), verdict, evidence)


def test_score_instruct_hand_checked() -> None:
    pairs = [
        _pair(1, "SUPPORT", ("A b c.",)),
        _pair(2, "CONTRADICT", ("x y",)),
        _pair(3, "NEI", ()),
        _pair(4, "NEI", ()),
    ]
    outputs = [
        InstructOutput(1, 101, '{"verdict": "SUPPORT", "evidence": ["A b c."]}', 1),
        InstructOutput(2, "102", "```json\n{'verdict': 'supports', 'evidence': ['x z'],}\n```", 2),
        InstructOutput(3, 103, '{"verdict": "NEI", "evidence": []}', 3),
        InstructOutput(9, 999, '{"verdict": "NEI"}', 7),
    ]
    report = score_instruct(pairs, outputs)
    assert (report.pairs, report.parsed, report.unparseable, report.missing) == (4, 3, 1, 1)
    assert report.normalised_verdicts == 1 and report.unmatched_output_lines == (7,)
    assert report.accuracy == 0.5
    sup, con, nei = (report.per_class[c] for c in INSTRUCT_VERDICTS)
    assert (sup.precision, sup.recall, sup.support, sup.predicted) == (0.5, 1.0, 1, 2)
    assert math.isclose(sup.f1, 2 / 3) and con.f1 == 0.0 and math.isclose(nei.f1, 2 / 3)
    assert math.isclose(report.macro_f1, 4 / 9)
    assert math.isclose(report.label_f1_non_nei, 0.5)
    assert math.isclose(report.evidence_token_f1, (1 + 0.5 + 1 + 0) / 4)
    assert math.isclose(report.evidence_token_f1_gold_evidence, 0.75)
    assert math.isclose(report.evidence_token_f1_pooled, 0.8)
    assert report.failures[0].claim_id == 4 and report.failures[0].line is None
    assert orjson.loads(orjson.dumps(report_to_json(report)))["per_class"]["NEI"]["support"] == 2


def test_unparseable_scores_wrong_even_for_nei() -> None:
    report = score_instruct([_pair(1, "NEI", ())], [InstructOutput(1, 101, "I cannot tell.", 5)])
    assert report.accuracy == 0.0 and report.evidence_token_f1 == 0.0 and report.macro_f1 == 0.0
    assert report.failures[0].line == 5 and report.failures[0].reason == "no JSON object found"


def test_empty_gold_gives_zeros() -> None:
    report = score_instruct([], [])
    assert report.pairs == 0 and report.accuracy == 0.0 and report.macro_f1 == 0.0


# ---------------------------------------------------------------- gold pairs and files

_ABSTRACTS = {
    "10": Abstract(10, "T10", ("Zero.", "One.", "Two.")),
    "20": Abstract(20, "T20", ("Only.",)),
}


def test_build_pairs_labels_and_evidence_union() -> None:
    claim = Claim(
        5, "c",
        evidence={"10": (EvidenceSet((2,), Label.SUPPORT), EvidenceSet((0, 2), Label.SUPPORT))},
        cited_doc_ids=(20, 10),
    )
    nei_pair, support_pair = build_instruct_pairs([claim], _ABSTRACTS)
    assert (nei_pair.doc_id, nei_pair.verdict, nei_pair.evidence) == (20, "NEI", ())
    assert (support_pair.verdict, support_pair.evidence) == ("SUPPORT", ("Zero.", "Two."))
    with pytest.raises(ValueError, match="doc 30 is not in the corpus"):
        build_instruct_pairs([Claim(6, "c", cited_doc_ids=(30,))], _ABSTRACTS)
    with pytest.raises(ValueError, match="has no sentence 4"):
        bad = Claim(7, "c", evidence={"20": (EvidenceSet((4,), Label.CONTRADICT),)})
        build_instruct_pairs([bad], _ABSTRACTS)


def test_read_outputs_errors_name_file_and_line(write_jsonl) -> None:
    bad = write_jsonl("bad.jsonl", ['{"claim_id": 1, "doc_id": 2, "output": "x"}', "not json"])
    with pytest.raises(DataFormatError, match=r"bad\.jsonl:2: invalid JSON"):
        read_instruct_outputs(bad)
    no_ids = write_jsonl("ids.jsonl", ['{"doc_id": 2, "output": "x"}'])
    with pytest.raises(DataFormatError, match=r"ids\.jsonl:1: claim_id must be"):
        read_instruct_outputs(no_ids)
    dup = write_jsonl("dup.jsonl", ['{"claim_id": 1, "doc_id": 2, "output": "x"}',
                                    '{"claim_id": "1", "doc_id": 2, "response": "y"}'])
    with pytest.raises(DataFormatError, match=r"dup\.jsonl:2: duplicate output .*line 1"):
        read_instruct_outputs(dup)
    no_text = write_jsonl("notext.jsonl", ['{"claim_id": 1, "doc_id": 2}'])
    with pytest.raises(DataFormatError, match="missing field 'output'"):
        read_instruct_outputs(no_text)
    null_text = write_jsonl("null.jsonl", ['{"claim_id": 1, "doc_id": 2, "output": null}'])
    assert read_instruct_outputs(null_text)[0].text is None


def test_read_gold_from_claims_and_pairs_round_trip(tmp_path: Path, write_jsonl) -> None:
    corpus = write_jsonl("corpus.jsonl", [
        '{"doc_id": 10, "title": "T10", "abstract": ["Zero.", "One.", "Two."]}',
        '{"doc_id": 20, "title": "T20", "abstract": ["Only."]}',
    ])
    claims = write_jsonl("claims.jsonl", [
        '{"id": 1, "claim": "c1", "evidence": {"10": [{"sentences": [1], "label": "CONTRADICT"}]}, '
        '"cited_doc_ids": [10]}',
        '{"id": 2, "claim": "c2", "evidence": {}, "cited_doc_ids": [20]}',
    ])
    pairs = read_instruct_gold(claims, corpus)
    got = [(p.claim_id, p.verdict, p.evidence) for p in pairs]
    assert got == [(1, "CONTRADICT", ("One.",)), (2, "NEI", ())]
    out = tmp_path / "pairs.jsonl"
    write_instruct_pairs(out, pairs)
    assert is_pairs_file(out) and not is_pairs_file(claims)
    assert read_instruct_gold(out) == pairs
    first = orjson.loads(out.read_text().splitlines()[0])
    assert "Claim: c1" in first["prompt"] and "Zero.\nOne.\nTwo." in first["prompt"]
    with pytest.raises(DataFormatError, match="needs the corpus"):
        read_instruct_gold(claims)
    unlabeled = write_jsonl("test.jsonl", ['{"id": 3, "claim": "c3"}'])
    with pytest.raises(DataFormatError, match="no claim-abstract pairs"):
        read_instruct_gold(unlabeled, corpus)
    missing_doc = write_jsonl("miss.jsonl", ['{"id": 4, "claim": "c4", "cited_doc_ids": [99]}'])
    with pytest.raises(DataFormatError, match=r"miss\.jsonl:1: claim 4: doc 99 is not in the corpus"):
        read_instruct_gold(missing_doc, corpus)
    bad_pair = write_jsonl("badpair.jsonl", ['{"claim_id": 1, "doc_id": 2, "expected": {"verdict": "YES"}}'])
    with pytest.raises(DataFormatError, match=r"badpair\.jsonl:1: expected must be"):
        read_instruct_gold(bad_pair)


def test_real_scifact_train_pairs_and_cli(scifact, tmp_path: Path) -> None:
    """919 pairs from the 809 training claims (one per cited abstract); gold answers score perfectly."""
    pairs_path = tmp_path / "pairs.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["instruct-pairs", str(scifact.train), str(pairs_path),
                                 "--corpus", str(scifact.corpus)])
    assert result.exit_code == 0, result.output
    assert "wrote 919 pairs" in result.output
    records = [orjson.loads(line) for line in pairs_path.read_text().splitlines()]
    outputs = tmp_path / "outputs.jsonl"
    with outputs.open("w") as handle:
        for i, rec in enumerate(records):
            expected = rec["expected"]
            text = json.dumps(expected) if i % 2 else f"```json\n{json.dumps(expected, indent=2)}\n```"
            if i == 0:
                text = "no idea"
            row = {"claim_id": rec["claim_id"], "doc_id": rec["doc_id"], "output": text}
            handle.write(json.dumps(row) + "\n")
    result = runner.invoke(app, ["evaluate-instruct", str(pairs_path), str(outputs), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["pairs"], report["parsed"], report["unparseable"]) == (919, 918, 1)
    assert report["failures"][0]["line"] == 1
    assert report["accuracy"] == pytest.approx(918 / 919)
    text_result = runner.invoke(app, ["evaluate-instruct", str(scifact.train), str(outputs),
                                      "--corpus", str(scifact.corpus)])
    assert text_result.exit_code == 0 and "pairs 919  parsed 918" in text_result.output
    assert f"unparseable {outputs}:1 claim" in text_result.output


def test_cli_bad_file_is_one_line_error(write_jsonl) -> None:
    gold = write_jsonl("gold.jsonl", ['{"claim_id": 1, "doc_id": 2, "expected": {"verdict": "NEI"}}'])
    outputs = write_jsonl("out.jsonl", ["{broken"])
    proc = subprocess.run([sys.executable, "-m", "sciverify", "evaluate-instruct", str(gold), str(outputs)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "out.jsonl:1: invalid JSON" in proc.stderr and "Traceback" not in proc.stderr
