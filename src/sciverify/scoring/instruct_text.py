"""The text views of an instruction-style evaluation (:mod:`sciverify.scoring.instruct`): what
``sciverify evaluate-instruct``, ``instruct-pairs`` and ``instruct-run`` print. Plain text, no markup."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from sciverify.scoring.instruct import InstructPair, InstructReport
from sciverify.wording import counted

__all__ = ["FAILURES_SHOWN", "pairs_written_line", "report_lines", "score_line"]

#: Unparseable outputs listed one by one in the text view (``--format json`` lists all).
FAILURES_SHOWN = 20


def pairs_written_line(pairs: Sequence[InstructPair], out: Path) -> str:
    """``wrote N pairs to OUT (SUPPORT a, ...)``: the pairs by expected verdict."""
    counts = Counter(p.verdict for p in pairs)
    by_verdict = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"wrote {counted(len(pairs), 'pair')} to {out} ({by_verdict})"


def report_lines(report: InstructReport, outputs: Path) -> list[str]:
    """The full text view: counts, label metrics, per class, evidence F1, then the first unparseable
    outputs (those with a line to look at before pairs that got no output at all)."""
    r = report
    lines = [
        f"pairs {r.pairs}  parsed {r.parsed}  unparseable {r.unparseable} (missing {r.missing})  "
        f"normalised verdicts {r.normalised_verdicts}  unmatched outputs {len(r.unmatched_output_lines)}",
        f"label accuracy {r.accuracy:.4f}  macro F1 {r.macro_f1:.4f}  "
        f"label F1 (SUPPORT/CONTRADICT only) {r.label_f1_non_nei:.4f}",
    ]
    for name, c in r.per_class.items():
        lines.append(f"  {name:<10} P {c.precision:.4f}  R {c.recall:.4f}  F1 {c.f1:.4f}  "
                     f"gold {c.support}  predicted {c.predicted}")
    lines.append(f"evidence token F1: mean over pairs {r.evidence_token_f1:.4f}  "
                 f"over pairs with gold evidence {r.evidence_token_f1_gold_evidence:.4f}  "
                 f"pooled {r.evidence_token_f1_pooled:.4f}")
    for failure in sorted(r.failures, key=lambda f: f.line is None)[:FAILURES_SHOWN]:
        where = f"{outputs}:{failure.line}" if failure.line is not None else "(no output)"
        lines.append(f"  unparseable {where} claim {failure.claim_id} doc {failure.doc_id}: {failure.reason}")
    if len(r.failures) > FAILURES_SHOWN:
        lines.append(f"  ... and {len(r.failures) - FAILURES_SHOWN} more (use --format json for all)")
    return lines


def score_line(r: InstructReport) -> str:
    """One line of the headline figures (``instruct-run`` prints it after the run)."""
    return (f"pairs {r.pairs}  parsed {r.parsed}  unparseable {r.unparseable}  "
            f"label accuracy {r.accuracy:.4f}  macro F1 {r.macro_f1:.4f}  "
            f"label F1 (SUPPORT/CONTRADICT) {r.label_f1_non_nei:.4f}  "
            f"evidence token F1 {r.evidence_token_f1:.4f} "
            f"(pooled {r.evidence_token_f1_pooled:.4f})")
