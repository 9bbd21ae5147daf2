"""PubMed/MEDLINE XML: versions across baseline and update files, DeleteCitation, structured and
marked-up abstracts, and one-line faults."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sciverify.data.io import read_corpus
from sciverify.data.records import PaperMeta
from sciverify.data.sources.pubmed import ingest_pubmed
from sciverify.errors import DataFormatError

FIXTURES = Path(__file__).parent / "fixtures"
BASELINE_GZ = FIXTURES / "pubmed_baseline.xml.gz"
BASELINE = FIXTURES / "pubmed_baseline.xml"
UPDATE = FIXTURES / "pubmed_update.xml"


def test_latest_version_wins_and_deleted_citations_are_gone(tmp_path):
    out = tmp_path / "corpus.jsonl"
    report = ingest_pubmed([BASELINE_GZ, UPDATE], out)
    corpus = {a.doc_id: a for a in read_corpus(out)}
    assert sorted(corpus) == [31000001, 31000002, 31000004]
    assert corpus[31000004].title == "Interleukin-6 signalling in TH17 cells: the revised record."
    assert corpus[31000004].meta is not None and corpus[31000004].meta.doi == "10.4049/jimmunol.0000004"
    assert (report.files, report.records, report.written) == (2, 6, 3)
    assert (report.no_abstract, report.duplicates, report.deleted) == (1, 1, 1)


def test_baseline_alone_keeps_what_the_update_would_change(tmp_path):
    out = tmp_path / "corpus.jsonl"
    ingest_pubmed([BASELINE], out)
    ids = [a.doc_id for a in read_corpus(out)]
    assert ids == [31000001, 31000002, 31000004, 31000005]


def test_a_citation_deleted_then_published_again_comes_back(tmp_path):
    again = tmp_path / "again.xml"
    again.write_text(
        BASELINE.read_text(encoding="utf-8").replace("31000005", "31000009").replace("31000001", "31000005"),
        encoding="utf-8",
    )
    out = tmp_path / "corpus.jsonl"
    ingest_pubmed([BASELINE, UPDATE, again], out)
    titles = {a.doc_id: a.title for a in read_corpus(out)}
    assert titles[31000005].startswith("Vitamin D supplementation")


def test_structured_abstract_with_inline_markup_becomes_labelled_sentences(tmp_path):
    out = tmp_path / "corpus.jsonl"
    ingest_pubmed([BASELINE_GZ], out)
    ab = read_corpus(out)[0]
    assert ab.structured
    assert ab.title == "Vitamin D supplementation and fracture risk in adults over 65: a randomised trial."
    assert ab.sentences == (
        "BACKGROUND Whether vitamin D3 lowers fracture risk in older adults is unsettled.",
        "Earlier trials used small doses.",
        "METHODS We randomly assigned 2,400 adults (mean age 71 y) to 2,000 IU/day or placebo for 3 years; "
        "e.g. falls were recorded monthly.",
        "FINDINGS Fractures occurred in 4.1% vs. 4.3% (hazard ratio 0.95, 95% CI 0.70–1.28; p = 0.74).",
        "INTERPRETATION Vitamin D did not reduce fractures.",
    )
    assert ab.meta == PaperMeta(
        source="pubmed",
        pmid="31000001",
        doi="10.1016/S0140-6736(19)00001-1",
        journal="Lancet (London, England)",
        year=2019,
    )
    assert ab.meta.link() == "https://doi.org/10.1016/S0140-6736(19)00001-1"


def test_non_ascii_and_medline_date(tmp_path):
    out = tmp_path / "corpus.jsonl"
    ingest_pubmed([BASELINE], out)
    ab = read_corpus(out)[1]
    assert ab.title == "Prevalencia de anemia en niños de Santiago."
    assert ab.sentences[0] == "Anaemia was found in 18% of 512 children aged 6–24 months in Santiago."
    assert ab.meta is not None
    assert (ab.meta.year, ab.meta.journal, ab.meta.pmcid) == (1998, "Revista médica de Chile", "PMC1234567")
    assert ab.meta.link() == "https://pubmed.ncbi.nlm.nih.gov/31000002/"


def test_truncated_gzip_is_one_line_and_writes_nothing(tmp_path):
    cut = tmp_path / "pubmed25n0001.xml.gz"
    cut.write_bytes(BASELINE_GZ.read_bytes()[:900])
    out = tmp_path / "corpus.jsonl"
    with pytest.raises(DataFormatError) as err:
        ingest_pubmed([cut], out)
    assert str(err.value).startswith(f"{cut}: truncated gzip file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pubmed25n0001.xml.gz"]


def test_not_gzip_at_all_is_one_line(tmp_path):
    bad = tmp_path / "x.xml.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage that is not deflate data at all")
    with pytest.raises(DataFormatError, match=r"x.xml.gz: (damaged|truncated) gzip file"):
        ingest_pubmed([bad], tmp_path / "out.jsonl")


def test_malformed_xml_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.xml"
    text = BASELINE.read_text(encoding="utf-8").replace("</ArticleTitle>", "</Title>", 1)
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        ingest_pubmed([bad], tmp_path / "out.jsonl")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "</Title>" in row and "Vitamin" in row)
    assert str(err.value).startswith(f"{bad}:{line}: malformed XML (mismatched tag")
    assert not (tmp_path / "out.jsonl").exists()


def test_xml_cut_short_is_malformed(tmp_path):
    bad = tmp_path / "cut.xml"
    bad.write_bytes(BASELINE.read_bytes()[:2000])
    with pytest.raises(DataFormatError, match=r"cut.xml:\d+: malformed XML"):
        ingest_pubmed([bad], tmp_path / "out.jsonl")


def test_other_xml_is_refused(tmp_path):
    other = tmp_path / "other.xml"
    other.write_text("<?xml version='1.0'?><html><body/></html>", encoding="utf-8")
    with pytest.raises(DataFormatError, match="not PubMed XML"):
        ingest_pubmed([other], tmp_path / "out.jsonl")


def test_gzip_member_streams_the_same_as_plain(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    ingest_pubmed([BASELINE], a)
    gz = tmp_path / "b.xml.gz"
    gz.write_bytes(gzip.compress(BASELINE.read_bytes()))
    ingest_pubmed([gz], b)
    assert a.read_bytes() == b.read_bytes()
