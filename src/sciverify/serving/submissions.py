"""One upload's way from the form to the stored row: the token first, then the form, the team's place
in the scoring queue (:mod:`sciverify.serving.scoring_queue`), scoring and the one transaction that
stores it; and the view of a stored upload. Shared by the API route and the HTML form
(:mod:`sciverify.serving.routes_leaderboard`).
"""

from __future__ import annotations

import asyncio

from sciverify.serving.auth import authenticate
from sciverify.serving.http_errors import ApiError
from sciverify.serving.leaderboard import Leaderboard, clean_filename
from sciverify.serving.leaderboard_schemas import SubmissionOut
from sciverify.serving.phase import phase_closed_at
from sciverify.serving.schemas import check_name
from sciverify.serving.scoring_queue import QueueFull, ScoringQueue, TeamBusy
from sciverify.serving.settings import Settings
from sciverify.serving.tables import Submission
from sciverify.serving.upload_store import IdempotencyConflict, RateLimited
from sciverify.serving.uploads import UploadForm

__all__ = ["is_closed", "process_submission", "submission_out"]


def submission_out(
    row: Submission, submitter: str, gold_public: bool = True, owner: bool = False
) -> SubmissionOut:
    """The view of one stored upload: exact metrics for a public gold, released ones for hidden;
    the file's name, size and hash (and the team's choice) only for its owner."""
    return SubmissionOut(
        id=row.public_id,
        submitter=submitter,
        system=row.system,
        filename=row.filename if owner else None,
        sha256=row.sha256 if owner else None,
        size=row.size if owner else None,
        status=row.status,  # type: ignore[arg-type]
        created_at=row.created_at.replace(microsecond=0).isoformat(),
        gold="public" if gold_public else "hidden",
        metrics=row.scores if gold_public else None,
        released=None if gold_public else row.released,
        problems=row.problems,
        chosen=row.chosen if owner else None,
        url=f"/leaderboard/submissions/{row.public_id}",
    )


def _checked_name(value: str, field: str) -> str:
    try:
        return check_name(value, field)
    except ValueError as exc:
        raise ApiError(422, "invalid_name", str(exc)) from None


def _idempotency_key(value: str | None) -> str | None:
    """The client's key: 1-200 visible ASCII characters (as a header can carry), or None."""
    if value is None or value == "":
        return None
    if len(value) > 200 or not all("!" <= c <= "~" for c in value):
        raise ApiError(
            422, "invalid_idempotency_key", "Idempotency-Key must be 1-200 visible ASCII characters"
        )
    return value


async def is_closed(lb: Leaderboard) -> bool:
    """The operator has closed the board's phase (read from the database: ``leaderboard close`` may
    run while the server does)."""
    return lb.enabled and await asyncio.to_thread(phase_closed_at, lb.db, lb.phase_key) is not None


async def process_submission(
    lb: Leaderboard,
    settings: Settings,
    token: str | None,
    form: UploadForm,
    queue: ScoringQueue,
    idempotency_key: str | None = None,
) -> tuple[int, SubmissionOut, bool]:
    """Authenticate, check, score, store in one transaction; admitted to scoring by ``queue``
    (:mod:`sciverify.serving.scoring_queue`: 503 when full, 429 while the team has an upload in flight).

    Returns:
        (status code, the stored submission as its owner sees it, True when it was stored earlier
        under the same idempotency key and is returned again).
    """
    if not lb.enabled:
        raise ApiError(503, "leaderboard_disabled", "this server has no leaderboard gold file configured")
    submitter = await asyncio.to_thread(authenticate, lb.db, token)
    if submitter is None:
        raise ApiError(
            401, "unauthorized", "missing or unknown API token", headers={"WWW-Authenticate": "Bearer"}
        )
    if form.problem is not None:  # only now: an unknown token learns nothing about its form
        raise form.problem
    key = _idempotency_key(idempotency_key or form.fields.get("idempotency_key"))
    system = _checked_name(form.fields.get("system", ""), "system")
    if form.content is None:
        raise ApiError(422, "missing_file", "attach the predictions file (multipart field 'file')")
    if len(form.content) > settings.max_upload_bytes:
        raise ApiError(
            413,
            "payload_too_large",
            f"the file is larger than the limit of {settings.max_upload_bytes} bytes",
        )
    filename = clean_filename(_checked_name(form.filename or "", "file name"))
    system = " ".join(system.split())[:100] or filename
    content = form.content
    try:
        earlier = await asyncio.to_thread(lb.find_retry, submitter.id, key, content)
        if earlier is not None:
            return _status(earlier), submission_out(earlier, submitter.name, lb.gold_public, True), True
        async with queue.admit(submitter.id, key, len(content)):
            # Again: an upload with the same key may have been stored while this one waited for it.
            earlier = await asyncio.to_thread(lb.find_retry, submitter.id, key, content)
            if earlier is not None:
                return _status(earlier), submission_out(earlier, submitter.name, lb.gold_public, True), True
            if await is_closed(lb):
                raise ApiError(
                    409, "phase_closed", "this leaderboard phase is closed; see /leaderboard/final"
                )
            await asyncio.to_thread(lb.check_rate, submitter.id)
            scored = await queue.run(lb.score, content, filename, team=submitter.id)
            row, fresh = await asyncio.to_thread(
                lb.store, submitter.id, system, filename, content, scored, key
            )
    except RateLimited as exc:
        raise _rate_error(exc) from None
    except IdempotencyConflict:
        raise ApiError(
            409,
            "idempotency_conflict",
            "this Idempotency-Key was used for a different file; use a new key for a new upload",
        ) from None
    except QueueFull as exc:
        raise ApiError(
            503,
            "overloaded",
            f"every scoring slot is taken and the queue is full; retry in {exc.retry_after} s",
            headers={"Retry-After": str(exc.retry_after)},
        ) from None
    except TeamBusy as exc:
        raise ApiError(
            429,
            "upload_in_flight",
            "your team has an upload being scored; send the next one when it is answered "
            f"(retry in {exc.retry_after} s)",
            headers={"Retry-After": str(exc.retry_after)},
        ) from None
    return _status(row), submission_out(row, submitter.name, lb.gold_public, True), not fresh


def _status(row: Submission) -> int:
    return 201 if row.status == "scored" else 422


def _rate_error(exc: RateLimited) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"at most {exc.limit} submissions per {exc.window}; retry in {exc.retry_after} s",
        headers={"Retry-After": str(exc.retry_after)},
    )
