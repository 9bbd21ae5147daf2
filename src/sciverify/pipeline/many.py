"""Many claims in one call: ``sciverify verify A B C``, or ``sciverify verify -``, one claim per line.

Loading the index and the models is most of a single ``verify`` call, so checking claims one call at a
time pays it again for each. Here the models load once, on the first usable claim (a call whose every
claim is unusable loads nothing), and each claim is answered in order, whole: its view is rendered
before a byte of it is written, so Ctrl-C between or during claims leaves only complete answers on
stdout. A claim that cannot be checked (empty, too long, not UTF-8) is named by where it came from
(``claim 2``, the second argument; ``stdin line 7``) in one line on stderr, and the rest are still
answered; the caller turns the list of those into a non-zero exit. Blank lines on stdin are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from sciverify.errors import InputError
from sciverify.pipeline.verify import check_claim

if TYPE_CHECKING:
    from rich.console import Console

    from sciverify.data.records import VerifiedAbstract
    from sciverify.pipeline.verify import Verifier

__all__ = ["STDIN", "ClaimInput", "Tally", "answer_each", "claim_inputs", "is_many", "stdin_claims"]

#: The argument that stands for stdin, one claim per line.
STDIN = "-"


@dataclass(frozen=True)
class ClaimInput:
    """One claim as given: ``where`` it came from, the checked ``text``, or the ``problem`` that makes it
    unusable (then ``text`` is empty)."""

    where: str
    text: str = ""
    problem: str = ""


def is_many(args: Sequence[str]) -> bool:
    """Whether the arguments ask for the many-claims output (a rule per claim; JSON lines): more than one
    argument, or stdin, whose number of claims is unknown until it ends. One argument keeps the one-claim
    output."""
    return len(args) != 1 or args[0] == STDIN


def _checked(where: str, text: str, limit: int | None) -> ClaimInput:
    try:
        return ClaimInput(where, text=check_claim(text, limit))
    except InputError as exc:
        return ClaimInput(where, problem=str(exc))


def stdin_claims(stream: Iterable[bytes], limit: int | None = None) -> Iterator[ClaimInput]:
    """One claim per non-blank line of ``stream`` (bytes, so a line that is not UTF-8 is named, not fatal),
    read as it comes: a claim is answered before the next line is waited for."""
    for number, raw in enumerate(stream, start=1):
        where = f"stdin line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield ClaimInput(where, problem="claim is not valid UTF-8 text; pass it as UTF-8")
            continue
        if line.strip():
            yield _checked(where, line, limit)


def claim_inputs(
    args: Sequence[str], stdin: Iterable[bytes], limit: int | None = None
) -> Iterator[ClaimInput]:
    """The claims of the arguments in order, each ``-`` replaced by the lines of ``stdin``."""
    for number, arg in enumerate(args, start=1):
        if arg == STDIN:
            yield from stdin_claims(stdin, limit)
        else:
            yield _checked(f"claim {number}", arg, limit)


@dataclass
class Tally:
    """What a call did: how many claims it answered, where the unusable ones came from, and the verifier
    (None when no claim was usable, so no model loaded)."""

    answered: int = 0
    failed: list[str] = field(default_factory=list)
    verifier: Verifier | None = None

    def failed_line(self) -> str:
        """The closing line of a call where some claims could not be checked ("" when none)."""
        if not self.failed:
            return ""
        n, total = len(self.failed), len(self.failed) + self.answered
        shown = ", ".join(self.failed[:10]) + (f" and {n - 10} more" if n > 10 else "")
        rest = "; the others were answered" if self.answered else ""
        return f"{n} of {total} claims could not be checked ({shown}){rest}"


def _text_block(console: Console, where: str, claim: str, results: Sequence[VerifiedAbstract],
                verifier: Verifier) -> str:
    """One claim's view as the console would print it (styles included), headed by a rule naming it."""
    from rich.rule import Rule

    from sciverify.pipeline.present import print_verified

    with console.capture() as captured:
        console.print(Rule(where, style="dim"))
        print_verified(console, claim, results, verifier.searched)
    return captured.get()


def _json_line(claim: str, results: Sequence[VerifiedAbstract], verifier: Verifier) -> str:
    import orjson

    from sciverify.pipeline.present import verified_to_json

    return orjson.dumps(verified_to_json(claim, results, verifier.searched)).decode() + "\n"


def answer_each(
    inputs: Iterable[ClaimInput],
    load: Callable[[], Verifier],
    *,
    k: int | None,
    as_json: bool,
    out: IO[str],
    console: Console,
    problem: Callable[[ClaimInput], Any],
) -> Tally:
    """Answer each claim on ``out`` in order (a JSON object per line, or the console view under a rule),
    each written whole and flushed; ``problem`` is told of each unusable claim as it comes."""
    tally = Tally()
    for item in inputs:
        if item.problem:
            tally.failed.append(item.where)
            problem(item)
            continue
        if tally.verifier is None:
            tally.verifier = load()
        verifier = tally.verifier
        results = verifier.verify(item.text, k=k)
        block = (_json_line(item.text, results, verifier) if as_json
                 else _text_block(console, item.where, item.text, results, verifier))
        out.write(block)
        out.flush()
        tally.answered += 1
    return tally
