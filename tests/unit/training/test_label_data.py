"""Label-model training data: aux loaders normalise labels, the overlap filter, SciFact pair building."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciverify.data.io import read_claims, read_corpus
from sciverify.data.records import Abstract, Claim, EvidenceSet, Label, doc_key
from sciverify.data.sources.pubmedqa import question_to_claim
from sciverify.errors import DataFormatError
from sciverify.models.label import format_evidence
from sciverify.training.aux_pairs import (
    drop_corpus_overlap,
    load_aux,
    load_evidence_inference,
    load_fever_symmetric,
    load_nli_jsonl,
    load_pubmedqa,
    load_scitail,
    load_snli_tsv,
)
from sciverify.training.label_data import LabelPair, NeiSentencePicker, scifact_eval_pairs, scifact_pairs

S, C, N = 0, 1, 2


def test_nli_jsonl_maps_words_and_skips_unlabeled(tmp_path: Path) -> None:
    path = tmp_path / "nli.jsonl"
    rows = [
        {"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"},
        {"premise": "A dog runs.", "hypothesis": "A cat sleeps.", "label": "contradiction"},
        {"premise": "A dog runs.", "hypothesis": "The dog is happy.", "label": "neutral"},
        {"premise": "A dog runs.", "hypothesis": "Nobody agreed.", "label": "-"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pairs = load_nli_jsonl(path, "snli")
    assert [p.label for p in pairs] == [S, C, N]
    assert pairs[0].claim == "An animal moves." and pairs[0].sentences == ("A dog runs.",)


def test_nli_jsonl_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "nli.jsonl"
    path.write_text('{"premise": "a", "hypothesis": "b", "label": "e"}\n{not json\n', encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        load_nli_jsonl(path, "mnli")
    assert err.value.line == 2 and err.value.path == str(path)


def test_snli_tsv_numeric_labels(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_text('premise\thypothesis\tlabel\nP one.\tH one.\t0\nP two.\tH two.\t1\nP "3".\tH three.\t2\n')
    assert [p.label for p in load_snli_tsv(path)] == [S, N, C]
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\n")
    with pytest.raises(DataFormatError):
        load_snli_tsv(bad)


def test_scitail_both_formats_are_two_way(tmp_path: Path) -> None:
    js = tmp_path / "test.jsonl"
    js.write_text(
        json.dumps({"premise": "p", "hypothesis": "h", "label": "entails"})
        + "\n"
        + json.dumps({"premise": "p", "hypothesis": "h2", "label": "not_entailment"})
        + "\n"
    )
    tsv = tmp_path / "dev_tokenized.txt"
    tsv.write_text("premise a\thypothesis a\t0\npremise b\thypothesis b\t1\n")
    assert [p.label for p in load_scitail(js)] == [S, N]
    assert [p.label for p in load_scitail(tsv)] == [S, N]


def test_fever_symmetric_labels_and_detokenisation(tmp_path: Path) -> None:
    path = tmp_path / "fever.jsonl"
    rows = [
        {
            "claim": "The Cretaceous ended .",
            "evidence": "The Cretaceous ended with a mass extinction .",
            "gold_label": "SUPPORTS",
        },
        {"claim": "X is ( not ) here .", "evidence": "X is elsewhere , really .", "gold_label": "REFUTES"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = load_fever_symmetric(path)
    assert [p.label for p in pairs] == [S, C]
    assert pairs[0].claim == "The Cretaceous ended."
    assert pairs[1].claim == "X is (not) here." and pairs[1].sentences == ("X is elsewhere, really.",)


def test_pubmedqa_decisions(tmp_path: Path) -> None:
    path = tmp_path / "ori_pqal.json"
    data = {
        "1": {
            "QUESTION": "Does aspirin reduce pain?",
            "CONTEXTS": ["Ctx."],
            "LONG_ANSWER": "It does.",
            "final_decision": "yes",
        },
        "2": {"QUESTION": "Is X safe?", "CONTEXTS": ["Ctx."], "LONG_ANSWER": "No.", "final_decision": "no"},
        "3": {
            "QUESTION": "Is Y safe?",
            "CONTEXTS": ["Ctx."],
            "LONG_ANSWER": "Unclear.",
            "final_decision": "maybe",
        },
    }
    path.write_text(json.dumps(data))
    pairs = load_pubmedqa(path)
    assert [p.label for p in pairs] == [S, C, N]
    assert pairs[0].claim == "Aspirin reduce pain."
    assert question_to_claim("Is X safe?") == "Is X safe?"


def _write_evidence_inference(directory: Path) -> None:
    directory.mkdir()
    (directory / "prompts_merged.csv").write_text(
        "PromptID,PMCID,Outcome,Intervention,Comparator\n"
        "1,77,blood pressure,drug A,placebo\n"
        "2,77,heart rate,drug A,placebo\n"
    )
    header = (
        "UserID,PromptID,PMCID,Valid Label,Valid Reasoning,Label,Annotations,"
        "Label Code,In Abstract,Evidence Start,Evidence End"
    )
    rows = [
        (
            "1",
            "True",
            "significantly decreased",
            "Blood pressure fell markedly more with drug A than with placebo.",
        ),
        (
            "2",
            "True",
            "no significant difference",
            "Heart rate did not differ between the drug A and placebo groups.",
        ),
        ("2", "False", "significantly increase", "An invalid annotation that must be skipped entirely here."),
    ]
    lines = [header] + [
        f'0,{pid},77,{valid},True,{label},"{span}",0,UNK,0,1' for pid, valid, label, span in rows
    ]
    (directory / "v2_annotations.csv").write_text("\n".join(lines) + "\n")


def test_evidence_inference_templates_flip_and_nei(tmp_path: Path) -> None:
    _write_evidence_inference(tmp_path / "ei")
    pairs = load_evidence_inference(tmp_path / "ei", seed=0)
    by_label = {k: [p for p in pairs if p.label == k] for k in (S, C, N)}
    assert len(by_label[S]) == 2 and len(by_label[C]) == 2 and len(by_label[N]) == 2
    bp_support = next(p for p in by_label[S] if "lood pressure" in p.sentences[0])
    assert "decreased" in bp_support.claim or "reduces" in bp_support.claim
    bp_contra = next(p for p in by_label[C] if "lood pressure" in p.sentences[0])
    assert "decreased" not in bp_contra.claim and "reduces" not in bp_contra.claim
    # the NEI pair pairs a claim about one outcome with the span about the other outcome
    for p in by_label[N]:
        about_bp = "blood pressure" in p.claim
        assert about_bp == ("Heart rate" in p.sentences[0])
    assert not any("invalid annotation" in p.sentences[0] for p in pairs)


def test_overlap_filter_drops_pairs_sharing_corpus_sentences() -> None:
    corpus = [
        Abstract(1, "A title", ("Treatment with drug Z lowered mortality in septic patients by a third.",))
    ]
    clean = LabelPair(
        "claim", "", ("An unrelated sentence about kidney transplant outcomes in children.",), S, "x"
    )
    leaked = LabelPair(
        "claim",
        "",
        ("Intro text. Treatment with drug Z lowered mortality in septic patients by a third.",),
        S,
        "x",
    )
    leaked_context = LabelPair(
        "claim",
        "",
        ("Short.",),
        S,
        "x",
        provenance="Treatment with DRUG Z lowered mortality in septic patients, by a third!",
    )
    assert drop_corpus_overlap([clean, leaked, leaked_context], corpus) == [clean]


def test_load_aux_caps_and_rejects_unknown_set(tmp_path: Path) -> None:
    _write_evidence_inference(tmp_path / "evidence_inference")
    pairs = load_aux(tmp_path, [("evidence_inference", 3)], [], seed=1)
    assert len(pairs) == 3 and all(p.provenance == "" for p in pairs)
    with pytest.raises(DataFormatError, match="unknown aux set"):
        load_aux(tmp_path, [("nope", 0)], [], seed=1)
    with pytest.raises(DataFormatError, match="aux file missing"):
        load_aux(tmp_path, [("mnli", 0)], [], seed=1)


def _toy() -> tuple[list[Claim], dict[str, Abstract]]:
    docs = {
        "10": Abstract(
            10,
            "Statins and the heart",
            ("Background.", "Statins reduce heart attacks.", "Methods.", "Other result."),
        ),
        "11": Abstract(11, "Unrelated cited", ("Statins were measured.", "Nothing about attacks.")),
        "12": Abstract(12, "Topical uncited", ("Statins heart attacks cohort.", "More.")),
    }
    claim = Claim(1, "Statins reduce heart attacks.", {"10": (EvidenceSet((1,), Label.SUPPORT),)}, (10, 11))
    return [claim], docs


def test_scifact_pairs_sources_and_labels() -> None:
    claims, docs = _toy()
    pairs = scifact_pairs(claims, docs, seed=0)
    by_source = {p.source: p for p in pairs}
    assert by_source["scifact_gold"].sentences == ("Statins reduce heart attacks.",)
    assert by_source["scifact_gold"].label == S
    assert "Statins reduce heart attacks." in by_source["scifact_mixed"].sentences
    assert (
        by_source["scifact_cited_nei"].label == N
        and by_source["scifact_cited_nei"].title == "Unrelated cited"
    )
    assert by_source["scifact_retrieved_nei"].title == "Topical uncited"
    assert pairs == scifact_pairs(claims, docs, seed=0)  # seeded


def test_eval_pairs_are_deterministic_top_k() -> None:
    claims, docs = _toy()
    pairs = scifact_eval_pairs(claims, docs, k=1, retrieved=True)
    assert [(p.source, p.label) for p in pairs] == [
        ("scifact_gold", S),
        ("scifact_cited_nei", N),
        ("scifact_retrieved_nei", N),
    ]
    assert pairs[1].sentences == ("Statins were measured.",)


def test_picker_ranks_claim_like_sentences_on_real_data(scifact) -> None:
    corpus = {doc_key(a.doc_id): a for a in read_corpus(scifact.corpus)}
    claims = [c for c in read_claims(scifact.train)[:60] if c.evidence]
    picker = NeiSentencePicker(corpus.values())
    hits = total = 0
    for claim in claims:
        for key, sets in claim.evidence.items():
            gold = {i for s in sets for i in s.sentences}
            top = picker.top_sentences(claim.text, corpus[key], 3)
            hits += bool(gold & set(top))
            total += 1
    assert hits / total > 0.6  # a lexical ranker finds a gold sentence in its top 3 most of the time


def test_format_evidence_joins_title_and_sentences() -> None:
    assert format_evidence("A  title", ["One.", " ", "Two  words."]) == "A title. One. Two words."
    assert format_evidence("Why?", []) == "Why?"
