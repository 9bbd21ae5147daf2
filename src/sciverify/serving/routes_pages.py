"""HTML pages for people: the fact-checking page (/) and one page per abstract.

The page works without JavaScript (the form is a GET that the server renders); with JavaScript the
same form calls /api/verify and renders the same markup in place, without a reload.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from sciverify.serving.http_errors import ApiError
from sciverify.serving.routes_api import check_claim, resolve_k, run_verify
from sciverify.serving.schemas import verify_result
from sciverify.serving.settings import Settings, get_settings
from sciverify.serving.verify_service import VerifierUnavailable, VerifyService

__all__ = ["EXAMPLE_CLAIMS", "router"]

router = APIRouter(tags=["pages"], include_in_schema=False)
SettingsDep = Annotated[Settings, Depends(get_settings)]

#: Claims from the SciFact training set, shown as one-click examples.
EXAMPLE_CLAIMS = (
    "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
    "ATM and Rad3 related protein have no role in sensing DNA damage.",
    "Adult tissue-resident macrophages are seeded before birth.",
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
    }
    if claim is None:
        return _render(request, "index.html", **context)
    svc: VerifyService = request.app.state.verify
    try:
        text = check_claim(claim, settings)
        kk = await resolve_k(svc, k, settings)
        (items,) = await run_verify(svc, [text], kk)
        abstracts = await asyncio.gather(*(svc.get_abstract(str(v.doc_id)) for v in items))
    except ApiError as exc:
        context["error"] = exc.message
        page = _render(request, "index.html", exc.status, **context)
        page.headers.update(exc.headers or {})  # Retry-After when the server is busy
        return page
    results = [verify_result(v, a) for v, a in zip(items, abstracts, strict=True)]
    context["results"] = {
        "support": [r for r in results if r.label == "SUPPORT"],
        "contradict": [r for r in results if r.label == "CONTRADICT"],
    }
    return _render(request, "index.html", **context)


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
    return _render(request, "abstract.html", abstract=found, highlight=_indices(hl))
