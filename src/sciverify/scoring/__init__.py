"""Score SciFact predictions exactly like the leaderboard, with intervals, comparisons and reports.

Imports only numpy and sciverify's data layer (never torch), so a leaderboard server can use it.
"""

from __future__ import annotations

from sciverify.scoring.bootstrap import (
    BootstrapSummary,
    IntervalStats,
    PairedBootstrap,
    PairedStats,
    bootstrap,
    bootstrap_totals,
    paired_bootstrap_counts,
    resample_indices,
)
from sciverify.scoring.compare import ComparisonResult, compare_files, comparison_dict, paired_bootstrap
from sciverify.scoring.counts import (
    COUNT_COLUMNS,
    AbstractJudgement,
    CapPolicy,
    ClaimJudgement,
    Entry,
    SentenceVerdict,
    count_matrix,
    judge_claim,
    parse_cap,
)
from sciverify.scoring.files import OUTPUT_FILES, write_outputs
from sciverify.scoring.html import render_html
from sciverify.scoring.metrics import FAMILIES, MEASURES, PRF, MacroPRF, macro_metrics, micro_metrics, prf
from sciverify.scoring.oracle import oracle_predictions
from sciverify.scoring.outputs import metrics_dict, print_summary
from sciverify.scoring.problems import Problem
from sciverify.scoring.ranking import Confusion, RankingResult, confusion_matrix, rank_abstracts
from sciverify.scoring.report import EvaluationParams, EvaluationResult, ScoreReport, evaluate_files, score
from sciverify.scoring.validate import PredictionFile, load_corpus_sizes, load_gold, load_predictions

__all__ = [
    "COUNT_COLUMNS",
    "FAMILIES",
    "MEASURES",
    "OUTPUT_FILES",
    "PRF",
    "AbstractJudgement",
    "BootstrapSummary",
    "CapPolicy",
    "ClaimJudgement",
    "ComparisonResult",
    "Confusion",
    "Entry",
    "EvaluationParams",
    "EvaluationResult",
    "IntervalStats",
    "MacroPRF",
    "PairedBootstrap",
    "PairedStats",
    "PredictionFile",
    "Problem",
    "RankingResult",
    "ScoreReport",
    "SentenceVerdict",
    "bootstrap",
    "bootstrap_totals",
    "compare_files",
    "comparison_dict",
    "confusion_matrix",
    "count_matrix",
    "evaluate_files",
    "judge_claim",
    "load_corpus_sizes",
    "load_gold",
    "load_predictions",
    "macro_metrics",
    "metrics_dict",
    "micro_metrics",
    "oracle_predictions",
    "paired_bootstrap",
    "paired_bootstrap_counts",
    "parse_cap",
    "prf",
    "print_summary",
    "rank_abstracts",
    "render_html",
    "resample_indices",
    "score",
    "write_outputs",
]
