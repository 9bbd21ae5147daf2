"""JSON API for verification: /api/verify, /api/predict, /api/abstracts/{doc_id}, /api/health."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse

from sciverify._version import __version__
from sciverify.data.records import Abstract, Label
from sciverify.errors import EndpointError, InputError
from sciverify.serving.http_errors import ApiError
from sciverify.serving.schemas import (
    AbstractOut,
    ErrorOut,
    HealthOut,
    PredictRequest,
    PredictResponse,
    VerifyRequest,
    VerifyResponse,
    paper_out,
    prediction_out,
    related_out,
    verify_response,
    verify_result,
)
from sciverify.serving.settings import Settings, get_settings
from sciverify.serving.verify_service import Overloaded, VerifierUnavailable, VerifyService

__all__ = ["answer_claim", "check_claim", "check_k", "router", "run_verify"]

router = APIRouter(prefix="/api", tags=["verification"])
SettingsDep = Annotated[Settings, Depends(get_settings)]

_ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorOut, "description": "Request body too large"},
    422: {"model": ErrorOut, "description": "Invalid claim, k or batch"},
    503: {"model": ErrorOut, "description": "Verifier loading failed or queue full"},
}


async def service(request: Request) -> VerifyService:
    # async: FastAPI runs a plain ``def`` dependency on a thread, one hop per request through a pool
    # that competes with the model threads for the GIL
    verify: VerifyService = request.app.state.verify
    return verify


ServiceDep = Annotated[VerifyService, Depends(service)]


def check_claim(claim: str, settings: Settings, field: str = "claim") -> str:
    """The claim stripped of surrounding space, or a 422 saying what is wrong with it."""
    text = claim.strip()
    if not text:
        raise ApiError(422, "empty_claim", f"{field} is empty: type a scientific claim to verify")
    if len(text) > settings.max_claim_chars:
        raise ApiError(
            422,
            "claim_too_long",
            f"{field} has {len(text)} characters; the limit is {settings.max_claim_chars}",
        )
    return text


def check_k(k: int | None, settings: Settings) -> int | None:
    """``k`` or the configured default, within 1..max_k; None when neither is set (the service then
    uses the pipeline's tuned k)."""
    value = settings.default_k if k is None else k
    if value is None:
        return None
    if not 1 <= value <= settings.max_k:
        raise ApiError(422, "k_out_of_range", f"k must be between 1 and {settings.max_k}, got {value}")
    return value


def _unavailable() -> ApiError:
    return ApiError(
        503, "verifier_unavailable", "the verifier could not be loaded; the reason is in the server log"
    )


def _overloaded(exc: Overloaded) -> ApiError:
    return ApiError(
        503,
        "overloaded",
        f"the server is busy; retry in {exc.retry_after} s",
        headers={"Retry-After": str(exc.retry_after)},
        extra={"retry_after": exc.retry_after},
    )


async def resolve_k(svc: VerifyService, k: int | None, settings: Settings, since: float | None = None) -> int:
    """The k a request runs with: its own or the configured one (checked by :func:`check_k`), else the
    pipeline's tuned one; 503 if the models cannot load, or are still loading at the deadline of a request
    that arrived at ``since``."""
    try:
        return await svc.resolve_k(check_k(k, settings), since=since)
    except Overloaded as exc:
        raise _overloaded(exc) from None
    except VerifierUnavailable:
        raise _unavailable() from None


async def run_verify(  # type: ignore[no-untyped-def]
    svc: VerifyService, claims: list[str], k: int, since: float | None = None
):
    """Verify claims for a request that arrived at ``since`` (``time.monotonic()``; its deadline counts
    from there), turning service failures into client-facing errors."""
    try:
        return await svc.verify_many(claims, k, since=since)
    except Overloaded as exc:
        raise _overloaded(exc) from None
    except VerifierUnavailable:
        raise _unavailable() from None
    except InputError as exc:
        raise ApiError(422, "invalid_claim", str(exc)) from None
    except EndpointError as exc:  # the LLM judge's server failed: say so, never an empty result
        raise ApiError(502, "llm_endpoint", str(exc)) from None


async def answer_claim(
    svc: VerifyService, settings: Settings, claim: str, k: int | None, include_abstract: bool
) -> VerifyResponse:
    """The evidence view of one claim as the API, the page and its exports give it."""
    since = time.monotonic()
    text = check_claim(claim, settings)
    kk = await resolve_k(svc, k, settings, since)
    (view,) = await run_verify(svc, [text], kk, since)
    items = [v for v in view if Label(v.label) is not Label.NOT_ENOUGH_INFO]
    abstracts: list[Abstract | None] = [None] * len(items)
    if include_abstract:
        abstracts = list(await asyncio.gather(*(svc.get_abstract(str(v.doc_id)) for v in items)))
    results = [verify_result(v, a) for v, a in zip(items, abstracts, strict=True)]
    related = [related_out(v) for v in view if Label(v.label) is Label.NOT_ENOUGH_INFO]
    return verify_response(text, kk, results, await svc.searched(), related)


@router.post("/verify", response_model=VerifyResponse, responses=_ERRORS)
async def verify(body: VerifyRequest, settings: SettingsDep, svc: ServiceDep) -> VerifyResponse:
    """Every paper the models find relevant, grouped as supporting and refuting, each with its rationale
    sentences, P(evidence) and P(label right | evidence), and an overall verdict."""
    return await answer_claim(svc, settings, body.claim, body.k, body.include_abstract)


@router.post("/predict", response_model=PredictResponse, responses=_ERRORS, response_model_exclude_none=True)
async def predict(
    body: PredictRequest, settings: SettingsDep, svc: ServiceDep, format: str = "json"
) -> PredictResponse | PlainTextResponse:
    """Leaderboard-format predictions for a batch of claims (``?format=jsonl`` for a submission file)."""
    since = time.monotonic()
    if not body.claims:
        raise ApiError(422, "empty_batch", "claims is empty: send at least one {id, claim}")
    if len(body.claims) > settings.max_batch:
        raise ApiError(
            422,
            "batch_too_large",
            f"{len(body.claims)} claims in one request; the limit is {settings.max_batch}",
        )
    if format not in ("json", "jsonl"):
        raise ApiError(422, "invalid_format", "format must be 'json' or 'jsonl'")
    ids = [c.id for c in body.claims]
    if len({str(i) for i in ids}) != len(ids):
        raise ApiError(422, "duplicate_id", "claim ids must be unique within a batch")
    texts = [check_claim(c.claim, settings, f"claims[{i}].claim") for i, c in enumerate(body.claims)]
    k = await resolve_k(svc, body.k, settings, since)
    results = await run_verify(svc, texts, k, since)
    preds = [prediction_out(i, items) for i, items in zip(ids, results, strict=True)]
    if format == "jsonl":
        lines = "".join(p.model_dump_json(exclude_none=True) + "\n" for p in preds)
        return PlainTextResponse(lines, media_type="application/x-ndjson")
    return PredictResponse(predictions=preds)


@router.get("/abstracts/{doc_id}", response_model=AbstractOut, responses={404: {"model": ErrorOut}})
async def abstract(doc_id: str, svc: ServiceDep) -> AbstractOut:
    """One corpus abstract, sentence by sentence (indices match the rationale indices)."""
    if len(doc_id) > 200:
        raise ApiError(404, "not_found", "no abstract with that id")
    try:
        found = await svc.get_abstract(doc_id)
    except VerifierUnavailable:
        raise ApiError(
            503, "verifier_unavailable", "the corpus could not be loaded; the reason is in the server log"
        ) from None
    if found is None:
        raise ApiError(404, "not_found", f"no abstract with id {doc_id!r}")
    return AbstractOut(
        doc_id=found.doc_id,
        title=found.title,
        sentences=list(found.sentences),
        structured=found.structured,
        paper=paper_out(found.meta),
        link=await svc.paper_link(found),
    )


def _public_info(info: dict[str, object]) -> dict[str, object]:
    """Index facts without where anything lives on the server's disk (no paths in public answers)."""
    return {
        key: value
        for key, value in info.items()
        if key not in ("path", "root", "dir")
        and not (isinstance(value, str) and ("/" in value or "\\" in value))
    }


@router.get("/health", response_model=HealthOut)
async def health(request: Request, svc: ServiceDep) -> HealthOut:
    """Liveness plus the state of the verifier, database and leaderboard."""
    db_state = "ok"
    try:
        await asyncio.to_thread(request.app.state.db.ping)
    except Exception:
        db_state = "error"
    verifier = svc.status
    cpu_check = svc.conformance()
    ok = db_state == "ok" and verifier != "failed" and cpu_check.get("ok", True) is True
    return HealthOut(
        status="ok" if ok else "degraded",
        version=__version__,
        verifier=verifier,
        cpu_check=cpu_check,
        database=db_state,
        leaderboard=request.app.state.leaderboard.enabled,
        index=_public_info(svc.info()),
        queue=svc.counters(),
    )
