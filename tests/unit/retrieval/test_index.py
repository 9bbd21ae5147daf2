from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest

from sciverify.data.records import Abstract
from sciverify.errors import ArtifactError, ConfigError, DataFormatError
from sciverify.retrieval import builder
from sciverify.retrieval import index as index_module
from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index, default_index_dir

LEXICAL = IndexConfig(dense=False)


def _doc(doc_id: object) -> str:
    return json.dumps({"doc_id": doc_id, "title": "t", "abstract": ["A sentence."]})


GOOD, OTHER = _doc(11), _doc(12)


def _build(corpus: Path, out: Path, config: IndexConfig = LEXICAL) -> CorpusIndex:
    return CorpusIndex.open(build_index(corpus, out, config, progress=False))


def test_round_trip_of_every_abstract(tiny_corpus, tiny, tmp_path):
    index = _build(tiny_corpus, tmp_path / "idx")
    assert len(index) == 6
    assert index.n_sentences == 12
    for row, (doc_id, title, sentences) in enumerate(tiny):
        assert index.abstract(row) == Abstract(doc_id, title, tuple(sentences), structured=row == 2)
        assert index.row_of(doc_id) == row
        assert index.row_of(str(doc_id)) == row
    assert index.doc_ids([5, 0]) == [66, 11]
    assert index.row_of(12345) is None
    assert index.id_kind == "int"
    assert index.manifest["counts"]["docs"] == 6


def test_string_and_mixed_doc_ids(write_jsonl, corpus_lines, tmp_path):
    strings = _build(
        write_jsonl("s.jsonl", corpus_lines(["ug7v899j", "a", "b", "é-ü", "x y", "42x"])), tmp_path / "s"
    )
    assert strings.id_kind == "str"
    assert strings.doc_ids(range(6)) == ["ug7v899j", "a", "b", "é-ü", "x y", "42x"]
    assert strings.row_of("é-ü") == 3
    assert strings.row_of("nope") is None
    mixed = _build(write_jsonl("m.jsonl", corpus_lines([7, "seven", 8, "8b", 9, "x"])), tmp_path / "m")
    assert mixed.id_kind == "mixed"
    assert mixed.doc_ids(range(6)) == [7, "seven", 8, "8b", 9, "x"]
    assert isinstance(mixed.abstract(0).doc_id, int)
    assert mixed.row_of("7") == 0 and mixed.row_of("seven") == 1


def test_unicode_text_survives(write_jsonl, tmp_path):
    line = orjson.dumps(
        {"doc_id": 1, "title": "IL-1β in µg/mL — α", "abstract": ["Ωmega 😀.", "", "end"]}
    ).decode()
    index = _build(write_jsonl("u.jsonl", [line]), tmp_path / "u")
    assert index.abstract(0).sentences == ("Ωmega 😀.", "", "end")
    assert index.title(0) == "IL-1β in µg/mL — α"


def test_arrays_are_memory_mapped_npy_without_pickles(tiny_corpus, tmp_path):
    root = build_index(tiny_corpus, tmp_path / "idx", LEXICAL, progress=False)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert all(f.endswith((".npy", ".json")) for f in files), files
    for f in files:
        if f.endswith(".npy"):
            np.load(root / f, allow_pickle=False)
    index = CorpusIndex.open(root)
    assert isinstance(index._sents, np.memmap) and isinstance(index._hash, np.memmap)


def test_hash_collisions_are_resolved_by_the_stored_id(tiny_corpus, tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(builder, "key_hash", lambda key: 7)
    monkeypatch.setattr(index_module, "key_hash", lambda key: 7)
    index = _build(tiny_corpus, tmp_path / "idx")
    assert [index.row_of(doc_id) for doc_id, _, _ in tiny] == list(range(6))
    assert index.row_of(99) is None


def test_other_format_version_asks_for_a_rebuild(tiny_corpus, tmp_path):
    root = build_index(tiny_corpus, tmp_path / "idx", LEXICAL, progress=False)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["format_version"] = 0
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="format version 0.*sciverify index"):
        CorpusIndex.open(root)


def test_missing_index_and_missing_dense_part(tiny_corpus, tmp_path):
    with pytest.raises(ArtifactError, match="sciverify index"):
        CorpusIndex.open(tmp_path / "nothing")
    index = _build(tiny_corpus, tmp_path / "idx")
    assert not index.has_dense
    with pytest.raises(ArtifactError, match="without embeddings"):
        index.sentence_embeddings(0)


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        ([GOOD, OTHER, "", GOOD], 4, "duplicate doc_id 11 \\(first seen on line 1\\)"),
        ([_doc(1), _doc("1"), _doc(3)], 2, "duplicate doc_id '1'"),
        ([GOOD, '{"doc_id": 5, "title": "t", "abstract": []}'], 2, "no sentences"),
        ([GOOD, '{"doc_id": 5, "title": "t", "abstract": ["  "]}'], 2, "no sentences"),
        ([GOOD, '{"doc_id": 5, "abstract": ['], 2, "invalid JSON"),
        (['{"title": "t", "abstract": ["a"]}'], 1, "missing field 'doc_id'"),
        (['{"doc_id": 1, "abstract": "One. Two."}'], 1, "--split-sentences"),
    ],
)
def test_bad_records_name_file_and_line(write_jsonl, tmp_path, lines, line, message):
    path = write_jsonl("bad.jsonl", lines)
    with pytest.raises(DataFormatError, match=message) as err:
        build_index(path, tmp_path / "idx", LEXICAL, progress=False)
    assert err.value.line == line and err.value.path == str(path)
    assert not (tmp_path / "idx").exists()
    assert not list(tmp_path.glob(".idx.building-*"))


def test_empty_file_is_an_error(write_jsonl, tmp_path):
    with pytest.raises(DataFormatError, match="no corpus records"):
        build_index(write_jsonl("empty.jsonl", ["", "  "]), tmp_path / "idx", LEXICAL, progress=False)


def test_split_sentences_splits_string_abstracts(write_jsonl, tmp_path):
    text = (
        "Smith et al. found a 3.5-fold rise (p < 0.05; Fig. 2). It persisted in U.S. cohorts. RESULTS: none."
    )
    lines = [
        json.dumps({"doc_id": "p1", "title": "T", "abstract": text}),
        json.dumps({"doc_id": "p2", "title": "T", "abstract": ["Kept as given.", "Two."]}),
    ]
    config = IndexConfig(dense=False, split_sentences=True)
    index = _build(write_jsonl("split.jsonl", lines), tmp_path / "idx", config)
    assert index.abstract(0).sentences == (
        "Smith et al. found a 3.5-fold rise (p < 0.05; Fig. 2).",
        "It persisted in U.S. cohorts.",
        "RESULTS: none.",
    )
    assert index.abstract(1).sentences == ("Kept as given.", "Two.")
    blank = write_jsonl("blank.jsonl", [json.dumps({"doc_id": 1, "abstract": "   "})])
    with pytest.raises(DataFormatError, match="no sentences"):
        build_index(blank, tmp_path / "b", config, progress=False)


def test_rebuild_replaces_an_index_but_never_a_foreign_directory(
    tiny_corpus, corpus_lines, write_jsonl, tmp_path
):
    out = tmp_path / "idx"
    _build(tiny_corpus, out)
    assert len(_build(write_jsonl("one.jsonl", corpus_lines()[:1]), out)) == 1
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(ArtifactError, match="not a sciverify index"):
        build_index(tiny_corpus, foreign, LEXICAL, progress=False)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_config_is_validated_and_default_dir_follows_env(monkeypatch, tmp_path):
    with pytest.raises(ConfigError):
        IndexConfig(doc_vector="max")
    with pytest.raises(ConfigError):
        IndexConfig(bm25_b=2.0)
    monkeypatch.setenv("SCIVERIFY_INDEX", str(tmp_path / "custom"))
    assert default_index_dir() == tmp_path / "custom"
    monkeypatch.delenv("SCIVERIFY_INDEX")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_index_dir() == tmp_path / "xdg" / "sciverify" / "index" / "scifact-v1"
