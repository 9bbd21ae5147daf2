"""The default SciFact index the package ships: its files, unpacking it from the real corpus, the
embedder check that refuses it where this machine's embedder disagrees (then `sciverify index
--default` builds it here), and a user's own index, which it never replaces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from sciverify.data.datasets import OFFICIAL_FILES, sha256_file
from sciverify.data.io import read_claims, read_corpus
from sciverify.errors import ArtifactError
from sciverify.retrieval import shipped_index
from sciverify.retrieval.embedder import Embedder, embedder_identity, get_embedder
from sciverify.retrieval.embedder_check import check_embedder, require_embedder
from sciverify.retrieval.index import CorpusIndex, default_index_dir, ensure_default_index
from sciverify.retrieval.shipped_index import (
    SHIPPED_DIR,
    dequantize_rows,
    quantize_rows,
    read_shipped_manifest,
    unpack_shipped_index,
    write_shipped_index,
)


def _sciverify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def unpacked(scifact, tmp_path_factory) -> CorpusIndex:
    """The shipped index unpacked from the real SciFact corpus (about 2 s)."""
    out = tmp_path_factory.mktemp("shipped") / "scifact"
    return CorpusIndex.open(unpack_shipped_index(scifact.corpus, out, progress=False))


def test_the_package_ships_the_scifact_index_under_30_mb():
    manifest = read_shipped_manifest()
    assert manifest is not None
    assert manifest["corpus"]["sha256"] == OFFICIAL_FILES["corpus.jsonl"]
    assert "ODC-By 1.0" in manifest["licence"] and manifest["corpus"]["licence"] == "ODC-By 1.0"
    # made by the embedder this package installs: else every load would refuse it
    assert manifest["embedding"]["embedder"] == embedder_identity(128)
    assert manifest["counts"] == {"id_kind": "int", "docs": 5183, "sentences": 45952, "vocabulary": 26559}
    files = sorted(p for p in SHIPPED_DIR.rglob("*") if p.is_file() and p.name != "manifest.json")
    assert {p.relative_to(SHIPPED_DIR).as_posix() for p in files} == set(manifest["files"])
    for path in files:
        assert sha256_file(path) == manifest["files"][path.relative_to(SHIPPED_DIR).as_posix()]
    assert not any(p.suffix == ".jsonl" or "blob" in p.name and "tokens" not in p.name for p in files)
    assert sum(p.stat().st_size for p in files) < 30e6
    q = np.load(SHIPPED_DIR / "dense" / "sentences.int8.npy", mmap_mode="r")
    assert q.dtype == np.int8 and q.shape == (45952, 384)


def test_int8_rows_keep_the_direction_of_real_embeddings(tiny_dense_index):
    stored = np.asarray(tiny_dense_index.all_sentence_embeddings, dtype=np.float32)
    q, scale = quantize_rows(stored)
    assert q.dtype == np.int8 and scale.shape == (len(stored),)
    assert (np.abs(q).max(axis=1) == 127).all()  # every row uses the whole range
    back = dequantize_rows(q, scale).astype(np.float32)
    cosines = (back * stored).sum(axis=1) / np.linalg.norm(stored, axis=1)
    assert cosines.min() > 0.9995
    zero_q, zero_scale = quantize_rows(np.zeros((2, 384), np.float32))
    assert not dequantize_rows(zero_q, zero_scale).any()


def test_unpacked_index_holds_the_corpus_and_this_embedders_vectors(scifact, unpacked):
    corpus = read_corpus(scifact.corpus)
    assert len(unpacked) == 5183 and unpacked.n_sentences == 45952
    for row in range(0, len(corpus), 97):
        assert unpacked.abstract(row) == corpus[row]
        assert unpacked.row_of(corpus[row].doc_id) == row
    assert unpacked.manifest["embedding"]["from"]["dtype"] == "int8"
    assert unpacked.manifest["embedding"]["embedder"] == embedder_identity(128)
    for name in ("data.csc.index.npy", "indices.csc.index.npy", "tokens.hash.npy", "params.index.json"):
        assert (unpacked.root / "bm25" / name).read_bytes() == (SHIPPED_DIR / "bm25" / name).read_bytes()
    assert check_embedder(unpacked).ok
    # every sentence of 12 abstracts spread over the corpus, embedded now: the shipped vectors are this
    # embedder's (another batch than the build's moves a vector by far less than 0.005)
    rows = list(range(1, len(unpacked), 431))
    texts = [s for r in rows for s in unpacked.sentences(r)]
    fresh = get_embedder(128).encode(texts)
    stored = np.concatenate([unpacked.sentence_embeddings(r) for r in rows]).astype(np.float32)
    assert (fresh * stored).sum(axis=1).min() > 0.995


def test_unpacked_index_retrieves_the_evidence_of_train_claims(scifact, unpacked):
    from sciverify.pipeline.config import tuned_config
    from sciverify.retrieval.evaluate import evaluate_hits
    from sciverify.retrieval.methods import make_retriever

    claims = [c for c in read_claims(scifact.train) if c.evidence][:120]
    retriever = make_retriever(unpacked, tuned_config().retrieval)
    report = evaluate_hits(claims, retriever.retrieve([c.text for c in claims], 5))
    assert report.n_claims == 120 and report.recall[5] > 0.8  # the float index: 0.87 on these claims


def test_another_corpus_or_a_damaged_file_is_refused_and_nothing_is_left(scifact, tiny_corpus, tmp_path):
    out = tmp_path / "index"
    with pytest.raises(ArtifactError, match="not the corpus the shipped index was made from"):
        unpack_shipped_index(tiny_corpus, out, progress=False)
    package = tmp_path / "package"
    shutil.copytree(SHIPPED_DIR, package)
    titles = package / "dense" / "titles.int8.npy"
    titles.write_bytes(titles.read_bytes()[:-384])
    damaged = r"titles.int8.npy is missing or damaged .*sciverify index --default"
    with pytest.raises(ArtifactError, match=damaged):
        unpack_shipped_index(scifact.corpus, out, progress=False, package=package)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl", "package"]


def test_a_disagreeing_embedder_refuses_the_shipped_index_in_one_line(unpacked, monkeypatch):
    monkeypatch.setenv("SCIVERIFY_INDEX", str(unpacked.root))
    # a real embedder that makes other vectors, as another CPU's int8 kernels or model files would:
    # the same model reading only the first 16 tokens of each sentence
    other = Embedder(max_length=16).encode
    with pytest.raises(ArtifactError) as refused:
        require_embedder(unpacked, other)
    message = str(refused.value)
    assert "\n" not in message
    assert "does not reproduce the vectors" in message
    assert message.endswith("rebuild it with `sciverify index --default`")


def test_a_refused_shipped_index_is_rebuilt_by_index_default(
    tiny_dense_index, tiny_corpus, tmp_path, monkeypatch
):
    """The whole path on the six-abstract corpus, shipped from a package of its own: unpacked, refused,
    then `sciverify index --default` embeds it here and replaces it; later loads open the rebuilt one."""
    package = tmp_path / "package"
    write_shipped_index(tiny_dense_index, package)
    monkeypatch.setattr(shipped_index, "SHIPPED_DIR", package)
    monkeypatch.setenv("SCIVERIFY_INDEX", str(tmp_path / "default"))
    first = ensure_default_index(progress=False, data_dir=tiny_corpus.parent)
    assert first.root == default_index_dir() and first.manifest["embedding"]["from"]["dtype"] == "int8"
    assert "embeddings" not in first.manifest["build_timings"]  # unpacked, not embedded
    assert not check_embedder(first, Embedder(max_length=8).encode).ok
    result = _sciverify("index", "--default", "--data", str(tiny_corpus.parent))
    assert result.returncode == 0, result.stderr
    rebuilt = ensure_default_index(progress=False)
    assert "from" not in rebuilt.manifest["embedding"] and "embeddings" in rebuilt.manifest["build_timings"]
    assert check_embedder(rebuilt).ok


def test_a_user_index_is_never_replaced_by_the_shipped_one(scifact, tmp_path, monkeypatch):
    own = tmp_path / "own"
    result = _sciverify("index", str(scifact.corpus), "-o", str(own), "--no-dense")
    assert result.returncode == 0, result.stderr
    assert "indexed 5183 abstracts" in result.stdout
    before = json.loads((own / "manifest.json").read_text(encoding="utf-8"))
    assert before["embedding"] is None and "text_and_bm25" in before["build_timings"]
    monkeypatch.setenv("SCIVERIFY_INDEX", str(own))  # the user's index as the default one
    assert ensure_default_index(progress=False).manifest == before
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep", encoding="utf-8")
    monkeypatch.setenv("SCIVERIFY_INDEX", str(foreign))
    with pytest.raises(ArtifactError, match="is not a sciverify index"):
        ensure_default_index(progress=False, data_dir=scifact.root)
    assert [p.name for p in foreign.iterdir()] == ["mine.txt"]
    assert not list(tmp_path.glob(".notes.unpacking-*"))


def test_verify_refuses_a_default_index_of_another_embedder_in_one_line(unpacked, tmp_path):
    """What a user sees where the shipped vectors are not this machine's embedder's: one line naming
    the command that builds the index here, exit status 2, no traceback, before any answer."""
    other = tmp_path / "default"
    shutil.copytree(unpacked.root, other, copy_function=shutil.copy)
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    manifest["embedding"]["embedder"]["onnx_sha256"] = "0" * 64  # another ONNX graph made the vectors
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    env = {**os.environ, "SCIVERIFY_INDEX": str(other)}
    result = subprocess.run(
        [sys.executable, "-m", "sciverify", "verify", "Aspirin prevents heart attacks."],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    joined = " ".join(" ".join(lines).split())
    assert "was embedded by another embedder (onnx_sha256 differ" in joined
    assert joined.endswith("rebuild it with `sciverify index --default`")


def test_write_package_is_refused_in_one_line_without_default(tiny_corpus, tmp_path):
    result = _sciverify("index", str(tiny_corpus), "-o", str(tmp_path / "idx"), "--write-package")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--write-package rewrites the shipped SciFact index" in " ".join(result.stderr.split())
    assert not (tmp_path / "idx").exists()
    env = {**os.environ, "SCIVERIFY_INDEX": str(tmp_path / "default")}  # never the real default index
    data = str(tiny_corpus.parent)
    lexical = _sciverify("index", "--default", "--no-dense", "--write-package", "--data", data, env=env)
    assert lexical.returncode == 2 and "with sentence vectors" in " ".join(lexical.stderr.split())
    assert not (tmp_path / "default").exists()
