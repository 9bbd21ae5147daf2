"""Judge one claim's predictions against its gold evidence and reduce the verdicts to integer counts.

Every SciFact metric is a ratio of sums of eight per-claim counts, so the scorer judges each claim
once (a pure function of gold, prediction and the rationale cap), keeps the judgement for the debug
report, and stacks the counts into an ``(n_claims, 8)`` integer matrix. Micro metrics, macro
metrics and bootstrap intervals are then all functions of that matrix.

The rules are those of the SciFact leaderboard scorer (Wadden et al., 2020, "Fact or Fiction:
Verifying Scientific Claims", §4):

* a predicted abstract is *correctly labelled* if it is a gold evidence abstract and its label
  equals the gold label; it is *correctly rationalized* if, in addition, some gold evidence set is
  contained in the first ``cap`` predicted sentences (in the order listed);
* a predicted sentence of a gold evidence abstract is *correctly selected* if it belongs to a gold
  evidence set all of whose sentences were predicted, and *correctly labelled* if in addition the
  abstract's label is right. Every listed sentence counts as retrieved (duplicates included, as the
  leaderboard counts them; the validator reports each duplicate in the errlog).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim, Prediction

__all__ = [
    "COUNT_COLUMNS",
    "AbstractJudgement",
    "CapPolicy",
    "ClaimJudgement",
    "Entry",
    "SentenceVerdict",
    "cap_for",
    "count_matrix",
    "entries_from_prediction",
    "judge_all",
    "judge_claim",
    "parse_cap",
]

#: Columns of the per-claim count matrix, in order.
COUNT_COLUMNS: tuple[str, ...] = (
    "abstract_relevant",
    "abstract_retrieved",
    "abstract_correct_label_only",
    "abstract_correct_rationalized",
    "sentence_relevant",
    "sentence_retrieved",
    "sentence_correct_selection",
    "sentence_correct_label",
)

#: ``"leaderboard"``: cap = max(3, size of the smallest gold set of the abstract); an int: a fixed cap.
CapPolicy = Literal["leaderboard"] | int

_VALID_LABELS = ("SUPPORT", "CONTRADICT")


def parse_cap(value: str | int) -> CapPolicy:
    """Turn ``"leaderboard"`` or a positive integer (or its string) into a cap policy.

    Raises:
        ValueError: for anything else.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"cap must be 'leaderboard' or a positive integer, got {value!r}")
        return value
    text = str(value).strip().lower()
    if text == "leaderboard":
        return "leaderboard"
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ValueError(f"cap must be 'leaderboard' or a positive integer, got {value!r}")


def cap_for(policy: CapPolicy, gold_sets: Sequence[Sequence[int]]) -> int:
    """How many leading predicted sentences count for abstract-level rationalization.

    The leaderboard lets an abstract whose smallest gold rationale has more than three sentences
    be rationalized at all; the original repository scorer always uses three.
    """
    if policy == "leaderboard":
        return max(3, min(len(s) for s in gold_sets))
    return int(policy)


@dataclass(frozen=True)
class Entry:
    """One predicted abstract as the scorer sees it.

    ``valid`` is False when the entry had a problem (a label other than SUPPORT/CONTRADICT, a
    missing or malformed field): such an entry still counts as a retrieved abstract, and its listed
    sentences as retrieved sentences, but it can never be correct.
    """

    key: str
    label: str
    sentences: tuple[int, ...]
    n_listed: int
    confidence: float | None = None
    valid: bool = True
    problem: str | None = None
    p_label_correct: float | None = None


def entries_from_prediction(pred: Prediction) -> tuple[Entry, ...]:
    """The entries of a (valid) prediction record, in its order."""
    return tuple(
        Entry(
            key=key,
            label=ap.label.value,
            sentences=tuple(ap.sentences),
            n_listed=len(ap.sentences),
            confidence=ap.confidence,
            p_label_correct=ap.p_label_correct,
        )
        for key, ap in pred.evidence.items()
    )


@dataclass(frozen=True)
class SentenceVerdict:
    """The verdict on one distinct predicted sentence of a gold evidence abstract.

    ``gold_set`` is the gold set it was credited for (or the first one containing it when none was
    fully predicted); ``missing`` lists that set's sentences that were not predicted.
    """

    index: int
    times_listed: int
    gold_set: tuple[int, ...] | None
    missing: tuple[int, ...]
    correct_selection: bool
    correct_label: bool


@dataclass(frozen=True)
class AbstractJudgement:
    """The verdict on one predicted abstract, with everything the debug report needs to explain it."""

    entry: Entry
    gold_label: str | None
    label_ok: bool
    cap: int | None
    rationalized: bool
    matched_set: tuple[int, ...] | None
    sentences: tuple[SentenceVerdict, ...]

    @property
    def in_gold(self) -> bool:
        return self.gold_label is not None


@dataclass(frozen=True)
class ClaimJudgement:
    """One claim judged: its predicted abstracts, the gold abstracts it missed, and its counts."""

    claim_id: int | str
    gold: Claim
    abstracts: tuple[AbstractJudgement, ...]
    missed: tuple[str, ...]
    counts: tuple[int, ...]
    has_prediction: bool


def _judge_abstract(entry: Entry, gold: Claim, policy: CapPolicy) -> tuple[AbstractJudgement, list[int]]:
    """Judge one entry; returns the judgement and its contribution to the 8 counts."""
    delta = [0] * len(COUNT_COLUMNS)
    delta[1] = 1
    delta[5] = entry.n_listed
    gold_sets = gold.evidence.get(entry.key)
    if not gold_sets:
        return AbstractJudgement(entry, None, False, None, False, None, ()), delta
    gold_label = gold_sets[0].label.value
    if not entry.valid:
        return AbstractJudgement(entry, gold_label, False, None, False, None, ()), delta
    label_ok = entry.label == gold_label and entry.label in _VALID_LABELS
    sets = [tuple(s.sentences) for s in gold_sets]
    cap = cap_for(policy, sets)
    matched: tuple[int, ...] | None = None
    if label_ok:
        delta[2] = 1
        head = set(entry.sentences[:cap])
        matched = next((s for s in sets if set(s) <= head), None)
        if matched is not None:
            delta[3] = 1
    predicted = set(entry.sentences)
    listed: dict[int, int] = {}
    for ix in entry.sentences:
        listed[ix] = listed.get(ix, 0) + 1
    verdicts = []
    n_correct = 0
    for ix in listed:  # first-listed order, each distinct index once (the scorer works on the set)
        containing = [s for s in sets if ix in s]
        full = next((s for s in containing if set(s) <= predicted), None)
        shown = full if full is not None else (containing[0] if containing else None)
        missing = tuple(i for i in shown if i not in predicted) if shown is not None else ()
        ok = full is not None
        n_correct += ok
        verdicts.append(SentenceVerdict(ix, listed[ix], shown, missing, ok, ok and label_ok))
    delta[6] = n_correct
    delta[7] = n_correct if label_ok else 0
    return AbstractJudgement(
        entry, gold_label, label_ok, cap, matched is not None, matched, tuple(verdicts)
    ), delta


def judge_claim(
    gold: Claim, entries: Sequence[Entry] | None, cap: CapPolicy = "leaderboard"
) -> ClaimJudgement:
    """Judge one claim. ``entries=None`` means the claim has no prediction: it predicts nothing.

    Returns:
        The judgement, whose ``counts`` follow :data:`COUNT_COLUMNS`.
    """
    counts = [0] * len(COUNT_COLUMNS)
    counts[0] = len(gold.evidence)
    counts[4] = sum(len(s.sentences) for sets in gold.evidence.values() for s in sets)
    judged = []
    predicted_keys = set()
    for entry in entries or ():
        judgement, delta = _judge_abstract(entry, gold, cap)
        judged.append(judgement)
        predicted_keys.add(entry.key)
        counts = [a + b for a, b in zip(counts, delta, strict=True)]
    missed = tuple(k for k in gold.evidence if k not in predicted_keys)
    return ClaimJudgement(gold.id, gold, tuple(judged), missed, tuple(counts), entries is not None)


def count_matrix(judgements: Sequence[ClaimJudgement]) -> npt.NDArray[np.int64]:
    """Stack per-claim counts. Shapes: ``(n_claims, len(COUNT_COLUMNS))``."""
    if not judgements:
        return np.zeros((0, len(COUNT_COLUMNS)), dtype=np.int64)
    return np.asarray([j.counts for j in judgements], dtype=np.int64)


def judge_all(
    golds: Sequence[Claim], entries: Mapping[str, Sequence[Entry]], cap: CapPolicy = "leaderboard"
) -> tuple[ClaimJudgement, ...]:
    """Judge every gold claim in gold order; claims missing from ``entries`` predict nothing."""
    return tuple(judge_claim(g, entries.get(str(g.id)), cap) for g in golds)
