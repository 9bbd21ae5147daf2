"""A self-contained HTML report of one evaluation (inline CSS and SVG; no scripts, fonts or links).

``public=True`` renders the version a leaderboard may show a submitter while the gold stays hidden:
aggregate tables, the PR curve, the label confusion matrix and the problems in their own file, but
no per-claim list and no input paths beyond file names.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from sciverify.scoring.metrics import FAMILIES, MEASURES
from sciverify.scoring.outputs import MACRO_NOTE, claim_debug, micro_rows, problem_line
from sciverify.scoring.ranking import CONFUSION_COLUMNS, CONFUSION_ROWS, RankingResult
from sciverify.scoring.report import EvaluationResult
from sciverify.wording import counted

__all__ = ["pr_curve_svg", "render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:70rem;
color:#1a1a1a;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}
.ci{color:#666;font-size:.85em}.note{color:#555;font-size:.9em;max-width:60rem}
pre{background:#f8f8f8;padding:.5rem;overflow-x:auto;font-size:.85em}details{margin:.2rem 0}
summary{cursor:pointer}.ok{color:#176917}.bad{color:#a11}
"""


def _f(x: float) -> str:
    return f"{x:.4f}"


def pr_curve_svg(ranking: RankingResult, *, width: int = 420, height: int = 320) -> str:
    """The precision-recall curve as an inline SVG (recall on x, precision on y, both 0..1)."""
    left, bottom, top, right = 50, 40, 15, 15
    w, h = width - left - right, height - top - bottom

    def xy(r: float, p: float) -> str:
        return f"{left + r * w:.1f},{top + (1 - p) * h:.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="precision-recall curve">',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fff" stroke="#999"/>',
    ]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        x, y = left + t * w, top + (1 - t) * h
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + h}" stroke="#eee"/>')
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + w}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{x:.1f}" y="{top + h + 15}" font-size="11" text-anchor="middle">{t:g}</text>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{t:g}</text>')
    parts.append(
        f'<text x="{left + w / 2}" y="{height - 5}" font-size="12" text-anchor="middle">recall</text>'
    )
    parts.append(
        f'<text x="12" y="{top + h / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + h / 2})">precision</text>'
    )
    if ranking.curve:
        points = " ".join(xy(r, p) for r, p, _ in ranking.curve)
        parts.append(f'<polyline points="{points}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>')
    parts.append("</svg>")
    return "".join(parts)


def _metric_table(result: EvaluationResult) -> str:
    b = result.bootstrap
    rows = ["<table><tr><th>family</th>" + "".join(f"<th>{m}</th>" for m in MEASURES) + "</tr>"]
    ci = lambda s: f' <span class="ci">[{_f(s.low)}, {_f(s.high)}] sd {_f(s.std)}</span>'  # noqa: E731
    for fam, cells in micro_rows(result, ci):
        rows.append(f"<tr><td>{fam}</td>{''.join(f'<td>{c}</td>' for c in cells)}</tr>")
    rows.append("</table>")
    if b is not None:
        rows.append(
            f'<p class="note">Brackets: {int(b.level * 100)}% bootstrap percentile interval and standard '
            f"deviation over {b.n_boot} resamples of the claims (seed {b.seed}).</p>"
        )
    return "".join(rows)


def _macro_table(result: EvaluationResult) -> str:
    rows = [
        "<table><tr><th>family</th>" + "".join(f"<th>{m}</th>" for m in MEASURES) + "<th>claims</th></tr>"
    ]
    for fam in FAMILIES:
        mac = result.report.macro[fam]
        rows.append(
            f"<tr><td>{fam}</td>"
            + "".join(f"<td>{_f(getattr(mac, m))}</td>" for m in MEASURES)
            + f"<td>{mac.n_claims}</td></tr>"
        )
    rows.append(f'</table><p class="note">{escape(MACRO_NOTE)}</p>')
    return "".join(rows)


def _confusion_table(result: EvaluationResult) -> str:
    rows = [
        "<table><tr><th>gold \\ predicted</th>"
        + "".join(f"<th>{escape(c)}</th>" for c in CONFUSION_COLUMNS)
        + "</tr>"
    ]
    for name, cells in zip(CONFUSION_ROWS, result.confusion.cells, strict=True):
        rows.append(
            f"<tr><td>{escape(name)}</td>"
            + "".join(f"<td>{'&mdash;' if c is None else c}</td>" for c in cells)
            + "</tr>"
        )
    rows.append(
        '</table><p class="note">One count per (claim, abstract) pair. Rows: gold label of a gold '
        "evidence abstract, or NEI for a predicted abstract that is not gold evidence.</p>"
    )
    return "".join(rows)


def _ranking_section(result: EvaluationResult) -> str:
    rk = result.ranking
    if rk.average_precision is None:
        return f"<p>Average precision cannot be computed: {escape(rk.reason or '')}.</p>"
    return (
        f"<p>Average precision {_f(rk.average_precision)} over {rk.n_ranked} predicted abstracts ranked by "
        f"confidence ({rk.n_relevant} gold evidence abstracts; relevant = correctly labelled and "
        f"rationalized).</p>" + pr_curve_svg(rk) + _reliability_table(rk)
    )


def _reliability_table(rk: RankingResult) -> str:
    if not rk.reliability:
        return ""
    rows = "".join(
        f"<tr><td>{b.low:.1f}&ndash;{b.high:.1f}</td><td>{b.n}</td><td>{_f(b.mean_confidence)}</td>"
        f"<td>{_f(b.evidence_rate)}</td><td>{_f(b.correct_rate)}</td></tr>"
        for b in rk.reliability
    )
    return (
        f"<h3>Reliability of the confidences</h3><p>Expected calibration error {_f(rk.ece or 0.0)}: "
        "the size-weighted mean gap between a bin's mean confidence and its share of gold evidence "
        "abstracts.</p><table><tr><th>confidence</th><th>abstracts</th><th>mean confidence</th>"
        f"<th>gold evidence</th><th>correct</th></tr>{rows}</table>"
    )


def _problems_section(result: EvaluationResult, public: bool, limit: int = 200) -> str:
    if not result.problems:
        return "<p>No problems.</p>"
    items = "".join(f"<li>{escape(problem_line(p, public=public))}</li>" for p in result.problems[:limit])
    more = f"<p>... and {len(result.problems) - limit} more.</p>" if len(result.problems) > limit else ""
    return f"<p>{counted(len(result.problems), 'problem')}:</p><ul>{items}</ul>{more}"


def _per_claim(result: EvaluationResult) -> str:
    parts = []
    for j in result.report.per_claim:
        c = j.counts
        tag = "ok" if c[3] == c[0] == c[1] and c[6] == c[4] == c[5] else "bad"
        lines = claim_debug(j, result.prediction_lines.get(str(j.claim_id)))
        parts.append(
            f'<details><summary class="{tag}">claim {escape(str(j.claim_id))}: abstracts '
            f"{c[3]}/{c[1]} correct of {c[0]} gold; sentences {c[7]}/{c[5]} correct of {c[4]} gold"
            f"</summary><pre>{escape(chr(10).join(lines))}</pre></details>"
        )
    return "".join(parts)


def render_html(result: EvaluationResult, *, public: bool = False) -> str:
    """The report page as one HTML string.

    Args:
        result: an evaluation from :func:`~sciverify.scoring.report.evaluate_files`.
        public: leave out all per-claim gold information (per-claim list, rationales, labels) and
            show input files by name only.
    """
    p = result.params
    name = (lambda s: Path(s).name) if public else (lambda s: s)
    inputs = f"gold {escape(name(p.gold_path))}, predictions {escape(name(p.pred_path))}"
    if p.corpus_path:
        inputs += f", corpus {escape(name(p.corpus_path))}"
    t = result.report.totals()
    body = [
        "<h1>SciFact evaluation</h1>",
        f'<p class="note">{inputs}. {counted(len(result.report.per_claim), "claim")}; '
        f"rationale cap {escape(str(p.cap))}; "
        f"sciverify {escape(p.versions.get('sciverify', ''))}; {escape(p.started_at)}.</p>",
        "<h2>Metrics (micro-averaged, as on the leaderboard)</h2>",
        _metric_table(result),
        "<h2>Macro-averaged over claims</h2>",
        _macro_table(result),
        "<h2>Counts</h2><table><tr><th>level</th><th>relevant</th><th>retrieved</th><th>correct (label)</th>"
        "<th>correct (rationalized / selection)</th></tr>"
        f"<tr><td>abstract</td><td>{t['abstract_relevant']}</td><td>{t['abstract_retrieved']}</td>"
        f"<td>{t['abstract_correct_label_only']}</td><td>{t['abstract_correct_rationalized']}</td></tr>"
        f"<tr><td>sentence</td><td>{t['sentence_relevant']}</td><td>{t['sentence_retrieved']}</td>"
        f"<td>{t['sentence_correct_label']}</td><td>{t['sentence_correct_selection']}</td></tr></table>",
        "<h2>Ranking by confidence</h2>",
        _ranking_section(result),
        "<h2>Label confusion</h2>",
        _confusion_table(result),
        "<h2>Problems in the predictions</h2>",
        _problems_section(result, public),
    ]
    if not public:
        body += ["<h2>Per claim</h2>", _per_claim(result)]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>SciFact evaluation</title><style>"
        + _CSS
        + "</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
