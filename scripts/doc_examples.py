"""The example outputs quoted in README.md and docs/*.md, produced by the program itself.

Every quoted output sits between marker comments, ``<!-- example: NAME -->`` and ``<!-- /example -->``
(inline in a sentence, or around a block), and this script writes what the shipped models and the default
SciFact index give for it there. tests/e2e/test_doc_examples.py runs the same rendering and fails, with a
diff, when a committed example is no longer what the program prints: a changed model or rule then fails CI
instead of leaving stale prose. After such a change, refresh the docs and read the prose around each
example again:

    .venv/bin/python scripts/doc_examples.py            # rewrite the examples in place
    .venv/bin/python scripts/doc_examples.py --check    # exit 1 with a diff if any is stale

The examples are few on purpose (one model load, four claims, seconds of inference) so the test stays
short. They are the output of the reference path, a CPU on which the stance models reproduce their
canaries exactly (any AVX2 CPU, or ``qemu-x86_64 -cpu Haswell`` in front of the command); where the
canaries pass only within their tolerance, probabilities move in the second decimal, so the script
refuses to write there and the test skips, saying why.
"""

from __future__ import annotations

import argparse
import difflib
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFRESH = ".venv/bin/python scripts/doc_examples.py"
MARKER = re.compile(r"(<!-- example: ([a-z0-9-]+) -->)(.*?)(<!-- /example -->)", re.DOTALL)

#: The claims the docs show, by name.
CLAIMS = {
    "smoking": "Smoking increases the risk of lung cancer.",
    "statins": "Statins lower the risk of heart attacks.",
    "folate": "A deficiency of folate increases blood levels of homocysteine.",
    "aldh1": "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
}
#: docs/pipeline.md's Python API block; ``{result}`` is what ``v.verify`` returned, abridged.
PYTHON_API = '''
```python
from sciverify.pipeline.verify import Verifier, load_verifier

v = Verifier.load()                        # default SciFact index (built on first use), shipped models
v.verify("{claim}")
# -> the evidence view: {result}
v.verify_batch([...], k=10); v.get_abstract("{doc_id}"); v.predict(claims)  # leaderboard Predictions
from sciverify.pipeline.evidence import overall_verdict                    # supported / refuted / ...
```
'''
#: The claims whose verdicts docs/evidence.md lists.
VERDICTS = ("smoking", "statins", "folate")
#: The width the CLI example is printed at (a common terminal's, and what fits the docs' code blocks).
CLI_WIDTH = 100
TITLE_CHARS = 90
#: A canary gap below this is the reference path (probabilities printed with two decimals cannot move).
REFERENCE_GAP = 1e-4


class OffReference(Exception):
    """The models run on this CPU, but not exactly as on the reference path."""


def documents() -> list[Path]:
    """The files whose examples are kept: README.md and docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _clip(text: str, limit: int = TITLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _verdicts(answers: dict[str, dict[str, Any]]) -> str:
    """A list: each claim's verdict and why, and every paper shown with its side and weight."""
    lines = []
    for answer in answers.values():
        lines.append(f"- \"{answer['claim']}\" **{answer['verdict']}**: {answer['why']}")
        for side, papers in (("supports", answer["supporting"]), ("refutes", answer["refuting"])):
            for p in papers:
                title = _clip(p["title"])
                lines.append(f"  - {side}, weight {p['weight']:.2f}: *{title}* (doc {p['doc_id']})")
    return "\n" + "\n".join(lines) + "\n"


def _cli(claim: str, results: Any, searched: Any) -> str:
    """What ``sciverify verify "CLAIM"`` prints at :data:`CLI_WIDTH` columns, without colour."""
    from rich.console import Console

    from sciverify.pipeline.present import print_verified

    buffer = io.StringIO()
    console = Console(file=buffer, width=CLI_WIDTH, color_system=None, force_terminal=False,
                      highlight=False, legacy_windows=False)
    print_verified(console, claim, results, searched)
    text = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())
    return f"\n```text\n$ sciverify verify \"{claim}\"\n{text}\n```\n"


def _python_api(claim: str, results: Any) -> str:
    """docs/pipeline.md's Python example with the first paper of its answer, abridged as a repr."""
    if not results:
        return PYTHON_API.format(claim=claim, result="[] (nothing shown)", doc_id="")
    r = results[0]
    first = (f"[VerifiedAbstract(doc_id={r.doc_id}, label={r.label.name}, p_evidence={r.p_evidence:.2f}, "
             f"p_label_correct={r.p_label_correct:.2f},\n#     in_prediction={r.in_prediction}, "
             f"link=\"{r.link}\",\n#     rationale=("
             + "".join(f"RationaleSentence({s.index}, ...), " for s in r.rationale).rstrip(" ")
             + f"), ...){', ...' if len(results) > 1 else ''}]")
    return PYTHON_API.format(claim=claim, result=first, doc_id=r.doc_id)


def off_reference(conformance: Any) -> str | None:
    """Why this CPU is not the reference path the docs were written on (None: it is)."""
    gaps = [r for r in conformance.results if r.measure == "max |dp|" and r.value > REFERENCE_GAP]
    if not gaps:
        return None
    return ("the docs' examples come from a CPU where the models reproduce their canaries exactly; here "
            + "; ".join(r.line() for r in gaps) + f" (CPU: {conformance.cpu.line()})")


def render() -> dict[str, str]:
    """Every example by name, from one real run of the shipped models on the default index.

    Raises:
        OffReference: this CPU is not the reference path (see :func:`off_reference`).
    """
    from sciverify.pipeline.present import verified_to_json
    from sciverify.pipeline.searched import nothing_found_line, searched_line
    from sciverify.pipeline.verify import Verifier

    verifier = Verifier.load()
    reason = off_reference(verifier.conformance)
    if reason is not None:
        raise OffReference(reason)
    searched = verifier.searched
    results = {name: verifier.verify(claim) for name, claim in CLAIMS.items()}
    answers = {name: verified_to_json(CLAIMS[name], results[name], searched) for name in VERDICTS}
    smoking = answers["smoking"]
    first = (smoking["supporting"] + smoking["refuting"])[0]
    examples: dict[str, Callable[[], str]] = {
        "verdicts": lambda: _verdicts(answers),
        "verdict-why": lambda: f"\"{smoking['why']}\"",
        "paper-why": lambda: f"\"{first['why']}\"",
        "searched": lambda: f"\"{searched_line(searched)}\"",
        "nothing-found": lambda: f"\"{nothing_found_line(searched)}\"",
        "verify-cli": lambda: _cli(CLAIMS["folate"], results["folate"], searched),
        "python-api": lambda: _python_api(CLAIMS["aldh1"], results["aldh1"]),
        "verdict-line": lambda: (
            f"\n```text\n$ sciverify verify \"{CLAIMS['smoking']}\"\nclaim: {CLAIMS['smoking']}\n"
            f"overall verdict: {smoking['verdict']}  ({len(smoking['supporting'])} supporting, "
            f"{len(smoking['refuting'])} refuting)\n{searched_line(searched)}\nwhy: {smoking['why']}\n```\n"
        ),
    }
    return {name: make() for name, make in examples.items()}


def refreshed(text: str, examples: dict[str, str], where: Path) -> str:
    """``text`` with every marked example replaced by its rendering; an unknown name is an error."""

    def put(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in examples:
            line = text.count("\n", 0, match.start()) + 1
            raise SystemExit(f"{where.relative_to(ROOT)}:{line}: unknown example {name!r} "
                             f"(known: {', '.join(sorted(examples))})")
        return match.group(1) + examples[name] + match.group(4)

    return MARKER.sub(put, text)


def stale(examples: dict[str, str]) -> list[str]:
    """A unified diff per document whose committed examples differ from ``examples`` (empty: all match)."""
    diffs = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        new = refreshed(text, examples, path)
        if new != text:
            name = str(path.relative_to(ROOT))
            diffs.append("".join(difflib.unified_diff(
                text.splitlines(True), new.splitlines(True), f"{name} (committed)", f"{name} (program)")))
    return diffs


def used_names() -> set[str]:
    return {m.group(2) for path in documents() for m in MARKER.finditer(path.read_text(encoding="utf-8"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 with a diff if stale")
    args = parser.parse_args(argv)
    from sciverify.errors import SciverifyError

    try:
        examples = render()
    except (OffReference, SciverifyError) as exc:
        print(f"error: {exc}; run it on an AVX2 CPU, or as qemu-x86_64 -cpu Haswell {REFRESH}",
              file=sys.stderr)
        return 2
    diffs = stale(examples)
    if args.check:
        if diffs:
            print("".join(diffs) + f"\nthe docs' examples are stale; refresh them with: {REFRESH}")
            return 1
        print(f"{len(used_names())} examples match the program")
        return 0
    for path in documents():
        text = path.read_text(encoding="utf-8")
        new = refreshed(text, examples, path)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"updated {path.relative_to(ROOT)}")
    unused = sorted(set(examples) - used_names())
    if unused:
        print(f"note: examples not quoted anywhere: {', '.join(unused)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
