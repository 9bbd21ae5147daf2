"""Paper metadata in the index: stored when the corpus has it, absent (no files) when it does not."""

from __future__ import annotations

from pathlib import Path

from sciverify.data.records import PaperMeta
from sciverify.data.sources.pubmed import ingest_pubmed
from sciverify.retrieval.builder import build_index
from sciverify.retrieval.index import CorpusIndex
from sciverify.retrieval.layout import IndexConfig

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "sources" / "fixtures"


def test_metadata_round_trips_through_the_index(tmp_path):
    corpus = tmp_path / "pubmed.jsonl"
    ingest_pubmed([FIXTURES / "pubmed_baseline.xml"], corpus)
    index = CorpusIndex.open(build_index(corpus, tmp_path / "idx", IndexConfig(dense=False), progress=False))
    row = index.row_of(31000002)
    assert row is not None
    ab = index.abstract(row)
    assert ab.meta == PaperMeta(
        source="pubmed", pmid="31000002", pmcid="PMC1234567", journal="Revista médica de Chile", year=1998
    )
    assert index.manifest["components"]["metadata"] is True


def test_corpus_without_metadata_writes_no_metadata_files(tmp_path, write_jsonl):
    corpus = write_jsonl("c.jsonl", ['{"doc_id": 1, "title": "T", "abstract": ["One sentence."]}'])
    index = CorpusIndex.open(build_index(corpus, tmp_path / "idx", IndexConfig(dense=False), progress=False))
    assert index.meta(0) is None and index.abstract(0).meta is None
    assert not list((tmp_path / "idx").glob("meta.*"))
    assert index.manifest["components"]["metadata"] is False
