"""Dig a ``{"verdict", "evidence"}`` object out of free model text, within a fixed budget.

Models wrap the object in chatter, code fences, single quotes, bare keys and trailing commas. A strict JSON
parser would count all of those as failures and the score would measure formatting rather than verification,
so this small lenient parser accepts them. It tries each ``{`` from left to right and keeps the first object
with a recognisable verdict; nesting depth, candidates and parse work are capped and no regular expression
here can backtrack, so a megabyte of garbage costs milliseconds, never a hang.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["INSTRUCT_VERDICTS", "ParsedOutput", "extract_verdict_json", "normalise_verdict"]

INSTRUCT_VERDICTS = ("SUPPORT", "CONTRADICT", "NEI")

_SYNONYMS = {
    "SUPPORT": "SUPPORT", "SUPPORTS": "SUPPORT", "SUPPORTED": "SUPPORT", "ENTAILMENT": "SUPPORT",
    "ENTAILS": "SUPPORT",
    "CONTRADICT": "CONTRADICT", "CONTRADICTS": "CONTRADICT", "CONTRADICTED": "CONTRADICT",
    "CONTRADICTION": "CONTRADICT", "REFUTE": "CONTRADICT", "REFUTES": "CONTRADICT", "REFUTED": "CONTRADICT",
    "NEI": "NEI", "NOT ENOUGH INFO": "NEI", "NOT ENOUGH INFORMATION": "NEI", "NOTENOUGHINFO": "NEI",
    "NOT ENOUGH EVIDENCE": "NEI", "INSUFFICIENT": "NEI", "INSUFFICIENT EVIDENCE": "NEI",
    "INSUFFICIENT INFORMATION": "NEI", "NO INFO": "NEI", "NEUTRAL": "NEI",
}


@dataclass(frozen=True)
class ParsedOutput:
    """What :func:`extract_verdict_json` found; ``verdict`` is None exactly when ``error`` says why."""

    verdict: str | None
    evidence: tuple[str, ...] = ()
    normalised: bool = False
    evidence_coerced: bool = False
    evidence_missing: bool = False
    error: str | None = None




class _Fail(Exception):
    """This candidate is not a parseable value."""


class _Exhausted(Exception):
    """The work budget for this text is spent: stop looking."""


_WS = re.compile(r"\s*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPE = re.compile(r"\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[\s\S])")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_MAX_DEPTH = 32
_MAX_CANDIDATES = 2000


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) == 11:  # a UTF-16 surrogate pair
        high, low = int(code[1:5], 16), int(code[7:], 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    if len(code) == 5:
        point = int(code[1:], 16)
        return "\ufffd" if 0xD800 <= point <= 0xDFFF else chr(point)
    return _ESCAPES.get(code, code)


class _Lenient:
    """A forgiving JSON reader: single quotes, trailing commas, bare keys, Python literals.

    ``steps`` bounds the values parsed and ``chars`` the characters scanned for string ends across all
    candidates of one text, so pathological input stops early instead of going quadratic.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.steps = 100_000
        self.chars = 20_000_000

    def skip(self, i: int) -> int:
        match = _WS.match(self.text, i)
        return match.end() if match else i

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        self.steps -= 1
        if self.steps < 0:
            raise _Exhausted
        text = self.text
        i = self.skip(i)
        if i >= len(text):
            raise _Fail
        c = text[i]
        if c == "{":
            return self.obj(i, depth)
        if c == "[":
            return self.arr(i, depth)
        if c in "\"'":
            return self.string(i)
        match = _NUMBER.match(text, i)
        if match:
            number = match.group()
            try:
                return (float(number) if any(ch in number for ch in ".eE") else int(number)), match.end()
            except ValueError:  # more digits than int() accepts
                return number, match.end()
        match = _WORD.match(text, i)
        if match:
            word = match.group()
            return (_LITERALS[word] if word in _LITERALS else word), match.end()
        raise _Fail

    def string(self, i: int) -> tuple[str, int]:
        text, quote, j = self.text, self.text[i], i + 1
        while True:
            k = text.find(quote, j)
            self.chars -= (len(text) if k < 0 else k) - j + 1
            if self.chars < 0:
                raise _Exhausted
            if k < 0:
                raise _Fail
            slashes = 0
            while text[k - 1 - slashes] == "\\":
                slashes += 1
            if slashes % 2 == 0:
                raw = text[i + 1 : k]
                return (_ESCAPE.sub(_unescape, raw) if "\\" in raw else raw), k + 1
            j = k + 1

    def obj(self, i: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth >= _MAX_DEPTH:
            raise _Fail
        text, i = self.text, i + 1
        out: dict[str, Any] = {}
        while True:
            i = self.skip(i)
            if i >= len(text):
                raise _Fail
            if text[i] == "}":
                return out, i + 1
            if text[i] in "\"'":
                key, i = self.string(i)
            else:
                match = _WORD.match(text, i)
                if not match:
                    raise _Fail
                key, i = match.group(), match.end()
            i = self.skip(i)
            if i >= len(text) or text[i] != ":":
                raise _Fail
            out[key], i = self.value(i + 1, depth + 1)
            i = self.skip(i)
            if i < len(text) and text[i] == ",":
                i += 1
            elif i >= len(text) or text[i] != "}":
                raise _Fail

    def arr(self, i: int, depth: int) -> tuple[list[Any], int]:
        if depth >= _MAX_DEPTH:
            raise _Fail
        text, i = self.text, i + 1
        out: list[Any] = []
        while True:
            i = self.skip(i)
            if i >= len(text):
                raise _Fail
            if text[i] == "]":
                return out, i + 1
            item, i = self.value(i, depth + 1)
            out.append(item)
            i = self.skip(i)
            if i < len(text) and text[i] == ",":
                i += 1
            elif i >= len(text) or text[i] != "]":
                raise _Fail


def normalise_verdict(value: object) -> tuple[str | None, bool]:
    """Map a verdict to SUPPORT/CONTRADICT/NEI; returns ``(verdict or None, needed_normalising)``."""
    if not isinstance(value, str):
        return None, False
    if value in INSTRUCT_VERDICTS:
        return value, False
    key = " ".join(value.replace("_", " ").replace("-", " ").upper().split()).strip(" .!\"'")
    verdict = _SYNONYMS.get(key) or _SYNONYMS.get(key.replace(" ", ""))
    return verdict, verdict is not None


def _find_verdict_dict(obj: Any, depth: int = 0) -> dict[str, Any] | None:
    """The first dict (breadth of nesting up to 4) with a ``verdict`` key, any case."""
    if depth > 4:
        return None
    if isinstance(obj, dict):
        if any(isinstance(k, str) and k.strip().lower() == "verdict" for k in obj):
            return obj
        children: Iterable[Any] = obj.values()
    elif isinstance(obj, list):
        children = obj
    else:
        return None
    for child in children:
        found = _find_verdict_dict(child, depth + 1)
        if found is not None:
            return found
    return None


def _flatten_evidence(value: Any, out: list[str], depth: int = 0) -> bool:
    """Append evidence strings to ``out``; returns True when anything had to be coerced."""
    coerced = False
    for item in value:
        if isinstance(item, str):
            if item.strip():
                out.append(item)
        elif isinstance(item, list) and depth < 4:
            _flatten_evidence(item, out, depth + 1)
            coerced = True
        elif isinstance(item, int | float) and not isinstance(item, bool):
            out.append(str(item))
            coerced = True
        else:
            coerced = True
    return coerced


def _parse_found(obj: dict[str, Any]) -> ParsedOutput:
    fields = {k.strip().lower(): v for k, v in obj.items() if isinstance(k, str)}
    raw_verdict = fields.get("verdict")
    verdict, normalised = normalise_verdict(raw_verdict)
    if verdict is None:
        return ParsedOutput(None, error=f"unknown verdict {str(raw_verdict)[:60]!r}")
    raw = fields.get("evidence")
    evidence: list[str] = []
    coerced = False
    if isinstance(raw, list):
        coerced = _flatten_evidence(raw, evidence)
    elif isinstance(raw, str):
        coerced = True
        if raw.strip():
            evidence.append(raw)
    elif raw is not None:
        coerced = _flatten_evidence([raw], evidence)
    return ParsedOutput(verdict, tuple(evidence), normalised, coerced, raw is None)


def extract_verdict_json(text: object) -> ParsedOutput:
    """Find the first JSON-ish object carrying a valid verdict in a model's raw answer.

    Tries every ``{`` left to right (at most 2,000, under a fixed work budget) with a lenient parser; an
    object without a verdict is searched for a nested one, an object with an unknown verdict is skipped.
    Never raises: failures come back as ``ParsedOutput(verdict=None, error=...)``.
    """
    if not isinstance(text, str):
        return ParsedOutput(None, error="output is not a string")
    parser = _Lenient(text)
    first_error: str | None = None
    saw_object = False
    start = text.find("{")
    tried = 0
    while start >= 0 and tried < _MAX_CANDIDATES:
        tried += 1
        try:
            obj, end = parser.obj(start, 0)
        except _Fail:
            start = text.find("{", start + 1)
            continue
        except (_Exhausted, RecursionError):
            return ParsedOutput(None, error="gave up: output too large or irregular")
        saw_object = True
        found = _find_verdict_dict(obj)
        if found is not None:
            parsed = _parse_found(found)
            if parsed.verdict is not None:
                return parsed
            first_error = first_error or parsed.error
        start = text.find("{", end)
    if first_error:
        return ParsedOutput(None, error=first_error)
    if saw_object:
        return ParsedOutput(None, error='no JSON object with a "verdict" field')
    return ParsedOutput(None, error="no JSON object found")


# ---------------------------------------------------------------- metrics
