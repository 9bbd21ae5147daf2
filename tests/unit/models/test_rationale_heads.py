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


class _LengthScorer:
    """A stand-in cross-encoder: longer sentences score higher (the blend arithmetic is what is tested)."""

    def score(self, claim: str, sentences: list[str]) -> np.ndarray:
        lengths = np.asarray([len(s) for s in sentences], dtype=np.float32)
        return lengths / lengths.max()


def test_blend_with_a_scorer_is_the_weighted_mean_and_weight_zero_is_the_head(tmp_path: Path) -> None:
    head, emb = _tiny_head(2, 3)
    abstract = AbstractInput(("ALDH1 rises.", "Short.", "A much longer third sentence."), emb, emb[0])
    alone = head.score("ALDH1 rises", emb[0], [abstract])[0]
    blended = head.with_scorer(_LengthScorer(), 0.25).score("ALDH1 rises", emb[0], [abstract])[0]  # type: ignore[arg-type]
    expected = 0.75 * alone + 0.25 * _LengthScorer().score("", list(abstract.sentences))
    np.testing.assert_allclose(blended, expected, rtol=1e-6)
    np.testing.assert_array_equal(
        head.with_scorer(_LengthScorer(), 0.0).score("x", emb[0], [abstract])[0],
        head.score("x", emb[0], [abstract])[0],
    )  # type: ignore[arg-type]
    with pytest.raises(ArtifactError, match="scorer"):
        head.with_scorer(None, 0.5)
    # a saved blend records its weight and, with no scorer/ beside it, refuses to load
    head.with_scorer(_LengthScorer(), 0.5).save(tmp_path)  # type: ignore[arg-type]
    assert json.loads((tmp_path / "config.json").read_text())["scorer_weight"] == 0.5
    with pytest.raises(ArtifactError, match="sentence scorer directory not found"):
        TrainedSelector.load(tmp_path)


def test_selection_f1_and_blend_weight_choice_by_hand() -> None:
    from sciverify.training.rationale_train import GoldAbstractRows, choose_scorer_weight, selection_f1

    gold = [[{0}], [{1, 2}]]
    head = [np.array([0.9, 0.1, 0.0], np.float32), np.array([0.8, 0.1, 0.1], np.float32)]
    scorer = [np.array([0.9, 0.0, 0.0], np.float32), np.array([0.0, 0.9, 0.8], np.float32)]
    # head, top 2 above 0.05: abstracts 1 and 2 both list {0, 1}, one right each: P 2/4, R 2/3
    assert selection_f1(gold, head, 2, 0.05) == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # scorer, top 2 above 0.5: {0} and {1, 2}: every listed sentence right, every gold one listed
    assert selection_f1(gold, scorer, 2, 0.5) == pytest.approx(1.0)
    # nothing above the threshold still lists the best sentence
    assert selection_f1([[{0}]], [np.array([0.1, 0.0], np.float32)], 2, 0.9) == pytest.approx(1.0)
    weight, table = choose_scorer_weight(GoldAbstractRows(gold, head, scorer), weights=(0.0, 0.5, 1.0))
    assert table["1.00"] == pytest.approx(1.0) and table["0.00"] < 1.0
    assert weight == 0.5  # 0.5 already reaches F1 1.0 (k 2, t 0.2); ties go to the lighter weight
    assert table[f"{weight:.2f}"] == max(table.values())


def test_end_to_end_measurement_overrides_the_gold_abstract_weight_only_by_a_clear_margin() -> None:
    from sciverify.errors import ConfigError
    from sciverify.training.rationale_train import settle_scorer_weight

    # the shipped scorer (docs/experiments-rationale.md section 7): 0.4 ties 0.3, so 0.3 stays
    shipped = {0.2: 0.4590, 0.3: 0.4698, 0.4: 0.4699, 0.5: 0.4415}
    assert settle_scorer_weight(0.3, shipped) == 0.3
    # scorer seed 14 (section 12): gold abstracts chose 0.5, two points below 0.3 end to end
    assert settle_scorer_weight(0.5, {0.3: 0.4707, 0.5: 0.4503}) == 0.3
    # among weights that beat the proxy, the best wins; on a tie the lighter one
    assert settle_scorer_weight(0.5, {0.2: 0.47, 0.4: 0.47, 0.5: 0.44}) == 0.2
    assert settle_scorer_weight(0.3, shipped, margin=0.0) == 0.4
    with pytest.raises(ConfigError, match="not measured end to end"):
        settle_scorer_weight(0.6, shipped)


class _CountingScorer(_LengthScorer):
    """Records which sentences it was asked to read."""

    def __init__(self) -> None:
        self.read: list[list[str]] = []

    def score(self, claim: str, sentences: list[str]) -> np.ndarray:
        self.read.append(list(sentences))
        return np.ones(len(sentences), dtype=np.float32)


def test_the_scorer_reads_only_the_heads_top_sentences() -> None:
    head, emb = _tiny_head(3, 4)
    sentences = ("ALDH1 rises.", "Short.", "A longer third one.", "Fourth.")
    abstract = AbstractInput(sentences, emb, emb[0])
    alone = head.score("ALDH1 rises", emb[0], [abstract])[0]
    scorer = _CountingScorer()
    blended = head.with_scorer(scorer, 0.5, top=2).score("ALDH1 rises", emb[0], [abstract])[0]  # type: ignore[arg-type]
    best_two = sorted(np.argsort(-alone, kind="stable")[:2].tolist())
    assert scorer.read == [[sentences[i] for i in best_two]]  # in abstract order, one call
    expected = 0.5 * alone
    expected[best_two] += 0.5
    np.testing.assert_allclose(blended, expected, rtol=1e-6)
    with pytest.raises(Exception, match="scorer_top"):
        head.with_scorer(scorer, 0.5, top=-1)  # type: ignore[arg-type]
