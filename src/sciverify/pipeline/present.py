"""How verification results are shown: a Rich view for people, a JSON object for programs.

Both show the evidence view (:mod:`sciverify.pipeline.evidence`): the overall verdict and why
(:mod:`sciverify.decision.verdict`), what was searched (:mod:`sciverify.pipeline.searched`), then the
supporting and the refuting papers, each with its two calibrated numbers, its study facts
(:mod:`sciverify.pipeline.study`), why it sits on its side, its link and its rationale. The JSON has the
same field names as ``/api/verify``, and the page uses the words defined here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from sciverify.data.records import Label, StudyFacts, VerifiedAbstract
from sciverify.decision.verdict import WEIGHING, Overall, Weighed, paper_reason, paper_weight, weigh
from sciverify.pipeline.evidence import SHOW_THRESHOLD, group_evidence, related_papers
from sciverify.pipeline.searched import Searched, nothing_found_line, searched_line
from sciverify.pipeline.study import study_badges

__all__ = [
    "BEST_MATCH",
    "BEST_MATCH_HELP",
    "NUMBERS_LINE",
    "RELATED_HEADING",
    "UNCLEAR_HEADING",
    "excerpt_indices",
    "link_label",
    "paper_why",
    "print_verified",
    "related_json",
    "study_json",
    "verdict_why",
    "verified_to_json",
]

_STYLE = {Label.SUPPORT: "bold green", Label.CONTRADICT: "bold red", Label.NOT_ENOUGH_INFO: "yellow"}

#: The one explanation of the numbers (the page and the API say the same).
NUMBERS_LINE = (
    "Chance it is evidence (p_evidence): how likely the paper is to be evidence for or against the claim "
    "at all. Chance its side is right (p_label_correct): if it is evidence, how likely it is on the side "
    "shown. Both are calibrated on claims the models never saw: of papers shown at 70%, about 7 in 10 "
    "are. A sentence score (0 to 1) says how strongly the models picked that sentence as a reason."
)

#: Plain words for ``in_prediction``.
BEST_MATCH = "best match"
BEST_MATCH_HELP = (
    "The one paper that `sciverify predict` names for this claim (its answer in the SciFact benchmark "
    "format); the others are shown because they are likely evidence too."
)

#: The headings of the two lists beside the sides (the page and the CLI use these words).
UNCLEAR_HEADING = "Direction unclear"
RELATED_HEADING = "Related, not evidence"
#: Why a related paper is not under a side.
RELATED_WHY = (
    f"Found, but below the {SHOW_THRESHOLD:g} chance of being evidence that a side needs; it weighs nothing."
)


def study_json(study: StudyFacts | None) -> dict[str, Any] | None:
    """The study facts as JSON, with the badges the page shows."""
    if study is None:
        return None
    return {
        "design": study.design,
        "system": study.system,
        "sample_size": study.sample_size,
        "year": study.year,
        "journal": study.journal,
        "badges": study_badges(study),
    }


def excerpt_indices(n_sentences: int, marked: Sequence[int], context: int = 1) -> list[int]:
    """The sentences a card shows unfolded: each rationale sentence with ``context`` neighbours on
    each side, in abstract order (the rest of the abstract is folded)."""
    keep = {j for i in marked for j in range(i - context, i + context + 1) if 0 <= j < n_sentences}
    return sorted(keep)


def link_label(link: str, doi: str = "", pmid: str = "") -> str:
    """What a paper's link says: its DOI or PMID when known, else where it leads."""
    if doi:
        return f"doi:{doi}"
    if pmid:
        return f"PMID {pmid}"
    if "semanticscholar.org" in link:
        return "Semantic Scholar page"
    return "Paper page" if link else ""


def paper_why(r: VerifiedAbstract) -> str:
    """Why one paper sits on its side (:func:`sciverify.decision.verdict.paper_reason`), is of unclear
    direction, or is only related."""
    if Label(r.label) is Label.NOT_ENOUGH_INFO:
        return RELATED_WHY
    return paper_reason(r.label, [s.text for s in r.rationale], r.p_label_correct)


def verdict_why(weighed: Weighed, searched: Searched | None) -> str:
    """The verdict's one line: the weighing's, or what was searched when nothing at all was shown."""
    if weighed.verdict is Overall.NOT_ENOUGH_EVIDENCE and not weighed.too_light and not weighed.n_unclear:
        return nothing_found_line(searched)
    return weighed.why


def _link(r: VerifiedAbstract) -> tuple[str, str]:
    """A paper's link and what it says (:func:`link_label`)."""
    link = r.link or (r.meta.link() if r.meta is not None else "")
    ids = (r.meta.doi, r.meta.pmid) if r.meta is not None else ()
    return link, link_label(link, *ids)


def related_json(r: VerifiedAbstract) -> dict[str, Any]:
    """A paper listed apart ("related, not evidence"): what identifies it and its P(evidence)."""
    link, label = _link(r)
    return {
        "doc_id": r.doc_id,
        "title": r.title,
        "p_evidence": r.p_evidence,
        "retrieval_score": round(r.retrieval_score, 4),
        "link": link,
        "link_label": label,
        "why": RELATED_WHY,
    }


def _result_json(r: VerifiedAbstract) -> dict[str, Any]:
    link, label = _link(r)
    return {
        "doc_id": r.doc_id,
        "title": r.title,
        "label": r.label.value,
        "p_evidence": r.p_evidence,
        "p_label_correct": r.p_label_correct,
        "weight": round(paper_weight(r.p_evidence, r.p_label_correct), 4),
        "why": paper_why(r),
        "in_prediction": r.in_prediction,
        "retrieval_score": round(r.retrieval_score, 4),
        "link": link,
        "link_label": label,
        "study": study_json(r.study),
        "rationale": [{"index": s.index, "text": s.text, "score": s.score} for s in r.rationale],
        **({"listed": list(r.listed)} if r.listed else {}),
        **({"paper": {**r.meta.to_json(), "link": r.meta.link()}} if r.meta is not None else {}),
    }


def verified_to_json(
    claim: str, results: Sequence[VerifiedAbstract], searched: Searched | None = None
) -> dict[str, Any]:
    """``{"claim", "verdict", "why", "rule", "weights", "searched", "supporting": [...], "refuting": [...],
    "unclear": [...], "related": [...], "numbers"}``; each paper has doc_id (as the corpus gives it: an
    integer for SciFact), title, label (for a paper of unclear direction, the side the models lean to),
    p_evidence, p_label_correct, weight, why, in_prediction, retrieval_score, link, study, rationale (the
    sentences its label was read from), ``listed`` when the leaderboard prediction lists other sentences,
    and ``paper`` (doi, pmid, journal, year, link) when the corpus carries it; a related paper has only
    what identifies it (:func:`related_json`)."""
    support, refute, unclear = group_evidence(results)
    weighed = weigh(results)
    return {
        "claim": claim,
        "verdict": weighed.verdict.value,
        "why": verdict_why(weighed, searched),
        "rule": WEIGHING,
        "weights": {"supporting": weighed.support_weight, "refuting": weighed.refute_weight},
        **({"searched": searched.to_json()} if searched is not None else {}),
        "supporting": [_result_json(r) for r in support],
        "refuting": [_result_json(r) for r in refute],
        "unclear": [_result_json(r) for r in unclear],
        "related": [related_json(r) for r in related_papers(results)],
        "numbers": NUMBERS_LINE,
    }


def _percent(p: float | None) -> str:
    return "n/a" if p is None else f"{p * 100:.0f}%"


def print_verified(
    console: Console, claim: str, results: Sequence[VerifiedAbstract], searched: Searched | None = None
) -> None:
    """The overall verdict and why, what was searched, then one panel per paper, supporting first:
    numbers, study, title, link, why, rationale."""
    console.print(Text.assemble(("claim: ", "bold"), claim))
    weighed = weigh(results)
    verdict = weighed.verdict
    styles = {"supported": "bold green", "refuted": "bold red", "conflicting": "bold yellow"}
    style = styles.get(verdict, "yellow")
    support, refute, unclear = group_evidence(results)
    related = related_papers(results)
    counts = f"{len(support)} supporting, {len(refute)} refuting"
    if unclear:
        counts += f", {len(unclear)} of unclear direction"
    console.print(Text.assemble(("overall verdict: ", "bold"), (verdict.value, style), f"  ({counts})"))
    if searched is not None:
        console.print(Text(searched_line(searched)))
    if not (support or refute or unclear):
        console.print(Text(nothing_found_line(searched), style="yellow"))
    else:
        console.print(Text.assemble(("why: ", "bold"), verdict_why(weighed, searched)))
        console.print(Text(WEIGHING, style="dim"))
        console.print(Text(NUMBERS_LINE, style="dim"))
    for heading, group in (("Supporting", support), ("Refuting", refute), (UNCLEAR_HEADING, unclear)):
        if not group:
            continue
        console.print(Text(f"\n{heading} ({len(group)})", style="bold"))
        for rank, r in enumerate(group, start=1):
            console.print(_panel(rank, r, unclear=group is unclear))
    if related:
        console.print(Text(f"\n{RELATED_HEADING} ({len(related)})", style="bold"))
        console.print(Text(RELATED_WHY, style="dim"))
        for r in related:
            chance = _percent(r.p_evidence)
            console.print(Text(f"- {r.title} (doc {r.doc_id}, chance it is evidence {chance})"))


def _panel(rank: int, r: VerifiedAbstract, *, unclear: bool = False) -> Panel:
    """One paper. The title holds only what identifies it (rank, side, doc id, best match), so it fits an
    80-column terminal whole; the two numbers open the body, where a narrow terminal wraps them."""
    body = Text()
    body.append(f"chance it is evidence {_percent(r.p_evidence)}", style="bold")
    body.append(" · ", style="dim")
    body.append(f"chance its side is right {_percent(r.p_label_correct)}\n", style="bold")
    body.append(r.title + "\n", style="italic")
    badges = study_badges(r.study)
    if badges:
        body.append(" · ".join(badges) + "\n", style="cyan")
    link, _ = _link(r)
    if link:
        body.append(link + "\n", style="dim")
    body.append(paper_why(r) + "\n", style="bold")
    for s in r.rationale:
        body.append(f"\n[sentence {s.index}] ", style="dim")
        body.append(s.text)
        body.append(f"  (sentence score {s.score:.2f})", style="dim")
    header = Text.assemble(
        (f"{rank}. ", "bold"),
        ("direction unclear", "yellow") if unclear
        else ("supports" if r.label is Label.SUPPORT else "refutes", _STYLE[r.label]),
        ("  doc ", "dim"),
        (str(r.doc_id), "dim"),
        (f"  {BEST_MATCH}" if r.in_prediction else "", "bold"),
    )
    return Panel(body, title=header, title_align="left", expand=True)
