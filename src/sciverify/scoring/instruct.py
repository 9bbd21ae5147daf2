"""Score instruction-style SciFact outputs: one ``{"verdict", "evidence"}`` object per claim-abstract pair.

The task (the SciFact entailment task of the SciRIFF evaluation suite, Wadden et al., 2024) shows a model one
claim and one abstract and asks for ``{"verdict": "SUPPORT" | "CONTRADICT" | "NEI", "evidence": [sentence
texts]}``. Models wrap that object in chatter, code fences, single quotes and trailing commas, so
:func:`extract_verdict_json` (in :mod:`sciverify.data.instruct_parse`) digs it out with a small lenient
parser that works under a fixed budget.

Gold pairs come from SciFact claims: every doc in a claim's ``cited_doc_ids`` (plus any evidence doc) makes
a pair; its verdict is the doc's evidence label, or ``NEI`` when the doc carries no evidence; its evidence is
the text of every rationale sentence of the doc (the union of its evidence sets, in abstract order).

Metrics (see docs/instruct-format.md for the exact rules):
    * label accuracy, per-class precision/recall/F1 and macro F1 over SUPPORT/CONTRADICT/NEI;
    * ``label_f1_non_nei``: micro F1 over SUPPORT/CONTRADICT decisions only (the suite's "label F1");
    * evidence token F1 per pair (both empty = 1.0, one empty = 0.0) averaged over all pairs, over pairs with
      gold evidence only, and pooled over all tokens (the suite's aggregation).
An unparseable or missing output is wrong: no label, evidence F1 0.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sciverify.data.instruct_parse import (
    INSTRUCT_VERDICTS,
    ParsedOutput,
    extract_verdict_json,
    normalise_verdict,
)
from sciverify.data.instruct_prompt import InstructPair, evidence_tokens, instruct_prompt
from sciverify.data.io import iter_jsonl, parse_abstract, parse_claim, write_jsonl
from sciverify.data.records import Abstract, Claim, doc_key
from sciverify.errors import DataFormatError

__all__ = [
    "INSTRUCT_VERDICTS",
    "ClassScores",
    "InstructOutput",
    "InstructPair",
    "InstructReport",
    "ParsedOutput",
    "UnparseableOutput",
    "build_instruct_pairs",
    "evaluate_instruct_files",
    "evidence_tokens",
    "extract_verdict_json",
    "instruct_prompt",
    "is_pairs_file",
    "normalise_verdict",
    "pair_to_json",
    "read_instruct_gold",
    "read_instruct_outputs",
    "report_to_json",
    "score_instruct",
    "token_f1",
    "write_instruct_pairs",
]

_OUTPUT_KEYS = ("output", "response", "completion", "text")


@dataclass(frozen=True)
class InstructOutput:
    """One raw model answer for a pair; ``line`` is its 1-based line in the outputs file, if read from one."""

    claim_id: int | str
    doc_id: int | str
    text: str | None
    line: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (str(self.claim_id), doc_key(self.doc_id))


@dataclass(frozen=True)
class ClassScores:
    """Precision, recall and F1 of one verdict class (``support`` gold pairs, ``predicted`` predictions)."""

    precision: float
    recall: float
    f1: float
    support: int
    predicted: int


@dataclass(frozen=True)
class UnparseableOutput:
    """A pair scored as wrong because no usable answer was found (``line`` None: no output at all)."""

    line: int | None
    claim_id: int | str
    doc_id: int | str
    reason: str


@dataclass(frozen=True)
class InstructReport:
    """Counts and metrics of one evaluation; every metric is in [0, 1]."""

    pairs: int
    parsed: int
    unparseable: int
    missing: int
    normalised_verdicts: int
    evidence_coerced: int
    evidence_missing: int
    accuracy: float
    macro_f1: float
    label_f1_non_nei: float
    per_class: dict[str, ClassScores]
    evidence_token_f1: float
    evidence_token_f1_gold_evidence: float
    evidence_token_f1_pooled: float
    failures: tuple[UnparseableOutput, ...] = ()
    unmatched_output_lines: tuple[int | None, ...] = field(default=())


# ---------------------------------------------------------------- extraction


def _tokens(sentences: Iterable[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for sentence in sentences:
        counts.update(evidence_tokens(sentence))
    return counts


def _f1(common: int, predicted: int, gold: int) -> float:
    precision = common / predicted if predicted else 0.0
    recall = common / gold if gold else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def token_f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """Bag-of-tokens F1 between two evidence lists; 1.0 when both have no tokens, 0.0 when one has none."""
    pred, ref = _tokens(predicted), _tokens(gold)
    if not pred and not ref:
        return 1.0
    return _f1(sum((pred & ref).values()), sum(pred.values()), sum(ref.values()))


def score_instruct(pairs: Sequence[InstructPair], outputs: Iterable[InstructOutput]) -> InstructReport:
    """Score outputs against gold pairs (joined on claim id + doc id); gold pairs without output are wrong.

    Outputs for pairs not in the gold are ignored and listed in ``unmatched_output_lines``.
    """
    by_key = {o.key: o for o in outputs}
    gold_keys = {p.key for p in pairs}
    unmatched = tuple(o.line for k, o in by_key.items() if k not in gold_keys)
    tp: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    support: Counter[str] = Counter(p.verdict for p in pairs)
    failures: list[UnparseableOutput] = []
    normalised = coerced = ev_missing = correct = non_nei_correct = non_nei_pred = 0
    f1s: list[float] = []
    f1s_gold: list[float] = []
    pooled = [0, 0, 0]  # common, predicted, gold tokens
    for pair in pairs:
        output = by_key.get(pair.key)
        gold_tokens = _tokens(pair.evidence)
        parsed = extract_verdict_json(output.text) if output is not None else None
        if parsed is None or parsed.verdict is None:
            reason = "no output for this pair" if parsed is None else (parsed.error or "unparseable")
            failures.append(UnparseableOutput(None if output is None else output.line, pair.claim_id,
                                              pair.doc_id, reason))
            pair_f1 = 0.0
            pooled[2] += sum(gold_tokens.values())
        else:
            normalised += parsed.normalised
            coerced += parsed.evidence_coerced
            ev_missing += parsed.evidence_missing
            predicted[parsed.verdict] += 1
            if parsed.verdict == pair.verdict:
                correct += 1
                tp[pair.verdict] += 1
                non_nei_correct += pair.verdict != "NEI"
            non_nei_pred += parsed.verdict != "NEI"
            pred_tokens = _tokens(parsed.evidence)
            common = sum((pred_tokens & gold_tokens).values())
            n_pred, n_gold = sum(pred_tokens.values()), sum(gold_tokens.values())
            pair_f1 = 1.0 if not n_pred and not n_gold else _f1(common, n_pred, n_gold)
            pooled[0] += common
            pooled[1] += n_pred
            pooled[2] += n_gold
        f1s.append(pair_f1)
        if pair.evidence:
            f1s_gold.append(pair_f1)
    per_class = {
        c: ClassScores(
            precision=tp[c] / predicted[c] if predicted[c] else 0.0,
            recall=tp[c] / support[c] if support[c] else 0.0,
            f1=_f1(tp[c], predicted[c], support[c]),
            support=support[c],
            predicted=predicted[c],
        )
        for c in INSTRUCT_VERDICTS
    }
    present = [s.f1 for s in per_class.values() if s.support or s.predicted]
    n = len(pairs)
    return InstructReport(
        pairs=n,
        parsed=n - len(failures),
        unparseable=len(failures),
        missing=sum(1 for p in pairs if p.key not in by_key),
        normalised_verdicts=normalised,
        evidence_coerced=coerced,
        evidence_missing=ev_missing,
        accuracy=correct / n if n else 0.0,
        macro_f1=sum(present) / len(present) if present else 0.0,
        label_f1_non_nei=_f1(non_nei_correct, non_nei_pred, n - support["NEI"]),
        per_class=per_class,
        evidence_token_f1=sum(f1s) / len(f1s) if f1s else 0.0,
        evidence_token_f1_gold_evidence=sum(f1s_gold) / len(f1s_gold) if f1s_gold else 0.0,
        evidence_token_f1_pooled=_f1(*pooled),
        failures=tuple(failures),
        unmatched_output_lines=unmatched,
    )


def report_to_json(report: InstructReport) -> dict[str, Any]:
    """A plain JSON-serialisable dict of the report."""
    return asdict(report)


# ---------------------------------------------------------------- gold pairs and files


def build_instruct_pairs(claims: Iterable[Claim], corpus: Mapping[str, Abstract]) -> list[InstructPair]:
    """One pair per (claim, cited or evidence doc); ValueError names the claim if the corpus lacks a doc."""
    pairs: list[InstructPair] = []
    for claim in claims:
        keys = list(dict.fromkeys([doc_key(d) for d in claim.cited_doc_ids] + list(claim.evidence)))
        for key in keys:
            abstract = corpus.get(key)
            if abstract is None:
                raise ValueError(f"claim {claim.id!r}: doc {key} is not in the corpus")
            indices = sorted({i for s in claim.evidence.get(key, ()) for i in s.sentences})
            bad = [i for i in indices if not 0 <= i < len(abstract.sentences)]
            if bad:
                raise ValueError(f"claim {claim.id!r}: doc {key} has no sentence {bad[0]}")
            label = claim.gold_label(key)
            pairs.append(InstructPair(
                claim_id=claim.id, doc_id=abstract.doc_id, claim=claim.text, title=abstract.title,
                sentences=abstract.sentences, verdict=label.value if label is not None else "NEI",
                evidence=tuple(abstract.sentences[i] for i in indices),
            ))
    return pairs


def pair_to_json(pair: InstructPair) -> dict[str, Any]:
    """The JSONL record written by ``sciverify instruct-pairs``: input fields, prompt and expected answer."""
    return {
        "claim_id": pair.claim_id, "doc_id": pair.doc_id, "claim": pair.claim, "title": pair.title,
        "sentences": list(pair.sentences), "prompt": instruct_prompt(pair),
        "expected": {"verdict": pair.verdict, "evidence": list(pair.evidence)},
    }


def write_instruct_pairs(path: str | Path, pairs: Iterable[InstructPair]) -> None:
    """Write gold pairs as JSONL (atomic)."""
    write_jsonl(path, (pair_to_json(p) for p in pairs))


def _is_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value != "")


def _pair_from_json(obj: Any) -> InstructPair:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    for name in ("claim_id", "doc_id"):
        if not _is_id(obj.get(name)):
            raise ValueError(f"{name} must be an integer or a non-empty string")
    expected = obj.get("expected")
    if not isinstance(expected, dict) or expected.get("verdict") not in INSTRUCT_VERDICTS:
        raise ValueError('expected must be {"verdict": "SUPPORT"|"CONTRADICT"|"NEI", "evidence": [...]}')
    evidence = expected.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(s, str) for s in evidence):
        raise ValueError("expected.evidence must be a list of sentence strings")
    sentences = obj.get("sentences", [])
    if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
        raise ValueError("sentences must be a list of strings")
    return InstructPair(obj["claim_id"], obj["doc_id"], str(obj.get("claim", "")), str(obj.get("title", "")),
                        tuple(sentences), expected["verdict"], tuple(evidence))


def is_pairs_file(path: str | Path) -> bool:
    """True when the file's first record is a gold pair (has ``expected``), False for a claims file."""
    records = iter_jsonl(path)
    try:
        first = next(records, (0, None))[1]
    finally:
        close = getattr(records, "close", None)
        if close is not None:
            close()
    return isinstance(first, dict) and "expected" in first


def read_instruct_gold(path: str | Path, corpus: str | Path | None = None) -> list[InstructPair]:
    """Gold pairs from a pairs file (records with ``expected``) or from SciFact claims plus a corpus."""
    rows = list(iter_jsonl(path))
    if not rows:
        raise DataFormatError("no records in file (is it empty?)", path)
    seen: dict[tuple[str, str], int] = {}
    pairs: list[InstructPair] = []
    if isinstance(rows[0][1], dict) and "expected" in rows[0][1]:
        for number, obj in rows:
            try:
                pair = _pair_from_json(obj)
            except ValueError as exc:
                raise DataFormatError(str(exc), path, number) from None
            if pair.key in seen:
                raise DataFormatError(f"duplicate pair (first on line {seen[pair.key]})", path, number)
            seen[pair.key] = number
            pairs.append(pair)
        return pairs
    if corpus is None:
        raise DataFormatError("a claims file needs the corpus (--corpus) to turn rationale indices into text",
                              path)
    docs: dict[str, Abstract] = {}
    for number, obj in iter_jsonl(corpus):
        try:
            abstract = parse_abstract(obj)
        except ValueError as exc:
            raise DataFormatError(str(exc), corpus, number) from None
        docs[doc_key(abstract.doc_id)] = abstract
    claim_ids: dict[str, int] = {}
    for number, obj in rows:
        try:
            claim = parse_claim(obj)
            if str(claim.id) in claim_ids:
                first = claim_ids[str(claim.id)]
                raise ValueError(f"duplicate claim id {claim.id!r} (first on line {first})")
            claim_ids[str(claim.id)] = number
            pairs.extend(build_instruct_pairs([claim], docs))
        except ValueError as exc:
            raise DataFormatError(str(exc), path, number) from None
    if not pairs:
        raise DataFormatError("no claim-abstract pairs: claims need cited_doc_ids or evidence "
                              "(test claims without labels cannot be scored)", path)
    return pairs


def read_instruct_outputs(path: str | Path) -> list[InstructOutput]:
    """Model outputs, one JSONL record each: ``claim_id``, ``doc_id`` and the raw text under ``output``.

    ``response``, ``completion`` or ``text`` are accepted in place of ``output``. A record whose text is not a
    string is kept (and scored as unparseable); a record without ids or a duplicate pair is a file error,
    except after a failed record (``"output": null`` with an ``error``, as ``instruct-run`` writes one): the
    next record for that pair is its retry and replaces it.
    """
    outputs: list[InstructOutput] = []
    seen: dict[tuple[str, str], int] = {}
    positions: dict[tuple[str, str], int] = {}
    failed: set[tuple[str, str]] = set()
    for number, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            raise DataFormatError("expected a JSON object", path, number)
        for name in ("claim_id", "doc_id"):
            if not _is_id(obj.get(name)):
                raise DataFormatError(f"{name} must be an integer or a non-empty string", path, number)
        field_name = next((k for k in _OUTPUT_KEYS if k in obj), None)
        if field_name is None:
            raise DataFormatError("missing field 'output' (the model's raw text)", path, number)
        text = obj[field_name]
        out = InstructOutput(obj["claim_id"], obj["doc_id"], text if isinstance(text, str) else None, number)
        if out.key in seen:
            if out.key in failed:  # a retried pair: the later record replaces the failed attempt
                failed.discard(out.key)
                outputs[positions[out.key]] = out
            else:
                raise DataFormatError(f"duplicate output for this pair (first on line {seen[out.key]})",
                                      path, number)
        else:
            positions[out.key] = len(outputs)
            outputs.append(out)
        seen[out.key] = number
        if text is None and "error" in obj:
            failed.add(out.key)
    return outputs


def evaluate_instruct_files(
    gold: str | Path, outputs: str | Path, corpus: str | Path | None = None
) -> InstructReport:
    """Read gold and outputs, then :func:`score_instruct` them."""
    return score_instruct(read_instruct_gold(gold, corpus), read_instruct_outputs(outputs))
