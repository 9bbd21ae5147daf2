"""The second calibrated number: P(the label is right | this abstract is evidence).

The emit model (:mod:`sciverify.models.emit`) answers "is this abstract evidence for the claim at all?".
A reader also needs to know how far to trust the *direction* it shows (SUPPORT or CONTRADICT), and
the label model's own softmax is not that: it is overconfident on SciFact (polarity is its main error,
docs/cross-validation.md). So a small logistic regression maps what the label model said about a
candidate to the probability that its SUPPORT/CONTRADICT call matches the gold label, fitted only on
candidates that are gold evidence and only on out-of-fold label probabilities (each claim's
probabilities come from a label model that never saw the claim), so the number means what it says on
unseen claims. Inference is three features and a dot product.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.errors import ArtifactError

__all__ = [
    "LABEL_CALIBRATION_FILE",
    "LABEL_CALIBRATION_FEATURES",
    "LabelCalibrator",
    "fit_label_calibrator",
    "label_calibration_features",
]

LABEL_CALIBRATION_FILE = "label_calibration.json"

#: Per candidate, from the label model's (P(SUPPORT), P(CONTRADICT), P(NEI)) as it read the candidate.
LABEL_CALIBRATION_FEATURES = (
    "direction_share",  # max(P(S), P(C)) / (P(S) + P(C)): how one-sided the verdict is
    "log_margin",  # |log P(S) - log P(C)|
    "p_nei",
)

_EPS = 1e-6


def label_calibration_features(probs: Sequence[npt.ArrayLike]) -> npt.NDArray[np.float64]:
    """Feature rows for label probabilities in SUPPORT, CONTRADICT, NEI order. Shape: (len(probs), 3)."""
    out = np.zeros((len(probs), len(LABEL_CALIBRATION_FEATURES)), dtype=np.float64)
    for n, p in enumerate(probs):
        s, c, nei = (float(x) for x in np.asarray(p, dtype=np.float64)[:3])
        out[n] = [
            max(s, c) / max(s + c, _EPS),
            abs(np.log(s + _EPS) - np.log(c + _EPS)),
            nei,
        ]
    return out


@dataclass(frozen=True)
class LabelCalibrator:
    """Standardised logistic regression over :data:`LABEL_CALIBRATION_FEATURES`.

    ``fitted_on`` records what the fit saw (rows, claims, source run), so the shipped file says where
    its numbers come from.
    """

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    features: tuple[str, ...] = LABEL_CALIBRATION_FEATURES
    fitted_on: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        n = len(self.features)
        if not len(self.mean) == len(self.scale) == len(self.coef) == n:
            raise ArtifactError(f"label calibrator: {n} features but mean/scale/coef of other lengths")

    def predict_features(self, x: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
        """P(label right | evidence) per feature row."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ArtifactError(f"label calibrator expects {len(self.features)} features, got {x.shape}")
        z = ((x - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        with np.errstate(over="ignore"):  # exp(-z) = inf for a very negative z: the limit, P = 0, is right
            out: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-z))
        return out

    def predict(self, probs: Sequence[npt.ArrayLike]) -> npt.NDArray[np.float64]:
        """P(label right | evidence) for label probabilities (SUPPORT, CONTRADICT, NEI), one per row."""
        if len(probs) == 0:
            return np.zeros(0, dtype=np.float64)
        return self.predict_features(label_calibration_features(probs))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "logistic",
            "target": "P(the SUPPORT/CONTRADICT label is right | the abstract is gold evidence)",
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "fitted_on": self.fitted_on or {},
        }

    def save(self, path: Path) -> None:
        """Write the JSON atomically (a half-written calibrator must never be loaded)."""
        from sciverify.data.io import write_text_atomic

        write_text_atomic(path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path) -> LabelCalibrator:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            model = cls(
                mean=tuple(float(v) for v in data["mean"]),
                scale=tuple(float(v) for v in data["scale"]),
                coef=tuple(float(v) for v in data["coef"]),
                intercept=float(data["intercept"]),
                features=tuple(data["features"]),
                fitted_on=dict(data.get("fitted_on") or {}),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ArtifactError(f"cannot read the label calibrator {path}: {exc}") from None
        if model.features != LABEL_CALIBRATION_FEATURES:
            raise ArtifactError(f"{path} was fitted on other features than this version computes; refit it")
        return model


def fit_label_calibrator(
    probs: Sequence[npt.ArrayLike],
    correct: Sequence[int],
    groups: Sequence[int],
    *,
    c: float = 1.0,
    fitted_on: dict[str, Any] | None = None,
) -> tuple[LabelCalibrator, npt.NDArray[np.float64]]:
    """The calibrator fitted on every row, and out-of-fold probabilities (one fold per distinct group).

    Args:
        probs: label probabilities (SUPPORT, CONTRADICT, NEI) of gold evidence candidates, as the label
            model read them (out of fold).
        correct: 1 where the likelier of SUPPORT/CONTRADICT is the gold label.
        groups: the claim's fold; rows of one fold are predicted by a model fitted on the others.
        c: inverse L2 strength of the logistic regression.
        fitted_on: provenance stored in the file.
    """
    from sklearn.linear_model import LogisticRegression

    x = label_calibration_features(probs)
    y = np.asarray(correct, dtype=np.int64)
    g = np.asarray(groups)
    if not (len(x) == len(y) == len(g)):
        raise ValueError("probs, correct and groups must have the same length")

    def fit(rows: npt.NDArray[np.bool_]) -> LabelCalibrator:
        mean = x[rows].mean(0) if rows.any() else np.zeros(x.shape[1])
        scale = x[rows].std(0) if rows.any() else np.ones(x.shape[1])
        scale[scale < 1e-9] = 1.0
        zero = tuple(0.0 for _ in LABEL_CALIBRATION_FEATURES)
        if len(set(y[rows].tolist())) < 2:  # one class only (tiny runs): the base rate
            rate = float(np.clip(y[rows].mean() if rows.any() else 0.5, 1e-3, 1 - 1e-3))
            return LabelCalibrator(tuple(mean), tuple(scale), zero, float(np.log(rate / (1 - rate))))
        lr = LogisticRegression(C=c, max_iter=2000).fit((x[rows] - mean) / scale, y[rows])
        coef = tuple(float(v) for v in lr.coef_[0])
        return LabelCalibrator(tuple(mean), tuple(scale), coef, float(lr.intercept_[0]))

    oof = np.full(len(y), 0.5, dtype=np.float64)
    for fold in sorted(set(g.tolist())):
        test = g == fold
        if (~test).any():
            oof[test] = fit(~test).predict_features(x[test])
    final = fit(np.ones(len(y), dtype=bool))
    return LabelCalibrator(final.mean, final.scale, final.coef, final.intercept, fitted_on=fitted_on), oof
