"""Checks, before any work is done, that a command's outputs can be written where it was told.

Split from :mod:`sciverify.data.io`, which reads records and writes files, because these answer a
different question at a different time: not how a file is written (:func:`~sciverify.data.io.atomic_writer`
does that, at the end) but whether it can be, at the start, so a command that computes for minutes
never fails at the end because its ``-o`` names a directory, one of its own inputs, or a place
nobody can write.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from sciverify.errors import DataFormatError

__all__ = ["check_not_an_input", "check_output_dir", "check_output_file"]


def check_not_an_input(path: str | Path, inputs: Iterable[str | Path | None]) -> None:
    """Refuse an output that is one of the command's inputs (the same file, however it is named: same
    device and inode), which writing would destroy.

    Raises:
        DataFormatError: naming the output and the input it would overwrite.
    """
    p = Path(path)
    for given in inputs:
        if given is None:
            continue
        try:
            same = p.exists() and Path(given).exists() and os.path.samefile(p, given)
        except OSError:
            same = False
        if same:
            raise DataFormatError(
                f"is also an input of this command ({given}); writing it would destroy that input: "
                "choose another output path",
                p,
            )


def _check_writable_dir(target: Path, directory: Path, what: str) -> None:
    """The deepest existing directory on the way to ``directory`` (where ``target`` will be written)
    must be a directory that can take a new file; proved by creating (and removing) one there, the one
    test that /proc, /sys, read-only mounts and ACLs all answer truthfully."""
    ancestor = directory.absolute()
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise DataFormatError(f"{ancestor} is not a directory; choose another {what}", target)
    try:
        fd, probe = tempfile.mkstemp(prefix=".sciverify-check-", dir=ancestor)
    except OSError as exc:
        raise DataFormatError(
            f"cannot write in {ancestor} ({exc.strerror or exc}); choose another {what}", target
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def check_output_file(
    path: str | Path, what: str = "output file", *, inputs: Iterable[str | Path | None] = ()
) -> Path:
    """Check, before any work is done, that ``path`` can be written as a new or replaced file.

    A command that computes for minutes must not fail at the end because its ``-o`` names a
    directory, an input of the same command, or a place nobody can write. Missing directories are
    fine: :func:`atomic_writer` creates them when the file is written (and not before).

    Raises:
        DataFormatError: naming the path and what is wrong with it.
    """
    p = Path(path)
    if p.is_dir():
        raise DataFormatError(
            f"is a directory; give the {what} a file name (e.g. {p / 'predictions.jsonl'})", p
        )
    check_not_an_input(p, inputs)
    if p.exists() and not os.access(p, os.W_OK):
        raise DataFormatError("exists and is not writable", p)
    _check_writable_dir(p, p.parent if str(p.parent) else Path("."), what)
    return p


def check_output_dir(
    path: str | Path, what: str = "output directory", *, inputs: Iterable[str | Path | None] = ()
) -> Path:
    """Check, before any work is done, that ``path`` can be (or become) a directory of outputs: it is a
    directory or does not exist yet (it and its parents are created when the outputs are written), and
    none of ``inputs`` lies inside it where an output could replace it.

    Raises:
        DataFormatError: naming the path and what is wrong with it.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise DataFormatError(f"exists and is a file; the {what} must be a directory", p)
    for given in inputs:
        if given is not None and Path(given).exists():
            check_not_an_input(p / Path(given).name, [given])
    _check_writable_dir(p, p, what)
    return p
