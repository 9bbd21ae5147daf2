"""The application factory: ``create_app(settings, verifier=...)`` builds one self-contained server.

The lifespan opens the database and runs the migrations (``upgrade head``), checks the leaderboard
gold file, and starts the verification workers; the verifier itself loads in the background so the
server answers /api/health at once. Tests inject a small verifier double through ``verifier=``; the
real one comes from ``sciverify.pipeline.verify.load_verifier``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.datastructures import MutableHeaders, QueryParams

from sciverify._version import __version__
from sciverify.serving.db import Database
from sciverify.serving.guards import RefusalLog
from sciverify.serving.http_errors import ApiError, install_error_handlers
from sciverify.serving.leaderboard import Leaderboard
from sciverify.serving.limits import BodyLimitMiddleware
from sciverify.serving.scoring_queue import ScoringQueue
from sciverify.serving.settings import Settings, get_settings
from sciverify.serving.verify_service import VerifierLike, VerifyService

__all__ = ["build_leaderboard", "corpus_path", "create_app", "default_loader", "package_dir"]

log = logging.getLogger("sciverify.serving")

#: Paths whose bodies are file uploads (larger limit than the JSON API).
UPLOAD_PATHS = ("/api/submissions", "/leaderboard/submit")

_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; form-action 'self'; base-uri 'none'"
)


#: Query parameters named like credentials: refused with 400 on every route, whatever their value.
_TOKEN_PARAMS = frozenset({"token", "access_token", "api_key", "apikey", "key", "auth", "authorization"})
#: Routes that take a token: none of them reads a query string, so any token-shaped part is refused
#: (in the path, a token-shaped segment is refused on every route).
_AUTHENTICATED = ("/api/submissions", "/leaderboard/submit")


def _bearer(headers: Any) -> str:
    """The request's own bearer token ("" without one)."""
    for name, value in headers:
        if name == b"authorization":
            scheme, _, rest = value.decode("latin-1").partition(" ")
            return rest.strip() if scheme.lower() == "bearer" else ""
    return ""


def _token_in_url(path: str, query: bytes, headers: Any) -> bool:
    """Whether the URL carries a credential, by rule. In the path (any route): a segment, or a run of
    token characters within it (:func:`~sciverify.serving.logs.token_runs`), shaped like a
    secret (:func:`~sciverify.serving.auth.looks_like_token`: no route takes one, submission ids are
    12 characters) or equal to the request's own bearer token. In the query string: a parameter named
    like one (any route); a name or value with this server's token prefix, or equal to the bearer token
    (any route); on the routes that authenticate, any name or value shaped like a secret."""
    from sciverify.serving.auth import TOKEN_PREFIX, looks_like_token
    from sciverify.serving.logs import token_runs

    bearer = _bearer(headers)
    for segment in path.split("/"):
        if looks_like_token(segment) or (bearer and segment.strip() == bearer):
            return True
        # a token with other characters around it (``x,<token>``, ``"<token>"``, ``Bearer <token>``)
        if any(looks_like_token(run) or (bearer and run == bearer) for run in token_runs(segment)):
            return True
    if not query:
        return False
    authenticated = path.startswith(_AUTHENTICATED)
    for key, value in QueryParams(query).multi_items():
        if key.lower() in _TOKEN_PARAMS:
            return True
        for part in (key, value):
            text = part.strip()
            if text.lower().startswith(TOKEN_PREFIX) or (bearer and text == bearer):
                return True
            if authenticated and looks_like_token(text):
                return True
    return False


class HeadersMiddleware:
    """Refuses tokens in URLs and adds the security headers to every response.

    Pure ASGI: Starlette's ``@app.middleware("http")`` starts a task and a memory stream per request,
    a cost every cache hit and every 503 would pay on the event loop under overload.
    """

    def __init__(self, app: Any, refusals: RefusalLog | None = None) -> None:
        self.app = app
        self.refusals = refusals

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        csp = not path.startswith("/docs") and not path.startswith("/redoc")

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self._count(scope, path, int(message["status"]))
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "same-origin")
                if csp:
                    headers.setdefault("Content-Security-Policy", _CSP)
            await send(message)

        query = scope.get("query_string", b"")
        if _token_in_url(path, query, scope.get("headers", ())):
            self._note(scope, "token_in_url")
            # Refused before any route runs, first of all (a token beside a broken byte is still a token
            # to replace); the access log never has query strings or token-shaped text (serving.logs).
            response = JSONResponse(
                {
                    "error": "token_in_url",
                    "message": "send API tokens only in the Authorization header (Bearer); a token in a "
                    "URL ends up in logs and browser history, so this one should be replaced",
                },
                status_code=400,
            )
            await response(scope, receive, send_with_headers)
            return
        where = _not_utf8(scope.get("raw_path") or b"", query)
        if where is not None:
            # Starlette would decode these bytes with replacement characters: refuse, as the JSON API does.
            response = JSONResponse(
                {
                    "error": "invalid_request",
                    "message": f"{where}: text is not valid UTF-8 (a lone surrogate or a broken byte "
                    "sequence); send UTF-8 text",
                },
                status_code=422,
            )
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def _count(self, scope: dict[str, Any], path: str, status: int) -> None:
        """Count a refusal by its status (every route's answers pass here, the body limits' included)."""
        kind = _REFUSALS.get(status)
        if kind is not None:
            self._note(scope, "shed_uploads" if status == 503 and path in UPLOAD_PATHS else kind)

    def _note(self, scope: dict[str, Any], kind: str) -> None:
        if self.refusals is not None:
            client = scope.get("client")
            self.refusals.note(kind, str(client[0]) if client else "")


#: Statuses that are a guard's refusal, and their kind (a 503 on an upload route: ``shed_uploads``).
_REFUSALS = {408: "body_deadline", 413: "body_too_large", 429: "rate_limited", 503: "shed_claims"}


def _not_utf8(raw_path: bytes, query: bytes) -> str | None:
    """Which part of the URL is not UTF-8 once percent-decoded ("path", "query"), or None."""
    from urllib.parse import unquote_to_bytes

    for name, raw in (("path", raw_path), ("query", query.replace(b"+", b" "))):
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return name
    return None


def package_dir() -> Path:
    return Path(__file__).resolve().parent


def default_loader(settings: Settings) -> Callable[[], VerifierLike]:
    """Load the real pipeline verifier (retrieval index + models) on first need."""

    def load() -> VerifierLike:
        from sciverify.pipeline.verify import Verifier, load_verifier

        if settings.pipeline_config is None:
            return load_verifier(index_dir=settings.index_dir)
        from sciverify.pipeline.config import PipelineConfig

        config = PipelineConfig.load_toml(settings.pipeline_config)
        return Verifier.load(index_dir=settings.index_dir, config=config)

    return load


def corpus_path(settings: Settings) -> Path | None:
    if settings.corpus is not None:
        return settings.corpus
    if settings.leaderboard_gold is None:
        return None
    from sciverify.data.datasets import resolve_data_dir

    try:
        corpus = resolve_data_dir(None).corpus
    except Exception:
        return None
    return corpus if corpus.is_file() else None


def build_leaderboard(db: Database, settings: Settings) -> Leaderboard:
    """The leaderboard the settings describe (not yet checked: call ``check()``)."""
    from sciverify.serving.release import ReleaseRule

    return Leaderboard(
        db,
        gold=settings.leaderboard_gold,
        corpus=corpus_path(settings),
        n_boot=settings.n_boot,
        seed=settings.seed,
        per_hour=settings.submissions_per_hour,
        per_day=settings.submissions_per_day,
        budget=settings.scoring_budget or None,
        gold_public=settings.gold_public,
        claims=settings.leaderboard_claims,
        private_ids=settings.leaderboard_private_ids,
        private_fraction=settings.leaderboard_private_fraction,
        private_seed=settings.leaderboard_private_seed,
        rule=ReleaseRule(
            margin=settings.release_margin, grid=settings.release_grid, floor=settings.release_floor
        ),
    )


#: Where ./scripts/setup-swagger-ui puts npm's swagger-ui-dist (5.x: it reads OpenAPI 3.1).
SWAGGER_UI_DIR = Path(__file__).resolve().parent / "static" / "swagger-ui"


def _install_docs(app: FastAPI) -> None:
    """Swagger UI at /docs from files installed next to the package at set-up: no CDN, works offline.

    FastAPI writes an OpenAPI 3.1 schema, which Swagger UI reads from version 5 on; without the files the
    page says how to install them and links the schema.
    """
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse

    installed = (SWAGGER_UI_DIR / "swagger-ui-bundle.js").is_file()
    if installed:
        app.mount("/docs-static", StaticFiles(directory=str(SWAGGER_UI_DIR)), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        if not installed:
            return HTMLResponse(
                "<p>The interactive API docs are not installed: run <code>./scripts/setup-swagger-ui</code> "
                '(it needs npm). The schema is at <a href="/openapi.json">/openapi.json</a>.</p>'
            )
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="sciverify API",
            swagger_js_url="/docs-static/swagger-ui-bundle.js",
            swagger_css_url="/docs-static/swagger-ui.css",
            swagger_favicon_url="/docs-static/favicon-32x32.png",
        )


def create_app(
    settings: Settings | None = None,
    *,
    verifier: VerifierLike | None = None,
    loader: Callable[[], VerifierLike] | None = None,
    preload: bool = True,
) -> FastAPI:
    """Build the app. ``verifier`` (or ``loader``) replaces the real pipeline, for tests."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(settings.resolved_db_url())
        db.migrate()
        board = build_leaderboard(db, settings)
        board.check()
        if board.enabled:
            from sciverify.serving.phase import open_phase, refuse_spent

            try:
                refuse_spent(board, reuse=settings.reuse_spent_gold)
            except BaseException:
                board.close()
                raise
            open_phase(db, board.phase_key, board.final_ids, board.gold)
        service = VerifyService(
            verifier,
            loader=None if verifier is not None else (loader or default_loader(settings)),
            workers=settings.verify_workers,
            queue_limit=settings.verify_queue,
            cache_size=settings.cache_size,
            batch_size=settings.verify_batch,
            deadline=settings.verify_deadline or None,
            nice=settings.verify_nice,
        )
        await service.start(preload=preload and settings.preload_verifier)
        app.state.db = db
        app.state.leaderboard = board
        app.state.verify = service
        app.state.scoring_queue = ScoringQueue(
            settings.scoring_workers, settings.scoring_queue, settings.max_upload_bytes
        )
        log.info(
            "sciverify serving: database %s, leaderboard %s",
            db.backend,
            "enabled" if board.enabled else "disabled",
        )
        try:
            yield
        finally:
            await service.stop()
            board.close()
            db.dispose()

    app = FastAPI(
        title="sciverify",
        version=__version__,
        summary="Verify scientific claims against research abstracts; a SciFact-format leaderboard.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    _install_docs(app)

    async def _settings() -> Settings:  # async: no thread hop per request (routes_api.service)
        return settings

    app.dependency_overrides[get_settings] = _settings
    app.state.settings = settings
    app.state.templates = Jinja2Templates(directory=str(package_dir() / "templates"))
    install_error_handlers(app)

    upload_limit = settings.max_upload_bytes + 64 * 1024  # multipart framing and form fields

    def limit_for(path: str) -> int:
        return upload_limit if path in UPLOAD_PATHS else settings.max_body_bytes

    app.add_middleware(
        BodyLimitMiddleware,
        limit_for=limit_for,
        idle=settings.body_idle_timeout or None,
        total=settings.body_timeout or None,
    )

    refusals = RefusalLog(settings.refusal_log_interval)
    app.state.refusals = refusals
    app.add_middleware(HeadersMiddleware, refusals=refusals)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> PlainTextResponse:
        """The guards' refusal counts since start, in the Prometheus text format (``serving.guards``)."""
        return PlainTextResponse(refusals.metrics(), media_type="text/plain; version=0.0.4")

    @app.get("/static/swagger-ui/{rest:path}", include_in_schema=False)
    async def swagger_once(rest: str) -> None:
        """The Swagger bundle is served at /docs-static only: one path, not two, for 1.7 MB."""
        raise ApiError(404, "not_found", "the API docs' files are under /docs-static/")

    from sciverify.serving import routes_api, routes_leaderboard, routes_pages

    app.include_router(routes_api.router)
    app.include_router(routes_leaderboard.api_router)
    app.include_router(routes_leaderboard.page_router)
    app.include_router(routes_pages.router)
    app.mount("/static", StaticFiles(directory=str(package_dir() / "static")), name="static")
    return app
