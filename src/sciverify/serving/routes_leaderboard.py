"""Leaderboard routes: upload (API and form), ranked table (page, JSON, CSV), one page per submission,
and the final ranking once the operator has closed the phase.

Both upload paths share :func:`process_submission`; it answers only after the row is committed, and
an upload carrying an idempotency key that the team used before is answered with the stored row
(no second slot). For a public gold, responses carry exact aggregate metrics and the public report;
for a hidden gold, only the team's released figures (:mod:`sciverify.serving.release`). A file's name,
size and hash are shown to its owner only. Problems are always about the submitter's own file;
nothing derived per claim from the gold, and nothing from its private part before the close, is sent.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response

from sciverify.serving.auth import authenticate
from sciverify.serving.board_view import board_csv, figure, grid_decimals
from sciverify.serving.http_errors import ApiError
from sciverify.serving.leaderboard import (
    FAMILIES,
    FAMILY_TITLES,
    Leaderboard,
)
from sciverify.serving.leaderboard_schemas import FinalOut, LeaderboardOut, SubmissionOut
from sciverify.serving.phase import (
    FINAL_GRID,
    choose_submission,
    final_entries,
    phase_closed_at,
    published_gold,
)
from sciverify.serving.schemas import ErrorOut, check_name
from sciverify.serving.settings import Settings, get_settings
from sciverify.serving.submissions import is_closed, process_submission, submission_out
from sciverify.serving.tables import Submission, Submitter
from sciverify.serving.uploads import read_upload_form

__all__ = ["api_router", "page_router"]

api_router = APIRouter(prefix="/api", tags=["leaderboard"])
page_router = APIRouter(tags=["pages"], include_in_schema=False)
SettingsDep = Annotated[Settings, Depends(get_settings)]
#: A submission id as issued (opaque, URL-safe); anything else is a 422 before any lookup.
SubmissionId = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_\-]+$")]

_REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'; base-uri 'none'"
_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "Predictions JSONL (SciFact leaderboard format)",
                        },
                        "system": {"type": "string", "maxLength": 200},
                        "idempotency_key": {
                            "type": "string",
                            "maxLength": 200,
                            "description": "Same as the Idempotency-Key header (for HTML forms).",
                        },
                    },
                }
            }
        },
    }
}


async def board(request: Request) -> Leaderboard:
    leaderboard: Leaderboard = request.app.state.leaderboard  # async: no thread hop (routes_api.service)
    return leaderboard


BoardDep = Annotated[Leaderboard, Depends(board)]


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


@api_router.post(
    "/submissions",
    status_code=201,
    response_model=SubmissionOut,
    openapi_extra=_UPLOAD_BODY,
    responses={
        401: {"model": ErrorOut},
        409: {"model": ErrorOut},
        413: {"model": ErrorOut},
        422: {"model": ErrorOut},
        429: {"model": ErrorOut},
        503: {"model": ErrorOut},
    },
)
async def submit(
    request: Request,
    lb: BoardDep,
    settings: SettingsDep,
    authorization: Annotated[str | None, Header()] = None,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> Any:
    """Upload a prediction file (multipart ``file``, optional ``system``) with ``Authorization: Bearer
    TOKEN``; 201 with scores once stored.

    An invalid file is stored too (it counts toward the limits) and answered with 422 and the problems
    found, each as file:line: message. With an ``Idempotency-Key`` header, a retry of the same upload
    (say, after a lost answer) returns the stored submission with ``Idempotent-Replayed: true`` and
    spends no slot; the same key with a different file is a 409.
    """
    if not lb.enabled:
        raise ApiError(503, "leaderboard_disabled", "this server has no leaderboard gold file configured")
    form = await read_upload_form(request, settings.max_upload_bytes)
    queue = request.app.state.scoring_queue
    status, out, replayed = await process_submission(
        lb, settings, _bearer(authorization), form, queue, idempotency_key
    )
    headers = {"Idempotent-Replayed": "true"} if replayed else None
    if status == 201:
        return JSONResponse(out.model_dump(), status_code=201, headers=headers)
    problems = [p.model_dump() for p in out.problems or []]
    return JSONResponse(
        {
            "error": "invalid_submission",
            "message": f"{len(problems)} problem(s) in {out.filename}; nothing was scored",
            "problems": problems,
            "submission_id": out.id,
        },
        status_code=422,
        headers=headers,
    )


async def _scored(lb: Leaderboard, submission_id: str) -> tuple[Submission, str]:
    found = await asyncio.to_thread(lb.get, submission_id) if lb.enabled else None
    if found is None or found[0].status != "scored" or found[0].gold_sha256 != lb.phase_key:
        raise ApiError(404, "not_found", f"no scored submission {submission_id}")
    return found


async def _is_owner(lb: Leaderboard, row: Submission, token: str | None) -> bool:
    if not token:
        return False
    submitter: Submitter | None = await asyncio.to_thread(authenticate, lb.db, token)
    return submitter is not None and submitter.id == row.submitter_id


@api_router.get(
    "/submissions/{submission_id}", response_model=SubmissionOut, responses={404: {"model": ErrorOut}}
)
async def get_submission(
    submission_id: SubmissionId, lb: BoardDep, authorization: Annotated[str | None, Header()] = None
) -> SubmissionOut:
    """Public facts about one scored submission; with its owner's token, also the file's name, size
    and sha256."""
    row, name = await _scored(lb, submission_id)
    owner = await _is_owner(lb, row, _bearer(authorization))
    return submission_out(row, name, lb.gold_public, owner)


@api_router.post(
    "/submissions/{submission_id}/choose",
    response_model=SubmissionOut,
    responses={401: {"model": ErrorOut}, 404: {"model": ErrorOut}, 409: {"model": ErrorOut}},
)
async def choose(
    submission_id: SubmissionId, lb: BoardDep, authorization: Annotated[str | None, Header()] = None
) -> SubmissionOut:
    """Choose one of your scored uploads for the final ranking on the private part (replaces any
    earlier choice). Without a choice, the upload your public release rests on is used."""
    submitter = await asyncio.to_thread(authenticate, lb.db, _bearer(authorization)) if lb.enabled else None
    if submitter is None:
        raise ApiError(
            401, "unauthorized", "missing or unknown API token", headers={"WWW-Authenticate": "Bearer"}
        )
    if await is_closed(lb):
        raise ApiError(409, "phase_closed", "this leaderboard phase is closed; see /leaderboard/final")
    row = await asyncio.to_thread(choose_submission, lb.db, lb.phase_key, submitter.id, submission_id)
    if row is None:
        raise ApiError(404, "not_found", f"you have no scored submission {submission_id}")
    return submission_out(row, submitter.name, lb.gold_public, True)


@api_router.get("/leaderboard", response_model=LeaderboardOut)
async def leaderboard_json(lb: BoardDep) -> LeaderboardOut:
    """Scored submissions ranked by sentence-level selection+label F1 (ties share a rank), with 95%
    bootstrap intervals and a paired bootstrap test of each entry against the top one for a public
    gold; one entry per team with its released figures for a hidden gold."""
    entries = await asyncio.to_thread(lb.entries) if lb.enabled else []
    for e in entries:
        e["url"] = f"/leaderboard/submissions/{e['submission_id']}"
    release = None if lb.gold_public else {"margin": lb.rule.margin, "grid": lb.rule.grid}
    return LeaderboardOut.model_validate(
        {
            "ranked_by": lb.rank_by,
            "gold": "public" if lb.gold_public else "hidden",
            "n_boot": lb.n_boot,
            "release": release,
            "closed": await is_closed(lb),
            "entries": entries,
        },
    )


async def _closed_at(lb: Leaderboard) -> Any:
    closed_at = await asyncio.to_thread(phase_closed_at, lb.db, lb.phase_key) if lb.enabled else None
    if closed_at is None:
        raise ApiError(404, "phase_open", "the final ranking is published when the operator closes the phase")
    return closed_at


async def _final(lb: Leaderboard) -> dict[str, Any]:
    closed_at = await _closed_at(lb)
    entries = await asyncio.to_thread(final_entries, lb)
    for e in entries:
        e["url"] = f"/leaderboard/submissions/{e['submission_id']}"
    return {
        "ranked_by": lb.rank_by,
        "part": "private" if lb.has_private else "whole gold",
        "closed_at": closed_at.replace(microsecond=0).isoformat(),
        "grid": FINAL_GRID,
        "gold": _GOLD_URL if lb.final_ids else None,
        "entries": entries,
    }


_GOLD_URL = "/api/leaderboard/final/gold"


@api_router.get(
    "/leaderboard/final/gold",
    response_class=Response,
    responses={200: {"content": {"application/x-ndjson": {}}}, 404: {"model": ErrorOut}},
)
async def final_gold(lb: BoardDep) -> Response:
    """After the close: the gold (JSONL, as the operator's file has it) of every claim the final ranking
    was computed on. A crowd of tokens can read these labels from the ranking anyway, so the close
    publishes them and marks them spent: the server refuses any later phase whose final ranking would use
    one of them. 404 while the phase is open, and for a public gold (nothing is held back)."""
    await _closed_at(lb)
    if not lb.final_ids:
        raise ApiError(404, "nothing_held_back", "a public gold's phase holds no claims back to publish")
    body = await asyncio.to_thread(published_gold, lb)
    disposition = 'attachment; filename="final_gold.jsonl"'
    return Response(body, media_type="application/x-ndjson", headers={"Content-Disposition": disposition})


@api_router.get("/leaderboard/final", response_model=FinalOut, responses={404: {"model": ErrorOut}})
async def final_json(lb: BoardDep) -> FinalOut:
    """After the close: one entry per team (its chosen upload, else the one its release rests on), in
    rank groups by F1 on the private part of the gold, each group with one figure per family rounded
    down to the grid; no exact score. 404 while the phase is open."""
    return FinalOut.model_validate(await _final(lb))


# -- pages ----------------------------------------------------------------------------------------
def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    templates = request.app.state.templates
    context.setdefault("families", FAMILY_TITLES)
    context.setdefault("figure", figure)
    response: HTMLResponse = templates.TemplateResponse(request, name, context, status_code=status)
    return response


def _decimals(lb: Leaderboard) -> int:
    """Released figures are multiples of the grid and printed as such; exact ones with 3 decimals."""
    return 3 if lb.gold_public else grid_decimals(lb.rule.grid)


@page_router.get("/leaderboard", response_class=HTMLResponse)
async def leaderboard_page(request: Request, lb: BoardDep) -> HTMLResponse:
    entries = await asyncio.to_thread(lb.entries) if lb.enabled else []
    return _render(
        request,
        "leaderboard.html",
        entries=entries,
        enabled=lb.enabled,
        rank_by=lb.rank_by,
        lb=lb,
        closed=await is_closed(lb),
        decimals=_decimals(lb),
    )


@page_router.get("/leaderboard.csv")
async def leaderboard_csv(lb: BoardDep) -> Response:
    """The board as shown on the page, as CSV (figures with the page's decimals)."""
    entries = await asyncio.to_thread(lb.entries) if lb.enabled else []
    text = board_csv(entries, FAMILIES, _decimals(lb), intervals=lb.gold_public)
    return PlainTextResponse(
        text,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="leaderboard.csv"'},
    )


@page_router.get("/leaderboard/final", response_class=HTMLResponse)
async def final_page(request: Request, lb: BoardDep) -> HTMLResponse:
    try:
        final = await _final(lb)
    except ApiError:
        return _render(
            request,
            "error.html",
            404,
            title="Not yet",
            message="The final ranking is published when the operator closes the phase.",
        )
    return _render(request, "final.html", final=final, lb=lb, rank_by=lb.rank_by)


def _submit_page(
    request: Request, lb: BoardDep, settings: Settings, status: int = 200, **context: Any
) -> HTMLResponse:
    # A fresh key per rendered form: resending this form (a retry after a lost answer) repeats it.
    return _render(
        request,
        "submit.html",
        status,
        enabled=lb.enabled,
        settings=settings,
        idempotency_key=secrets.token_urlsafe(18),
        **context,
    )


@page_router.get("/leaderboard/submit", response_class=HTMLResponse)
async def submit_page(request: Request, lb: BoardDep, settings: SettingsDep) -> HTMLResponse:
    return _submit_page(request, lb, settings)


@page_router.post("/leaderboard/submit", response_class=HTMLResponse)
async def submit_form(request: Request, lb: BoardDep, settings: SettingsDep) -> HTMLResponse:
    system = ""
    try:
        form = await read_upload_form(request, settings.max_upload_bytes)
        system = form.fields.get("system", "")
        token = form.fields.get("token")
        if token is None and form.problem is not None:  # the token could not be read: say why
            raise form.problem
        queue = request.app.state.scoring_queue
        status, out, _ = await process_submission(lb, settings, token, form, queue)
    except ApiError as exc:
        try:
            shown = check_name(system, "system")
        except ValueError:
            shown = ""
        page = _submit_page(request, lb, settings, exc.status, error=exc.message, system=shown)
        page.headers.update(exc.headers or {})  # Retry-After of a 503 or 429
        return page
    if status == 201:
        return _render(
            request, "submission.html", 201, sub=out, just_submitted=True, lb=lb, decimals=_decimals(lb)
        )
    return _submit_page(
        request,
        lb,
        settings,
        422,
        system=out.system,
        error=f"{len(out.problems or [])} problem(s) in {out.filename}; nothing was scored.",
        problems=out.problems,
    )


@page_router.get("/leaderboard/submissions/{submission_id}", response_class=HTMLResponse)
async def submission_page(request: Request, submission_id: SubmissionId, lb: BoardDep) -> HTMLResponse:
    try:
        row, name = await _scored(lb, submission_id)
    except ApiError:
        return _render(
            request,
            "error.html",
            404,
            title="Not found",
            message=f"There is no scored submission {submission_id}.",
        )
    return _render(
        request,
        "submission.html",
        sub=submission_out(row, name, lb.gold_public),
        just_submitted=False,
        lb=lb,
        decimals=_decimals(lb),
    )


@page_router.get("/leaderboard/submissions/{submission_id}/report")
async def submission_report(submission_id: SubmissionId, lb: BoardDep) -> Response:
    """The scorer's public HTML report (self-contained; its own strict CSP). Public gold only: for a
    hidden gold the report is the operator's (``sciverify leaderboard inspect``)."""
    if not lb.gold_public:
        raise ApiError(404, "not_found", "reports are not published for a hidden gold")
    row, _ = await _scored(lb, submission_id)
    return HTMLResponse(row.report_html or "", headers={"Content-Security-Policy": _REPORT_CSP})
