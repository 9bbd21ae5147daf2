"""The evidence view: which candidates are shown, how they are grouped and ranked, the overall verdict,
the two numbers and the links; and how it relates to the leaderboard decision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from sciverify.data.records import Label, PaperMeta, RationaleSentence, VerifiedAbstract
from sciverify.decision.rule import Pick, decide, shown_picks
from sciverify.decision.settings import DecisionConfig
from sciverify.models.calibration import fit_label_calibrator
from sciverify.pipeline.evidence import (
    SHOW_THRESHOLD,
    Overall,
    evidence_view,
    is_scifact_index,
    overall_verdict,
    paper_link,
    related_papers,
)


@dataclass
class _Hit:
    doc_id: int | str
    row: int
    score: float


class _Index:
    """Three abstracts of three sentences each; ``manifest`` as the index builder writes it."""

    def __init__(self, sha: str = "") -> None:
        self.manifest = {"corpus": {"sha256": sha}}

    def sentences(self, row: int) -> tuple[str, ...]:
        return tuple(f"doc {row} sentence {i}." for i in range(3))

    def title(self, row: int) -> str:
        return f"Title {row}"

    def meta(self, row: int) -> PaperMeta | None:
        return PaperMeta(doi=f"10.1/x{row}") if row == 2 else None


class _Verifier:
    """What the evidence view reads of a Verifier: its index, its decision settings, its calibrator."""

    def __init__(self, index: Any, decision: DecisionConfig, label_calibrator: Any = None) -> None:
        from sciverify.pipeline.config import PipelineConfig

        self.index = index
        self.config = PipelineConfig(decision=decision)
        self.label_calibrator = label_calibrator


@dataclass
class _Judged:
    hits: list[_Hit]
    picks: list[Pick]
    shown: list[Pick]
    probs: dict[int, Any]
    emit_probs: list[float] | None = field(default=None)
    scores: list[Any] | None = field(default=None)


CFG = DecisionConfig(sentence_threshold=0.3, max_sentences=2, max_listed=3, min_rationale_score=0.0,
                     max_labelled=5, emit_threshold=0.5, rationale_power=0.0, max_emitted=1,
                     confidence="learned")


def _judged(emit: list[float]) -> _Judged:
    hits = [_Hit(100, 0, 0.9), _Hit(200, 1, 0.8), _Hit(300, 2, 0.7), _Hit(400, 0, 0.6)]
    scores = [np.array([0.9, 0.1, 0.4]), np.array([0.2, 0.8, 0.1]), np.array([0.5, 0.6, 0.0]),
              np.array([0.1, 0.1, 0.1])]
    probs = {
        0: np.array([0.8, 0.1, 0.1]),  # SUPPORT, one-sided
        1: np.array([0.2, 0.7, 0.1]),  # CONTRADICT
        2: np.array([0.5, 0.4, 0.1]),  # SUPPORT, barely
        3: np.array([0.1, 0.1, 0.8]),
    }
    emitted = decide(scores, probs, CFG, emit)
    shown = shown_picks(emitted, probs, scores, emit, CFG, SHOW_THRESHOLD)
    return _Judged(hits, emitted, shown, probs, emit, scores)


def _shown(rows: list[VerifiedAbstract]) -> list[VerifiedAbstract]:
    return [r for r in rows if r.label is not Label.NOT_ENOUGH_INFO]


def test_shows_every_candidate_above_the_display_threshold_grouped_and_ranked() -> None:
    judged = _judged([0.6, 0.45, 0.35, 0.1])
    assert [v.candidate for v in judged.picks] == [0], "the leaderboard decision emits one abstract"
    rows = evidence_view(_Verifier(_Index(), CFG), judged)
    assert [(r.doc_id, r.label, r.p_evidence, r.in_prediction) for r in rows] == [
        (100, Label.SUPPORT, 0.6, True),
        (300, Label.SUPPORT, 0.35, False),
        (200, Label.CONTRADICT, 0.45, False),
        (400, Label.NOT_ENOUGH_INFO, 0.1, False),  # related, not evidence: listed apart, after the sides
    ]
    assert related_papers(rows) == rows[3:] and rows[3].rationale == ()
    # both sides are shown, but the supporting papers weigh 0.6 + 0.35 against 0.45: more than twice
    assert overall_verdict(rows) is Overall.SUPPORTED
    # rationale as the leaderboard decision lists it: above the sentence threshold, best first
    assert [s.index for s in rows[0].rationale] == [0, 2]
    assert [s.index for s in rows[1].rationale] == [1, 0]
    assert rows[1].rationale[0] == RationaleSentence(1, "doc 2 sentence 1.", 0.6)
    assert rows[1].link == "https://doi.org/10.1/x2" and rows[0].link == ""
    assert all(r.p_label_correct is None for r in rows)  # no calibrator loaded


def test_the_threshold_is_the_rule_and_nothing_below_it_is_shown() -> None:
    rows = evidence_view(_Verifier(_Index(), CFG), _judged([0.2, 0.29, 0.1, 0.05]))
    assert _shown(rows) == [] and overall_verdict(rows) is Overall.NOT_ENOUGH_EVIDENCE
    # below the threshold, the best three are listed apart, never under a side
    assert [(r.doc_id, r.p_evidence) for r in related_papers(rows)] == [(200, 0.29), (100, 0.2), (300, 0.1)]
    assert SHOW_THRESHOLD == 0.3
    rows = evidence_view(_Verifier(_Index(), CFG), _judged([0.2, 0.3, 0.1, 0.05]))
    assert [(r.doc_id, r.in_prediction) for r in _shown(rows)] == [(200, False)]
    assert overall_verdict(rows) is Overall.REFUTED


def test_p_label_correct_comes_from_the_calibrator() -> None:
    rng = np.random.default_rng(1)
    share = rng.uniform(0.5, 1.0, 400)
    probs = np.stack([share * 0.9, (1 - share) * 0.9, np.full(400, 0.1)], axis=1)
    calibrator, _ = fit_label_calibrator(probs, (rng.random(400) < share).astype(int), np.arange(400) % 4)
    rows = evidence_view(_Verifier(_Index(), CFG, calibrator), _judged([0.6, 0.45, 0.35, 0.1]))
    by_doc = {r.doc_id: r.p_label_correct for r in rows}
    assert by_doc[100] is not None and by_doc[300] is not None
    assert by_doc[100] > by_doc[300], "a one-sided label is likelier right than a near tie"


def test_without_emit_probabilities_the_view_is_the_verdicts() -> None:
    heuristic = DecisionConfig(max_emitted=5)
    judged = _judged([0.6, 0.45, 0.35, 0.1])
    judged.emit_probs, judged.shown = None, []
    judged.picks = [Pick(1, Label.CONTRADICT, 1.0, (1,), (1.0,))]  # what an LLM judge gives
    rows = evidence_view(_Verifier(_Index(), heuristic), judged)
    assert [(r.doc_id, r.p_evidence, r.in_prediction) for r in rows] == [(200, None, True)]


def test_a_card_shows_the_sentences_its_label_was_read_from() -> None:
    """A reader that lists may list other sentences than those the label model read; the card shows what
    was read (best first by the decision's scores) and keeps the leaderboard's listing apart."""
    judged = _judged([0.6, 0.45, 0.35, 0.1])
    first = judged.picks[0]
    listing = ((2, 1, 0), (0.5, 0.4, 0.3))
    judged.picks = [Pick(first.candidate, first.label, first.confidence, *listing, read=(0,))]
    rows = evidence_view(_Verifier(_Index(), CFG), judged)
    card = next(r for r in rows if r.doc_id == 100)
    assert [s.index for s in card.rationale] == [0] and card.listed == (2, 1, 0)
    # without a read (an LLM judge's pick) the card lists what the pick lists
    assert all(r.listed == () for r in rows if r.doc_id != 100)


def test_overall_verdict_weighs_the_groups() -> None:
    def va(label: Label, p: float = 0.5) -> VerifiedAbstract:
        return VerifiedAbstract(1, "t", label, p, (), p_evidence=p, p_label_correct=0.9)

    assert overall_verdict([va(Label.SUPPORT), va(Label.SUPPORT)]) is Overall.SUPPORTED
    assert overall_verdict([va(Label.CONTRADICT)]) is Overall.REFUTED
    assert overall_verdict([va(Label.CONTRADICT), va(Label.SUPPORT)]) is Overall.CONFLICTING
    assert overall_verdict([va(Label.CONTRADICT, 0.31), va(Label.SUPPORT, 0.9)]) is Overall.SUPPORTED
    assert overall_verdict([]).value == "not enough evidence"


def test_the_view_reads_study_facts_and_replaces_titles_that_are_not_titles() -> None:
    class Furniture(_Index):
        def title(self, row: int) -> str:
            return "Original Article" if row == 1 else super().title(row)

        def sentences(self, row: int) -> tuple[str, ...]:
            return (f"We randomly assigned 120 patients to drug {row} or placebo.", "It worked.", "Done.")

    rows = evidence_view(_Verifier(Furniture(), CFG), _judged([0.6, 0.45, 0.35, 0.1]))
    by_doc = {r.doc_id: r for r in rows}
    assert by_doc[200].title == "We randomly assigned 120 patients to drug 1 or placebo."
    assert by_doc[100].title == "Title 0"
    study = by_doc[300].study
    assert study is not None
    facts = (study.design, study.system, study.sample_size, study.journal)
    assert facts == ("randomized trial", "human", 120, "")


@pytest.mark.parametrize(
    ("doc_id", "meta", "scifact", "link"),
    [
        (4983, None, True, "https://api.semanticscholar.org/CorpusID:4983"),
        ("4983", None, True, "https://api.semanticscholar.org/CorpusID:4983"),
        (4983, None, False, ""),  # another corpus's integer ids are not S2ORC ids
        ("ug7v899j", PaperMeta(doi="10.1/abc"), False, "https://doi.org/10.1/abc"),
        (31000001, PaperMeta(pmid="31000001"), False, "https://pubmed.ncbi.nlm.nih.gov/31000001/"),
        (7, PaperMeta(doi="10.1/own"), True, "https://doi.org/10.1/own"),  # the corpus's own link first
    ],
)
def test_paper_links(doc_id: int | str, meta: PaperMeta | None, scifact: bool, link: str) -> None:
    assert paper_link(doc_id, meta, scifact) == link


def test_the_scifact_corpus_is_recognised_by_its_sha256() -> None:
    from sciverify.data.datasets import OFFICIAL_FILES

    assert is_scifact_index(_Index(OFFICIAL_FILES["corpus.jsonl"]))
    assert not is_scifact_index(_Index("0" * 64)) and not is_scifact_index(_Index(""))
