"""CORD-19 metadata.csv: the awkward rows of the published format, dedupe, and one-line faults."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import orjson
import pytest

from sciverify.data.io import read_corpus
from sciverify.data.records import PaperMeta
from sciverify.data.sources.common import IngestReport
from sciverify.data.sources.cord19 import ingest_cord19, iter_cord19
from sciverify.errors import DataFormatError

FIXTURES = Path(__file__).parent / "fixtures"
METADATA = FIXTURES / "metadata.csv"


def test_one_record_per_cord_uid_with_metadata_and_counts(tmp_path):
    out = tmp_path / "corpus.jsonl"
    report = ingest_cord19(METADATA, out)
    corpus = read_corpus(out)  # the project's own strict reader accepts what ingest wrote
    assert [a.doc_id for a in corpus] == ["ug7v899j", "02tnwd4m", "2b73a28n"]
    assert (report.records, report.written, report.no_abstract, report.duplicates) == (5, 3, 1, 1)
    assert report.notes == [
        f"{METADATA}:6: cord_uid 'ejv2xln0' has no abstract: skipped",
        f"{METADATA}:8: cord_uid 'ug7v899j' seen again (kept line 2)",
    ]
    first = corpus[0]
    # the abstract field spans three physical lines (embedded newlines): the first row is kept
    assert first.sentences[0].startswith("OBJECTIVE: This retrospective chart review")
    assert "A second copy" not in " ".join(first.sentences)
    assert first.sentences[1].startswith("METHODS: Patients with positive M. pneumoniae cultures")
    assert first.meta == PaperMeta(
        source="cord19",
        doi="10.1186/1471-2334-1-6",
        pmid="11472636",
        pmcid="PMC35282",
        journal="BMC Infect Dis",
        year=2001,
        url="https://www.ncbi.nlm.nih.gov/pmc/articles/PMC35282/",  # first of the ';' list
    )


def test_quotes_and_non_ascii_survive(tmp_path):
    out = tmp_path / "corpus.jsonl"
    ingest_cord19(METADATA, out)
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    nitric = rows[1]["abstract"]
    assert nitric[-1] == 'The "pro-inflammatory" view, however, is contested.'
    assert "(NO•)" in nitric[0]
    assert rows[2]["title"] == "Role of endothelin-1 in lung disease — a review"
    assert (
        rows[2]["abstract"][-1]
        == "Die Übersicht schließt mit offenen Fragen: wie wirkt ET‑1 auf Typ‑II‑Pneumozyten?"
    )
    assert rows[2]["metadata"]["year"] == 2001


def test_gzipped_metadata_reads_the_same(tmp_path):
    gz = tmp_path / "metadata.csv.gz"
    with METADATA.open("rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    ingest_cord19(METADATA, a)
    ingest_cord19(gz, b)
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("metadata_no_abstract_column.csv", "metadata_no_abstract_column.csv:1: missing column 'abstract'"),
        ("metadata_bad_quote.csv", "metadata_bad_quote.csv:2: not valid CSV (unexpected end of data)"),
    ],
)
def test_faults_are_one_line_with_file_and_line_and_leave_no_output(tmp_path, name, expected):
    out = tmp_path / "corpus.jsonl"
    with pytest.raises(DataFormatError) as err:
        ingest_cord19(FIXTURES / name, out)
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []  # neither the corpus nor its temporary file


def test_row_with_a_missing_field_names_its_line(tmp_path):
    path = tmp_path / "metadata.csv"
    path.write_text(
        'cord_uid,title,abstract,doi\nab12cd34,"T","One sentence here.",10.1/x\nzz99yy88,"T2","Text."\n',
        encoding="utf-8",
    )
    with pytest.raises(DataFormatError, match=r"metadata.csv:3: row has 3 fields, the header has 4"):
        list(iter_cord19(path, IngestReport("cord19")))


def test_truncated_gzip_is_one_line(tmp_path):
    gz = tmp_path / "metadata.csv.gz"
    gz.write_bytes(gzip.compress(METADATA.read_bytes())[:-40])
    with pytest.raises(DataFormatError, match="truncated gzip file"):
        ingest_cord19(gz, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_failed_ingest_keeps_an_older_corpus_untouched(tmp_path):
    out = tmp_path / "corpus.jsonl"
    ingest_cord19(METADATA, out)
    before = out.read_bytes()
    with pytest.raises(DataFormatError):
        ingest_cord19(FIXTURES / "metadata_bad_quote.csv", out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]
