"""Leaderboard routes: upload (API and form), ranked table (page and JSON), one page per submission.

Both upload paths share :func:`process_submission`; it answers only after the row is committed.
For a public gold, responses carry exact aggregate metrics and the public report; for a hidden gold,
only the team's released figures (:mod:`sciverify.serving.release`). Problems are always about the
submitter's own file; nothing derived per claim from the gold is ever sent.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Header, Path, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, Response

from sciverify.serving.auth import authenticate
from sciverify.serving.http_errors import ApiError
from sciverify.serving.leaderboard import FAMILY_TITLES, Leaderboard, RateLimited, clean_filename
from sciverify.serving.models import Submission
from sciverify.serving.schemas import ErrorOut, LeaderboardOut, SubmissionOut
from sciverify.serving.settings import Settings, get_settings

__all__ = ["api_router", "page_router", "process_submission"]

api_router = APIRouter(prefix="/api", tags=["leaderboard"])
page_router = APIRouter(tags=["pages"], include_in_schema=False)
SettingsDep = Annotated[Settings, Depends(get_settings)]
#: A submission id as the database can hold it (a larger number is a 422, not a database error).
SubmissionId = Annotated[int, Path(ge=1, le=2**31 - 1)]

_REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'; base-uri 'none'"


async def board(request: Request) -> Leaderboard:
    leaderboard: Leaderboard = request.app.state.leaderboard  # async: no thread hop (routes_api.service)
    return leaderboard


BoardDep = Annotated[Leaderboard, Depends(board)]


def submission_out(row: Submission, submitter: str, gold_public: bool = True) -> SubmissionOut:
    """The public view of one stored upload: exact metrics for a public gold, released ones for hidden."""
    return SubmissionOut(
        id=row.id,
        submitter=submitter,
        system=row.system,
        filename=row.filename,
        sha256=row.sha256,
        size=row.size,
        status=row.status,  # type: ignore[arg-type]
        created_at=row.created_at.replace(microsecond=0).isoformat(),
        gold="public" if gold_public else "hidden",
        metrics=row.scores if gold_public else None,
        released=None if gold_public else row.released,
        problems=row.problems,
        url=f"/leaderboard/submissions/{row.id}",
    )


async def process_submission(
    lb: Leaderboard,
    settings: Settings,
    token: str | None,
    upload: UploadFile | None,
    system: str,
    gate: asyncio.Semaphore,
) -> tuple[int, SubmissionOut]:
    """Authenticate, read (capped), score, store in one transaction; (status code, stored submission)."""
    if not lb.enabled:
        raise ApiError(503, "leaderboard_disabled", "this server has no leaderboard gold file configured")
    submitter = await asyncio.to_thread(authenticate, lb.db, token)
    if submitter is None:
        raise ApiError(
            401, "unauthorized", "missing or unknown API token", headers={"WWW-Authenticate": "Bearer"}
        )
    try:
        await asyncio.to_thread(lb.check_rate, submitter.id)
    except RateLimited as exc:
        raise _rate_error(exc, settings) from None
    if upload is None:
        raise ApiError(422, "missing_file", "attach the predictions file (multipart field 'file')")
    content = await upload.read(settings.max_upload_bytes + 1)
    if len(content) > settings.max_upload_bytes:
        raise ApiError(
            413,
            "payload_too_large",
            f"the file is larger than the limit of {settings.max_upload_bytes} bytes",
        )
    filename = clean_filename(upload.filename)
    system = " ".join(system.split())[:100] or filename
    async with gate:  # scoring is CPU-bound: bounded by settings.scoring_workers
        scored = await asyncio.to_thread(lb.score, content, filename)
    try:
        row = await asyncio.to_thread(lb.store, submitter.id, system, filename, content, scored)
    except RateLimited as exc:
        raise _rate_error(exc, settings) from None
    return (201 if scored.valid else 422), submission_out(row, submitter.name, lb.gold_public)


def _rate_error(exc: RateLimited, settings: Settings) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"at most {exc.limit} submissions per {exc.window}; retry in {exc.retry_after} s",
        headers={"Retry-After": str(exc.retry_after)},
    )


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


@api_router.post(
    "/submissions",
    status_code=201,
    response_model=SubmissionOut,
    responses={
        401: {"model": ErrorOut},
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
    file: Annotated[
        UploadFile | None, File(description="Predictions JSONL (SciFact leaderboard format)")
    ] = None,
    system: Annotated[str, Form(max_length=200)] = "",
    authorization: Annotated[str | None, Header()] = None,
) -> Any:
    """Upload a prediction file with ``Authorization: Bearer TOKEN``; 201 with scores once stored.

    An invalid file is stored too (it counts toward the hourly limit) and answered with 422 and the
    problems found, each as file:line: message.
    """
    gate = request.app.state.scoring_gate
    status, out = await process_submission(lb, settings, _bearer(authorization), file, system, gate)
    if status == 201:
        return JSONResponse(out.model_dump(), status_code=201)
    problems = [p.model_dump() for p in out.problems or []]
    return JSONResponse(
        {
            "error": "invalid_submission",
            "message": f"{len(problems)} problem(s) in {out.filename}; nothing was scored",
            "problems": problems,
            "submission_id": out.id,
        },
        status_code=422,
    )


async def _scored(lb: Leaderboard, submission_id: int) -> tuple[Submission, str]:
    found = await asyncio.to_thread(lb.get, submission_id)
    if found is None or found[0].status != "scored" or found[0].gold_sha256 != lb.gold_sha256:
        raise ApiError(404, "not_found", f"no scored submission {submission_id}")
    return found


@api_router.get(
    "/submissions/{submission_id}", response_model=SubmissionOut, responses={404: {"model": ErrorOut}}
)
async def get_submission(submission_id: SubmissionId, lb: BoardDep) -> SubmissionOut:
    """Public facts about one scored submission."""
    row, name = await _scored(lb, submission_id)
    return submission_out(row, name, lb.gold_public)


@api_router.get("/leaderboard", response_model=LeaderboardOut)
async def leaderboard_json(lb: BoardDep) -> LeaderboardOut:
    """Scored submissions ranked by sentence-level selection+label F1, with 95% bootstrap intervals and a
    paired bootstrap test of each entry against the top one."""
    entries = await asyncio.to_thread(lb.entries)
    for e in entries:
        e["url"] = f"/leaderboard/submissions/{e['submission_id']}"
    release = None if lb.gold_public else {"margin": lb.rule.margin, "grid": lb.rule.grid}
    return LeaderboardOut.model_validate(
        {
            "ranked_by": lb.rank_by,
            "gold": "public" if lb.gold_public else "hidden",
            "n_boot": lb.n_boot,
            "release": release,
            "entries": entries,
        },
    )


# -- pages ----------------------------------------------------------------------------------------
def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    templates = request.app.state.templates
    context.setdefault("families", FAMILY_TITLES)
    response: HTMLResponse = templates.TemplateResponse(request, name, context, status_code=status)
    return response


@page_router.get("/leaderboard", response_class=HTMLResponse)
async def leaderboard_page(request: Request, lb: BoardDep) -> HTMLResponse:
    entries = await asyncio.to_thread(lb.entries) if lb.enabled else []
    return _render(
        request, "leaderboard.html", entries=entries, enabled=lb.enabled, rank_by=lb.rank_by, lb=lb
    )


@page_router.get("/leaderboard/submit", response_class=HTMLResponse)
async def submit_page(request: Request, lb: BoardDep, settings: SettingsDep) -> HTMLResponse:
    return _render(request, "submit.html", enabled=lb.enabled, settings=settings)


@page_router.post("/leaderboard/submit", response_class=HTMLResponse)
async def submit_form(
    request: Request,
    lb: BoardDep,
    settings: SettingsDep,
    token: Annotated[str, Form(max_length=200)] = "",
    system: Annotated[str, Form(max_length=200)] = "",
    file: Annotated[UploadFile | None, File()] = None,
) -> HTMLResponse:
    try:
        gate = request.app.state.scoring_gate
        status, out = await process_submission(lb, settings, token, file, system, gate)
    except ApiError as exc:
        return _render(
            request,
            "submit.html",
            exc.status,
            enabled=lb.enabled,
            settings=settings,
            error=exc.message,
            system=system,
        )
    if status == 201:
        return _render(request, "submission.html", 201, sub=out, just_submitted=True, lb=lb)
    return _render(
        request,
        "submit.html",
        422,
        enabled=lb.enabled,
        settings=settings,
        system=system,
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
        request, "submission.html", sub=submission_out(row, name, lb.gold_public), just_submitted=False, lb=lb
    )


@page_router.get("/leaderboard/submissions/{submission_id}/report")
async def submission_report(submission_id: SubmissionId, lb: BoardDep) -> Response:
    """The scorer's public HTML report (self-contained; its own strict CSP). Public gold only: for a
    hidden gold the report is the operator's (``sciverify leaderboard inspect``)."""
    if not lb.gold_public:
        raise ApiError(404, "not_found", "reports are not published for a hidden gold")
    row, _ = await _scored(lb, submission_id)
    return HTMLResponse(row.report_html or "", headers={"Content-Security-Policy": _REPORT_CSP})
