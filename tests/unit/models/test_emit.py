"""The learned emit model: features, fitting out of fold, and its file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciverify.errors import ArtifactError
from sciverify.models.emit import (
    EMIT_FEATURES,
    READER_EMIT_FEATURES,
    EmitModel,
    emit_features,
    fit_emit,
)


def test_features_compare_a_candidate_with_the_claims_others() -> None:
    x = emit_features(
        [12.0, 9.0],
        [np.array([0.9, 0.1, 0.5]), np.array([0.3])],
        {0: np.array([0.7, 0.1, 0.2])},
        sentence_threshold=0.4,
    )
    f = {name: x[:, i] for i, name in enumerate(EMIT_FEATURES)}
    assert x.shape == (2, len(EMIT_FEATURES))
    assert list(f["rank"]) == [0, 1]
    assert list(f["retrieval_gap"]) == [0.0, -3.0]
    assert list(f["rationale_1"]) == [0.9, 0.3]
    assert list(f["rationale_2"]) == [0.5, 0.0]  # padded when the abstract has one sentence
    assert list(f["rationale_count"]) == [2, 0]
    assert f["rationale_gap"][1] == pytest.approx(-0.6)
    assert list(f["p_nei"]) == [0.2, 1.0]  # an unlabelled candidate counts as NEI
    assert f["logit_support"][0] == pytest.approx(np.log(0.7 + 1e-6) - np.log(0.2 + 1e-6))
    assert emit_features([], [], {}, 0.5).shape == (0, len(EMIT_FEATURES))


def test_reader_features_read_only_what_the_reader_read(tmp_path: Path) -> None:
    """With the reader, two columns are added: its best P(rationale) over the sentences it read (NaN =
    unread, skipped; nothing read = 0) and the gap to the claim's best; the emit model fitted on such rows
    names them, saves and loads."""
    scores = [np.array([0.9, 0.1, 0.5]), np.array([0.3]), np.array([0.2, 0.4])]
    rationale = [np.array([0.2, np.nan, 0.8]), np.array([np.nan]), None]
    probs = {0: np.array([0.7, 0.1, 0.2])}
    x = emit_features([12.0, 9.0, 8.0], scores, probs, 0.4, rationale)
    names = EMIT_FEATURES + READER_EMIT_FEATURES
    assert x.shape == (3, len(names))
    f = {name: x[:, i] for i, name in enumerate(names)}
    assert list(f["reader_best"]) == pytest.approx([0.8, 0.0, 0.0])
    assert list(f["reader_gap"]) == pytest.approx([0.0, -0.8, -0.8])
    # the selector's columns are those computed without the reader
    assert np.array_equal(x[:, : len(EMIT_FEATURES)], emit_features([12.0, 9.0, 8.0], scores, probs, 0.4))
    assert emit_features([], [], {}, 0.5, []).shape == (0, len(names))

    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(40), 3)
    y = (rng.random(len(groups)) < 0.3).astype(int)
    rows = rng.normal(size=(len(groups), len(names)))
    rows[:, len(EMIT_FEATURES)] += 3.0 * y  # reader_best carries the signal
    model, _ = fit_emit(rows, y, groups)
    assert model.features == names
    assert model.coef[len(EMIT_FEATURES)] > 0.5
    model.save(tmp_path / "emit.json")
    assert EmitModel.load(tmp_path / "emit.json") == model
    with pytest.raises(ArtifactError, match="features"):
        fit_emit(rows[:, :-1], y, groups)


def _toy(n_claims: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_claims), 3)
    y = (rng.random(len(groups)) < 0.3).astype(int)
    x = rng.normal(size=(len(groups), len(EMIT_FEATURES)))
    x[:, 7] += 2.0 * y  # p_support carries the signal
    return x, y, groups


def test_fit_separates_and_out_of_fold_scores_never_see_their_claim() -> None:
    x, y, groups = _toy()
    model, oof = fit_emit(x, y, groups)
    assert np.mean((model.predict(x) > 0.5) == y) > 0.8
    # relabel claim 0: its own out-of-fold scores must not move, other folds' may
    y2 = y.copy()
    y2[groups == 0] = 1 - y2[groups == 0]
    _, oof2 = fit_emit(x, y2, groups)
    assert np.array_equal(oof[groups == 0], oof2[groups == 0])
    assert not np.array_equal(oof, oof2)


def test_single_class_gives_a_constant_base_rate_model() -> None:
    x, _, groups = _toy(10)
    model, oof = fit_emit(x, np.zeros(len(groups), int), groups)
    assert np.allclose(model.predict(x), model.predict(x)[0])
    assert model.predict(x)[0] < 0.01


def test_save_load_round_trip_and_refusals(tmp_path: Path) -> None:
    x, y, groups = _toy()
    model, _ = fit_emit(x, y, groups)
    path = tmp_path / "emit.json"
    model.save(path)
    again = EmitModel.load(path)
    assert np.array_equal(again.predict(x), model.predict(x))
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1] + ["something_else"]
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match="other features"):
        EmitModel.load(path)
    path.write_text("{not json")
    with pytest.raises(ArtifactError, match="cannot read"):
        EmitModel.load(path)
    with pytest.raises(ArtifactError, match="expects"):
        model.predict(np.zeros((2, 3)))


def test_a_learned_decision_without_its_emit_model_is_refused() -> None:
    from sciverify.decision.settings import DecisionConfig
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import Verifier

    config = PipelineConfig(decision=DecisionConfig(confidence="learned"))
    with pytest.raises(ArtifactError, match="emit model"):
        Verifier(None, None, lambda texts: np.zeros((len(texts), 384), np.float32), None, None, config)


def test_missing_emit_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="cannot read the emit model"):
        EmitModel.load(tmp_path / "emit.json")
