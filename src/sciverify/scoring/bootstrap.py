"""Claim-level bootstrap: confidence intervals for one system, paired tests between two.

Following the SciFact paper (Appendix B; Dror et al., 2018; Efron and Tibshirani, 1993), a
bootstrap sample draws ``n`` claims uniformly with replacement from the ``n`` gold claims. Because
every metric is a function of column sums of the per-claim count matrix, a resample is just a
weight vector over claims: ``totals = weights @ counts`` gives all resamples in one matrix product,
and the metric formulas then run element-wise. The resampled claim indices come from
``np.random.default_rng(seed).integers(0, n, size=(n_boot, n))``, so a seed reproduces them exactly,
and :func:`paired_bootstrap` uses the same indices for both systems.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sciverify.errors import InputError
from sciverify.scoring.metrics import FAMILIES, MEASURES, metric_arrays

__all__ = [
    "BootstrapSummary",
    "IntervalStats",
    "PairedBootstrap",
    "PairedStats",
    "bootstrap",
    "bootstrap_totals",
    "paired_bootstrap_counts",
    "resample_indices",
]

_BLOCK_ELEMENTS = 4_000_000  # resampled claim draws per block: bounds memory to ~100 MB


@dataclass(frozen=True)
class IntervalStats:
    """Bootstrap distribution of one metric: mean, sample std (ddof=1), percentile interval."""

    mean: float
    std: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "std": self.std, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class BootstrapSummary:
    """Per family and measure (``stats[family][measure]``) over ``n_boot`` resamples."""

    n_boot: int
    seed: int
    level: float
    stats: dict[str, dict[str, IntervalStats]]


@dataclass(frozen=True)
class PairedStats:
    """System A minus system B on one metric.

    ``p_value`` is two-sided: twice the smaller of the fractions of resamples where the difference
    is <= 0 and >= 0, capped at 1. A value of 0 means no resample reversed the sign (p < 1/n_boot).
    """

    a: float
    b: float
    diff: float
    mean_diff: float
    low: float
    high: float
    p_value: float

    def as_dict(self) -> dict[str, float]:
        return {
            "a": self.a,
            "b": self.b,
            "diff": self.diff,
            "mean_diff": self.mean_diff,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
        }


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired comparison results, ``stats[family][measure]``."""

    n_boot: int
    seed: int
    level: float
    n_claims: int
    stats: dict[str, dict[str, PairedStats]]


def resample_indices(n: int, n_boot: int, seed: int) -> npt.NDArray[np.int64]:
    """The claim indices of every resample. Shapes: ``(n_boot, n)``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_boot, n), dtype=np.int64)


def bootstrap_totals(
    counts: npt.NDArray[np.integer], indices: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Count totals of every resample, as exact integers in float64.

    Each block of resamples becomes a weight matrix (how often each claim was drawn, via one
    ``bincount``) multiplied by the count matrix. The product runs in float32 when every possible
    total stays below 2**24 (all partial sums are then exact integers), else in float64.

    Shapes: ``counts`` ``(n, k)``, ``indices`` ``(n_boot, n)``, result ``(n_boot, k)``.
    """
    c = np.asarray(counts, dtype=np.int64)
    n_boot, n = indices.shape
    out = np.empty((n_boot, c.shape[1]), dtype=np.float64)
    if n_boot == 0 or c.size == 0:
        out[:] = 0.0
        return out
    dtype = np.float32 if int(np.abs(c).max()) * n < 2**24 else np.float64
    cf = c.astype(dtype)
    chunk = max(1, _BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n_boot, chunk):
        block = indices[start : start + chunk]
        rows = block.shape[0]
        flat = (block + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
        weights = np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(dtype)
        out[start : start + rows] = np.matmul(weights, cf)
    return out


def _check(n_boot: int, level: float, n: int) -> None:
    if n_boot < 1:
        raise InputError(f"the number of bootstrap resamples must be at least 1, got {n_boot}")
    if not 0 < level < 1:
        raise InputError(f"confidence level must be between 0 and 1, got {level}")
    if n < 1:
        raise InputError("cannot bootstrap over zero claims")


def bootstrap(
    counts: npt.NDArray[np.integer], *, n_boot: int = 10_000, seed: int = 0, level: float = 0.95
) -> BootstrapSummary:
    """Bootstrap mean, std and percentile interval of every metric.

    Args:
        counts: per-claim count matrix ``(n_claims, k)``
            (columns: :data:`~sciverify.scoring.counts.COUNT_COLUMNS`).
        n_boot: number of resamples.
        seed: seed of ``np.random.default_rng``.
        level: coverage of the percentile interval (0.95: the 2.5th and 97.5th percentiles,
            numpy's default linear interpolation).
    """
    c = np.asarray(counts)
    _check(n_boot, level, c.shape[0])
    values = metric_arrays(bootstrap_totals(c, resample_indices(c.shape[0], n_boot, seed)))
    tail = (1 - level) / 2 * 100
    stats: dict[str, dict[str, IntervalStats]] = {}
    for family in FAMILIES:
        stats[family] = {}
        for measure in MEASURES:
            v = values[family][measure]
            low, high = np.percentile(v, [tail, 100 - tail])
            std = float(v.std(ddof=1)) if n_boot > 1 else 0.0
            stats[family][measure] = IntervalStats(float(v.mean()), std, float(low), float(high))
    return BootstrapSummary(n_boot, seed, level, stats)


def paired_bootstrap_counts(
    counts_a: npt.NDArray[np.integer],
    counts_b: npt.NDArray[np.integer],
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedBootstrap:
    """Paired bootstrap of A - B: both count matrices must list the same claims in the same order."""
    a = np.asarray(counts_a)
    b = np.asarray(counts_b)
    if a.shape != b.shape:
        raise InputError(f"paired bootstrap needs the same claims for both systems: {a.shape} vs {b.shape}")
    _check(n_boot, level, a.shape[0])
    indices = resample_indices(a.shape[0], n_boot, seed)
    va = metric_arrays(bootstrap_totals(a, indices))
    vb = metric_arrays(bootstrap_totals(b, indices))
    oa = metric_arrays(a.sum(axis=0))
    ob = metric_arrays(b.sum(axis=0))
    tail = (1 - level) / 2 * 100
    stats: dict[str, dict[str, PairedStats]] = {}
    for family in FAMILIES:
        stats[family] = {}
        for measure in MEASURES:
            d = va[family][measure] - vb[family][measure]
            low, high = np.percentile(d, [tail, 100 - tail])
            p = min(1.0, 2 * min(float((d <= 0).mean()), float((d >= 0).mean())))
            x, y = float(oa[family][measure]), float(ob[family][measure])
            stats[family][measure] = PairedStats(x, y, x - y, float(d.mean()), float(low), float(high), p)
    return PairedBootstrap(n_boot, seed, level, int(a.shape[0]), stats)
