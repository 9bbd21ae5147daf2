"""``sciverify serve``: the fact-checking page, the REST API and the leaderboard in one server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import app
from sciverify.cli.options import ServeDbOpt, ServeDirOpt

__all__ = ["serve"]


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    index: Annotated[
        Path | None,
        typer.Option("--index", help="Retrieval index directory (default: the SciFact index)."),
    ] = None,
    db: ServeDbOpt = None,
    leaderboard_gold: Annotated[
        Path | None,
        typer.Option("--leaderboard-gold", help="Hidden gold claims file the leaderboard scores against."),
    ] = None,
    leaderboard_claims: Annotated[
        Path | None,
        typer.Option(
            "--leaderboard-claims",
            help="Public claims file: the claim ids every upload must predict (default: the gold's ids).",
        ),
    ] = None,
    private_ids: Annotated[
        Path | None,
        typer.Option(
            "--leaderboard-private-ids",
            help="Claim ids (one a line) kept private until `sciverify leaderboard close`.",
        ),
    ] = None,
    private_fraction: Annotated[
        float | None,
        typer.Option(
            "--leaderboard-private-fraction",
            help="Without --leaderboard-private-ids: share of the hidden gold kept private (default 0.5).",
        ),
    ] = None,
    gold_public: Annotated[
        bool | None,
        typer.Option(
            "--gold-public/--gold-hidden",
            help="Public gold (a dev phase: exact scores and full reports) or hidden (the default).",
        ),
    ] = None,
    reuse_spent_gold: Annotated[
        bool | None,
        typer.Option(
            "--reuse-spent-gold",
            help="Start even if claims of the gold were published by an earlier close (a practice gold "
            "tried again); their scores rank nobody.",
        ),
    ] = None,
    data_dir: ServeDirOpt = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="pipeline.toml to serve (e.g. judge = \"llm\" with an \\[llm] section)."
        ),
    ] = None,
) -> None:
    """Serve the fact-checking page, the REST API (/docs) and the leaderboard."""
    from sciverify.serving.server import run_server, settings_from_args

    run_server(settings_from_args(host=host, port=port, index_dir=index, db_url=db,
                                  leaderboard_gold=leaderboard_gold, leaderboard_claims=leaderboard_claims,
                                  leaderboard_private_ids=private_ids,
                                  leaderboard_private_fraction=private_fraction,
                                  gold_public=gold_public, reuse_spent_gold=reuse_spent_gold,
                                  data_dir=data_dir, pipeline_config=config))
