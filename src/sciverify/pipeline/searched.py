"""What was searched: the corpus's name, its size and, where the records carry them, its years.

"Not enough evidence" means nothing in *this* corpus, not that the literature is silent; every answer
(CLI, JSON, page) says which abstracts were searched so that a reader can tell the two apart.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

__all__ = ["Searched", "describe_corpus", "nothing_found_line", "searched_line"]

#: Metadata larger than this is not scanned for years (the index stays memory-mapped and cold).
_SCAN_LIMIT = 256 * 1024 * 1024
_YEAR = re.compile(rb'"year":\s*(\d{4})')
_SOURCE = re.compile(rb'"source":\s*"([A-Za-z0-9_-]{1,32})"')
_NAMES = {"cord19": "CORD-19", "pubmed": "PubMed", "pmc": "PubMed Central", "scifact": "SciFact"}


class Searched(msgspec.Struct, frozen=True):
    """The corpus a claim was checked against."""

    name: str
    documents: int
    first_year: int | None = None
    last_year: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "documents": self.documents,
            "first_year": self.first_year,
            "last_year": self.last_year,
        }


def _years_and_sources(index: Any) -> tuple[int | None, int | None, list[str]]:
    meta_blob = getattr(index, "meta_blob", None)
    blob = meta_blob() if meta_blob is not None else None
    if blob is None or getattr(blob, "nbytes", _SCAN_LIMIT + 1) > _SCAN_LIMIT:
        return None, None, []
    raw = bytes(memoryview(blob).cast("B"))
    years = [int(y) for y in _YEAR.findall(raw) if 1800 <= int(y) <= 2100]
    sources = sorted({s.decode() for s in _SOURCE.findall(raw)})
    return (min(years) if years else None), (max(years) if years else None), sources


def describe_corpus(index: Any) -> Searched:
    """Name, size and years of an index's corpus: "SciFact" for the official corpus, else the sources
    its records name (CORD-19, PubMed), else its file's name."""
    from pathlib import PurePath

    from sciverify.pipeline.evidence import is_scifact_index

    first, last, sources = _years_and_sources(index)
    if is_scifact_index(index):
        name = "SciFact"
    elif sources:
        name = " + ".join(_NAMES.get(s.lower(), s) for s in sources)
    else:
        corpus = (getattr(index, "manifest", None) or {}).get("corpus") or {}
        name = PurePath(str(corpus.get("path") or "corpus")).name.split(".")[0] or "corpus"
    return Searched(name=name, documents=len(index), first_year=first, last_year=last)


def _years(s: Searched) -> str:
    if s.first_year is None or s.last_year is None:
        return "publication years not recorded"
    if s.first_year == s.last_year:
        return f"published in {s.first_year}"
    return f"published {s.first_year}\u2013{s.last_year}"


def searched_line(s: Searched) -> str:
    """One line: "Searched 5,183 abstracts of the SciFact corpus (publication years not recorded)."""
    return f"Searched {s.documents:,} abstracts of the {s.name} corpus ({_years(s)})."


def nothing_found_line(s: Searched | None) -> str:
    """What "not enough evidence" means, with the corpus named."""
    where = "the corpus" if s is None else f"these {s.documents:,} abstracts ({s.name})"
    return (
        f"No paper in {where} is likely enough to be evidence for or against this claim. "
        "This says nothing about papers outside it."
    )
