"""The scorer's entry points: :func:`score` for records in memory, :func:`evaluate_files` for files.

``score`` is pure: gold claims and predictions in, a :class:`ScoreReport` out (per-claim judgements,
the count matrix, micro and macro metrics). ``evaluate_files`` adds what a leaderboard needs
around it: input validation with file and line, bootstrap intervals, ranking metrics, the
confusion matrix, and the parameters needed to reproduce the run.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sciverify._version import __version__
from sciverify.data.datasets import sha256_file
from sciverify.data.records import Claim, Prediction
from sciverify.errors import DataFormatError, InputError
from sciverify.scoring.bootstrap import BootstrapSummary, bootstrap
from sciverify.scoring.counts import (
    COUNT_COLUMNS,
    CapPolicy,
    ClaimJudgement,
    Entry,
    count_matrix,
    entries_from_prediction,
    judge_all,
    parse_cap,
)
from sciverify.scoring.metrics import PRF, MacroPRF, macro_metrics, micro_metrics
from sciverify.scoring.problems import Problem
from sciverify.scoring.ranking import Confusion, RankingResult, confusion_matrix, rank_abstracts
from sciverify.scoring.validate import load_corpus_sizes, load_gold, load_predictions, raise_if_problems

__all__ = [
    "EvaluationParams",
    "EvaluationResult",
    "ScoreReport",
    "evaluate_files",
    "score",
    "score_entries",
]


@dataclass(frozen=True)
class ScoreReport:
    """Scores of one prediction set against one gold set.

    Attributes:
        aggregate: micro (leaderboard) P/R/F1 per family.
        macro: mean per-claim P/R/F1 per family over claims with gold evidence.
        per_claim: one judgement per gold claim, in gold order.
        counts: per-claim count matrix; Shapes: ``(n_claims, len(COUNT_COLUMNS))``.
        cap: the rationale cap policy used for abstract-level rationalization.
    """

    aggregate: dict[str, PRF]
    macro: dict[str, MacroPRF]
    per_claim: tuple[ClaimJudgement, ...]
    counts: npt.NDArray[np.int64]
    cap: CapPolicy

    @property
    def claim_ids(self) -> tuple[int | str, ...]:
        return tuple(j.claim_id for j in self.per_claim)

    def totals(self) -> dict[str, int]:
        """Column sums of :attr:`counts`, by column name."""
        return {name: int(v) for name, v in zip(COUNT_COLUMNS, self.counts.sum(axis=0), strict=True)}


def score_entries(
    golds: Sequence[Claim], entries: Mapping[str, Sequence[Entry]], cap: CapPolicy | str = "leaderboard"
) -> ScoreReport:
    """Score entries keyed by ``str(claim id)``; gold claims without a key predict nothing."""
    policy = parse_cap(cap)
    judgements = judge_all(golds, entries, policy)
    counts = count_matrix(judgements)
    return ScoreReport(micro_metrics(counts), macro_metrics(counts), judgements, counts, policy)


def score(
    golds: Sequence[Claim], preds: Sequence[Prediction], *, cap: CapPolicy | str = "leaderboard"
) -> ScoreReport:
    """Score valid prediction records against gold claims, joined by claim id.

    Args:
        golds: gold claims; every one is scored (a claim without a prediction predicts nothing).
        preds: at most one prediction per gold claim.
        cap: ``"leaderboard"`` (max(3, smallest gold set)) or a fixed integer such as 3.

    Raises:
        InputError: a prediction for an unknown claim, or two predictions for one claim.
    """
    gold_keys = {str(g.id) for g in golds}
    if len(gold_keys) != len(golds):
        raise InputError("gold claims have duplicate ids")
    entries: dict[str, tuple[Entry, ...]] = {}
    for pred in preds:
        key = str(pred.id)
        if key not in gold_keys:
            raise InputError(f"prediction for claim {pred.id!r}, which is not among the gold claims")
        if key in entries:
            raise InputError(f"two predictions for claim {pred.id!r}")
        entries[key] = entries_from_prediction(pred)
    return score_entries(golds, entries, cap)


@dataclass(frozen=True)
class EvaluationParams:
    """How a run was made: enough to reproduce it and to check the inputs did not change."""

    gold_path: str
    pred_path: str
    corpus_path: str | None
    sha256: dict[str, str]
    cap: CapPolicy
    strict: bool
    n_boot: int
    seed: int
    invocation: str
    versions: dict[str, str]
    started_at: str

    def as_dict(self) -> dict[str, object]:
        return {
            "gold": self.gold_path,
            "predictions": self.pred_path,
            "corpus": self.corpus_path,
            "sha256": self.sha256,
            "cap": self.cap,
            "strict": self.strict,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "invocation": self.invocation,
            "versions": self.versions,
            "started_at": self.started_at,
        }


@dataclass(frozen=True)
class EvaluationResult:
    """Everything one evaluation produced; :func:`~sciverify.scoring.files.write_outputs` writes it."""

    report: ScoreReport
    problems: tuple[Problem, ...]
    bootstrap: BootstrapSummary | None
    ranking: RankingResult
    confusion: Confusion
    params: EvaluationParams
    n_prediction_records: int = 0
    prediction_lines: dict[str, int] = field(default_factory=dict)


def _versions() -> dict[str, str]:
    return {"sciverify": __version__, "python": platform.python_version(), "numpy": np.__version__}


def evaluate_files(
    gold_path: str | Path,
    pred_path: str | Path,
    corpus_path: str | Path | None = None,
    *,
    strict: bool = False,
    cap: CapPolicy | str = "leaderboard",
    n_boot: int = 10_000,
    seed: int = 0,
    invocation: str | None = None,
) -> EvaluationResult:
    """Validate and score a prediction file against a gold file.

    Args:
        gold_path: gold claims JSONL (problems here are always fatal).
        pred_path: leaderboard-format predictions JSONL.
        corpus_path: optional corpus JSONL; enables doc-id and sentence-range checks.
        strict: raise on the first prediction problems instead of scoring what is valid.
        cap: rationale cap policy (``"leaderboard"`` or an integer).
        n_boot: bootstrap resamples; 0 skips the bootstrap.
        seed: bootstrap seed.
        invocation: the command line to record in ``params`` (defaults to ``sys.argv``).

    Raises:
        DataFormatError: unreadable or invalid gold/corpus, a predictions file without records, or
            (strict) any prediction problem.
        InputError: invalid ``cap`` or ``n_boot``.
    """
    try:
        policy = parse_cap(cap)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if n_boot < 0:
        raise InputError(f"--bootstrap must be >= 0, got {n_boot}")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    corpus = load_corpus_sizes(corpus_path) if corpus_path is not None else None
    golds = load_gold(gold_path, corpus)
    preds = load_predictions(pred_path, golds, corpus)
    if preds.n_records == 0:  # all zeros from a run that wrote nothing is a failure, not a score
        raise DataFormatError("no prediction records in file (is it empty?); nothing to score", pred_path)
    if strict:
        raise_if_problems(preds.problems, "the predictions (strict mode)")
    report = score_entries(golds, preds.entries, policy)
    boot = bootstrap(report.counts, n_boot=n_boot, seed=seed) if n_boot > 0 else None
    files = {"gold": gold_path, "predictions": pred_path}
    if corpus_path is not None:
        files["corpus"] = corpus_path
    params = EvaluationParams(
        gold_path=str(gold_path),
        pred_path=str(pred_path),
        corpus_path=None if corpus_path is None else str(corpus_path),
        sha256={name: sha256_file(Path(p)) for name, p in files.items()},
        cap=policy,
        strict=strict,
        n_boot=n_boot,
        seed=seed,
        invocation=invocation if invocation is not None else " ".join(sys.argv),
        versions=_versions(),
        started_at=started,
    )
    return EvaluationResult(
        report,
        preds.problems,
        boot,
        rank_abstracts(report.per_claim),
        confusion_matrix(report.per_claim),
        params,
        preds.n_records,
        dict(preds.lines),
    )
