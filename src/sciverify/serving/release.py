"""What the public may learn about a submission scored against hidden gold: a Ladder-style release rule.

A leaderboard that shows exact scores for every upload is an oracle for its test labels: two uploads
that differ in one claim's label differ in score, so the sign of the difference is that claim's gold
label. Following the Ladder mechanism (Blum and Hardt, "The Ladder: A Reliable Leaderboard for Machine
Learning Competitions", 2015), the score shown for a submitter changes only when a new upload beats the
submitter's best *released* ranking F1 by at least ``margin``, and every released figure is rounded to a
grid. A probe that moves the score by less than the margin therefore changes nothing anyone can see.

Two guards make the rule hold against the probes that read one claim (:func:`guarded`):

* the margin is raised above ``grid`` plus the most that changing one claim's predictions can add to
  the ranking F1 (:func:`one_claim_swing`). A team's released figure is its best exact score rounded
  down, so any variant of its released upload that differs in one claim stays below the bar: two such
  variants (say SUPPORT and CONTRADICT for the same claim) leave every public view the same;
* the first release needs a ranking F1 of at least ``floor``, raised above what a submission
  predicting one claim perfectly and nothing else can reach (:func:`one_claim_ceiling`), so a fresh
  team cannot read a claim out with a one-claim probe either.

Both bounds depend on how many rationale sentences the gold has, so on a small gold the margin is
coarse: that is the price of a small test set, not a tuning choice.

Everything here is a pure function of numbers; the leaderboard stores the released figures per row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sciverify.scoring.metrics import FAMILIES, family_columns, prf

__all__ = ["ReleaseRule", "guarded", "ladder_step", "one_claim_ceiling", "one_claim_swing", "round_to_grid"]

Released = dict[str, float]


@dataclass(frozen=True)
class ReleaseRule:
    """Margin, grid and floor of the release rule (settings ``release_margin``, ``_grid``, ``_floor``)."""

    margin: float
    grid: float
    floor: float
    rank_by: str = "sentence_label"


def round_to_grid(value: float, grid: float) -> float:
    """``value`` rounded down to a multiple of ``grid`` (down, so a released figure never overstates)."""
    steps = math.floor(value / grid + 1e-9)
    decimals = max(0, -math.floor(math.log10(grid))) + 1
    return round(steps * grid, decimals)


def ladder_step(
    best: Mapping[str, float] | None, f1: Mapping[str, float], rule: ReleaseRule
) -> Released | None:
    """The submitter's released figures after one more scored upload.

    Args:
        best: the released figures before this upload (family -> rounded F1), or None if none yet.
        f1: this upload's exact F1 per family.
        rule: margin, grid and floor.

    Returns:
        New rounded figures when the upload's ranking F1 reaches the floor (first release) or beats the
        released ranking F1 by the margin; otherwise ``best`` unchanged.
    """
    score = f1[rule.rank_by]
    threshold = rule.floor if best is None else best[rule.rank_by] + rule.margin
    if score + 1e-12 < threshold:
        return dict(best) if best is not None else None
    released = {family: round_to_grid(f1[family], rule.grid) for family in FAMILIES}
    if best is not None and released[rule.rank_by] <= best[rule.rank_by]:
        # Rounding down ate the gain: nothing visible changes, so nothing is released.
        return dict(best)
    return released


def one_claim_ceiling(oracle_counts: npt.NDArray[np.integer], family: str) -> float:
    """The highest ``family`` F1 a submission predicting one claim perfectly, and nothing else, can get.

    ``oracle_counts`` is the per-claim count matrix of a perfect submission: each row's correct and
    retrieved columns are what that claim alone contributes, and the relevant total is the whole gold's.
    """
    counts = np.asarray(oracle_counts, dtype=np.int64)
    if counts.size == 0:
        return 0.0
    c, ret, rel = family_columns(family)
    relevant = int(counts[:, rel].sum())
    return max(prf(int(row[c]), int(row[ret]), relevant).f1 for row in counts)


def one_claim_swing(oracle_counts: npt.NDArray[np.integer], family: str) -> float:
    """An upper bound on how much changing one claim's predictions can raise ``family`` F1.

    F1 is ``2 C / (retrieved + relevant)``; one claim adds at most its own gold count to ``C`` and
    nothing to ``relevant``, so the rise is at most ``2 * max_claim_correct / relevant``.
    """
    counts = np.asarray(oracle_counts, dtype=np.int64)
    if counts.size == 0:
        return 0.0
    c, _, rel = family_columns(family)
    relevant = int(counts[:, rel].sum())
    return 0.0 if relevant == 0 else 2.0 * int(counts[:, c].max()) / relevant


def guarded(rule: ReleaseRule, oracle_counts: npt.NDArray[np.integer]) -> ReleaseRule:
    """``rule`` with margin and floor raised so that no one-claim probe changes a public figure."""

    def above(value: float) -> float:
        return round((math.floor(value / rule.grid + 1e-9) + 1) * rule.grid, 6)

    swing = one_claim_swing(oracle_counts, rule.rank_by)
    ceiling = one_claim_ceiling(oracle_counts, rule.rank_by)
    return ReleaseRule(
        margin=max(rule.margin, above(rule.grid + swing)),
        grid=rule.grid,
        floor=max(rule.floor, above(ceiling)),
        rank_by=rule.rank_by,
    )
