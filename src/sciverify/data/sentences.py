"""Sentence splitting for abstracts given as one string (corpus files, CORD-19, PubMed).

Rationale indices point at sentences, so the split must be good on scientific prose: abbreviations
("et al.", "e.g.", "Fig. 2"), decimals ("p < 0.05") and initials must not end a sentence. pysbd's
rule-based segmenter handles these and is deterministic, which keeps an index reproducible.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sciverify.errors import MissingDependencyError

__all__ = ["split_sentences"]


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    try:
        import pysbd
    except ImportError:
        raise MissingDependencyError("pysbd", "models") from None
    return pysbd.Segmenter(language="en", clean=False, char_span=False)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into stripped, non-empty sentences (an empty list for blank text)."""
    if not text.strip():
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]
