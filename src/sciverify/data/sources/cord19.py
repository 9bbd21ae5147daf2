"""CORD-19's ``metadata.csv`` as corpus records, streamed row by row.

The release documents one paper per ``cord_uid``, but the same paper can appear on several rows (one
per source it was found in). We keep the first row of a ``cord_uid`` that has an abstract and count
the others as duplicates; rows without an abstract are skipped and counted. Only the set of written
``cord_uid`` strings grows with the file (about 60 bytes each), never the rows themselves.

Abstracts are one string; they are split with the project's sentence splitter. ``publish_time`` gives
the year; ``url`` may list several addresses separated by ``;`` and the first is kept.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from sciverify.data.records import Abstract, PaperMeta
from sciverify.data.sources.common import (
    IngestReport,
    open_binary,
    read_errors,
    sentences_of,
    write_corpus,
)
from sciverify.errors import DataFormatError

__all__ = ["ingest_cord19", "REQUIRED_COLUMNS", "iter_cord19"]

#: Columns without which a row cannot become a corpus record.
REQUIRED_COLUMNS = ("cord_uid", "title", "abstract")
_YEAR = re.compile(r"(1[89]|20)\d\d")


def _year(text: str) -> int | None:
    match = _YEAR.match(text.strip())
    return int(match.group(0)) if match else None


def iter_cord19(path: str | Path, report: IngestReport) -> Iterator[Abstract]:
    """Yield one abstract per ``cord_uid`` of a CORD-19 ``metadata.csv`` (plain or gzipped).

    Raises:
        DataFormatError: a required column is missing, a row has the wrong number of fields, or the
            file is not valid CSV/UTF-8 (with file:line).
    """
    path = Path(path)
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # abstracts are longer than csv's 128 KiB default
    report.files += 1
    seen: dict[str, int] = {}
    with read_errors(path), open_binary(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        reader = csv.reader(text, strict=True)
        try:
            header = next(reader, None)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise DataFormatError(f"not a valid CSV header ({exc})", path, 1) from None
        if header is None:
            raise DataFormatError("empty file: expected CORD-19 metadata.csv with a header row", path)
        columns = {name.strip(): i for i, name in enumerate(header)}
        missing = [c for c in REQUIRED_COLUMNS if c not in columns]
        if missing:
            raise DataFormatError(
                f"missing column {', '.join(repr(c) for c in missing)} in the header "
                f"(found: {', '.join(header[:8])}{', ...' if len(header) > 8 else ''}); "
                "is this CORD-19's metadata.csv?",
                path,
                1,
            )

        def get(row: list[str], name: str) -> str:
            i = columns.get(name)
            return row[i].strip() if i is not None else ""

        last_line = reader.line_num
        while True:
            start = last_line + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except (csv.Error, UnicodeDecodeError) as exc:
                raise DataFormatError(f"not valid CSV ({exc})", path, start) from None
            last_line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            report.records += 1
            if len(row) != len(header):
                raise DataFormatError(
                    f"row has {len(row)} fields, the header has {len(header)} (an unquoted comma or "
                    "newline?)",
                    path,
                    start,
                )
            uid = get(row, "cord_uid")
            if not uid:
                raise DataFormatError("row has an empty cord_uid", path, start)
            sentences = sentences_of(get(row, "abstract"))
            if not sentences:
                report.no_abstract += 1
                report.note(f"{path}:{start}: cord_uid {uid!r} has no abstract: skipped")
                continue
            if uid in seen:
                report.duplicates += 1
                report.note(f"{path}:{start}: cord_uid {uid!r} seen again (kept line {seen[uid]})")
                continue
            seen[uid] = start
            url = get(row, "url").split(";")[0].strip()
            pmid = get(row, "pubmed_id")
            yield Abstract(
                doc_id=uid,
                title=" ".join(get(row, "title").split()),
                sentences=tuple(sentences),
                meta=PaperMeta(
                    source="cord19",
                    doi=get(row, "doi"),
                    pmid=pmid if pmid.isdigit() else "",
                    pmcid=get(row, "pmcid"),
                    journal=get(row, "journal"),
                    year=_year(get(row, "publish_time")),
                    url=url,
                ),
            )


def ingest_cord19(path: str | Path, out: str | Path) -> IngestReport:
    """Write the corpus JSONL of a CORD-19 ``metadata.csv`` to ``out`` (all or nothing)."""
    report = IngestReport("cord19")
    report.written = write_corpus(iter_cord19(path, report), out)
    return report
