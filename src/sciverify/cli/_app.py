"""The Typer application every command module registers on, its two consoles, and :func:`main`, the one
place where an expected failure becomes one line and an exit status.

Exit statuses: 0 done; 1 aborted; 2 a :class:`~sciverify.errors.SciverifyError` or a usage error (one line
on stderr, never a traceback); 130 interrupted (Ctrl-C or SIGINT; outputs are written whole or not at all,
see :func:`sciverify.data.io.atomic_writer`).
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from sciverify.errors import SciverifyError

__all__ = [
    "COMMAND_ORDER",
    "app",
    "console",
    "data_app",
    "err_console",
    "ingest_app",
    "leaderboard_app",
    "main",
]

#: The order of ``sciverify --help``: the README's, from checking a claim to the tools around it.
COMMAND_ORDER = (
    "verify", "predict", "evaluate", "compare", "oracle", "serve", "leaderboard", "ingest", "index",
    "train", "calibrate", "instruct-pairs", "instruct-run", "evaluate-instruct", "data",
)


class _OrderedGroup(TyperGroup):
    """Lists the commands in :data:`COMMAND_ORDER` whichever module registered them first."""

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: n for n, name in enumerate(COMMAND_ORDER)}
        return sorted(super().list_commands(ctx), key=lambda name: rank.get(name, len(rank)))


app = typer.Typer(
    name="sciverify",
    cls=_OrderedGroup,
    help="Verify scientific claims against research abstracts, and score claim-verification systems.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
data_app = typer.Typer(help="Locate, fetch and check the SciFact data.", no_args_is_help=True)
ingest_app = typer.Typer(
    help="Turn literature dumps (CORD-19, PubMed) into a SciFact-format corpus for `sciverify index`.",
    no_args_is_help=True,
)
leaderboard_app = typer.Typer(help="Manage the leaderboard of `sciverify serve`.", no_args_is_help=True)
app.add_typer(leaderboard_app, name="leaderboard")
app.add_typer(ingest_app, name="ingest")
app.add_typer(data_app, name="data")

console = Console()
err_console = Console(stderr=True)


@app.callback()
def _options(
    verbose: bool = typer.Option(
        False, "--verbose", help="Show the libraries' log lines (alembic, httpx, ...), quiet by default."
    ),
) -> None:
    """Options for every command (given before it: ``sciverify --verbose serve``)."""
    from sciverify.logs import configure_logging

    configure_logging(verbose)


def _flags_show_no_value() -> None:
    """Help lists a plain flag (``--json``, ``--help``) without a value type: this typer prints
    ``--json <bool>``, which reads as if the flag took a value. It takes none."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_sciverify", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)

    display_type_rich._sciverify = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_show_no_value()


def _interrupted() -> NoReturn:
    """Ctrl-C: one line and status 130. Outputs in progress were being written to hidden temporary
    files beside their targets, which the writers remove on the way out."""
    err_console.print("[yellow]interrupted[/] (no output file was left half-written)", highlight=False)
    sys.exit(130)


def _show_usage_error(exc: Exception) -> NoReturn:
    """Click's usage errors (and typer's vendored copies, which have the same ``show`` and ``exit_code``)
    print themselves; anything else is a bug and keeps its traceback."""
    import click

    if isinstance(exc, click.ClickException) or (
        callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int)
    ):
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    if isinstance(exc, click.exceptions.Exit):
        sys.exit(exc.exit_code)
    raise exc


def main() -> None:
    """Entry point: run the Typer app, turning expected errors into one clear message."""
    try:
        # outside standalone mode this typer *returns* what a command ends with: None when it finishes,
        # the status of a typer.Exit, and 130 for a KeyboardInterrupt (which it turns into Exit(130))
        status = app(standalone_mode=False)
    except SciverifyError as exc:
        # the message is plain text: a path or a claim with [brackets] must not be read as markup
        err_console.print(Text.assemble(("error:", "bold red"), f" {exc}"), highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:  # the machine said no (a disk, a permission, a path) where no check foresaw it
        where = f"{exc.filename}: " if exc.filename else ""
        err_console.print(Text.assemble(("error:", "bold red"), f" {where}{exc.strerror or exc}"),
                          highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort as exc:
        # click turns a KeyboardInterrupt raised inside a command into Abort
        if isinstance(exc.__context__, KeyboardInterrupt) or isinstance(exc.__cause__, KeyboardInterrupt):
            _interrupted()
        err_console.print("[yellow]aborted[/]")
        sys.exit(1)
    except Exception as exc:  # click usage errors and the like
        _show_usage_error(exc)
    if status == 130:
        _interrupted()
    if isinstance(status, int) and not isinstance(status, bool) and status != 0:
        sys.exit(status)
