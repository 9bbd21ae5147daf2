"""What was searched, and how the CLI's text and JSON say the verdict, its why, the study and the numbers."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from rich.console import Console

from sciverify.data.records import Label, RationaleSentence, StudyFacts, VerifiedAbstract
from sciverify.pipeline.present import NUMBERS_LINE, print_verified, verified_to_json
from sciverify.pipeline.searched import Searched, describe_corpus, nothing_found_line, searched_line


class _Index:
    def __init__(
        self, n: int, sha: str = "", meta: list[dict[str, Any]] | None = None, path: str = ""
    ) -> None:
        self.n = n
        self.manifest = {"corpus": {"sha256": sha, "path": path}}
        self.meta = meta

    def __len__(self) -> int:
        return self.n

    def meta_blob(self) -> Any:
        if self.meta is None:
            return None
        raw = b"".join(json.dumps(m).encode() for m in self.meta)
        return np.frombuffer(raw, dtype=np.uint8)


def test_the_scifact_corpus_is_named_and_its_years_are_not_invented() -> None:
    from sciverify.data.datasets import OFFICIAL_FILES

    s = describe_corpus(_Index(5183, sha=OFFICIAL_FILES["corpus.jsonl"]))
    assert s == Searched("SciFact", 5183, None, None)
    line = "Searched 5,183 abstracts of the SciFact corpus (publication years not recorded)."
    assert searched_line(s) == line
    assert "in these 5,183 abstracts (SciFact)" in nothing_found_line(s)


def test_an_ingested_corpus_is_named_by_its_sources_with_its_years() -> None:
    meta = [{"source": "cord19", "year": 2020}, {"source": "cord19", "year": 2003}, {"source": "pubmed"}]
    s = describe_corpus(_Index(3, meta=meta, path="/srv/x/papers.jsonl"))
    assert s == Searched("CORD-19 + PubMed", 3, 2003, 2020)
    assert searched_line(s).endswith("(published 2003\u20132020).")
    assert describe_corpus(_Index(7, path="/srv/x/my-papers.jsonl")).name == "my-papers"


def _paper(label: Label, p: float, study: StudyFacts | None = None) -> VerifiedAbstract:
    return VerifiedAbstract(
        7 if label is Label.SUPPORT else 8, "A title", label, p,
        (RationaleSentence(2, "Statins cut heart attacks by a third.", 0.74),),
        p_evidence=p, p_label_correct=0.9, in_prediction=label is Label.SUPPORT, study=study,
    )


def test_json_and_text_say_the_verdict_why_what_was_searched_and_the_study() -> None:
    searched = Searched("SciFact", 5183)
    trial = StudyFacts("randomized trial", "human", 4000)
    results = [_paper(Label.SUPPORT, 0.8, trial), _paper(Label.CONTRADICT, 0.3)]
    body = verified_to_json("Statins prevent heart attacks.", results, searched)
    assert body["verdict"] == "supported"
    assert body["why"].startswith("1 supporting paper (weight 0.72) against 1 refuting paper (weight 0.27)")
    assert body["weights"] == {"supporting": 0.72, "refuting": 0.27}
    assert body["searched"] == {"name": "SciFact", "documents": 5183, "first_year": None, "last_year": None}
    paper = body["supporting"][0]
    assert paper["study"]["badges"] == ["randomized trial", "in people", "4,000 people"]
    assert paper["why"].startswith("Supports the claim (90% likely the right side): \u201cStatins cut")
    assert paper["weight"] == 0.72 and body["refuting"][0]["study"] is None
    assert paper["link_label"] == ""  # no link, no label

    console = Console(record=True, width=200)
    print_verified(console, "Statins prevent heart attacks.", results, searched)
    text = console.export_text()
    assert "overall verdict: supported" in text
    assert "\nSearched 5,183 abstracts of the SciFact corpus" in text
    assert "why: 1 supporting paper (weight 0.72)" in text
    assert "randomized trial · in people · 4,000 people" in text
    assert "chance it is evidence 80%" in text and "chance its side is right 90%" in text
    assert "best match" in text and "leaderboard pick" not in text
    assert "(sentence score 0.74)" in text and NUMBERS_LINE[:40] in text.replace("\n", " ")


def test_link_labels_and_excerpts() -> None:
    from sciverify.pipeline.present import excerpt_indices, link_label

    assert link_label("https://doi.org/10.1/x", "10.1/x", "123") == "doi:10.1/x"
    assert link_label("https://pubmed.ncbi.nlm.nih.gov/123/", "", "123") == "PMID 123"
    assert link_label("https://api.semanticscholar.org/CorpusID:4983") == "Semantic Scholar page"
    assert link_label("https://example.org/p") == "Paper page" and link_label("") == ""
    # each rationale sentence with one neighbour on each side, in order, within the abstract
    assert excerpt_indices(10, [5, 0]) == [0, 1, 4, 5, 6]
    assert excerpt_indices(3, [2]) == [1, 2] and excerpt_indices(3, []) == []


def test_not_enough_evidence_names_the_abstracts_searched() -> None:
    searched = Searched("SciFact", 5183)
    body = verified_to_json("Vaccines cause autism.", [], searched)
    assert body["verdict"] == "not enough evidence"
    assert "in these 5,183 abstracts (SciFact)" in body["why"]
    console = Console(record=True, width=200)
    print_verified(console, "Vaccines cause autism.", [], searched)
    text = console.export_text()
    assert "No paper in these 5,183 abstracts (SciFact)" in text
    assert "says nothing about papers outside it" in text


def test_at_80_columns_each_panel_header_keeps_the_whole_doc_id() -> None:
    # the longest SciFact doc id (9 digits), best match: the header line names it whole, and the two
    # numbers are still shown (in the body)
    paper = VerifiedAbstract(
        104143831, "Folate and homocysteine in a cohort of 1,200 adults", Label.SUPPORT, 0.97,
        (RationaleSentence(4, "Low folate raised homocysteine.", 0.81),),
        p_evidence=0.97, p_label_correct=0.95, in_prediction=True,
    )
    console = Console(record=True, width=80)
    print_verified(console, "A deficiency of folate increases blood levels of homocysteine.", [paper])
    lines = console.export_text().splitlines()
    header = next(line for line in lines if line.startswith("╭"))
    assert "1. supports  doc 104143831  best match ─" in header, header
    assert max(len(line) for line in lines) <= 80
    assert any("chance it is evidence 97% · chance its side is right 95%" in line for line in lines)
