"""Whether an uploaded file is UTF-8 text, and if not, what it looks like: one clear line for a file
saved as UTF-16 or Latin-1 instead of the JSON parser's "surrogates not allowed".

Kept apart from the routes (no web framework needed): the leaderboard calls it before parsing a file.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NotUtf8", "not_utf8"]


@dataclass(frozen=True)
class NotUtf8:
    """Why an uploaded file is not UTF-8 text: the line of its first bad byte, and a message with a
    guess at what it is."""

    line: int
    message: str


def _guess(content: bytes) -> str:
    """A cheap guess at a text's encoding from its first bytes (byte-order marks, NULs), for a message."""
    head = content[:4096]
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith(b"\xff\xfe"):
        return "UTF-16, little-endian"
    if head.startswith(b"\xfe\xff"):
        return "UTF-16, big-endian"
    if b"\x00" in head:
        odd = head[1::2].count(0) > head[0::2].count(0)
        return "UTF-16, little-endian" if odd else "UTF-16, big-endian"
    return "Latin-1 or Windows-1252"


def not_utf8(content: bytes) -> NotUtf8 | None:
    """None for UTF-8 text; else where and why not (a NUL byte counts: UTF-16 of plain ASCII is valid
    UTF-8 byte by byte, and JSON never holds a raw NUL).

    Without this the JSON parser met the bytes first and said "surrogates not allowed", which names a
    symptom, not the file's encoding.
    """
    try:
        content.decode("utf-8")
        bad = content.find(b"\x00")
    except UnicodeDecodeError as exc:
        bad = exc.start
    if bad < 0:
        return None
    line = content.count(b"\n", 0, bad) + 1
    return NotUtf8(
        line,
        f"the file is not UTF-8 text (byte {bad}; it looks like {_guess(content)}): "
        "save it as UTF-8 and upload it again",
    )
