"""Compare two systems on the same gold claims with a paired bootstrap.

Both prediction files are validated and scored like :func:`~sciverify.scoring.report.evaluate_files`
does; the paired bootstrap then resamples the same claims for both systems, so the interval and
p-value describe the difference A - B rather than two independent uncertainties.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciverify.errors import InputError
from sciverify.scoring.bootstrap import PairedBootstrap, paired_bootstrap_counts
from sciverify.scoring.counts import CapPolicy
from sciverify.scoring.metrics import FAMILIES, MEASURES
from sciverify.scoring.report import EvaluationResult, ScoreReport, evaluate_files
from sciverify.wording import counted

__all__ = ["ComparisonResult", "compare_files", "comparison_dict", "paired_bootstrap", "print_comparison",
           "problem_notes"]


def paired_bootstrap(
    a: ScoreReport, b: ScoreReport, *, n_boot: int = 10_000, seed: int = 0, level: float = 0.95
) -> PairedBootstrap:
    """Paired bootstrap of ``a - b`` on every metric; both reports must score the same gold claims.

    The p-value is two-sided: twice the smaller of the fractions of resamples in which the
    difference is <= 0 and >= 0 (capped at 1).

    Raises:
        InputError: the reports do not cover the same claims in the same order.
    """
    if a.claim_ids != b.claim_ids:
        raise InputError("the two score reports are not over the same gold claims")
    return paired_bootstrap_counts(a.counts, b.counts, n_boot=n_boot, seed=seed, level=level)


@dataclass(frozen=True)
class ComparisonResult:
    """Both evaluations (without their own bootstrap) and the paired bootstrap between them."""

    a: EvaluationResult
    b: EvaluationResult
    paired: PairedBootstrap


def compare_files(
    gold_path: str | Path,
    a_path: str | Path,
    b_path: str | Path,
    corpus_path: str | Path | None = None,
    *,
    strict: bool = False,
    cap: CapPolicy | str = "leaderboard",
    n_boot: int = 10_000,
    seed: int = 0,
) -> ComparisonResult:
    """Validate and score two prediction files, then run the paired bootstrap (A - B)."""
    if n_boot < 1:
        raise InputError(f"--bootstrap must be at least 1 for a comparison, got {n_boot}")
    a = evaluate_files(gold_path, a_path, corpus_path, strict=strict, cap=cap, n_boot=0, seed=seed)
    b = evaluate_files(gold_path, b_path, corpus_path, strict=strict, cap=cap, n_boot=0, seed=seed)
    return ComparisonResult(a, b, paired_bootstrap(a.report, b.report, n_boot=n_boot, seed=seed))


def comparison_dict(result: ComparisonResult) -> dict[str, Any]:
    """JSON view: per family and measure, A, B, A - B, its interval and p-value."""
    p = result.paired
    out: dict[str, Any] = {f: {m: p.stats[f][m].as_dict() for m in MEASURES} for f in FAMILIES}
    out["a"] = {"predictions": result.a.params.pred_path, "n_problems": len(result.a.problems)}
    out["b"] = {"predictions": result.b.params.pred_path, "n_problems": len(result.b.problems)}
    out["n_boot"], out["seed"], out["level"], out["n_claims"] = p.n_boot, p.seed, p.level, p.n_claims
    out["test"] = (
        "paired bootstrap over claims; p_value = min(1, 2 * min(P(d <= 0), P(d >= 0))) over the "
        "resampled differences d = A - B"
    )
    return out


def print_comparison(result: ComparisonResult, console: Any, a_name: str, b_name: str) -> None:
    """The comparison as a table on a Rich console (Rich is imported only here), then the test's rule;
    the systems' problems are :func:`problem_notes`."""
    from rich import box
    from rich.table import Table

    p = result.paired
    table = Table(title=f"A = {a_name}, B = {b_name}: paired bootstrap ({p.n_boot} resamples, seed {p.seed})",
                  box=box.SIMPLE, pad_edge=False, collapse_padding=True)
    for column in ("family", "", "A", "B", "A - B", "95% interval", "p"):
        table.add_column(column, justify="left" if column in ("family", "") else "right", no_wrap=True)
    for family in FAMILIES:
        for measure in MEASURES:
            s = p.stats[family][measure]
            short = {"precision": "P", "recall": "R", "f1": "F1"}[measure]
            table.add_row(family, short, f"{s.a:.4f}", f"{s.b:.4f}", f"{s.diff:+.4f}",
                          f"[{s.low:+.4f}, {s.high:+.4f}]", f"{s.p_value:.4f}")
    console.print(table)
    console.print("p: two-sided, 2 * min(P(d <= 0), P(d >= 0)) over resampled differences d = A - B",
                  highlight=False)


def problem_notes(result: ComparisonResult) -> list[str]:
    """One line per system whose file has problems: how many, and the first."""
    return [f"{name}: {counted(len(r.problems), 'problem')}; first: {r.problems[0]}"
            for name, r in (("A", result.a), ("B", result.b)) if r.problems]
