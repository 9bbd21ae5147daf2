"""Validation of gold, corpus and prediction files: each problem named with file and line, never a crash."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciverify.errors import DataFormatError
from sciverify.scoring import evaluate_files, load_gold, load_predictions

GOLD_LINES = [
    json.dumps({"id": 1, "claim": "a", "evidence": {"10": [{"sentences": [0, 1], "label": "SUPPORT"}]}}),
    json.dumps({"id": 2, "claim": "b", "evidence": {"20": [{"sentences": [2], "label": "CONTRADICT"}]}}),
    json.dumps({"id": 3, "claim": "c", "evidence": {}}),
]
CORPUS_LINES = [
    json.dumps({"doc_id": 10, "title": "t", "abstract": ["s0", "s1", "s2"]}),
    json.dumps({"doc_id": 20, "title": "t", "abstract": ["s0", "s1", "s2", "s3"]}),
]


@pytest.fixture()
def gold(write_jsonl):
    return write_jsonl("gold.jsonl", GOLD_LINES)


@pytest.fixture()
def corpus(write_jsonl):
    return write_jsonl("corpus.jsonl", CORPUS_LINES)


def messages(problems):
    return [(p.line, p.message) for p in problems]


def test_each_prediction_problem_is_reported_with_its_line(gold, corpus, write_jsonl):
    pred = write_jsonl(
        "pred.jsonl",
        [
            '{"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0, 1]}}',  # 1 bad JSON
            "[1, 2]",  # 2 not an object
            '{"evidence": {}}',  # 3 no id
            '{"id": 99, "evidence": {}}',  # 4 unknown claim
            '{"id": 1, "evidence": {"10": {"label": "supports", "sentences": [0, 1]}}}',  # 5 bad label
            '{"id": 1, "evidence": {}}',  # 6 duplicate
            '{"id": 2, "evidence": {"20": {"label": "CONTRADICT", "sentences": [2, 9]}, '
            '"77": {"label": "SUPPORT", "sentences": [0]}}}',  # 7 out of range, doc not in corpus
        ],
    )
    problems = load_predictions(pred, load_gold(gold), {"10": 3, "20": 4}).problems
    got = messages(problems)
    assert got[0][0] == 1 and "invalid JSON" in got[0][1]
    assert got[1] == (2, "expected a JSON object with 'id' and 'evidence'; line ignored")
    assert got[2] == (3, "missing field 'id'; line ignored")
    assert got[3] == (4, "claim id 99 is not in the gold file; line ignored")
    assert got[4][0] == 5 and "'supports'" in got[4][1] and "SUPPORT" in got[4][1]
    assert got[5] == (6, "duplicate prediction for claim 1 (first on line 5); line ignored")
    assert (7, "claim 2, evidence['20']: sentence index 9 out of range (the abstract has 4 sentences)") in got
    assert (7, "claim 2, evidence['77']: doc '77' is not in the corpus") in got
    assert (None, "claim 3 has no prediction; scored as predicting no evidence") in got
    assert all(p.file == str(pred) for p in problems)


def test_lenient_scoring_keeps_what_is_valid(gold, corpus, write_jsonl):
    pred = write_jsonl(
        "pred.jsonl",
        [
            '{"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": [0, 1]}}}',
            '{"id": 2, "evidence": {"20": {"label": "NEI", "sentences": [2]}, "21": "CONTRADICT"}}',
            '{"id": 3, "evidence": {"30": {"label": "SUPPORT", "sentences": [0, "x"]}}}',
        ],
    )
    result = evaluate_files(gold, pred, n_boot=0)
    t = result.report.totals()
    assert t["abstract_retrieved"] == 4 and t["abstract_correct_rationalized"] == 1
    assert t["sentence_retrieved"] == 2 + 1 + 2 and t["sentence_correct_label"] == 2
    text = " | ".join(p.message for p in result.problems)
    assert "NOT_ENOUGH_INFO" in text and "must be an object" in text and "found 'x'" in text
    with pytest.raises(DataFormatError, match=r"3 problems in the predictions \(strict mode\)") as info:
        evaluate_files(gold, pred, n_boot=0, strict=True)
    assert info.value.line == 2


def test_string_id_for_integer_gold_id_is_reported_but_scored(gold, write_jsonl):
    pred = write_jsonl(
        "pred.jsonl", ['{"id": "1", "evidence": {"10": {"label": "SUPPORT", "sentences": [0, 1]}}}']
    )
    result = evaluate_files(gold, pred, n_boot=0)
    assert result.report.totals()["abstract_correct_rationalized"] == 1
    assert any("should be written 1" in p.message for p in result.problems)


def test_missing_evidence_and_bad_confidence(gold, write_jsonl):
    pred = write_jsonl(
        "pred.jsonl",
        [
            '{"id": 1}',
            '{"id": 2, "evidence": {"20": {"label": "CONTRADICT", "sentences": [2], "confidence": "high"}}}',
            '{"id": 3, "evidence": []}',
        ],
    )
    result = evaluate_files(gold, pred, n_boot=0)
    got = messages(result.problems)
    assert got[0] == (
        1,
        "claim 1: missing field 'evidence' (use {} to predict no evidence); scored as predicting nothing",
    )
    assert got[1] == (2, "claim 2, evidence['20']: confidence must be a finite number, got 'high'; ignored")
    assert got[2][0] == 3 and "'evidence' must be an object" in got[2][1]
    assert result.report.totals()["abstract_correct_rationalized"] == 1


def test_empty_prediction_file_is_an_error_not_a_score_of_zero(gold, write_jsonl):
    pred = write_jsonl("pred.jsonl", ["", "   "])
    with pytest.raises(DataFormatError, match=r"pred.jsonl: no prediction records in file \(is it empty\?\)"):
        evaluate_files(gold, pred, n_boot=0)
    # the lenient reader (the leaderboard's) still reports it as a problem of the file
    preds = load_predictions(pred, load_gold(gold))
    assert messages(preds.problems) == [
        (None, "no prediction records in file (is it empty?); all 3 claims scored as predicting nothing")
    ]


@pytest.mark.parametrize(
    "lines, pattern",
    [
        (["{bad"], "gold.jsonl:1: .*invalid JSON"),
        ([GOLD_LINES[0], GOLD_LINES[0]], "gold.jsonl:2: .*duplicate claim id 1"),
        (
            ['{"id": 1, "evidence": {"10": [{"sentences": [0], "label": "REFUTES"}]}}'],
            "gold.jsonl:1: .*REFUTES",
        ),
        (['{"id": 1, "evidence": {"10": [{"sentences": [], "label": "SUPPORT"}]}}'], "empty evidence set"),
        (['{"id": 1, "evidence": {}}'], "no claim has gold evidence"),
        ([], "no gold claims in file"),
        (
            ['{"id": 1, "evidence": {"10": [{"sentences": [7], "label": "SUPPORT"}]}}'],
            "sentence index 7 out of range",
        ),
        (
            ['{"id": 1, "evidence": {"11": [{"sentences": [0], "label": "SUPPORT"}]}}'],
            "doc 11 is not in the corpus",
        ),
    ],
)
def test_gold_problems_are_fatal(write_jsonl, corpus, lines, pattern):
    path = write_jsonl("gold.jsonl", lines)
    with pytest.raises(DataFormatError, match=pattern):
        load_gold(path, {"10": 3})


def test_missing_files_are_clear_errors(tmp_path, gold):
    with pytest.raises(DataFormatError, match="file not found"):
        evaluate_files(gold, tmp_path / "nope.jsonl")
    with pytest.raises(DataFormatError, match="is a directory"):
        evaluate_files(tmp_path, gold)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
shaped = st.fixed_dictionaries(
    {"id": st.one_of(st.integers(-2, 4), st.text(max_size=3), json_values)},
    optional={
        "evidence": st.one_of(
            json_values,
            st.dictionaries(
                st.sampled_from(["10", "20", "x", ""]),
                st.one_of(
                    json_values,
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "label": st.one_of(
                                st.sampled_from(["SUPPORT", "CONTRADICT", "NEI", "support"]), json_values
                            ),
                            "sentences": st.one_of(st.lists(st.integers(-3, 10), max_size=5), json_values),
                            "confidence": json_values,
                        },
                    ),
                ),
                max_size=3,
            ),
        )
    },
)

_FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(directory: str, name: str, data: bytes) -> Path:
    path = Path(directory) / name
    path.write_bytes(data)
    return path


@_FUZZ
@given(st.binary(max_size=300))
def test_fuzz_random_bytes_never_crash(data):
    golds = load_gold_fixture()
    with tempfile.TemporaryDirectory() as d:
        pred = _write(d, "pred.jsonl", data)
        load_predictions(pred, golds, {"10": 3, "20": 4})
        try:
            load_gold(_write(d, "gold.jsonl", data))
        except DataFormatError:
            pass


@_FUZZ
@given(st.lists(st.one_of(shaped, json_values), max_size=6))
def test_fuzz_random_json_records_never_crash(records):
    with tempfile.TemporaryDirectory() as d:
        pred = _write(d, "pred.jsonl", b"\n".join(json.dumps(r).encode() for r in records))
        gold = _write(d, "gold.jsonl", "\n".join(GOLD_LINES).encode())
        if not records:  # nothing to score is an error, tested in test_empty_prediction_file_is_an_error...
            with pytest.raises(DataFormatError, match="no prediction records"):
                evaluate_files(gold, pred, n_boot=20)
            return
        result = evaluate_files(gold, pred, n_boot=20)
        for family, prf in result.report.aggregate.items():
            assert 0.0 <= prf.f1 <= 1.0, family
        for problem in result.problems:
            assert problem.file == str(pred) and problem.message
        try:
            load_gold(_write(d, "gold2.jsonl", pred.read_bytes()))
        except DataFormatError:
            pass


_GOLD_CACHE: list = []


def load_gold_fixture():
    if not _GOLD_CACHE:
        with tempfile.TemporaryDirectory() as d:
            _GOLD_CACHE.append(load_gold(_write(d, "gold.jsonl", "\n".join(GOLD_LINES).encode())))
    return _GOLD_CACHE[0]


# -- the bound per predicted abstract, linear-time checks, the time budget ---------------------------------


def test_an_abstract_listing_more_sentences_than_it_has_is_a_wrong_abstract(gold, corpus, write_jsonl):
    """The bound is checked before any index: the entry is kept (its listings count as retrieved) but
    can never be correct, and a correct claim beside it is still scored."""
    listing = [0, 1] * 3  # 6 listings of an abstract with 3 sentences
    pred = write_jsonl(
        "pred.jsonl",
        [
            json.dumps({"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": listing}}}),
            json.dumps({"id": 2, "evidence": {"20": {"label": "CONTRADICT", "sentences": [2]}}}),
        ],
    )
    checked = load_predictions(pred, load_gold(gold), {"10": 3, "20": 4})
    assert messages(checked.problems)[0] == (
        1,
        "claim 1, evidence['10']: lists 6 sentences but the abstract has 3 sentences; "
        "counted as a wrong abstract",
    )
    (entry,) = checked.entries["1"]
    assert (entry.valid, entry.sentences, entry.n_listed) == (False, (), 6)
    result = evaluate_files(gold, pred, corpus, n_boot=0)
    counts = result.report.counts
    assert (
        counts[0].tolist()[5] == 6 and counts[0].tolist()[2] == 0
    )  # retrieved 6 sentences, label not correct
    assert counts[1].tolist()[7] == 1  # claim 2 still scored


def test_without_a_corpus_the_documented_cap_bounds_an_abstract(gold, write_jsonl):
    from sciverify.scoring.validate import MAX_LISTED_SENTENCES

    at_cap = list(range(MAX_LISTED_SENTENCES))
    over = [0] * (MAX_LISTED_SENTENCES + 1)
    pred = write_jsonl(
        "pred.jsonl",
        [
            json.dumps({"id": 1, "evidence": {"10": {"label": "SUPPORT", "sentences": at_cap}}}),
            json.dumps({"id": 2, "evidence": {"20": {"label": "CONTRADICT", "sentences": over}}}),
        ],
    )
    checked = load_predictions(pred, load_gold(gold))
    assert checked.entries["1"][0].valid  # at the cap: indices examined as before
    assert [m for line, m in messages(checked.problems) if line == 2] == [
        f"claim 2, evidence['20']: lists {MAX_LISTED_SENTENCES + 1} sentences but at most "
        f"{MAX_LISTED_SENTENCES} may be listed; counted as a wrong abstract"
    ]


def test_repeats_within_the_bound_are_counted_once_each(gold, write_jsonl):
    pred = write_jsonl(
        "pred.jsonl",
        [json.dumps({"id": 2, "evidence": {"20": {"label": "CONTRADICT", "sentences": [3, 2, 3, 2]}}})],
    )
    checked = load_predictions(pred, load_gold(gold), {"10": 3, "20": 4})
    assert [m for line, m in messages(checked.problems) if line == 1] == [
        "claim 2, evidence['20']: sentence 2 listed 2 times (and 1 more repeated); each listing counts as a "
        "retrieved sentence, as the leaderboard scorer counts it: list each sentence once"
    ]


def test_a_five_mib_listing_is_one_problem(gold, write_jsonl):
    """The shape that took hours with a count per listed index: 2.6 million listings of one sentence."""
    n = 5 * 1024 * 1024 // 2
    line = (
        '{"id": 2, "evidence": {"20": {"label": "CONTRADICT", "sentences": [' + ",".join(["0"] * n) + "]}}}"
    )
    pred = write_jsonl("pred.jsonl", [line])
    checked = load_predictions(pred, load_gold(gold), {"10": 3, "20": 4})
    assert [m for ln, m in messages(checked.problems) if ln == 1] == [
        f"claim 2, evidence['20']: lists {n} sentences but the abstract has 4 sentences; "
        "counted as a wrong abstract"
    ]


def test_a_passed_deadline_stops_reading(gold, write_jsonl):
    from sciverify.scoring.validate import OverBudget

    pred = write_jsonl("pred.jsonl", ['{"id": 1, "evidence": {}}', '{"id": 2, "evidence": {}}'])
    with pytest.raises(OverBudget, match="stopped at line 1"):
        load_predictions(pred, load_gold(gold), deadline=0.0)
    assert load_predictions(pred, load_gold(gold), deadline=float("inf")).n_records == 2
