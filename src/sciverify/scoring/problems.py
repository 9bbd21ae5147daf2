"""A problem found in an input file: where (file, line) and what, in words a submitter can act on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sciverify.errors import DataFormatError
from sciverify.wording import counted

__all__ = ["Problem", "problems_error"]


@dataclass(frozen=True)
class Problem:
    """One validation problem. ``line`` is 1-based, or None when the problem concerns the whole file."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, str | int | None]:
        return {"file": self.file, "line": self.line, "message": self.message}


def problems_error(problems: Sequence[Problem], what: str, *, shown: int = 10) -> DataFormatError:
    """One error naming the first problem's file and line and listing the first ``shown`` problems."""
    first = problems[0]
    lines = [str(p) for p in problems[:shown]]
    more = f"\n  ... and {len(problems) - shown} more" if len(problems) > shown else ""
    message = f"{counted(len(problems), 'problem')} in {what}:\n  " + "\n  ".join(lines) + more
    return DataFormatError(message, first.file, first.line)
