"""Response bodies of the leaderboard API: an upload, the public board and the final ranking.

Apart from :mod:`sciverify.serving.schemas` (the verify and predict API) because they describe another
thing: scored uploads and rankings of a phase, which only the leaderboard's routes answer with.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sciverify.serving.schemas import ProblemOut, ResponseModel

__all__ = [
    "FinalEntry",
    "FinalOut",
    "LeaderboardEntry",
    "LeaderboardOut",
    "MetricOut",
    "ReleaseRuleOut",
    "SubmissionOut",
]


class MetricOut(ResponseModel):
    """Exact figures for a public gold; for a hidden gold only ``f1``, as released (rounded)."""

    f1: float
    precision: float | None = None
    recall: float | None = None
    f1_low: float | None = Field(default=None, description="Lower end of the bootstrap 95% interval of F1.")
    f1_high: float | None = None


class SubmissionOut(ResponseModel):
    id: str = Field(description="Opaque submission id (random; it does not count uploads).")
    submitter: str
    system: str
    filename: str | None = Field(default=None, description="Only for the file's owner.")
    sha256: str | None = Field(default=None, description="Only for the file's owner.")
    size: int | None = Field(default=None, description="Only for the file's owner.")
    status: Literal["scored", "invalid"]
    created_at: str
    gold: Literal["public", "hidden"] = "public"
    metrics: dict[str, MetricOut] | None = Field(
        default=None, description="Exact scores; only for a public gold."
    )
    released: dict[str, float] | None = Field(
        default=None,
        description="Hidden gold: the team's released F1 per family (rounded) as of this upload; "
        "None while nothing is released.",
    )
    problems: list[ProblemOut] | None = None
    chosen: bool | None = Field(
        default=None, description="Owner only: this upload is the team's choice for the final ranking."
    )
    url: str


class LeaderboardEntry(ResponseModel):
    rank: int = Field(description="Competition rank: entries with the same ranking F1 share it (1, 2, 2, 4).")
    submission_id: str
    submitter: str
    system: str
    created_at: str
    metrics: dict[str, MetricOut]
    p_value_vs_top: float | None = Field(
        description="Paired bootstrap p-value of the ranking F1 vs the top entry."
    )
    differs_from_top: bool | None = Field(description="p < 0.05 (None for the top entry itself).")
    url: str


class ReleaseRuleOut(ResponseModel):
    margin: float = Field(description="A team's released score changes only when beaten by this much.")
    grid: float = Field(description="Released F1s are rounded down to multiples of this.")


class LeaderboardOut(ResponseModel):
    ranked_by: str
    gold: Literal["public", "hidden"] = "public"
    n_boot: int
    release: ReleaseRuleOut | None = None
    closed: bool = Field(
        default=False, description="The operator closed the phase: see /api/leaderboard/final."
    )
    entries: list[LeaderboardEntry]


class FinalEntry(ResponseModel):
    rank: int = Field(description="The rank of the team's group (every member shares it).")
    group: int = Field(description="Rank group, 1 first: teams the paired bootstrap cannot separate.")
    submission_id: str
    submitter: str
    system: str
    created_at: str
    picked: Literal["chosen", "released", "best public"] = Field(
        description="Why this upload represents the team: its choice, else the upload its public "
        "release rests on, else its best public score."
    )
    figures: dict[str, float] = Field(
        description="The group's F1 per family on the private part: its members' median, rounded down "
        "to the grid (the same for every member)."
    )
    released: dict[str, float] | None = Field(description="The team's public figures as released then.")
    url: str


class FinalOut(ResponseModel):
    ranked_by: str
    part: Literal["private", "whole gold"]
    closed_at: str
    grid: float = Field(description="Step the group figures are rounded down to.")
    gold: str | None = Field(
        default=None,
        description="Where the gold of the ranked claims is published (JSONL); they are spent: no later "
        "phase may rank on them.",
    )
    entries: list[FinalEntry]
