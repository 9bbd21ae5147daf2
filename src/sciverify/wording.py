"""Counts in words, "1 problem" and "2 problems": one helper, so that no message hedges with "problem(s)"
or says "1 abstracts"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in agreement with it: the singular for exactly 1, else ``plural`` (default: the
    noun with an "s")."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
