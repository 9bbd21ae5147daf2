"""The example outputs quoted in README.md and docs/*.md are what the program prints today.

``scripts/doc_examples.py`` renders every marked example from a real run of the shipped models on the
default index; this test renders them again and compares with the committed text, so a changed model or
rule fails here, with the diff and the command that refreshes the docs, instead of leaving stale prose.
It runs on the reference path only (see the script); elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "scripts" / "doc_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_examples"] = module
    spec.loader.exec_module(module)
    return module


doc_examples = _script()


@pytest.fixture(scope="module")
def examples() -> dict[str, str]:
    """The examples as the program prints them here; skipped, with the reason, where the models do not
    run exactly as on the reference path the docs were written on (they refuse this CPU, or reproduce
    their canaries only within tolerance)."""
    from sciverify.models.conformance import ConformanceError

    try:
        return dict(doc_examples.render())
    except (doc_examples.OffReference, ConformanceError) as exc:
        pytest.skip(str(exc))


def test_every_committed_example_is_what_the_program_prints(examples: dict[str, str]) -> None:
    diffs = doc_examples.stale(examples)
    refresh = f"\nthe docs' examples are stale; refresh them with: {doc_examples.REFRESH}"
    assert not diffs, "".join(diffs) + refresh


def test_every_example_is_quoted_and_every_quote_is_an_example(examples: dict[str, str]) -> None:
    assert doc_examples.used_names() == set(examples)


def test_an_unknown_example_name_is_one_clear_error() -> None:
    text = "line one\n<!-- example: no-such-thing -->x<!-- /example -->\n"
    with pytest.raises(SystemExit, match=r"README.md:2: unknown example 'no-such-thing' \(known: searched\)"):
        doc_examples.refreshed(text, {"searched": "y"}, ROOT / "README.md")


def test_a_stale_example_is_replaced_and_the_text_around_it_kept() -> None:
    text = "before <!-- example: searched -->\"Searched 3 abstracts.\"<!-- /example --> after\n"
    block = "<!-- example: cli -->\n```text\nold\n```\n<!-- /example -->\n"
    new = doc_examples.refreshed(text + block, {"searched": "NEW", "cli": "\n```text\nnew\n```\n"},
                                 ROOT / "README.md")
    assert new == ("before <!-- example: searched -->NEW<!-- /example --> after\n"
                   "<!-- example: cli -->\n```text\nnew\n```\n<!-- /example -->\n")
