"""A portable index: it records which embedder made its vectors, and checks that the embedder on
this machine still makes them (re-embedding a few stored sentences), before its vectors are trusted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sciverify.data.datasets import sha256_file
from sciverify.errors import ArtifactError
from sciverify.retrieval.embedder import (
    default_onnx_path,
    default_tokenizer_path,
    embedder_identity,
    get_embedder,
)
from sciverify.retrieval.embedder_check import (
    CHECK_SENTENCES,
    EmbedderCheck,
    check_embedder,
    require_embedder,
)
from sciverify.retrieval.index import CorpusIndex, IndexConfig, build_index


def _real(texts):
    return get_embedder(128).encode(texts)


def _noisy(texts):
    """The real vectors plus Gaussian noise: cosine to the stored ones about 0.86."""
    rng = np.random.default_rng(0)
    vectors = _real(texts)
    return vectors + rng.normal(0.0, 0.03, vectors.shape).astype(np.float32)


def _shifted(texts):
    """Vectors of the wrong sentences (each text gets the next one's vector)."""
    return np.roll(_real(texts), 1, axis=0)


def _copy(index: CorpusIndex, out: Path, edit) -> CorpusIndex:
    """A copy of ``index`` whose manifest ``edit`` changed in place, as a user's old index would be."""
    shutil.copytree(index.root, out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    edit(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return CorpusIndex.open(out)


def test_the_build_records_the_embedder_files(tiny_dense_index):
    recorded = tiny_dense_index.manifest["embedding"]["embedder"]
    assert recorded == {
        "onnx_sha256": sha256_file(default_onnx_path()),
        "tokenizer_sha256": sha256_file(default_tokenizer_path()),
        "max_length": 128,
    }
    assert embedder_identity(128) == recorded
    assert len(recorded["onnx_sha256"]) == 64


def test_the_real_embedder_reproduces_the_stored_vectors(tiny_dense_index, tiny):
    check = require_embedder(tiny_dense_index, _real)
    assert isinstance(check, EmbedderCheck)
    assert check.ok and check.sentences == CHECK_SENTENCES == 8
    assert 0.999 < check.min_cosine <= 1.0001
    assert check.recorded == check.current != "not recorded"
    assert check.recorded.startswith(f"onnx {sha256_file(default_onnx_path())[:12]}")
    assert "reproduces 8 stored vectors" in check.message
    # the default encoder is the same real one
    assert check_embedder(tiny_dense_index).min_cosine == pytest.approx(check.min_cosine, abs=1e-6)


def test_the_probe_is_the_first_eight_stored_sentences(tiny_dense_index, tiny):
    seen: list[list[str]] = []

    def spy(texts):
        seen.append(list(texts))
        return _real(texts)

    check_embedder(tiny_dense_index, spy)
    check_embedder(tiny_dense_index, spy)
    first_eight = [s for _, _, sentences in tiny for s in sentences][:8]
    assert seen == [first_eight, first_eight]


@pytest.mark.parametrize("encode", [_noisy, _shifted], ids=["noise", "other-sentences"])
def test_an_embedder_that_makes_other_vectors_fails(tiny_dense_index, encode):
    check = check_embedder(tiny_dense_index, encode)
    assert not check.ok
    assert check.min_cosine < 0.95
    assert check.sentences == 8
    corpus = tiny_dense_index.manifest["corpus"]["path"]
    command = f"sciverify index {corpus} -o {tiny_dense_index.root}"
    assert f"rebuild it with `{command}`" in check.message
    assert "does not reproduce the vectors" in check.message
    with pytest.raises(ArtifactError) as raised:
        require_embedder(tiny_dense_index, encode)
    assert str(raised.value) == check.message
    assert "\n" not in str(raised.value)
    assert str(tiny_dense_index.root) in str(raised.value)


def test_noise_lowers_the_cosine_by_the_expected_amount(tiny_dense_index):
    # 384 components of sd 0.03 add a norm of ~0.59 to a unit vector: cosine ~ 1/sqrt(1 + 0.35)
    check = check_embedder(tiny_dense_index, _noisy)
    assert 0.80 < check.min_cosine < 0.90


def test_another_recorded_embedder_is_refused(tiny_dense_index, tmp_path):
    def other_model(manifest):
        manifest["embedding"]["embedder"]["onnx_sha256"] = "0" * 64

    index = _copy(tiny_dense_index, tmp_path / "idx", other_model)
    check = check_embedder(index, _real)
    assert not check.ok
    assert check.min_cosine > 0.999  # the vectors agree; the record alone refuses
    assert check.recorded.startswith("onnx 000000000000,") and check.current != check.recorded
    assert "onnx_sha256 differ" in check.message
    with pytest.raises(ArtifactError, match=r"another embedder .*rebuild it with `sciverify index .* -o "):
        require_embedder(index, _real)


def test_another_recorded_max_length_is_refused(tiny_dense_index, tmp_path):
    def longer(manifest):
        manifest["embedding"]["embedder"]["max_length"] = 256

    check = check_embedder(_copy(tiny_dense_index, tmp_path / "idx", longer), _real)
    assert not check.ok and "max_length differ" in check.message
    assert "max_length 256" in check.recorded and "max_length 128" in check.current


def test_an_index_built_before_the_record_is_judged_by_its_vectors(tiny_dense_index, tmp_path):
    def old(manifest):
        del manifest["embedding"]["embedder"]

    index = _copy(tiny_dense_index, tmp_path / "idx", old)
    check = require_embedder(index, _real)
    assert check.ok and check.recorded == "not recorded"
    assert check.min_cosine > 0.999 and check.sentences == 8
    assert check.current.startswith("onnx ")
    assert not check_embedder(index, _shifted).ok


def test_the_default_index_names_the_default_rebuild(tiny_dense_index, tmp_path, monkeypatch):
    index = _copy(tiny_dense_index, tmp_path / "default", lambda manifest: None)
    monkeypatch.setenv("SCIVERIFY_INDEX", str(tmp_path / "default"))
    with pytest.raises(ArtifactError, match=r"rebuild it with `sciverify index --default`$"):
        require_embedder(index, _shifted)


def test_a_missing_corpus_gets_a_placeholder_and_the_build_flags(tiny_dense_index, tmp_path):
    def moved(manifest):
        manifest["corpus"]["path"] = str(tmp_path / "gone.jsonl")
        manifest["config"]["split_sentences"] = True
        manifest["config"]["ann"] = "off"

    index = _copy(tiny_dense_index, tmp_path / "idx", moved)
    check = check_embedder(index, _shifted)
    assert check.message.endswith(
        f"rebuild it with `sciverify index CORPUS -o {index.root} --split-sentences --ann off`"
    )


def test_a_title_only_index_checks_its_title_vectors(tiny_corpus, tiny, tmp_path):
    config = IndexConfig(dense_text="title", ann="off")
    index = CorpusIndex.open(build_index(tiny_corpus, tmp_path / "idx", config, progress=False))
    seen: list[list[str]] = []

    def spy(texts):
        seen.append(list(texts))
        return _real(texts)

    check = require_embedder(index, spy)
    assert seen == [[title for _, title, _ in tiny]]  # six titles: fewer than eight to take
    assert check.ok and check.sentences == 6 and check.min_cosine > 0.999
    bad = check_embedder(index, _shifted)
    assert not bad.ok and "--dense-text title --ann off`" in bad.message


def test_a_lexical_index_has_nothing_to_check(tiny_corpus, tmp_path):
    index = CorpusIndex.open(
        build_index(tiny_corpus, tmp_path / "idx", IndexConfig(dense=False), progress=False)
    )
    assert index.manifest["embedding"] is None
    check = require_embedder(index, _shifted)
    message = f"index {index.root} stores no embeddings; nothing to check"
    assert check == EmbedderCheck(True, 1.0, 0, "not recorded", check.current, message)
