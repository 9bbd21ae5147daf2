"""``sciverify leaderboard``: the operator's tools for the leaderboard of ``sciverify serve``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import console, leaderboard_app
from sciverify.cli.options import DataOpt, ServeDbOpt, ServeDirOpt

__all__ = [
    "leaderboard_add_submitter",
    "leaderboard_close",
    "leaderboard_inspect",
    "leaderboard_list",
    "leaderboard_make_gold",
    "leaderboard_revoke",
]


@leaderboard_app.command("add-submitter")
def leaderboard_add_submitter(
    name: Annotated[str, typer.Argument(help="Team name shown on the leaderboard.")],
    db: ServeDbOpt = None,
    data_dir: ServeDirOpt = None,
    expires: Annotated[
        str | None,
        typer.Option("--expires", help="Token end: a duration (12h, 30d, 2w) or an ISO date/time (UTC)."),
    ] = None,
) -> None:
    """Register a team and print its API token (shown once; only its sha256 is stored)."""
    from sciverify.serving.server import add_submitter_cli, settings_from_args

    token = add_submitter_cli(settings_from_args(db_url=db, data_dir=data_dir), name, expires)
    console.print(f"submitter {name!r} added. API token (shown once, keep it secret):", markup=False)
    print(token)


@leaderboard_app.command("revoke")
def leaderboard_revoke(
    name: Annotated[str, typer.Argument(help="Team whose token stops working now.")],
    db: ServeDbOpt = None,
    data_dir: ServeDirOpt = None,
) -> None:
    """Revoke a team's token at once (its uploads stay on the board)."""
    from sciverify.serving.server import revoke_submitter_cli, settings_from_args

    print(revoke_submitter_cli(settings_from_args(db_url=db, data_dir=data_dir), name))


@leaderboard_app.command("list")
def leaderboard_list(db: ServeDbOpt = None, data_dir: ServeDirOpt = None) -> None:
    """List the teams: state (active, expired, revoked), expiry, revocation, uploads."""
    from sciverify.serving.server import list_submitters_cli, settings_from_args

    print(list_submitters_cli(settings_from_args(db_url=db, data_dir=data_dir)))


@leaderboard_app.command("inspect")
def leaderboard_inspect(
    submission_id: Annotated[str, typer.Argument(help="Submission id (as in /leaderboard/submissions/ID).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the uploaded file and the stored full report into this directory."),
    ] = None,
    db: ServeDbOpt = None,
    data_dir: ServeDirOpt = None,
) -> None:
    """Operator only: exact scores, released figures and the full report of one upload (never served)."""
    from sciverify.serving.server import inspect_submission_cli, settings_from_args

    if out is not None:
        from sciverify.data.output_checks import check_output_dir

        check_output_dir(out)
    view = inspect_submission_cli(settings_from_args(db_url=db, data_dir=data_dir), submission_id, out)
    print(json.dumps(view, indent=2))


@leaderboard_app.command("close")
def leaderboard_close(db: ServeDbOpt = None, data_dir: ServeDirOpt = None) -> None:
    """Close the open phase: uploads stop, the ranking on the private part goes public."""
    from sciverify.serving.server import close_phase_cli, settings_from_args

    print(json.dumps(close_phase_cli(settings_from_args(db_url=db, data_dir=data_dir)), indent=2))


@leaderboard_app.command("make-gold")
def leaderboard_make_gold(
    out: Annotated[Path, typer.Option("-o", "--out", help="Gold claims JSONL to write (with evidence).")],
    claims_out: Annotated[
        Path, typer.Option("--claims-out", help="Public claims JSONL to write (ids and texts only).")
    ],
    data: DataOpt = None,
) -> None:
    """Write a practice gold to try a phase with: the validation split of claims_train.jsonl (train
    claims, so its scores say nothing about a system) and its public claims file."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.serving.practice_gold import write_practice_gold

    n = write_practice_gold(resolve_data_dir(data).train, out, claims_out)
    console.print(f"practice gold: {n} train claims in {out}, their public claims in {claims_out}",
                  markup=False, highlight=False, soft_wrap=True)
