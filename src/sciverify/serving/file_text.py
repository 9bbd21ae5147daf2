"""Whether an uploaded file is UTF-8 text, and if not, what it is: one line that names the problem a
submitter can fix (a compressed archive, binary data, UTF-16, Latin-1, a stray NUL byte) instead of the
JSON parser's "surrogates not allowed".

Why the guess looks at more than a NUL byte: an earlier guess called every file with a NUL in its first
4 KiB "UTF-16", so a gzipped upload, and a UTF-8 file with one stray NUL, were told to be re-saved as
UTF-8, which they already were or could not be. Now compressed data is recognised by its magic bytes,
UTF-16 by the pattern its NULs make (one NUL every other byte), and a lone NUL in UTF-8 text is named as
such, with its line.

Kept apart from the routes (no web framework needed): the leaderboard calls it before parsing a file.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NotUtf8", "not_utf8"]

#: Magic bytes of the archive and compression formats a predictions file is likely to be sent in.
_COMPRESSED = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"PK\x05\x06", "a ZIP archive"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"(\xb5/\xfd", "zstd-compressed data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x04\x22\x4d\x18", "lz4-compressed data"),
)
_HEAD = 4096
#: Share of the bytes at one parity that must be NUL for text to look like UTF-16 of mostly ASCII.
_UTF16_NULS = 0.3
#: Share of control bytes (other than tab, line feed, carriage return) that makes data binary.
_BINARY_CONTROLS = 0.1


@dataclass(frozen=True)
class NotUtf8:
    """Why an uploaded file is not UTF-8 text: the line of its first bad byte, and a message that says
    what the file seems to be and what to do."""

    line: int
    message: str


def _compressed(content: bytes) -> str | None:
    for magic, name in _COMPRESSED:
        if content.startswith(magic):
            return name
    return None


def _encoding_guess(head: bytes) -> str | None:
    """A byte-order mark or the NUL pattern of UTF-16/32; None when neither is there."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith(b"\xff\xfe"):
        return "UTF-16, little-endian"
    if head.startswith(b"\xfe\xff"):
        return "UTF-16, big-endian"
    odd, even = head[1::2], head[0::2]
    if len(head) >= 4:
        if odd.count(0) >= _UTF16_NULS * len(odd) and odd.count(0) > 2 * even.count(0):
            return "UTF-16, little-endian"
        if even.count(0) >= _UTF16_NULS * len(even) and even.count(0) > 2 * odd.count(0):
            return "UTF-16, big-endian"
    return None


def _binary(head: bytes) -> bool:
    controls = sum(1 for b in head if b < 0x20 and b not in (0x09, 0x0A, 0x0D))
    return controls >= _BINARY_CONTROLS * max(len(head), 1)


def not_utf8(content: bytes) -> NotUtf8 | None:
    """None for UTF-8 text without NUL bytes; else where and why not.

    A NUL byte counts: UTF-16 of plain ASCII is valid UTF-8 byte by byte, and JSON never holds a raw NUL.
    Without this check the JSON parser met the bytes first and said "surrogates not allowed", which
    names a symptom, not the file.
    """
    try:
        content.decode("utf-8")
        bad = content.find(b"\x00")
        utf8 = True
    except UnicodeDecodeError as exc:
        bad = exc.start
        utf8 = False
    if bad < 0:
        return None
    line = content.count(b"\n", 0, bad) + 1
    head = content[:_HEAD]
    if (packed := _compressed(content)) is not None:
        return NotUtf8(
            1,
            f"the file is {packed}, not text: decompress it and upload the JSONL file itself "
            "(one JSON object per line, UTF-8)",
        )
    if (encoding := _encoding_guess(head)) is not None:
        return NotUtf8(
            line,
            f"the file is not UTF-8 text (byte {bad}; it looks like {encoding}): "
            "save it as UTF-8 and upload it again",
        )
    if _binary(head):
        return NotUtf8(
            line,
            f"the file is binary data, not text (byte {bad}): upload the JSONL predictions "
            "file (one JSON object per line, UTF-8)",
        )
    if utf8:
        return NotUtf8(
            line,
            f"the file has a NUL byte (byte {bad}), which JSON text never holds: remove it and upload "
            "the file again",
        )
    return NotUtf8(
        line,
        f"the file is not UTF-8 text (byte {bad}; it looks like Latin-1 or Windows-1252): "
        "save it as UTF-8 and upload it again",
    )
