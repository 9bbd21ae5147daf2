"""PubMedQA (PQA-L) as a cross-domain check: claims from its yes/no questions, against its own abstracts.

SciFact's figures say how the pipeline does on SciFact's kind of claim. A change that helps there can hurt
elsewhere, so a seeded 30 % of PubMedQA's labelled questions never enter training (the auxiliary loader
skips them, :func:`is_held_out`) and become claims here: "Do statins reduce X?" turns into "Statins reduce
X." (yes -> SUPPORT, no -> CONTRADICT), checked in the open setting against a small corpus made of all
1,000 PubMedQA abstracts (context and conclusion, sentence-split). The claim's own abstract is its
evidence, and the conclusion's sentences are its rationale. Questions that do not turn into a statement
("What is ...?") and "maybe" answers are left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from sciverify.data.records import Abstract, Claim, EvidenceSet, Label
from sciverify.data.sources.common import sentences_of
from sciverify.errors import DataFormatError

__all__ = [
    "HELD_OUT_SHARE",
    "is_held_out",
    "question_to_claim",
    "question_to_statement",
    "read_pubmedqa_check",
]

#: The share of PubMedQA ids kept out of every training stage.
HELD_OUT_SHARE = 0.3
_QUESTION = re.compile(r"^(does|do|did)\s+", re.IGNORECASE)


def is_held_out(pmid: str) -> bool:
    """Whether a PubMedQA item belongs to the cross-domain check (a fixed hash of its id: no seed to pick)."""
    digest = hashlib.sha256(f"pubmedqa-check:{pmid}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < HELD_OUT_SHARE


def question_to_claim(question: str) -> str:
    """A light rule-based rewrite of a yes/no question into a statement ("Does X reduce Y?" -> "X
    reduce Y."). Other question forms stay questions: the pairing with yes/no still teaches direction."""
    q = " ".join(question.split()).rstrip("?").strip()
    m = _QUESTION.match(q)
    if m:
        rest = q[m.end() :]
        return (rest[:1].upper() + rest[1:] + ".") if rest else q
    return q + "?"


_AUX = {"is", "are", "was", "were", "has", "have", "can", "could", "should", "may", "will", "would"}
_THERE = re.compile(r"^(is|are)\s+there\s+(still\s+|any\s+)?", re.IGNORECASE)
#: Words that open a predicate after "Is/Are X ...?" (beside participles and -ing forms, below).
_PREDICATE = frozenset(
    "a an able equal necessary effective useful reliable possible beneficial justifiable identifiable "
    "acceptable less more better worse different superior inferior predictive relevant sensitive safe "
    "common present still clinically related due likely free needed associated linked".split()
)
#: Verbs that open the predicate after "Can/Should X ...?".
_VERBS = frozenset(
    "be predict reduce replace affect enhance lead prime become measure deliver improve increase decrease "
    "prevent cause help detect identify distinguish differentiate explain influence change alter lower "
    "raise protect".split()
)
_PREPOSITIONS = frozenset("of in with for on at to from by after during than as".split())
_PARTICIPLES_EN = frozenset(
    "given taken shown seen driven proven chosen written broken known undertaken".split()
)
#: Nouns in -ing, which open no predicate.
_ING_NOUNS = frozenset(
    "imaging screening training monitoring neuromonitoring bleeding swallowing smoking drinking functioning "
    "hearing learning nursing counseling counselling wheezing fasting during including following according "
    "regarding morning setting organizing signaling signalling staging".split()
)


def _opens_predicate(words: list[str], i: int, modal: bool) -> bool:
    word = words[i].strip(",;:'\"")
    low = word.lower()
    before = words[i - 1].lower()
    after = words[i + 1].lower() if i + 1 < len(words) else ""
    if before.endswith("ly") or before in _PREPOSITIONS or before in {"is", "are", "was", "were"}:
        return False
    if modal:
        return low in _VERBS
    if low in {"a", "an"}:
        return word == low
    if low in _PREDICATE:
        return True
    if len(low) > 4 and (low.endswith("ed") or low in _PARTICIPLES_EN):
        return after == "" or after in _PREPOSITIONS
    if len(low) > 4 and low.endswith("ing") and low not in _ING_NOUNS:
        return after in {"", "a", "an", "the"} or after.endswith("s")
    return False


def question_to_statement(question: str) -> str:
    """A yes/no question as a statement, for the cross-domain check: "Does X reduce Y?", "Is X associated
    with Y?", "Can X predict Y?" and "Is there X?" become "X reduce Y.", "X is associated with Y.", "X can
    predict Y.", "There is X.". The predicate is found by a rule (a listed adjective or verb, an article, a
    participle before a preposition, after the subject's first word); a question the rule cannot place
    stays a question and is left out of the check. Training keeps :func:`question_to_claim`, so the check
    grows without changing what any model was trained on."""
    q = " ".join(question.split()).rstrip("?").strip()
    if _QUESTION.match(q):
        return question_to_claim(question)
    there = _THERE.match(q)
    if there:
        tail = q[there.end() :]
        return f"There {there.group(1).lower()} {tail}." if tail else q + "?"
    words = q.split(" ")
    if len(words) < 3 or words[0].lower() not in _AUX:
        return q + "?"
    aux, rest = words[0].lower(), words[1:]
    modal = aux in {"can", "could", "should", "may", "will", "would"}
    for i in range(1, len(rest)):
        if _opens_predicate(rest, i, modal):
            subject = " ".join(rest[:i])
            if any(w.lower() in _AUX for w in rest[:i]):
                break  # "Are women who are treated ... at risk": the rule cannot tell where the subject ends
            return f"{subject[:1].upper()}{subject[1:]} {aux} {' '.join(rest[i:])}."
    return q + "?"


def _load(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataFormatError(f"cannot read: {exc.strerror or exc}", path) from None
    except ValueError as exc:
        raise DataFormatError(f"invalid JSON: {exc}", path) from None
    if not isinstance(data, dict):
        raise DataFormatError("expected an object keyed by PubMed id", path)
    return data


def read_pubmedqa_check(path: Path | str) -> tuple[list[Claim], list[Abstract]]:
    """The held-out claims (with gold evidence) and the corpus of every PubMedQA abstract.

    Args:
        path: ``ori_pqal.json`` of PubMedQA PQA-L.

    Returns:
        (claims, corpus): claims sorted by id; doc ids and claim ids are the PubMed ids as integers.

    Raises:
        DataFormatError: the file is missing or not PubMedQA's JSON.
    """
    data = _load(Path(path))
    labels = {"yes": Label.SUPPORT, "no": Label.CONTRADICT}
    corpus: list[Abstract] = []
    claims: list[Claim] = []
    for pmid in sorted(data, key=lambda k: (len(k), k)):
        item = data[pmid]
        if not isinstance(item, dict) or not pmid.isdigit():
            continue
        raw_contexts = item.get("CONTEXTS")
        contexts = [str(c) for c in raw_contexts] if isinstance(raw_contexts, list) else []
        conclusion = str(item.get("LONG_ANSWER", "")).strip()
        body = [s for c in contexts for s in sentences_of(c)]
        tail = sentences_of(conclusion)
        if not body or not tail:
            continue
        corpus.append(Abstract(int(pmid), "", tuple(body + tail)))
        label = labels.get(str(item.get("final_decision", "")).strip().lower())
        text = question_to_statement(str(item.get("QUESTION", "")))
        if label is None or text.endswith("?") or not is_held_out(pmid):
            continue
        rationale = tuple(range(len(body), len(body) + len(tail)))
        claims.append(Claim(int(pmid), text, {pmid: (EvidenceSet(rationale, label),)}, (int(pmid),)))
    return claims, corpus
