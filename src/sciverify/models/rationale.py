"""The trained rationale selector: stored embeddings + cheap features -> a light head -> sentence scores.

The head is one of three small, pickle-free models, chosen on the validation split:

* ``gbt``: gradient-boosted trees (trained with scikit-learn's HistGradientBoosting, exported as flat
  node arrays and evaluated here in numpy), on the compact features only;
* ``mlp``: a small multi-layer perceptron on compact features plus ``[u*v, |u-v|]``;
* ``stack``: the trees again, with the MLP's score as one more input column.

A cross-encoder that reads the claim against each sentence is the next step (a per-sentence reader, which
fills the same per-candidate record, :class:`sciverify.pipeline.outputs.CandidateOutputs`); an earlier
blend with a sentence scorer shipped at weight 0 and is gone, so ``scorer_weight`` in an old
``config.json`` must be 0.

Scores are probabilities; *which* sentences become the rationale (threshold, top-k) is a decision
made by :mod:`sciverify.decision.rule`, so the same selector serves both metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim
from sciverify.errors import ArtifactError, ConfigError
from sciverify.models.artifacts import load_model_dir, read_json, save_model_dir
from sciverify.models.base import SELECTORS
from sciverify.models.features import (
    COMPACT_FEATURES,
    AbstractInput,
    TermStats,
    compact_features,
    embedding_features,
)

__all__ = [
    "CONFIG_VERSION",
    "MlpHead",
    "RationaleConfig",
    "TrainedSelector",
    "TreeEnsemble",
    "default_rationale_dir",
]

CONFIG_VERSION = 1
_KIND = "rationale-selector"
_HEADS = ("gbt", "mlp", "stack")
TERM_STATS = "term_stats.json"


def default_rationale_dir() -> Path:
    """Where the shipped selector lives inside the package."""
    return Path(__file__).parent / "weights" / "rationale"


@dataclass(frozen=True)
class RationaleConfig:
    """Which head the selector uses; saved in ``config.json`` next to the weights."""

    head: str = "gbt"

    def __post_init__(self) -> None:
        if self.head not in _HEADS:
            raise ConfigError(f"rationale head must be one of {_HEADS}, got {self.head!r}")


def _sigmoid(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    return (1.0 / (1.0 + np.exp(-np.clip(x, -40, 40)))).astype(np.float32)


class TreeEnsemble:
    """Additive binary trees in flat arrays; ``raw(x) = baseline + sum of leaf values``.

    Nodes of all trees are concatenated; ``roots[t]`` is tree t's first node. A row goes left when
    ``x[feature] <= threshold`` or, for a missing value, when ``missing_left`` is set (sklearn's rule).
    """

    def __init__(
        self,
        feature: npt.NDArray[np.int32],
        threshold: npt.NDArray[np.float64],
        left: npt.NDArray[np.int32],
        right: npt.NDArray[np.int32],
        value: npt.NDArray[np.float64],
        is_leaf: npt.NDArray[np.bool_],
        missing_left: npt.NDArray[np.bool_],
        roots: npt.NDArray[np.int32],
        baseline: float,
    ) -> None:
        self.feature, self.threshold, self.left, self.right = feature, threshold, left, right
        self.value, self.is_leaf, self.missing_left = value, is_leaf, missing_left
        self.roots, self.baseline = roots, float(baseline)

    @classmethod
    def from_sklearn(cls, model: Any) -> TreeEnsemble:
        """Export a fitted binary ``HistGradientBoostingClassifier`` (numeric features only)."""
        parts: dict[str, list[Any]] = {k: [] for k in ("f", "t", "l", "r", "v", "leaf", "ml")}
        roots = []
        offset = 0
        for (predictor,) in model._predictors:  # one tree per iteration for a binary task
            nodes = predictor.nodes
            roots.append(offset)
            parts["f"].append(nodes["feature_idx"].astype(np.int32))
            parts["t"].append(nodes["num_threshold"].astype(np.float64))
            parts["l"].append(nodes["left"].astype(np.int32) + offset)
            parts["r"].append(nodes["right"].astype(np.int32) + offset)
            parts["v"].append(nodes["value"].astype(np.float64))
            parts["leaf"].append(nodes["is_leaf"].astype(bool))
            parts["ml"].append(nodes["missing_go_to_left"].astype(bool))
            offset += len(nodes)
        cat = {k: np.concatenate(v) for k, v in parts.items()}
        baseline = float(np.ravel(model._baseline_prediction)[0])
        return cls(
            cat["f"],
            cat["t"],
            cat["l"],
            cat["r"],
            cat["v"],
            cat["leaf"],
            cat["ml"],
            np.asarray(roots, dtype=np.int32),
            baseline,
        )

    def raw(self, x: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
        """Shapes: ``x`` (n, n_features) -> (n,) log-odds.

        All rows walk all trees at once, one tree level per step, so the cost is a few numpy calls
        per level rather than per tree.
        """
        n = x.shape[0]
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        node = np.broadcast_to(self.roots, (n, len(self.roots))).astype(np.int64)
        rows = np.arange(n)[:, None]
        leaf = self.is_leaf[node]
        while not leaf.all():
            vals = x[rows, self.feature[node]]
            go_left = np.where(np.isnan(vals), self.missing_left[node], vals <= self.threshold[node])
            step = np.where(go_left, self.left[node], self.right[node])
            node = np.where(leaf, node, step)
            leaf = self.is_leaf[node]
        raw: npt.NDArray[np.float64] = self.baseline + self.value[node].sum(axis=1)
        return raw

    def arrays(self, prefix: str) -> dict[str, npt.NDArray[Any]]:
        return {
            f"{prefix}feature": self.feature,
            f"{prefix}threshold": self.threshold,
            f"{prefix}left": self.left,
            f"{prefix}right": self.right,
            f"{prefix}value": self.value,
            f"{prefix}is_leaf": self.is_leaf,
            f"{prefix}missing_left": self.missing_left,
            f"{prefix}roots": self.roots,
            f"{prefix}baseline": np.asarray([self.baseline]),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]], prefix: str) -> TreeEnsemble:
        a = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        return cls(
            a["feature"],
            a["threshold"],
            a["left"],
            a["right"],
            a["value"],
            a["is_leaf"].astype(bool),
            a["missing_left"].astype(bool),
            a["roots"],
            float(a["baseline"][0]),
        )


class MlpHead:
    """ReLU MLP with standardised inputs and one logit output (exported from scikit-learn's MLPClassifier)."""

    def __init__(
        self,
        mean: npt.NDArray[np.float32],
        scale: npt.NDArray[np.float32],
        weights: list[npt.NDArray[np.float32]],
        biases: list[npt.NDArray[np.float32]],
    ) -> None:
        self.mean, self.scale, self.weights, self.biases = mean, scale, weights, biases

    @classmethod
    def from_sklearn(cls, model: Any, mean: npt.NDArray[Any], scale: npt.NDArray[Any]) -> MlpHead:
        return cls(
            mean.astype(np.float32),
            scale.astype(np.float32),
            [w.astype(np.float32) for w in model.coefs_],
            [b.astype(np.float32) for b in model.intercepts_],
        )

    def raw(self, x: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
        """Shapes: ``x`` (n, n_inputs) -> (n,) log-odds."""
        h = (np.asarray(x, dtype=np.float32) - self.mean) / self.scale
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
        return h[:, 0].astype(np.float64)

    def arrays(self, prefix: str) -> dict[str, npt.NDArray[Any]]:
        out: dict[str, npt.NDArray[Any]] = {f"{prefix}mean": self.mean, f"{prefix}scale": self.scale}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            out[f"{prefix}w{i}"] = w
            out[f"{prefix}b{i}"] = b
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]], prefix: str) -> MlpHead:
        n = sum(1 for k in arrays if k.startswith(f"{prefix}w"))
        return cls(
            arrays[f"{prefix}mean"],
            arrays[f"{prefix}scale"],
            [arrays[f"{prefix}w{i}"] for i in range(n)],
            [arrays[f"{prefix}b{i}"] for i in range(n)],
        )


class TrainedSelector:
    """Scores sentences with the configured head; see the module docstring for the heads."""

    def __init__(
        self,
        config: RationaleConfig,
        stats: TermStats,
        trees: TreeEnsemble | None = None,
        mlp: MlpHead | None = None,
    ) -> None:
        needs_trees = config.head in ("gbt", "stack")
        needs_mlp = config.head in ("mlp", "stack")
        if (needs_trees and trees is None) or (needs_mlp and mlp is None):
            raise ArtifactError(f"rationale head {config.head!r} is missing its weights")
        self.config, self.stats, self.trees, self.mlp = config, stats, trees, mlp

    def features(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstract: AbstractInput
    ) -> npt.NDArray[np.float32]:
        """The compact feature matrix of one abstract (exposed for training and inspection)."""
        return compact_features(claim, claim_emb, abstract, self.stats)

    def raw_from_features(
        self,
        compact: npt.NDArray[np.float32],
        claim_emb: npt.NDArray[np.floating],
        sentence_emb: npt.NDArray[np.floating],
    ) -> npt.NDArray[np.float64]:
        """Log-odds from precomputed compact features. Shapes: compact (n, F), sentence_emb (n, 384)."""
        if self.config.head == "gbt":
            assert self.trees is not None
            return self.trees.raw(compact)
        assert self.mlp is not None
        mlp_raw = self.mlp.raw(np.concatenate([compact, embedding_features(claim_emb, sentence_emb)], axis=1))
        if self.config.head == "mlp":
            return mlp_raw
        assert self.trees is not None
        return self.trees.raw(np.concatenate([compact, mlp_raw[:, None].astype(np.float32)], axis=1))

    def score(
        self, claim: str, claim_emb: npt.NDArray[np.floating], abstracts: Sequence[AbstractInput]
    ) -> list[npt.NDArray[np.float32]]:
        """Probability that each sentence is a rationale, per abstract (all abstracts in one head call)."""
        sizes = [len(a.sentences) for a in abstracts]
        if sum(sizes) == 0:
            return [np.zeros(0, dtype=np.float32) for _ in abstracts]
        compact = np.concatenate([self.features(claim, claim_emb, a) for a in abstracts])
        emb = np.concatenate(
            [np.asarray(a.sentence_emb, dtype=np.float32).reshape(len(a.sentences), -1) for a in abstracts]
        )
        probs = _sigmoid(self.raw_from_features(compact, claim_emb, emb))
        return list(np.split(probs, np.cumsum(sizes)[:-1]))

    def save(self, out_dir: Path, extra_config: dict[str, Any] | None = None) -> None:
        """Write config.json, weights.npz and term_stats.json."""
        arrays: dict[str, npt.NDArray[Any]] = {}
        if self.trees is not None:
            arrays.update(self.trees.arrays("trees_"))
        if self.mlp is not None:
            arrays.update(self.mlp.arrays("mlp_"))
        config = {
            **asdict(self.config),
            "features": list(COMPACT_FEATURES),
            **(extra_config or {}),
        }
        save_model_dir(out_dir, _KIND, CONFIG_VERSION, config, arrays)
        import json

        (out_dir / TERM_STATS).write_text(
            json.dumps({"n_docs": self.stats.n_docs, "df": self.stats.df}, sort_keys=True), encoding="utf-8"
        )

    @classmethod
    def load(cls, model_dir: Path | None = None) -> TrainedSelector:
        """Load a selector directory (None = the shipped weights)."""
        model_dir = Path(model_dir) if model_dir is not None else default_rationale_dir()
        config, arrays = load_model_dir(model_dir, _KIND, CONFIG_VERSION)
        if config.get("features") != list(COMPACT_FEATURES):
            raise ArtifactError(f"{model_dir} was trained on a different feature set; retrain it")
        stats_json = read_json(model_dir / TERM_STATS)
        stats = TermStats(dict(stats_json["df"]), int(stats_json["n_docs"]))
        trees = TreeEnsemble.from_arrays(arrays, "trees_") if "trees_roots" in arrays else None
        mlp = MlpHead.from_arrays(arrays, "mlp_") if "mlp_mean" in arrays else None
        weight = config.get("scorer_weight", 0.0)
        if weight != 0:
            raise ArtifactError(
                f"{model_dir}/config.json blends a sentence scorer (scorer_weight {weight!r}), which this "
                "version no longer reads; retrain the selector with `sciverify train`"
            )
        return cls(RationaleConfig(head=config["head"]), stats, trees, mlp)


@SELECTORS.register("trained")
def _trained(model_dir: Path | None, gold: Sequence[Claim] | None) -> TrainedSelector:
    return TrainedSelector.load(model_dir)
