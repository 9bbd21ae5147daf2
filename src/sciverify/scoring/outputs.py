"""The text views of an evaluation: summary, debug, confidence, params, errlog and metrics.json
(:mod:`sciverify.scoring.files` writes them, with the HTML report, into one directory).

Every file is plain text or JSON so a person can read it and a program can diff it. ``public=True``
produces the version a leaderboard shows to a submitter while the gold stays hidden: no ``debug``
file, no per-claim records, and input paths reduced to file names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sciverify.scoring.counts import COUNT_COLUMNS, AbstractJudgement, ClaimJudgement
from sciverify.scoring.metrics import FAMILIES, MEASURES
from sciverify.scoring.problems import Problem
from sciverify.scoring.report import EvaluationResult
from sciverify.wording import counted

__all__ = [
    "CAP_NOTE",
    "MACRO_NOTE",
    "claim_debug",
    "confidence_text",
    "debug_text",
    "errlog_text",
    "metrics_dict",
    "metrics_payload",
    "params_text",
    "print_summary",
    "problem_line",
    "problems_preview",
    "reliability_lines",
    "summary_text",
]


MACRO_NOTE = (
    "Macro averages are means of per-claim precision, recall and F1. abstract_* families average over the "
    "claims with at least one gold evidence abstract; sentence_* families over the claims with at least one "
    "gold rationale sentence. Claims without gold evidence (NOT_ENOUGH_INFO) are left out; a claim in the "
    "average with no prediction scores 0."
)

CAP_NOTE = {
    "leaderboard": "leaderboard: the first max(3, size of the smallest gold set) predicted sentences count",
}


def _cap_text(cap: object) -> str:
    return CAP_NOTE.get(str(cap), f"{cap}: the first {cap} predicted sentences count")


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def micro_rows(result: EvaluationResult, interval: Callable[[Any], str]) -> list[tuple[str, list[str]]]:
    """Per family, the micro P/R/F1 cells, each followed by ``interval(stat)`` when there is a bootstrap.

    The summary file, the terminal and the HTML report show one table; only the interval's markup differs.
    """
    r, b = result.report, result.bootstrap
    rows = []
    for f in FAMILIES:
        cells = []
        for m in MEASURES:
            cell = _fmt(getattr(r.aggregate[f], m))
            if b is not None:
                cell += interval(b.stats[f][m])
            cells.append(cell)
        rows.append((f, cells))
    return rows


def metrics_dict(
    result: EvaluationResult, *, public: bool = False, with_curve: bool = True
) -> dict[str, Any]:
    """The JSON view of a result (``metrics.json``); ``public`` leaves out every per-claim record."""
    report = result.report
    out: dict[str, Any] = {f: report.aggregate[f].as_dict() for f in FAMILIES}
    totals = report.totals()
    out["counts"] = {
        "abstract": {
            k.removeprefix("abstract_"): totals[k] for k in COUNT_COLUMNS if k.startswith("abstract_")
        },
        "sentence": {
            k.removeprefix("sentence_"): totals[k] for k in COUNT_COLUMNS if k.startswith("sentence_")
        },
    }
    out["macro"] = {f: report.macro[f].as_dict() for f in FAMILIES}
    out["macro_definition"] = MACRO_NOTE
    if result.bootstrap is None:
        out["ci"] = None
    else:
        b = result.bootstrap
        out["ci"] = {
            "n_boot": b.n_boot,
            "seed": b.seed,
            "level": b.level,
            **{f: {m: b.stats[f][m].as_dict() for m in MEASURES} for f in FAMILIES},
        }
    out["ranking"] = result.ranking.as_dict(with_curve=with_curve)
    out["confusion"] = result.confusion.as_dict()
    out["n_claims"] = len(report.per_claim)
    out["n_claims_predicted"] = sum(j.has_prediction for j in report.per_claim)
    out["n_problems"] = len(result.problems)
    out["cap"] = report.cap
    params = result.params.as_dict()
    if public:
        for name in ("gold", "predictions", "corpus"):
            if params[name] is not None:
                params[name] = Path(str(params[name])).name
        params.pop("invocation")
    out["params"] = params
    if not public:
        out["per_claim"] = [
            {
                "id": j.claim_id,
                "has_prediction": j.has_prediction,
                "counts": dict(zip(COUNT_COLUMNS, j.counts, strict=True)),
            }
            for j in report.per_claim
        ]
    return out


def summary_text(result: EvaluationResult, *, public: bool = False) -> str:
    """The ``summary`` file: micro table (with intervals), macro table, counts and ranking."""
    r = result.report
    t = r.totals()
    p = result.params
    name = (lambda s: Path(s).name) if public else (lambda s: s)
    n_ev_claims = sum(1 for j in r.per_claim if j.gold.evidence)
    lines = [
        "SciFact evaluation summary",
        f"gold: {name(p.gold_path)}",
        f"predictions: {name(p.pred_path)}",
        f"claims: {len(r.per_claim)} ({n_ev_claims} with gold evidence; "
        f"{t['abstract_relevant']} gold evidence "
        f"abstracts, {t['sentence_relevant']} gold rationale sentences); predictions for "
        f"{counted(sum(j.has_prediction for j in r.per_claim), 'claim')}",
        f"problems: {len(result.problems)}" + (" (see errlog)" if result.problems else ""),
        f"rationale cap: {_cap_text(r.cap)}",
        "",
    ]
    b = result.bootstrap
    head = "Micro-averaged (leaderboard) metrics"
    if b is not None:
        head += f", with {int(b.level * 100)}% bootstrap intervals ({b.n_boot} resamples, seed {b.seed})"
    lines += [head + ":", (f"{'family':<24}" + "".join(f"{m:<26}" for m in MEASURES)).rstrip()]
    for f, cells in micro_rows(result, lambda s: f" [{_fmt(s.low)}, {_fmt(s.high)}]"):
        lines.append(f"{f:<24}" + "".join(f"{cell:<26}" for cell in cells).rstrip())
    lines += [
        "",
        "Macro-averaged over claims:",
        f"{'family':<24}{'precision':<11}{'recall':<11}{'f1':<11}claims",
    ]
    for f in FAMILIES:
        mac = r.macro[f]
        lines.append(
            f"{f:<24}{_fmt(mac.precision):<11}{_fmt(mac.recall):<11}{_fmt(mac.f1):<11}{mac.n_claims}"
        )
    lines += [
        MACRO_NOTE,
        "",
        "Counts:",
        "abstract: " + "  ".join(f"{k.removeprefix('abstract_')}={t[k]}" for k in COUNT_COLUMNS[:4]),
        "sentence: " + "  ".join(f"{k.removeprefix('sentence_')}={t[k]}" for k in COUNT_COLUMNS[4:]),
        "",
    ]
    rk = result.ranking
    if rk.average_precision is None:
        lines.append(f"Average precision: cannot be computed ({rk.reason})")
    else:
        lines.append(
            f"Average precision (abstracts ranked by confidence, relevant = correctly labelled and "
            f"rationalized): {_fmt(rk.average_precision)} over {rk.n_ranked} ranked abstracts, "
            f"{rk.n_relevant} gold abstracts"
        )
    lines += reliability_lines(rk)
    return "\n".join(lines) + "\n"


def reliability_lines(rk: Any) -> list[str]:
    """The two reliability tables as text: P(evidence) (the ``confidence`` field) and P(label right |
    evidence) (``p_label_correct``), each with a line saying what it measures; in place of an empty
    second table, one line saying why it is empty (:func:`sciverify.scoring.ranking.label_table_reason`)."""
    lines: list[str] = []
    if rk.reliability:
        lines += [
            "",
            f"Reliability of P(evidence) ('confidence'; expected calibration error {_fmt(rk.ece or 0.0)}): "
            "of the predicted abstracts in each bin, the share that are gold evidence",
            f"{'confidence':<12} {'abstracts':>9} {'mean conf':>9} {'gold evidence':>13} {'correct':>8}",
        ]
        for cell in rk.reliability:
            lines.append(
                f"{cell.low:.1f}-{cell.high:.1f}{'':<5} {cell.n:>9} {_fmt(cell.mean_confidence):>9} "
                f"{_fmt(cell.evidence_rate):>13} {_fmt(cell.correct_rate):>8}"
            )
    if rk.label_reliability:
        lines += [
            "",
            "Reliability of P(label right | evidence) ('p_label_correct'; expected calibration error "
            f"{_fmt(rk.label_ece or 0.0)}): of the predicted gold evidence abstracts in each bin, the share "
            "labelled right",
            f"{'p_label':<12} {'abstracts':>9} {'mean p':>9} {'label right':>13}",
        ]
        for cell in rk.label_reliability:
            lines.append(
                f"{cell.low:.1f}-{cell.high:.1f}{'':<5} {cell.n:>9} {_fmt(cell.mean_confidence):>9} "
                f"{_fmt(cell.correct_rate):>13}"
            )
    elif rk.label_reason:
        lines += ["", f"P(label right | evidence): no table, because {rk.label_reason}."]
    return lines


def _sets(sets: object) -> str:
    return " ".join(str(list(s.sentences)) for s in sets)  # type: ignore[attr-defined]


def _abstract_lines(a: AbstractJudgement) -> list[str]:
    e = a.entry
    shown = list(e.sentences) if e.sentences or not e.n_listed else f"({e.n_listed} listed, malformed)"
    head = f"  doc {e.key}  label {e.label or '-'}  sentences {shown}"
    if e.confidence is not None:
        head += f"  confidence {e.confidence:g}"
    out = [head]
    if not e.valid:
        out.append(f"    invalid entry ({e.problem}): counts as retrieved, never as correct")
    if not a.in_gold:
        out.append(f"    abstract: incorrect: doc {e.key} is not a gold evidence abstract")
        if e.n_listed:
            out.append(
                f"    sentences ({e.n_listed} listed): incorrect: doc {e.key} is not a gold evidence abstract"
            )
        return out
    if not e.valid:
        out.append(
            f"    abstract: incorrect (gold {a.gold_label}); its {e.n_listed} listed sentences are incorrect"
        )
        return out
    if not a.label_ok:
        out.append(f"    abstract: incorrect label {e.label} (gold {a.gold_label}); not credited")
    elif a.rationalized:
        out.append(
            f"    abstract: correct label ({a.gold_label}); "
            f"rationalized: gold set {list(a.matched_set or ())} "
            f"within the first {a.cap} sentences {list(e.sentences[: a.cap or 0])}"
        )
    else:
        out.append(
            f"    abstract: correct label ({a.gold_label}); not rationalized: no gold set within the first "
            f"{a.cap} sentences {list(e.sentences[: a.cap or 0])}"
        )
    for v in a.sentences:
        times = f" (listed {v.times_listed} times)" if v.times_listed > 1 else ""
        if v.correct_selection:
            label = "correct label" if v.correct_label else "wrong label"
            out.append(
                f"    sentence {v.index}{times}: correct selection, {label}: gold set "
                f"{list(v.gold_set or ())} fully predicted"
            )
        elif v.gold_set is not None:
            out.append(
                f"    sentence {v.index}{times}: incorrect: in gold set {list(v.gold_set)} but "
                f"{', '.join(map(str, v.missing))} not predicted"
            )
        else:
            out.append(f"    sentence {v.index}{times}: incorrect: not in any gold set")
    return out


def claim_debug(j: ClaimJudgement, line: int | None = None) -> list[str]:
    """The debug lines of one claim: gold, each predicted abstract and sentence judged, missed gold."""
    out = [f"=== claim {j.claim_id} ==="]
    if j.gold.evidence:
        out.append("gold evidence:")
        out += [
            f"  doc {k}  {sets[0].label.value}  sets: {_sets(sets)}" for k, sets in j.gold.evidence.items()
        ]
    else:
        out.append("gold evidence: none (NOT_ENOUGH_INFO claim)")
    if not j.has_prediction:
        out.append("prediction: none (scored as predicting nothing)")
    elif not j.abstracts:
        out.append(f"prediction{f' (line {line})' if line else ''}: no evidence")
    else:
        out.append(f"prediction{f' (line {line})' if line else ''}:")
        for a in j.abstracts:
            out += _abstract_lines(a)
    if j.missed:
        out.append("missed gold abstracts:")
        out += [
            f"  doc {k}  {j.gold.evidence[k][0].label.value}  sets: {_sets(j.gold.evidence[k])}"
            for k in j.missed
        ]
    c = dict(zip(COUNT_COLUMNS, j.counts, strict=True))
    out.append(
        "counts: abstract "
        + " ".join(f"{k.removeprefix('abstract_')}={c[k]}" for k in COUNT_COLUMNS[:4])
        + " | sentence "
        + " ".join(f"{k.removeprefix('sentence_')}={c[k]}" for k in COUNT_COLUMNS[4:])
    )
    return out


def debug_text(result: EvaluationResult) -> str:
    """The ``debug`` file: :func:`claim_debug` for every gold claim, in gold order."""
    blocks = [
        "\n".join(claim_debug(j, result.prediction_lines.get(str(j.claim_id))))
        for j in result.report.per_claim
    ]
    return "\n\n".join(blocks) + "\n"


def confidence_text(result: EvaluationResult) -> str:
    """The ``confidence`` file: bootstrap mean, std and percentile interval of every metric."""
    b = result.bootstrap
    if b is None:
        return "bootstrap: not run (--no-bootstrap)\n"
    lines = [
        f"bootstrap: {counted(b.n_boot, 'resample')} of {counted(len(result.report.per_claim), 'claim')} "
        "(uniform, with replacement), "
        f"seed {b.seed}; {int(b.level * 100)}% percentile intervals; std with ddof=1",
        f"{'family':<24}{'measure':<11}{'observed':<10}{'mean':<10}{'std':<10}{'low':<10}high",
    ]
    for f in FAMILIES:
        for m in MEASURES:
            s = b.stats[f][m]
            obs = getattr(result.report.aggregate[f], m)
            lines.append(
                f"{f:<24}{m:<11}{_fmt(obs):<10}{_fmt(s.mean):<10}{_fmt(s.std):<10}{_fmt(s.low):<10}"
                f"{_fmt(s.high)}"
            )
    return "\n".join(lines) + "\n"


def params_text(result: EvaluationResult, *, public: bool = False) -> str:
    """The ``params`` file: invocation, versions, input checksums, cap, seed."""
    d = metrics_dict(result, public=public, with_curve=False)["params"]
    lines = []
    for key, value in d.items():
        if isinstance(value, dict):
            lines += [f"{key}:"] + [f"  {k}: {v}" for k, v in value.items()]
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


def problem_line(problem: Problem, *, public: bool = False) -> str:
    """``file:line: message``; in public mode the file is shown by name only."""
    if public:
        problem = Problem(Path(problem.file).name, problem.line, problem.message)
    return str(problem)


def errlog_text(result: EvaluationResult, *, public: bool = False) -> str:
    """The ``errlog`` file: one ``file:line: message`` per problem."""
    if not result.problems:
        return "no problems\n"
    return "\n".join(problem_line(p, public=public) for p in result.problems) + "\n"


def print_summary(result: EvaluationResult, console: Any) -> None:
    """Print the micro and macro tables to a Rich console (Rich is imported only here)."""
    from rich.table import Table

    r = result.report
    b = result.bootstrap
    title = "SciFact metrics, micro-averaged (leaderboard)"
    if b is not None:
        title += f"; {int(b.level * 100)}% bootstrap intervals ({b.n_boot} resamples, seed {b.seed})"
    micro = Table(title=title, show_edge=False)
    micro.add_column("family", no_wrap=True)
    for m in MEASURES:
        micro.add_column(m, justify="right", no_wrap=True)
    for f, cells in micro_rows(result, lambda s: f"\n[{_fmt(s.low)}, {_fmt(s.high)}]"):
        micro.add_row(f, *cells)
    console.print(micro)
    macro = Table(title="Macro-averaged over claims")
    macro.add_column("family", no_wrap=True)
    for m in (*MEASURES, "claims"):
        macro.add_column(m, justify="right")
    for f in FAMILIES:
        mac = r.macro[f]
        macro.add_row(f, *(_fmt(getattr(mac, m)) for m in MEASURES), str(mac.n_claims))
    console.print(macro)
    console.print(MACRO_NOTE, highlight=False)
    console.print(f"claims: {len(r.per_claim)}; rationale cap: {_cap_text(r.cap)}", highlight=False)
    rk = result.ranking
    if rk.average_precision is None:
        console.print(f"average precision: cannot be computed ({rk.reason})", highlight=False)
    else:
        console.print(
            f"average precision: {_fmt(rk.average_precision)} ({rk.n_ranked} ranked abstracts)",
            highlight=False,
        )
    for line in reliability_lines(rk):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def metrics_payload(result: EvaluationResult, *, shown_problems: int = 50) -> dict[str, Any]:
    """What ``sciverify evaluate --format json`` prints: the public metrics and the first problems."""
    payload = metrics_dict(result, public=True, with_curve=False)
    payload["problems"] = [p.as_dict() for p in result.problems[:shown_problems]]
    return payload


def problems_preview(result: EvaluationResult, errlog: Path | None = None, shown: int = 5) -> list[str]:
    """A heading (how many problems, and where the full list is) and the first ``shown`` problems;
    empty when there are none."""
    if not result.problems:
        return []
    where = f"; all in {errlog}" if errlog is not None else ""
    first = "; first:" if len(result.problems) > 1 else ":"
    heading = f"{counted(len(result.problems), 'problem')} in the predictions{where}{first}"
    return [heading, *(f"  {problem}" for problem in result.problems[:shown])]
