"""Server settings: the one place where the environment (``SCIVERIFY_*``) reaches the web app.

Routes never read the environment themselves; they take ``Depends(get_settings)`` so a test can swap
the whole object with ``app.dependency_overrides[get_settings]``. The CLI builds a ``Settings`` from its
flags and the app factory installs it the same way.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "get_settings"]


def _claim_limit() -> int:
    from sciverify.pipeline.config import claim_char_limit

    return claim_char_limit()


class Settings(BaseSettings):
    """Everything the server can be told. Limits are deliberately small; raise them explicitly."""

    model_config = SettingsConfigDict(env_prefix="SCIVERIFY_", frozen=True, extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    #: Retrieval index directory for the verifier (None: the pipeline's default SciFact index).
    index_dir: Path | None = None
    #: Pipeline configuration (TOML, ``PipelineConfig.dump_toml``); None: the shipped defaults.
    pipeline_config: Path | None = None
    #: Where the default SQLite database lives (None: ``user_data_dir()/"serve"``).
    data_dir: Path | None = None
    #: SQLAlchemy URL; ``sqlite:///...`` or ``postgresql+psycopg://...``. None: SQLite in ``data_dir``.
    db_url: str | None = None
    #: Gold claims file the leaderboard scores against; never served. None: leaderboard uploads disabled.
    leaderboard_gold: Path | None = None
    #: Corpus used to check that predicted sentence indices exist (None: the SciFact data directory).
    corpus: Path | None = None
    #: The gold is public (a development phase): every view shows exact scores and the full report.
    #: False (the default): the gold is hidden and the public sees only released headline scores.
    gold_public: bool = False
    #: The public claims file of the leaderboard (ids and claim texts, no evidence). Uploads must
    #: predict exactly its claim ids; error messages name only these ids. None: the gold's claim ids.
    leaderboard_claims: Path | None = None
    #: Hidden gold: the claims kept private until the phase is closed (one claim id a line). None: a
    #: seeded cut of ``leaderboard_private_fraction`` of the gold, claim families kept together.
    leaderboard_private_ids: Path | None = None
    #: Hidden gold: the share of gold claims held back for the final ranking (0 turns the split off).
    leaderboard_private_fraction: float = Field(default=0.5, ge=0.0, lt=1.0)
    #: Seed of that cut; None: derived from the gold file's sha256, so nobody without the gold can
    #: recompute which claims are private.
    leaderboard_private_seed: int | None = None
    #: Start even when claims of the gold were published by an earlier close (spent; see
    #: ``serving.spent``): the operator's deliberate choice, for a practice gold tried again.
    reuse_spent_gold: bool = False

    # -- verification limits ------------------------------------------------------------------
    #: The claim length limit shared with the CLI (``SCIVERIFY_MAX_CLAIM_CHARS``, default 1000).
    max_claim_chars: int = Field(default_factory=lambda: _claim_limit(), ge=10)
    #: Candidates judged when a request names none; None: the k the pipeline was tuned for (pipeline.toml).
    default_k: int | None = Field(default=None, ge=1)
    max_k: int = Field(default=50, ge=1)
    max_batch: int = Field(default=100, ge=1)
    #: Largest JSON request body accepted by the API (bytes).
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    #: Seconds a request body may pause between parts before the request gets 408 and its connection
    #: is closed (a client trickling a body). 0 turns it off.
    body_idle_timeout: float = Field(default=10.0, ge=0.0)
    #: Seconds a whole request body may take to arrive (5 MB at 64 KB/s takes 80 s). 0 turns it off.
    body_timeout: float = Field(default=120.0, ge=0.0)
    #: Seconds a request head (request line and headers) may take to arrive, counted from the connection's
    #: opening, or on a kept-alive connection from the head's first byte; past it the connection is
    #: closed (a client trickling headers, or connecting and sending nothing). 0 turns it off.
    header_timeout: float = Field(default=10.0, ge=0.0)
    #: Seconds a connection may stay open idle between requests before it is closed.
    keep_alive_timeout: float = Field(default=15.0, gt=0.0)
    #: Connections one client address may hold open at once; the next one gets 503 with Retry-After and
    #: is closed. Behind a reverse proxy every client has the proxy's address: raise it, or 0 (no cap).
    connections_per_client: int = Field(default=32, ge=0)
    #: Kernel send buffer per connection (bytes; the kernel doubles it for its bookkeeping). A client that
    #: reads nothing can park at most this much of a response in the server's kernel. 0: the system's
    #: autotuned default (megabytes on loopback).
    send_buffer_bytes: int = Field(default=64 * 1024, ge=0)
    #: Seconds a response may wait for its client to read any of it; past it the connection is reset and
    #: what the kernel held for it is freed. 0 turns it off.
    write_timeout: float = Field(default=15.0, ge=0.0)
    #: Seconds between two log lines about one client address's refusals (the first is logged at once,
    #: the rest of the interval's are added up; ``serving.guards``).
    refusal_log_interval: float = Field(default=60.0, gt=0.0)
    #: Claims verified at once; each runs model inference on a worker thread.
    verify_workers: int = Field(default=2, ge=1)
    #: Claims allowed to wait for a worker; past it a request needing the models gets 503 at once.
    verify_queue: int = Field(default=64, ge=1)
    #: Seconds a new claim may be expected to wait for a worker (the batches in flight included), and a
    #: queued claim's answer may be expected to take; later gets 503 with Retry-After at once, the claim
    #: kept as a reservation (admission control, docs/serving.md). 0 turns the deadline off.
    verify_deadline: float = Field(default=1.0, ge=0.0)
    #: Claims with the same k run as one model batch (at most this many). Larger batches barely lower the
    #: model time per claim here, and a request that shares a claim being computed waits for its batch.
    verify_batch: int = Field(default=4, ge=1)
    #: The model threads run this many OS priority steps (nice) below the event loop, so cache hits,
    #: health checks and 503s are answered at once while the models are saturated. 0: same priority.
    verify_nice: int = Field(default=10, ge=0, le=19)
    #: Start loading the verifier at start-up (False: on the first request that needs it).
    preload_verifier: bool = True
    #: Recent (claim, k) answers kept in memory.
    cache_size: int = Field(default=1024, ge=0)

    # -- leaderboard limits -------------------------------------------------------------------
    max_upload_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    submissions_per_hour: int = Field(default=10, ge=1)
    #: Uploads per team per rolling 24 hours (the daily budget; invalid files count).
    submissions_per_day: int = Field(default=5, ge=1)
    #: Hidden gold: a team's released score changes only when an upload beats its released ranking F1
    #: by this much (the Ladder margin).
    release_margin: float = Field(default=0.01, gt=0.0, le=1.0)
    #: Hidden gold: released F1s are rounded down to multiples of this step (at most the margin).
    release_grid: float = Field(default=0.01, gt=0.0, le=1.0)
    #: Hidden gold: ranking F1 a team's first release needs; raised at start-up above what one
    #: perfectly predicted claim alone can score.
    release_floor: float = Field(default=0.05, ge=0.0, le=1.0)
    #: Bootstrap resamples for the intervals and the paired significance test.
    n_boot: int = Field(default=10_000, ge=100)
    seed: int = 0
    #: Submissions scored at once (scoring is CPU-bound).
    scoring_workers: int = Field(default=1, ge=1)
    #: Uploads admitted to wait for a scoring slot; past it an upload gets 503 with Retry-After at once.
    scoring_queue: int = Field(default=4, ge=0)
    #: Seconds one upload's validation and scoring may take; past it the upload is stored as invalid
    #: (it counts toward the limits) and answered 422. 0 turns the budget off.
    scoring_budget: float = Field(default=30.0, ge=0.0)

    @model_validator(mode="after")
    def _grid_within_margin(self) -> Settings:
        if self.release_grid > self.release_margin:
            raise ValueError("release_grid must not exceed release_margin")
        return self

    def resolved_data_dir(self) -> Path:
        """The serving data directory (database, logs), created on demand by the caller."""
        if self.data_dir is not None:
            return self.data_dir
        from sciverify.data.datasets import user_data_dir

        return user_data_dir() / "serve"

    def resolved_db_url(self) -> str:
        """The database URL, defaulting to a SQLite file in the serving data directory."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{self.resolved_data_dir() / 'sciverify.db'}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from the environment; a dependency, overridden by the app factory and by tests."""
    return Settings()
