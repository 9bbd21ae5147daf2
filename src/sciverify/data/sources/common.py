"""What every literature reader shares: the ingest report, gzip-aware opening, and an output file
that appears only when the whole corpus was written.

A reader yields :class:`~sciverify.data.records.Abstract` records one by one; :func:`write_corpus`
streams them through :func:`sciverify.data.io.atomic_writer`, so an error in record 900,000 (or Ctrl-C)
leaves no half corpus that a later ``sciverify index`` would take for a whole one.
"""

from __future__ import annotations

import contextlib
import gzip
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson

from sciverify.data.io import abstract_to_json, atomic_writer, open_user_file
from sciverify.data.records import Abstract
from sciverify.data.sentences import split_sentences
from sciverify.errors import DataFormatError
from sciverify.wording import counted

__all__ = ["IngestReport", "open_binary", "read_errors", "sentences_of", "write_corpus"]

#: How many skipped or duplicate records are listed one by one (the rest are only counted).
MAX_NOTES = 20


@dataclass
class IngestReport:
    """Counts of one ingest run, and the first few records that were skipped or replaced, by place."""

    source: str
    files: int = 0
    records: int = 0
    written: int = 0
    no_abstract: int = 0
    duplicates: int = 0
    deleted: int = 0
    notes: list[str] = field(default_factory=list)

    def note(self, message: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(message)

    def summary(self) -> str:
        parts = [
            f"{counted(self.records, 'record')} read from {counted(self.files, 'file')}",
            f"{counted(self.written, 'abstract')} written",
            f"{self.no_abstract} skipped without an abstract",
            f"{counted(self.duplicates, 'duplicate')} resolved",
        ]
        if self.source == "pubmed":
            parts.append(f"{self.deleted} deleted by DeleteCitation")
        return ", ".join(parts)


class _OwnedGzip(gzip.GzipFile):
    """A gzip reader that closes the file under it too (``GzipFile(fileobj=...)`` leaves it open)."""

    def __init__(self, handle: IO[bytes]) -> None:
        super().__init__(fileobj=handle, mode="rb")
        self._handle = handle

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._handle.close()


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, gunzipped on the fly when it starts with the gzip magic number; closing the
    returned reader closes the file."""
    handle = open_user_file(path, "a file")
    magic = handle.read(2)
    handle.seek(0)
    if magic == b"\x1f\x8b":
        return _OwnedGzip(handle)  # type: ignore[return-value]
    return handle


@contextlib.contextmanager
def read_errors(path: Path) -> Iterator[None]:
    """Turn what a damaged gzip stream raises into one line naming the file."""
    try:
        yield
    except EOFError:
        raise DataFormatError(
            "truncated gzip file: it ends before its end-of-stream marker (an interrupted download?)", path
        ) from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise DataFormatError(f"damaged gzip file ({exc})", path) from None


def sentences_of(text: str) -> list[str]:
    """An abstract's text as sentences, with the project's splitter (whitespace runs folded first:
    dumps wrap lines inside sentences)."""
    return split_sentences(" ".join(text.split()))


def write_corpus(records: Iterable[Abstract], out: str | Path) -> int:
    """Stream abstracts as SciFact corpus JSONL to ``out`` (temporary file, then rename); returns the
    number written. Nothing is left at ``out`` if reading fails."""
    count = 0
    with atomic_writer(out) as handle:
        for ab in records:
            handle.write(orjson.dumps(abstract_to_json(ab)))
            handle.write(b"\n")
            count += 1
    return count
