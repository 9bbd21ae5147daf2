"""Read and write SciFact-format JSONL: corpus, claims and predictions.

Readers validate each record and raise :class:`DataFormatError` naming file and line, because a user
who hands us a 300-line file deserves to hear *which* line is wrong. The ``parse_*`` functions work on
one decoded object and are shared with the scorer's lenient validator and the web API.

The file helpers every stage uses live here, one of each: :func:`open_user_file` (a user's file, or one
clear line saying why it cannot be read), :func:`iter_jsonl` / :func:`read_jsonl`, and
:func:`atomic_writer` (a file appears whole or not at all), with :func:`write_text_atomic` and
:func:`write_jsonl` on top of it. Whether an output can be written at all, checked before the work
starts, is :mod:`sciverify.data.output_checks`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from sciverify.data.records import (
    Abstract,
    AbstractPrediction,
    Claim,
    EvidenceSet,
    Label,
    PaperMeta,
    Prediction,
    doc_key,
)
from sciverify.errors import DataFormatError

__all__ = [
    "abstract_to_json",
    "atomic_writer",
    "iter_jsonl",
    "json_error",
    "label_hint",
    "loads_exact",
    "parse_abstract",
    "parse_claim",
    "parse_meta",
    "parse_prediction",
    "prediction_to_json",
    "read_claims",
    "open_user_file",
    "read_corpus",
    "read_jsonl",
    "read_predictions",
    "write_jsonl",
    "write_predictions",
    "write_text_atomic",
]

_LABEL_HINTS = {
    "SUPPORTS": "SUPPORT",
    "SUPPORTED": "SUPPORT",
    "ENTAILMENT": "SUPPORT",
    "REFUTES": "CONTRADICT",
    "REFUTE": "CONTRADICT",
    "CONTRADICTS": "CONTRADICT",
    "CONTRADICTION": "CONTRADICT",
    "NEI": "NOT_ENOUGH_INFO (leave the abstract out of `evidence` instead)",
    "NOT ENOUGH INFO": "NOT_ENOUGH_INFO (leave the abstract out of `evidence` instead)",
    "NOTENOUGHINFO": "NOT_ENOUGH_INFO (leave the abstract out of `evidence` instead)",
}


def label_hint(value: object) -> str:
    """A message for a label that is not SUPPORT/CONTRADICT, with a hint for the usual mistakes."""
    text = str(value)
    upper = text.strip().upper()
    if text == "NOT_ENOUGH_INFO":
        return (
            "label 'NOT_ENOUGH_INFO' is not a prediction label: a prediction lists only evidence, so leave "
            "the abstract out of `evidence` (an empty `evidence` object predicts no evidence)"
        )
    if upper in ("SUPPORT", "CONTRADICT"):
        return f"label {text!r} must be upper case: use {upper!r}"
    if upper.replace("_", " ") in _LABEL_HINTS or upper in _LABEL_HINTS:
        hint = _LABEL_HINTS.get(upper) or _LABEL_HINTS[upper.replace("_", " ")]
        return f"label {text!r} is not allowed; did you mean {hint}?"
    return f"label {text!r} is not allowed; use 'SUPPORT' or 'CONTRADICT'"


def open_user_file(path: str | Path, expected: str = "a JSONL file") -> IO[bytes]:
    """The file opened for reading bytes; a DataFormatError naming it and the reason otherwise."""
    p = Path(path)
    try:
        return p.open("rb")
    except FileNotFoundError:
        raise DataFormatError("file not found", p) from None
    except IsADirectoryError:
        raise DataFormatError(f"is a directory, expected {expected}", p) from None
    except PermissionError:
        raise DataFormatError("permission denied", p) from None
    except OSError as exc:
        raise DataFormatError(f"cannot open ({exc.strerror or exc})", p) from None


def json_error(exc: orjson.JSONDecodeError) -> str:
    """The decoder's complaint about one line, placed by column only: the caller names the file's line,
    and the decoder's own "line 2 column 1" (it counts the line's trailing newline) would be a second,
    contradictory line number."""
    if exc.lineno > 1:
        return f"{exc.msg}: the line ends before the JSON value does"
    return f"{exc.msg} at column {exc.colno}"


#: An integer literal orjson would read as a float (it keeps 64 bits): 10**30 became ``1e+30``.
_LONG_DIGITS = re.compile(rb"\d{19,}")


def loads_exact(raw: bytes) -> Any:
    """One JSON value, with integers of any size kept exact, so a message prints an id as it was
    written (``1000000000000000000000000000000``, not ``1e+30``). orjson reads the line (and raises
    ``orjson.JSONDecodeError`` for bad JSON); only a line with a run of 19+ digits is read again by
    the standard library, whose integers are unbounded (up to its 4300-digit safety limit, past which
    the float stands)."""
    value = orjson.loads(raw)
    if _LONG_DIGITS.search(raw) is None:
        return value
    try:
        return json.loads(raw)
    except ValueError:
        return value


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, decoded_object)`` for each non-blank line; bad JSON raises with its line."""
    p = Path(path)
    with open_user_file(p) as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield number, loads_exact(raw)
            except orjson.JSONDecodeError as exc:
                raise DataFormatError(f"invalid JSON ({json_error(exc)})", p, number) from None


def _is_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value != "")


def _int_list(value: object, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise ValueError(f"{what} must be a list of integers, got {value!r:.80}")
    return tuple(value)


def parse_abstract(obj: object) -> Abstract:
    """One corpus record: ``doc_id``, ``title``, ``abstract`` (list of sentences), optional ``structured``."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    for field in ("doc_id", "abstract"):
        if field not in obj:
            raise ValueError(f"missing field {field!r}")
    if not _is_id(obj["doc_id"]):
        raise ValueError(f"doc_id must be an integer or a non-empty string, got {obj['doc_id']!r:.80}")
    sentences = obj["abstract"]
    if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
        raise ValueError("abstract must be a list of sentence strings")
    if not any(s.strip() for s in sentences):
        raise ValueError(f"doc {obj['doc_id']!r} has no sentences")
    title = obj.get("title", "")
    if not isinstance(title, str):
        raise ValueError("title must be a string")
    return Abstract(
        doc_id=obj["doc_id"],
        title=title,
        sentences=tuple(sentences),
        structured=bool(obj.get("structured", False)),
        meta=parse_meta(obj.get("metadata")),
    )


_META_TEXT = ("source", "doi", "pmid", "pmcid", "journal", "url")


def parse_meta(value: object) -> PaperMeta | None:
    """A corpus record's optional ``metadata`` object (doi, pmid, journal, year, ...); unknown keys are
    ignored so newer writers stay readable."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("metadata must be an object (doi, pmid, pmcid, journal, year, url, source)")
    fields: dict[str, str | int | None] = {}
    for key in _META_TEXT:
        item = value.get(key, "")
        if not isinstance(item, str):
            raise ValueError(f"metadata.{key} must be a string, got {item!r:.40}")
        fields[key] = item
    year = value.get("year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise ValueError(f"metadata.year must be an integer, got {year!r:.40}")
    fields["year"] = year
    meta = PaperMeta(**fields)  # type: ignore[arg-type]
    return meta if meta != PaperMeta() else None


def abstract_to_json(ab: Abstract) -> dict[str, Any]:
    """The SciFact corpus record of an abstract, with ``metadata`` when it has any."""
    row: dict[str, Any] = {
        "doc_id": ab.doc_id,
        "title": ab.title,
        "abstract": list(ab.sentences),
        "structured": ab.structured,
    }
    if ab.meta is not None:
        row["metadata"] = ab.meta.to_json()
    return row


def parse_claim(obj: object, *, require_text: bool = True) -> Claim:
    """One claim record; ``evidence`` and ``cited_doc_ids`` are optional (test claims have neither)."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if "id" not in obj:
        raise ValueError("missing field 'id'")
    if not _is_id(obj["id"]):
        raise ValueError(f"id must be an integer or a non-empty string, got {obj['id']!r:.80}")
    text = obj.get("claim", "")
    if not isinstance(text, str) and (require_text or "claim" in obj):
        raise ValueError(f"claim {obj['id']!r}: 'claim' must be a string, got {type(text).__name__}")
    if require_text and not text.strip():
        raise ValueError(f"claim {obj['id']!r} has no claim text")
    raw_evidence = obj.get("evidence") or {}
    if not isinstance(raw_evidence, dict):
        raise ValueError("evidence must be an object keyed by doc id")
    evidence: dict[str, tuple[EvidenceSet, ...]] = {}
    for key, sets in raw_evidence.items():
        if not isinstance(sets, list) or not sets:
            raise ValueError(f"evidence[{key!r}] must be a non-empty list of evidence sets")
        parsed = []
        for entry in sets:
            if not isinstance(entry, dict) or "sentences" not in entry or "label" not in entry:
                raise ValueError(f"evidence[{key!r}] entries need 'sentences' and 'label'")
            if entry["label"] not in ("SUPPORT", "CONTRADICT"):
                raise ValueError(f"evidence[{key!r}]: " + label_hint(entry["label"]))
            sentences = _int_list(entry["sentences"], f"evidence[{key!r}] sentences")
            parsed.append(EvidenceSet(sentences, Label(entry["label"])))
        if len({s.label for s in parsed}) > 1:
            raise ValueError(f"evidence[{key!r}] mixes SUPPORT and CONTRADICT")
        evidence[doc_key(key)] = tuple(parsed)
    cited = obj.get("cited_doc_ids") or []
    if not isinstance(cited, list) or not all(_is_id(c) for c in cited):
        raise ValueError("cited_doc_ids must be a list of doc ids")
    return Claim(
        id=obj["id"],
        text=text if isinstance(text, str) else "",
        evidence=evidence,
        cited_doc_ids=tuple(cited),
    )


def parse_prediction(obj: object) -> Prediction:
    """One leaderboard prediction: ``id`` and ``evidence`` {doc_id: {label, sentences, [confidence]}}."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if "id" not in obj:
        raise ValueError("missing field 'id'")
    if not _is_id(obj["id"]):
        raise ValueError(f"id must be an integer or a non-empty string, got {obj['id']!r:.80}")
    if "evidence" not in obj:
        raise ValueError("missing field 'evidence' (use {} to predict no evidence)")
    raw = obj["evidence"]
    if not isinstance(raw, dict):
        raise ValueError("evidence must be an object keyed by doc id")
    evidence: dict[str, AbstractPrediction] = {}
    for key, entry in raw.items():
        if not isinstance(entry, dict):
            raise ValueError(f"evidence[{key!r}] must be an object with 'label' and 'sentences'")
        if "label" not in entry:
            raise ValueError(f"evidence[{key!r}] is missing 'label'")
        if "sentences" not in entry:
            raise ValueError(f"evidence[{key!r}] is missing 'sentences'")
        if entry["label"] not in ("SUPPORT", "CONTRADICT"):
            raise ValueError(f"evidence[{key!r}]: " + label_hint(entry["label"]))
        numbers: dict[str, float | None] = {}
        for name in ("confidence", "p_label_correct"):
            value = entry.get(name)
            bad_number = isinstance(value, bool) or not isinstance(value, int | float)
            if value is not None and (bad_number or value != value):
                raise ValueError(f"evidence[{key!r}] {name} must be a number, got {value!r:.40}")
            numbers[name] = None if value is None else float(value)
        sentences = _int_list(entry["sentences"], f"evidence[{key!r}] sentences")
        repeated = sorted({i for i in sentences if sentences.count(i) > 1})
        if repeated:
            raise ValueError(f"evidence[{key!r}] lists sentence {repeated[0]} more than once")
        evidence[doc_key(key)] = AbstractPrediction(
            label=Label(entry["label"]),
            sentences=sentences,
            confidence=numbers["confidence"],
            p_label_correct=numbers["p_label_correct"],
        )
    return Prediction(id=obj["id"], evidence=evidence)


def _read(path: str | Path, parse: Any, kind: str) -> list[Any]:
    records = []
    for number, obj in iter_jsonl(path):
        try:
            records.append(parse(obj))
        except ValueError as exc:
            raise DataFormatError(str(exc), path, number) from None
    if not records:
        raise DataFormatError(f"no {kind} records in file (is it empty?)", path)
    return records


def read_corpus(path: str | Path) -> list[Abstract]:
    """Read a corpus; duplicate doc ids are an error because they would make rationale indices ambiguous."""
    seen: dict[str, int] = {}
    out: list[Abstract] = []
    for number, obj in iter_jsonl(path):
        try:
            abstract = parse_abstract(obj)
        except ValueError as exc:
            raise DataFormatError(str(exc), path, number) from None
        key = doc_key(abstract.doc_id)
        if key in seen:
            raise DataFormatError(f"duplicate doc_id {abstract.doc_id!r} (first seen on line {seen[key]})",
                                  path, number)
        seen[key] = number
        out.append(abstract)
    if not out:
        raise DataFormatError("no corpus records in file (is it empty?)", path)
    return out


def read_claims(path: str | Path, *, require_text: bool = True) -> list[Claim]:
    """Read claims; duplicate claim ids are an error."""
    claims: list[Claim] = _read(path, lambda o: parse_claim(o, require_text=require_text), "claim")
    seen: set[str] = set()
    for claim in claims:
        if str(claim.id) in seen:
            raise DataFormatError(f"duplicate claim id {claim.id!r}", path)
        seen.add(str(claim.id))
    return claims


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read predictions strictly (the scorer has its own lenient reader that logs problems instead)."""
    preds: list[Prediction] = _read(path, parse_prediction, "prediction")
    return preds


def prediction_to_json(pred: Prediction) -> dict[str, Any]:
    """The leaderboard JSON object for a prediction; ``confidence`` only where known."""
    evidence: dict[str, Any] = {}
    for key, ap in pred.evidence.items():
        entry: dict[str, Any] = {"label": ap.label.value, "sentences": list(ap.sentences)}
        if ap.confidence is not None:
            entry["confidence"] = round(ap.confidence, 6)
        if ap.p_label_correct is not None:
            entry["p_label_correct"] = round(ap.p_label_correct, 6)
        evidence[key] = entry
    return {"id": pred.id, "evidence": evidence}


def read_jsonl(path: str | Path) -> list[Any]:
    """Every decoded line of a JSONL file (blank lines skipped), in order."""
    return [obj for _, obj in iter_jsonl(path)]


#: errno values that mean "this disk cannot take the file", whoever's write met them.
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def _missing_dirs(directory: Path) -> list[Path]:
    """The directories that :func:`atomic_writer` would create for ``directory``, outermost first."""
    missing: list[Path] = []
    d = directory.absolute()
    while not d.exists() and d != d.parent:
        missing.append(d)
        d = d.parent
    return missing[::-1]


def _cannot_write(path: Path, exc: OSError) -> DataFormatError:
    return DataFormatError(f"cannot write here ({exc.strerror or exc})", path)


@contextlib.contextmanager
def atomic_writer(path: str | Path) -> Iterator[IO[bytes]]:
    """A binary handle on a hidden temporary file next to ``path``, renamed onto ``path`` when the block
    ends and removed if it raises: a crash, an error in record 900,000 or Ctrl-C never leaves half a file
    that a later run would take for a whole one. Missing parent directories are created, and removed
    again if the block fails. Every writer of a user's output goes through here.

    Raises:
        DataFormatError: the file cannot be created, written (disk full) or renamed into place.
    """
    p = Path(path)
    created = _missing_dirs(p.parent)
    tmp = p.with_name(f".{p.name}.writing-{os.getpid()}")
    try:
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            handle = tmp.open("wb")
        except OSError as exc:
            raise _cannot_write(p, exc) from None
        with handle:
            try:
                yield handle
            except OSError as exc:
                if exc.errno in _FULL:
                    raise _cannot_write(p, exc) from None
                raise
        try:
            tmp.replace(p)
        except OSError as exc:
            raise _cannot_write(p, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write UTF-8 text through :func:`atomic_writer`."""
    with atomic_writer(path) as handle:
        handle.write(text.encode("utf-8"))


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> None:
    """Write rows as JSONL through :func:`atomic_writer`."""
    with atomic_writer(path) as handle:
        for row in rows:
            handle.write(orjson.dumps(row))
            handle.write(b"\n")


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> None:
    """Write leaderboard-format predictions."""
    write_jsonl(path, (prediction_to_json(p) for p in predictions))
