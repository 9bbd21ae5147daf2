"""Exported heads must reproduce scikit-learn exactly, and a saved selector must load back identically."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciverify.errors import ArtifactError
from sciverify.models.features import COMPACT_FEATURES, AbstractInput, TermStats
from sciverify.models.rationale import MlpHead, RationaleConfig, TrainedSelector, TreeEnsemble


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 5)).astype(np.float32)
    x[::17, 2] = np.nan  # missing values follow sklearn's learned direction
    y = ((x[:, 0] + np.nan_to_num(x[:, 2]) * 0.5 + rng.normal(scale=0.3, size=400)) > 0).astype(int)
    return x, y


def test_tree_export_matches_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y = data
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(x, y)
    trees = TreeEnsemble.from_sklearn(model)
    np.testing.assert_allclose(trees.raw(x), model.decision_function(x), rtol=1e-5, atol=1e-6)
    again = TreeEnsemble.from_arrays(trees.arrays("t_"), "t_")
    np.testing.assert_array_equal(again.raw(x), trees.raw(x))


def test_mlp_export_matches_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    from sklearn.neural_network import MLPClassifier

    x, y = data
    x = np.nan_to_num(x)
    mean, scale = x.mean(0), x.std(0)
    model = MLPClassifier(hidden_layer_sizes=(8,), solver="lbfgs", max_iter=300, random_state=0).fit(
        (x - mean) / scale, y
    )
    head = MlpHead.from_sklearn(model, mean, scale)
    expected = model.predict_proba((x - mean) / scale)[:, 1]
    np.testing.assert_allclose(1 / (1 + np.exp(-head.raw(x))), expected, rtol=1e-4, atol=1e-5)


def test_selector_save_load_round_trip(tmp_path: Path) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(1)
    f = len(COMPACT_FEATURES)
    x = rng.normal(size=(200, f)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int)
    trees = TreeEnsemble.from_sklearn(HistGradientBoostingClassifier(max_iter=5).fit(x, y))
    selector = TrainedSelector(RationaleConfig("gbt"), TermStats({"aldh1": 2}, 10), trees)
    selector.save(tmp_path)
    loaded = TrainedSelector.load(tmp_path)
    emb = rng.normal(size=(3, 4)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    abstract = AbstractInput(("ALDH1 rises.", "Other.", "More."), emb, emb[0])
    a = selector.score("ALDH1 rises", emb[0], [abstract])[0]
    b = loaded.score("ALDH1 rises", emb[0], [abstract])[0]
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3,) and ((a >= 0) & (a <= 1)).all()


def test_load_refuses_other_versions_and_missing_dirs(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not found"):
        TrainedSelector.load(tmp_path / "nope")
    (tmp_path / "config.json").write_text(json.dumps({"kind": "rationale-selector", "config_version": 99}))
    with pytest.raises(ArtifactError, match="config_version 99"):
        TrainedSelector.load(tmp_path)


def _tiny_head(seed: int, n_sentences: int) -> tuple[TrainedSelector, np.ndarray]:
    """A small fitted tree selector and unit sentence vectors to score with it."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(200, len(COMPACT_FEATURES))).astype(np.float32)
    trees = TreeEnsemble.from_sklearn(HistGradientBoostingClassifier(max_iter=5).fit(x, x[:, 0] > 0))
    emb = rng.normal(size=(n_sentences, 4)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    return TrainedSelector(RationaleConfig("gbt"), TermStats({"aldh1": 2}, 10), trees), emb


def test_a_selector_that_blended_a_sentence_scorer_is_refused_with_a_clear_line(tmp_path: Path) -> None:
    head, _ = _tiny_head(2, 3)
    head.save(tmp_path)
    assert "scorer_weight" not in json.loads((tmp_path / "config.json").read_text())
    assert TrainedSelector.load(tmp_path).config == head.config  # no weight recorded: the head alone
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "scorer_weight": 0.0}))
    TrainedSelector.load(tmp_path)  # the shipped selector's file: weight 0, still read
    (tmp_path / "config.json").write_text(json.dumps({**config, "scorer_weight": 0.3}))
    with pytest.raises(ArtifactError, match="no longer reads"):
        TrainedSelector.load(tmp_path)
