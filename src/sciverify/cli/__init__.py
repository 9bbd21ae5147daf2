"""The ``sciverify`` command line: parses arguments, builds configs, calls the library. Nothing else.

One module per command group, each registering its commands on :data:`app` when imported;
:func:`main` turns every expected failure into
one line and an exit status (:mod:`sciverify.cli._app`). What a command prints is formatted by the
library, beside the result it describes.
"""

from __future__ import annotations

from sciverify.cli import corpus as corpus
from sciverify.cli import data as data
from sciverify.cli import doctor as doctor
from sciverify.cli import evaluate as evaluate
from sciverify.cli import instruct as instruct
from sciverify.cli import leaderboard as leaderboard
from sciverify.cli import serve as serve
from sciverify.cli import train as train
from sciverify.cli import verify as verify
from sciverify.cli._app import app, main

__all__ = ["app", "main"]
