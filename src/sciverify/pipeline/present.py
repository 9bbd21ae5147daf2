"""How verification results are shown: a Rich view for people, a JSON object for programs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from sciverify.data.records import Label, VerifiedAbstract

__all__ = ["print_verified", "verified_to_json"]

_STYLE = {Label.SUPPORT: "bold green", Label.CONTRADICT: "bold red", Label.NOT_ENOUGH_INFO: "yellow"}


def verified_to_json(claim: str, results: Sequence[VerifiedAbstract]) -> dict[str, Any]:
    """``{"claim", "results": [{doc_id, title, label, confidence, retrieval_score, rationale: [...],
    paper?}]}``; ``paper`` (doi, pmid, journal, year, link) only when the corpus carries it."""
    return {
        "claim": claim,
        "results": [
            {
                "doc_id": r.doc_id,
                "title": r.title,
                "label": r.label.value,
                "confidence": r.confidence,
                "retrieval_score": round(r.retrieval_score, 4),
                "rationale": [{"index": s.index, "text": s.text, "score": s.score} for s in r.rationale],
                **({"paper": {**r.meta.to_json(), "link": r.meta.link()}} if r.meta is not None else {}),
            }
            for r in results
        ],
    }


def print_verified(console: Console, claim: str, results: Sequence[VerifiedAbstract]) -> None:
    """One panel per abstract: verdict, confidence, title, and the rationale sentences."""
    console.print(Text.assemble(("claim: ", "bold"), claim))
    if not results:
        console.print("[yellow]No abstract in the corpus supports or contradicts this claim.[/]")
        return
    for rank, r in enumerate(results, start=1):
        body = Text()
        body.append(r.title + "\n", style="italic")
        if r.meta is not None:
            where = " ".join(x for x in (r.meta.journal, str(r.meta.year or "")) if x)
            link = r.meta.link()
            body.append(" · ".join(x for x in (where, link) if x) + "\n", style="dim")
        for s in r.rationale:
            body.append(f"\n[{s.index}] ", style="dim")
            body.append(s.text)
            body.append(f"  ({s.score:.2f})", style="dim")
        header = Text.assemble(
            (f"{rank}. ", "bold"),
            (r.label.value, _STYLE[r.label]),
            f"  confidence {r.confidence:.2f}",
            ("  doc ", "dim"),
            (str(r.doc_id), "dim"),
        )
        console.print(Panel(body, title=header, title_align="left", expand=True))
