"""A six-abstract corpus on distinct topics, so every query has one obviously right answer."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

TINY = [
    (
        11,
        "Aspirin and heart attack risk",
        [
            "Daily aspirin reduces the risk of myocardial infarction in adults.",
            "The effect was strongest in men.",
        ],
    ),
    (
        22,
        "Vitamin D supplementation and bone fractures",
        ["Vitamin D did not reduce fracture rates in elderly women.", "Calcium intake was also measured."],
    ),
    (
        33,
        "Gut microbiome composition in obesity",
        [
            "Obese mice had fewer Bacteroidetes than lean mice.",
            "Transplanting microbiota transferred the phenotype.",
        ],
    ),
    (
        44,
        "Smoking and lung cancer",
        ["Tobacco smoking is the leading cause of lung cancer.", "Quitting lowers the risk over time."],
    ),
    (
        55,
        "Exercise improves memory in older adults",
        ["Aerobic training increased hippocampal volume.", "Participants showed better spatial memory."],
    ),
    (
        66,
        "Statins lower LDL cholesterol",
        [
            "Statin therapy reduced LDL cholesterol by thirty percent.",
            "Muscle pain was a common side effect.",
        ],
    ),
]


def corpus_lines(ids: list[object] | None = None) -> list[str]:
    ids = ids or [doc_id for doc_id, _, _ in TINY]
    return [
        orjson.dumps({"doc_id": doc_id, "title": title, "abstract": sents, "structured": i == 2}).decode()
        for i, (doc_id, (_, title, sents)) in enumerate(zip(ids, TINY, strict=True))
    ]


@pytest.fixture()
def tiny() -> list[tuple[int, str, list[str]]]:
    """(doc_id, title, sentences) of the six abstracts."""
    return TINY


@pytest.fixture(name="corpus_lines")
def corpus_lines_fixture():
    """``corpus_lines(ids=None)``: the six records as JSONL lines, optionally with other doc ids."""
    return corpus_lines


@pytest.fixture()
def tiny_corpus(write_jsonl) -> Path:
    return write_jsonl("corpus.jsonl", corpus_lines())


@pytest.fixture(scope="module")
def tiny_dense_index(tmp_path_factory):
    """The six abstracts indexed with embeddings, in small chunks and batches; built once per module."""
    from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index

    root = tmp_path_factory.mktemp("dense")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(line + "\n" for line in corpus_lines()), encoding="utf-8")
    config = IndexConfig(dense=True, embed_chunk=5, embed_batch=4)
    return CorpusIndex.open(build_index(corpus, root / "idx", config, progress=False))
