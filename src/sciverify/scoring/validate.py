"""Read the scorer's inputs, checking every record and naming file and line for each problem.

Gold and corpus problems are fatal (a leaderboard cannot score against a broken key). Prediction
problems are collected as :class:`~sciverify.scoring.problems.Problem` records and the valid part is
scored; the rules for what a problem does to the score are:

* a line that is not valid JSON, not an object, has no usable ``id``, names a claim that is not in
  the gold file, or repeats a claim already predicted is ignored;
* a gold claim with no prediction line predicts nothing (its gold evidence still counts as relevant);
* a missing or non-object ``evidence`` predicts nothing for that claim;
* an evidence entry with a label other than SUPPORT/CONTRADICT, or a missing/malformed label or
  sentence list, is kept as a predicted abstract that can never be correct (it still counts as
  retrieved, and its listed sentences as retrieved sentences);
* a doc id not in the corpus, a sentence index out of range (or negative), a sentence listed more than
  once, or an unusable confidence or ``p_label_correct`` is reported; the entry is scored as given
  (minus the unusable number; a repeated sentence counts once per listing, as the leaderboard counts it);
* an evidence entry listing more sentences than its abstract has (with a corpus), or more than
  :data:`MAX_LISTED_SENTENCES` (without one), is reported and kept as a wrong abstract whose listed
  sentences all count as retrieved; its indices are not examined one by one. No abstract can be
  rationalized by more sentences than it has, so the bound changes no honest score, and it keeps the
  work per entry small before anything is scored.

Every check is linear in the size of the file (one pass, a counter per entry), so a file of any shape
within the upload limit is read in seconds (``python benchmarks/bench_validate.py``).

A file without any of these problems is scored exactly as the leaderboard scorer scores it.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sciverify.data.io import json_error, label_hint, loads_exact, open_user_file, parse_claim, read_corpus
from sciverify.data.records import Claim, doc_key
from sciverify.scoring.counts import Entry
from sciverify.scoring.problems import Problem, problems_error

__all__ = [
    "MAX_LISTED_SENTENCES",
    "OverBudget",
    "PredictionFile",
    "load_corpus_sizes",
    "load_gold",
    "load_predictions",
    "raise_if_problems",
]

_VALID_LABELS = ("SUPPORT", "CONTRADICT")
_BOM = b"\xef\xbb\xbf"
#: Sentences one predicted abstract may list when no corpus says how many it has (SciFact's longest
#: abstract has 367); with a corpus, the abstract's own sentence count is the bound.
MAX_LISTED_SENTENCES = 1000


class OverBudget(Exception):
    """Reading the file took past its deadline (a server's time budget for one upload)."""


def _records(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line, object, None)`` or ``(line, None, error)`` for each non-blank line."""
    with open_user_file(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            if not raw.strip():
                continue
            try:
                yield number, loads_exact(raw), None
            except orjson.JSONDecodeError as exc:
                yield number, None, f"invalid JSON ({json_error(exc)})"


def _short(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def load_corpus_sizes(path: str | Path) -> dict[str, int]:
    """Number of sentences of every corpus document, keyed by :func:`doc_key`. Corpus problems are fatal."""
    return {doc_key(a.doc_id): len(a.sentences) for a in read_corpus(path)}


def load_gold(path: str | Path, corpus: Mapping[str, int] | None = None) -> tuple[Claim, ...]:
    """Read and check the gold claims; any problem raises one :class:`DataFormatError` listing them.

    Checks: valid JSON objects, the claim schema (``id``, ``evidence`` with SUPPORT/CONTRADICT
    sets), unique ids, non-empty evidence sets, non-negative sentence indices, and with a corpus:
    evidence docs exist and indices are in range. A file in which no claim has evidence is refused,
    since it is almost certainly an unlabelled claims file.
    """
    p = Path(path)
    problems: list[Problem] = []
    claims: list[Claim] = []
    seen: dict[str, int] = {}
    for number, obj, error in _records(p):
        if error is not None:
            problems.append(Problem(str(p), number, error))
            continue
        try:
            claim = parse_claim(obj, require_text=False)
        except ValueError as exc:
            problems.append(Problem(str(p), number, str(exc)))
            continue
        key = str(claim.id)
        if key in seen:
            problems.append(
                Problem(str(p), number, f"duplicate claim id {claim.id!r} (first on line {seen[key]})")
            )
            continue
        seen[key] = number
        for doc, sets in claim.evidence.items():
            where = f"claim {claim.id!r}, evidence[{doc!r}]"
            for s in sets:
                if not s.sentences:
                    problems.append(Problem(str(p), number, f"{where}: empty evidence set"))
                elif min(s.sentences) < 0:
                    problems.append(Problem(str(p), number, f"{where}: negative sentence index"))
            if corpus is not None:
                if doc not in corpus:
                    problems.append(Problem(str(p), number, f"{where}: doc {doc} is not in the corpus"))
                else:
                    bad = sorted({i for s in sets for i in s.sentences if i >= corpus[doc]})
                    if bad:
                        problems.append(
                            Problem(
                                str(p),
                                number,
                                f"{where}: sentence index {bad[0]} out of "
                                f"range (the abstract has {corpus[doc]} sentences)",
                            )
                        )
        claims.append(claim)
    if not claims and not problems:
        problems.append(Problem(str(p), None, "no gold claims in file (is it empty?)"))
    elif claims and not problems and not any(c.evidence for c in claims):
        problems.append(
            Problem(
                str(p),
                None,
                "no claim has gold evidence: is this an unlabelled claims "
                "file (such as claims_test.jsonl) rather than a gold file?",
            )
        )
    if problems:
        raise problems_error(problems, "the gold file")
    return tuple(claims)


@dataclass(frozen=True)
class PredictionFile:
    """The scorable content of a prediction file: entries per claim key (``str(id)``) and problems."""

    entries: dict[str, tuple[Entry, ...]]
    lines: dict[str, int]
    problems: tuple[Problem, ...]
    n_records: int


def _entry(key: str, raw: object, corpus: Mapping[str, int] | None) -> tuple[Entry, list[str]]:
    """One evidence entry and the problems with it (messages without location)."""
    notes: list[str] = []
    if corpus is not None and key not in corpus:
        notes.append(f"doc {_short(key)} is not in the corpus")
    if not isinstance(raw, dict):
        notes.append("must be an object with 'label' and 'sentences'; counted as a wrong abstract")
        return Entry(key, "", (), 0, None, False, notes[-1]), notes
    valid = True
    label = raw.get("label")
    if "label" not in raw:
        notes.append("missing 'label'; counted as a wrong abstract")
        valid = False
    elif label not in _VALID_LABELS:
        hint = label_hint(label if isinstance(label, str) and len(label) <= 60 else _short(label, 40))
        notes.append(f"{hint}; counted as a wrong abstract")
        valid = False
    sentences: tuple[int, ...] = ()
    n_listed = 0
    listed = raw.get("sentences")
    if "sentences" not in raw:
        notes.append("missing 'sentences'; counted as a wrong abstract")
        valid = False
    elif not isinstance(listed, list):
        notes.append(
            f"'sentences' must be a list of integers, got {_short(listed, 40)}; counted as a wrong abstract"
        )
        valid = False
    else:
        n_listed = len(listed)
        if corpus is not None and key in corpus:
            bound, what = corpus[key], f"the abstract has {corpus[key]} sentences"
        else:
            bound, what = MAX_LISTED_SENTENCES, f"at most {MAX_LISTED_SENTENCES} may be listed"
        if n_listed > bound:
            notes.append(f"lists {n_listed} sentences but {what}; counted as a wrong abstract")
            valid = False
        elif bad := [x for x in listed if not isinstance(x, int) or isinstance(x, bool)]:
            notes.append(
                f"'sentences' must be a list of integers, found {_short(bad[0], 40)}; "
                "counted as a wrong abstract"
            )
            valid = False
        else:
            sentences = tuple(listed)
            negative = [i for i in sentences if i < 0]
            if negative:
                notes.append(f"negative sentence index {negative[0]}")
            times = Counter(sentences)
            repeated = sorted(i for i, n in times.items() if n > 1)
            if repeated:
                more = f" (and {len(repeated) - 1} more repeated)" if len(repeated) > 1 else ""
                notes.append(
                    f"sentence {repeated[0]} listed {times[repeated[0]]} times{more}; each listing counts "
                    "as a retrieved sentence, as the leaderboard scorer counts it: list each sentence once"
                )
            if corpus is not None and key in corpus:
                high = [i for i in sentences if i >= corpus[key]]
                if high:
                    notes.append(
                        f"sentence index {high[0]} out of range (the abstract has {corpus[key]} sentences)"
                    )
    numbers: dict[str, float | None] = {"confidence": None, "p_label_correct": None}
    for name in numbers:
        value = raw.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            notes.append(f"{name} must be a finite number, got {_short(value, 40)}; ignored")
        else:
            numbers[name] = float(value)
    confidence = numbers["confidence"]
    label_text = label if isinstance(label, str) else ("" if label is None else _short(label, 40))
    suffix = "; counted as a wrong abstract"
    problem = "; ".join(n.removesuffix(suffix) for n in notes if n.endswith(suffix)) if not valid else None
    p_label = numbers["p_label_correct"]
    entry = Entry(key, label_text, sentences, n_listed, confidence, valid, problem, p_label)
    return entry, notes


def load_predictions(
    path: str | Path,
    golds: Sequence[Claim],
    corpus: Mapping[str, int] | None = None,
    *,
    source: str = "the gold file",
    deadline: float | None = None,
) -> PredictionFile:
    """Read predictions leniently against the gold claims (see the module docstring for the rules).

    ``source`` names the list of claim ids in messages: a leaderboard with hidden gold checks uploads
    against its public claims file instead, and must not call that list the gold.

    Raises:
        OverBudget: ``deadline`` (a ``time.monotonic()`` value) passed before the file was read;
            checked after every line, each of which costs time linear in its length.
    """
    p = Path(path)
    f = str(p)
    gold_ids = {str(g.id): g.id for g in golds}
    problems: list[Problem] = []
    entries: dict[str, tuple[Entry, ...]] = {}
    lines: dict[str, int] = {}
    n_records = 0
    for number, obj, error in _records(p):
        n_records += 1
        if deadline is not None and time.monotonic() > deadline:
            raise OverBudget(f"{f}: not read within its time budget (stopped at line {number})")
        if error is not None:
            problems.append(Problem(f, number, f"{error}; line ignored"))
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(f, number, "expected a JSON object with 'id' and 'evidence'; line ignored")
            )
            continue
        if "id" not in obj:
            problems.append(Problem(f, number, "missing field 'id'; line ignored"))
            continue
        cid = obj["id"]
        if isinstance(cid, bool) or not isinstance(cid, int | str) or cid == "":
            problems.append(
                Problem(
                    f,
                    number,
                    f"id must be an integer or a non-empty string, got {_short(cid, 40)}; line ignored",
                )
            )
            continue
        key = str(cid)
        if key not in gold_ids:
            problems.append(
                Problem(f, number, f"claim id {_short(cid, 40)} is not in {source}; line ignored")
            )
            continue
        if key in lines:
            problems.append(
                Problem(
                    f,
                    number,
                    f"duplicate prediction for claim {cid!r} (first on line {lines[key]}); line ignored",
                )
            )
            continue
        if type(gold_ids[key]) is not type(cid):
            problems.append(
                Problem(
                    f,
                    number,
                    f"claim id {cid!r} should be written {gold_ids[key]!r} as in "
                    f"{source}; scored as that claim",
                )
            )
        lines[key] = number
        if "evidence" not in obj:
            problems.append(
                Problem(
                    f,
                    number,
                    f"claim {cid!r}: missing field 'evidence' (use {{}} to predict "
                    "no evidence); scored as predicting nothing",
                )
            )
            entries[key] = ()
            continue
        raw = obj["evidence"]
        if not isinstance(raw, dict):
            problems.append(
                Problem(
                    f,
                    number,
                    f"claim {cid!r}: 'evidence' must be an object keyed by doc id; "
                    "scored as predicting nothing",
                )
            )
            entries[key] = ()
            continue
        claim_entries = []
        for doc, value in raw.items():
            entry, notes = _entry(doc_key(doc), value, corpus)
            claim_entries.append(entry)
            problems.extend(Problem(f, number, f"claim {cid!r}, evidence[{_short(doc)}]: {n}") for n in notes)
        entries[key] = tuple(claim_entries)
    if n_records == 0:
        problems.append(
            Problem(
                f,
                None,
                f"no prediction records in file (is it empty?); all {len(gold_ids)} "
                "claims scored as predicting nothing",
            )
        )
    else:
        for key, cid in gold_ids.items():
            if key not in lines:
                problems.append(
                    Problem(f, None, f"claim {cid!r} has no prediction; scored as predicting no evidence")
                )
    return PredictionFile(entries, lines, tuple(problems), n_records)


def raise_if_problems(problems: Sequence[Problem], what: str) -> None:
    """Strict mode: turn any problem into one error listing the first ones."""
    if problems:
        raise problems_error(problems, what)
