"""HTML pages for people: the fact-checking page (/) and one page per abstract.

The page works without JavaScript (the form is a GET that the server renders); with JavaScript the
same form calls /api/verify and renders the same markup in place, without a reload.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from sciverify.decision.verdict import WEIGHING
from sciverify.pipeline.present import BEST_MATCH_HELP
from sciverify.pipeline.study import display_title
from sciverify.serving.http_errors import ApiError
from sciverify.serving.routes_api import answer_claim
from sciverify.serving.schemas import NUMBERS_EXPLAINED, VerifyResponse
from sciverify.serving.settings import Settings, get_settings
from sciverify.serving.verify_service import VerifierUnavailable, VerifyService

__all__ = ["CITATION_COLUMNS", "EXAMPLE_CLAIMS", "citations_csv", "export_name", "router"]

router = APIRouter(tags=["pages"], include_in_schema=False)
SettingsDep = Annotated[Settings, Depends(get_settings)]

#: Claims from the SciFact training set, shown as one-click examples; each returns evidence with the
#: shipped models (tests/e2e/serving/test_real_verifier.py checks it).
EXAMPLE_CLAIMS = (
    "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
    "A deficiency of folate increases blood levels of homocysteine.",
    "Antidepressants increase the severity of migraines.",
)

#: The citation list's columns (one row per paper shown; one row with the claim and verdict alone when
#: none is).
CITATION_COLUMNS = (
    "claim", "verdict", "side", "rank", "p_evidence", "p_label_correct", "weight", "in_prediction", "title",
    "design", "system", "sample_size", "year", "journal", "doi", "pmid", "doc_id", "link", "why", "rationale",
)


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    response: HTMLResponse = request.app.state.templates.TemplateResponse(
        request, name, context, status_code=status
    )
    return response


@router.get("/", response_class=HTMLResponse)
async def index(
    request: Request,
    settings: SettingsDep,
    claim: Annotated[str | None, Query(max_length=10_000)] = None,
    k: Annotated[int | None, Query()] = None,
) -> HTMLResponse:
    context: dict[str, Any] = {
        "claim": claim or "",
        "k": k or settings.default_k,  # None: the form sends no k and the tuned one is used
        "settings": settings,
        "examples": EXAMPLE_CLAIMS,
        "results": None,
        "error": None,
        "numbers": NUMBERS_EXPLAINED,
        "rule": WEIGHING,
        "best_match_help": BEST_MATCH_HELP,
    }
    if claim is None:
        return _render(request, "index.html", **context)
    svc: VerifyService = request.app.state.verify
    try:
        answer = await answer_claim(svc, settings, claim, k, include_abstract=True)
    except ApiError as exc:
        context["error"] = exc.message
        page = _render(request, "index.html", exc.status, **context)
        page.headers.update(exc.headers or {})  # Retry-After when the server is busy
        return page
    context["results"] = answer
    return _render(request, "index.html", **context)


def citations_csv(answer: VerifyResponse) -> str:
    """The papers of an answer as a citation list (CSV, :data:`CITATION_COLUMNS`), supporting first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CITATION_COLUMNS)
    for side, items in (("supporting", answer.supporting), ("refuting", answer.refuting),
                        ("direction unclear", answer.unclear)):
        for rank, r in enumerate(items, start=1):
            paper, study = r.paper, r.study
            writer.writerow([
                answer.claim, answer.verdict, side, rank, "" if r.p_evidence is None else r.p_evidence,
                "" if r.p_label_correct is None else r.p_label_correct, r.weight,
                str(r.in_prediction).lower(),
                r.title, study.design if study else "", study.system if study else "",
                "" if study is None or study.sample_size is None else study.sample_size,
                (paper.year or "") if paper else "", paper.journal if paper else "",
                paper.doi if paper else "", paper.pmid if paper else "", r.doc_id, r.link, r.why,
                " ".join(f"[{s.index}] {s.text}" for s in r.rationale),
            ])
    if not answer.supporting and not answer.refuting and not answer.unclear:
        writer.writerow([answer.claim, answer.verdict] + [""] * (len(CITATION_COLUMNS) - 2))
    return buffer.getvalue()


def export_name(claim: str, ext: str, now: datetime | None = None) -> str:
    """``sciverify-<claim slug>-<UTC time>.<ext>``: each export of each claim gets its own name."""
    ascii_text = unicodedata.normalize("NFKD", claim).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    slug = "-".join(words)[:60].rstrip("-") or "claim"
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%SZ")
    return f"sciverify-{slug}-{stamp}.{ext}"


@router.get("/export")
async def export(
    request: Request,
    settings: SettingsDep,
    claim: Annotated[str, Query(max_length=10_000)],
    format: Annotated[str, Query()] = "json",
    k: Annotated[int | None, Query()] = None,
) -> Response:
    """The page's result as a file: ``format=json`` (the /api/verify answer) or ``format=csv`` (a
    citation list: side, rank, both numbers, title, ids, link and rationale of every paper shown)."""
    if format not in ("json", "csv"):
        raise ApiError(422, "invalid_format", "format must be 'json' or 'csv'")
    answer = await answer_claim(request.app.state.verify, settings, claim, k, include_abstract=False)
    name = export_name(answer.claim, format)
    disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
    if format == "csv":
        return Response(citations_csv(answer), media_type="text/csv; charset=utf-8", headers=disposition)
    return JSONResponse(answer.model_dump(mode="json"), headers=disposition)


def _indices(hl: str | None) -> set[int]:
    out: set[int] = set()
    for part in (hl or "").split(",")[:50]:
        if part.strip().isdigit():
            out.add(int(part))
    return out


@router.get("/abstracts/{doc_id}", response_class=HTMLResponse)
async def abstract_page(
    request: Request, doc_id: str, hl: Annotated[str | None, Query(max_length=500)] = None
) -> HTMLResponse:
    svc: VerifyService = request.app.state.verify
    try:
        found = await svc.get_abstract(doc_id) if len(doc_id) <= 200 else None
    except VerifierUnavailable:
        return _render(
            request,
            "error.html",
            503,
            title="Unavailable",
            message="The corpus could not be loaded; the reason is in the server log.",
        )
    if found is None:
        return _render(
            request, "error.html", 404, title="Not found", message=f"There is no abstract {doc_id!r}."
        )
    link = await svc.paper_link(found)
    title = display_title(found.title, found.sentences)
    return _render(
        request, "abstract.html", abstract=found, title=title, highlight=_indices(hl), link=link
    )
