"""How verification results are shown: a Rich view for people, a JSON object for programs.

Both show the evidence view (:mod:`sciverify.pipeline.evidence`): the overall verdict, then the
supporting and the refuting papers, each with its two calibrated numbers, its link and its rationale.
The JSON has the same field names as ``/api/verify``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from sciverify.data.records import Label, VerifiedAbstract
from sciverify.pipeline.evidence import group_evidence, overall_verdict

__all__ = ["NUMBERS_LINE", "print_verified", "verified_to_json"]

_STYLE = {Label.SUPPORT: "bold green", Label.CONTRADICT: "bold red", Label.NOT_ENOUGH_INFO: "yellow"}

#: The one line that says what the two numbers mean (the page and the API say the same).
NUMBERS_LINE = (
    "P(evidence): the chance that the paper is evidence for or against the claim; P(right side | evidence): "
    "the chance that it is on the right side, if it is evidence. Both are calibrated on claims the models "
    "never saw."
)


def _result_json(r: VerifiedAbstract) -> dict[str, Any]:
    return {
        "doc_id": r.doc_id,
        "title": r.title,
        "label": r.label.value,
        "p_evidence": r.p_evidence,
        "p_label_correct": r.p_label_correct,
        "in_prediction": r.in_prediction,
        "retrieval_score": round(r.retrieval_score, 4),
        "link": r.link or (r.meta.link() if r.meta is not None else ""),
        "rationale": [{"index": s.index, "text": s.text, "score": s.score} for s in r.rationale],
        **({"paper": {**r.meta.to_json(), "link": r.meta.link()}} if r.meta is not None else {}),
    }


def verified_to_json(claim: str, results: Sequence[VerifiedAbstract]) -> dict[str, Any]:
    """``{"claim", "verdict", "supporting": [...], "refuting": [...]}``; each paper has doc_id (as the
    corpus gives it: an integer for SciFact), title, label, p_evidence, p_label_correct,
    in_prediction, retrieval_score, link, rationale, and ``paper`` (doi, pmid, journal, year, link)
    when the corpus carries it."""
    support, refute = group_evidence(results)
    return {
        "claim": claim,
        "verdict": overall_verdict(results).value,
        "supporting": [_result_json(r) for r in support],
        "refuting": [_result_json(r) for r in refute],
        "numbers": NUMBERS_LINE,
    }


def _percent(p: float | None) -> str:
    return "n/a" if p is None else f"{p * 100:.0f}%"


def print_verified(console: Console, claim: str, results: Sequence[VerifiedAbstract]) -> None:
    """The overall verdict, then one panel per paper, supporting first: numbers, title, link, rationale."""
    console.print(Text.assemble(("claim: ", "bold"), claim))
    verdict = overall_verdict(results)
    styles = {"supported": "bold green", "refuted": "bold red", "conflicting": "bold yellow"}
    style = styles.get(verdict, "yellow")
    support, refute = group_evidence(results)
    console.print(
        Text.assemble(("overall verdict: ", "bold"), (verdict.value, style),
                      f"  ({len(support)} supporting, {len(refute)} refuting)")
    )
    if not results:
        console.print("[yellow]No abstract in the corpus supports or refutes this claim.[/]")
        return
    console.print(Text(NUMBERS_LINE, style="dim"))
    for heading, group in (("Supporting", support), ("Refuting", refute)):
        if not group:
            continue
        console.print(Text(f"\n{heading} ({len(group)})", style="bold"))
        for rank, r in enumerate(group, start=1):
            body = Text()
            body.append(r.title + "\n", style="italic")
            link = r.link or (r.meta.link() if r.meta is not None else "")
            where = " ".join(x for x in (r.meta.journal, str(r.meta.year or "")) if x) if r.meta else ""
            if where or link:
                body.append(" · ".join(x for x in (where, link) if x) + "\n", style="dim")
            for s in r.rationale:
                body.append(f"\n[{s.index}] ", style="dim")
                body.append(s.text)
                body.append(f"  ({s.score:.2f})", style="dim")
            header = Text.assemble(
                (f"{rank}. ", "bold"),
                (r.label.value, _STYLE[r.label]),
                f"  P(evidence) {_percent(r.p_evidence)}",
                f"  P(right side | evidence) {_percent(r.p_label_correct)}",
                ("  leaderboard pick" if r.in_prediction else "", "bold"),
                ("  doc ", "dim"),
                (str(r.doc_id), "dim"),
            )
            console.print(Panel(body, title=header, title_align="left", expand=True))
