"""The learned emit model: is this retrieved abstract evidence for the claim at all?

The hand-made confidence, (1 - P(NEI)) x best rationale score ^ power, ranks candidate abstracts poorly
(ROC AUC 0.87 on the validation split): it ignores how the candidate compares with the claim's other
candidates and what retrieval thought of it. A logistic regression over a dozen such signals reaches
0.95 AUC out of fold (docs/experiments-rationale.md §4). It is fitted on out-of-fold outputs of the
cross-fitted protocol (:mod:`sciverify.training.cv`), scores from models that never saw the claim (their
scores on their own training claims are overconfident), with grouped cross-validation to report it
honestly; inference is a dot product.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError

__all__ = ["EMIT_FEATURES", "EMIT_FILE", "READER_EMIT_FEATURES", "EmitModel", "emit_features", "fit_emit"]

EMIT_FILE = "emit.json"

#: One row per candidate abstract; "claim-relative" features compare it with the claim's other candidates.
EMIT_FEATURES = (
    "rank",
    "retrieval_score",
    "retrieval_gap",  # score minus the claim's best retrieval score
    "rationale_1",  # best, second and third sentence scores
    "rationale_2",
    "rationale_3",
    "rationale_count",  # sentences at or above the sentence threshold
    "p_support",
    "p_contradict",
    "p_nei",
    "logit_support",  # log P(S) - log P(NEI)
    "logit_contradict",
    "rationale_gap",  # best sentence score minus the claim's best over all candidates
    "sentences",
)
#: Added when the decision reads sentences with the per-sentence reader: its P(rationale) is a direct
#: judgement of whether a sentence is evidence for this claim, which the selector's trees only approximate,
#: so it informs P(evidence) even when it is not blended into the sentence scores.
READER_EMIT_FEATURES = (
    "reader_best",  # the reader's highest P(rationale) over the sentences it read (0 with none read)
    "reader_gap",  # that minus the claim's best over all candidates
)


def emit_features(
    retrieval_scores: Sequence[float],
    sentence_scores: Sequence[npt.NDArray[np.floating]],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    sentence_threshold: float,
    reader_rationale: Sequence[npt.NDArray[np.floating] | None] | None = None,
) -> npt.NDArray[np.float64]:
    """Feature rows for one claim's candidates, in retrieval order. Shape: (candidates, len(EMIT_FEATURES)),
    plus :data:`READER_EMIT_FEATURES` at the end when ``reader_rationale`` is given.

    ``label_probs`` maps a candidate's position to its label probabilities, as the decision's
    ``label_inputs`` chose them; a candidate left unlabelled gets P = (0, 0, 1). ``reader_rationale``
    holds per candidate the reader's P(rationale) per sentence, NaN where it did not read.
    """
    base = _base_features(retrieval_scores, sentence_scores, label_probs, sentence_threshold)
    if reader_rationale is None:
        return base
    best = np.zeros(len(base), dtype=np.float64)
    for i, r in enumerate(reader_rationale[: len(base)]):
        read = np.asarray(r if r is not None else (), dtype=np.float64)
        read = read[~np.isnan(read)]
        best[i] = float(read.max()) if len(read) else 0.0
    gap = best - best.max() if len(best) else best
    return np.column_stack([base, best, gap])


def _base_features(
    retrieval_scores: Sequence[float],
    sentence_scores: Sequence[npt.NDArray[np.floating]],
    label_probs: Mapping[int, npt.NDArray[np.floating]],
    sentence_threshold: float,
) -> npt.NDArray[np.float64]:
    n = len(retrieval_scores)
    out = np.zeros((n, len(EMIT_FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    top_retrieval = max(float(s) for s in retrieval_scores)
    best = [float(np.max(s)) if len(s) else 0.0 for s in sentence_scores]
    top_best = max(best)
    for i in range(n):
        s = np.sort(np.asarray(sentence_scores[i], dtype=np.float64))[::-1]
        s3 = np.concatenate([s[:3], np.zeros(max(0, 3 - len(s)))])
        p = label_probs.get(i)
        p3 = np.asarray(p, dtype=np.float64)[:3] if p is not None else np.array([0.0, 0.0, 1.0])
        eps = 1e-6
        out[i] = [
            i,
            float(retrieval_scores[i]),
            float(retrieval_scores[i]) - top_retrieval,
            s3[0],
            s3[1],
            s3[2],
            float((s >= sentence_threshold).sum()),
            p3[0],
            p3[1],
            p3[2],
            np.log(p3[0] + eps) - np.log(p3[2] + eps),
            np.log(p3[1] + eps) - np.log(p3[2] + eps),
            best[i] - top_best,
            float(len(s)),
        ]
    return out


@dataclass(frozen=True)
class EmitModel:
    """Standardised logistic regression: P(evidence) = sigmoid(((x - mean) / scale) . coef + intercept)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    features: tuple[str, ...] = EMIT_FEATURES

    def __post_init__(self) -> None:
        n = len(self.features)
        if not len(self.mean) == len(self.scale) == len(self.coef) == n:
            raise ArtifactError(f"emit model: {n} features but mean/scale/coef of other lengths")

    @property
    def hears_reader(self) -> bool:
        """Whether it was fitted with :data:`READER_EMIT_FEATURES` (a decision that reads with the reader)."""
        return self.features[len(EMIT_FEATURES) :] == READER_EMIT_FEATURES

    def predict(self, x: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
        """P(evidence) per row of ``x``."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ArtifactError(f"emit model expects {len(self.features)} features, got shape {x.shape}")
        z = ((x - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        with np.errstate(over="ignore"):  # exp(-z) = inf for a very negative z: the limit, P = 0, is right
            p: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-z))
        return p

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "logistic",
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
        }

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> EmitModel:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            model = cls(
                mean=tuple(data["mean"]),
                scale=tuple(data["scale"]),
                coef=tuple(data["coef"]),
                intercept=float(data["intercept"]),
                features=tuple(data["features"]),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ArtifactError(f"cannot read the emit model {path}: {exc}") from None
        if model.features not in (EMIT_FEATURES, EMIT_FEATURES + READER_EMIT_FEATURES):
            raise ArtifactError(f"{path} was fitted on other features than this version computes; retrain it")
        return model


def fit_emit(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.integer],
    groups: npt.NDArray[np.integer],
    *,
    c: float = 0.1,
    folds: int = 5,
) -> tuple[EmitModel, npt.NDArray[np.float64]]:
    """The model fitted on all rows, and out-of-fold probabilities (folds = claim index mod ``folds``).

    Rows of one claim always share a fold, so the out-of-fold numbers never see the claim they score.
    """
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    width = x.shape[1] if x.ndim == 2 else len(EMIT_FEATURES)
    names = EMIT_FEATURES if width == len(EMIT_FEATURES) else EMIT_FEATURES + READER_EMIT_FEATURES
    if width != len(names):
        raise ArtifactError(f"emit rows have {width} features; expected {len(EMIT_FEATURES)} or {len(names)}")

    def fit(rows: npt.NDArray[np.bool_]) -> EmitModel:
        mean = x[rows].mean(0)
        scale = x[rows].std(0)
        scale[scale < 1e-9] = 1.0
        if len(set(y[rows].tolist())) < 2:
            # one class only (tiny runs): a constant model at the base rate
            rate = float(np.clip(y[rows].mean() if rows.any() else 0.5, 1e-3, 1 - 1e-3))
            zero = tuple(0.0 for _ in range(width))
            return EmitModel(tuple(mean), tuple(scale), zero, float(np.log(rate / (1 - rate))), names)
        lr = LogisticRegression(C=c, max_iter=2000).fit((x[rows] - mean) / scale, y[rows])
        coef = tuple(float(v) for v in lr.coef_[0])
        return EmitModel(tuple(mean), tuple(scale), coef, float(lr.intercept_[0]), names)

    fold = np.asarray(groups) % folds
    oof = np.zeros(len(y), dtype=np.float64)
    for f in range(folds):
        test = fold == f
        if test.any():
            oof[test] = fit(~test).predict(x[test]) if (~test).any() else 0.5
    return fit(np.ones(len(y), dtype=bool)), oof
