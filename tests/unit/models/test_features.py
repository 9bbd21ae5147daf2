"""Rationale features on a hand-made abstract: every column is checked against a value worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sciverify.models.features import (
    COMPACT_FEATURES,
    AbstractInput,
    TermStats,
    compact_features,
    embedding_features,
    tokenize,
)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs + (0.0,) * (4 - len(xs)), dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture()
def abstract() -> AbstractInput:
    return AbstractInput(
        sentences=("Background about mice.", "ALDH1 predicts poor prognosis in 25 patients.", "Methods."),
        sentence_emb=np.stack([_unit(0, 1), _unit(1, 0), _unit(1, 1)]).astype(np.float16),
        title_emb=_unit(1, 1),
        structured=False,
    )


def test_tokenize_drops_stop_words_and_folds_plurals() -> None:
    assert tokenize("The cells of the Tumors are ALDH1-positive") == ["cell", "tumor", "aldh1", "positive"]


def test_term_stats_idf() -> None:
    stats = TermStats.from_texts(["aldh1 breast", "breast cancer", "cancer"])
    assert stats.df == {"aldh1": 1, "breast": 2, "cancer": 2}
    assert stats.idf("aldh1") == pytest.approx(math.log(4 / 1.5))
    assert stats.idf("never-seen") == pytest.approx(math.log(4 / 0.5))


def test_compact_features_by_hand(abstract: AbstractInput) -> None:
    stats = TermStats({"aldh1": 1, "prognosis": 1, "poor": 1, "25": 1, "patient": 1}, 10)
    claim = "ALDH1 predicts poor prognosis in 25 patients"
    f = compact_features(claim, _unit(1, 0), abstract, stats)
    col = {name: f[:, i] for i, name in enumerate(COMPACT_FEATURES)}
    assert f.shape == (3, len(COMPACT_FEATURES))
    np.testing.assert_allclose(col["cos"], [0.0, 1.0, math.sqrt(0.5)], atol=1e-3)
    np.testing.assert_array_equal(col["cos_rank"], [2, 0, 1])
    np.testing.assert_allclose(col["cos_margin_max"], [-1.0, 0.0, math.sqrt(0.5) - 1], atol=1e-3)
    # neighbour max: s0 sees s1 (1.0); s1 sees max(s0, s2) = 0.707; s2 sees s1
    np.testing.assert_allclose(col["cos_neighbour_max"], [1.0, math.sqrt(0.5), 1.0], atol=1e-3)
    np.testing.assert_allclose(col["cos_title"], math.sqrt(0.5), atol=1e-3)
    np.testing.assert_allclose(col["position"], [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(col["is_first"], [1, 0, 0])
    np.testing.assert_array_equal(col["is_last"], [0, 0, 1])
    # sentence 1 contains every claim content word -> full IDF recall; others none
    np.testing.assert_allclose(col["idf_recall"], [0.0, 1.0, 0.0], atol=1e-6)
    np.testing.assert_array_equal(col["shared_number"], [0, 1, 0])
    assert col["claim_has_number"][0] == 1
    assert col["bigram_recall"][1] == pytest.approx(1.0)
    assert col["bm25"][1] > 0 and col["bm25"][0] == 0
    np.testing.assert_array_equal(col["lex_rank"], [1, 0, 2])


def test_empty_abstract_gives_empty_matrix() -> None:
    empty = AbstractInput((), np.zeros((0, 4), np.float32), np.zeros(4, np.float32))
    assert compact_features("x", _unit(1), empty, TermStats({}, 1)).shape == (0, len(COMPACT_FEATURES))


def test_embedding_features() -> None:
    u = np.array([1.0, 2.0], np.float32)
    v = np.array([[3.0, 0.0]], np.float32)
    np.testing.assert_array_equal(embedding_features(u, v), [[3.0, 0.0, 2.0, 2.0]])
