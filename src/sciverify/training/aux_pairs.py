"""Auxiliary entailment pairs for the label model and the reader: NLI, scientific and biomedical sets.

NLI pairs map directly onto SUPPORT / CONTRADICT / NOT_ENOUGH_INFO; two biomedical sets give weak
scientific supervision (PubMedQA yes/no questions with their conclusion; Evidence Inference effect
statements turned into templated claims, flipped to make contradictions). The biomedical sets share
literature with SciFact, so any pair whose source text appears in the SciFact corpus is dropped.
Every loader returns :class:`~sciverify.training.label_data.LabelPair` records.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from sciverify.data.io import iter_jsonl
from sciverify.data.records import Abstract
from sciverify.data.sources.pubmedqa import is_held_out, question_to_claim
from sciverify.errors import DataFormatError
from sciverify.training.direction import direction_pairs
from sciverify.training.label_data import WORD_TOKEN, LabelPair

__all__ = [
    "AUX_LOADERS",
    "BREAKING_NLI_CATEGORIES",
    "CORPUS_SETS",
    "SCINLI_LABELS",
    "drop_corpus_overlap",
    "load_aux",
    "load_breaking_nli",
    "load_cad_snli",
    "load_evidence_inference",
    "load_fever_symmetric",
    "load_nli_jsonl",
    "load_pubmedqa",
    "load_scinli",
    "load_scitail",
    "load_snli_tsv",
]

S, C, N = 0, 1, 2
_NLI = {"entailment": S, "contradiction": C, "neutral": N, "e": S, "c": C, "n": N}


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, object]]]:
    for line_no, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            raise DataFormatError("expected a JSON object", path, line_no)
        yield line_no, obj


def load_nli_jsonl(path: Path, source: str) -> list[LabelPair]:
    """SNLI/MNLI-style JSON lines (premise, hypothesis, label word); unlabeled rows ("-") are skipped."""
    out = []
    for _, obj in _read_jsonl(path):
        label = _NLI.get(str(obj.get("label", "")).strip().lower())
        premise, hypothesis = str(obj.get("premise", "")).strip(), str(obj.get("hypothesis", "")).strip()
        if label is not None and premise and hypothesis:
            out.append(LabelPair(hypothesis, "", (premise,), label, source))
    return out


def load_snli_tsv(path: Path, source: str = "snli_test") -> list[LabelPair]:
    """SNLI test as TSV with a header and numeric labels 0=entailment 1=neutral 2=contradiction."""
    numeric = {"0": S, "1": N, "2": C}
    out = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if header is None or [h.strip().lower() for h in header[:3]] != ["premise", "hypothesis", "label"]:
            raise DataFormatError("expected header premise<TAB>hypothesis<TAB>label", path, 1)
        for row in reader:
            if len(row) >= 3 and row[2].strip() in numeric and row[0].strip() and row[1].strip():
                out.append(LabelPair(row[1].strip(), "", (row[0].strip(),), numeric[row[2].strip()], source))
    return out


def load_scitail(path: Path, source: str = "scitail") -> list[LabelPair]:
    """SciTail, two-way: entails -> SUPPORT, neutral -> NOT_ENOUGH_INFO. Reads the JSON-lines test split
    (label words) or the tokenised TSV dev split (premise, hypothesis, 0=entails / 1=neutral)."""
    out = []
    if path.suffix == ".jsonl":
        words = {"entailment": S, "entails": S, "not_entailment": N, "neutral": N}
        for _, obj in _read_jsonl(path):
            label = words.get(str(obj.get("label", "")).strip().lower())
            p, h = str(obj.get("premise", "")).strip(), str(obj.get("hypothesis", "")).strip()
            if label is not None and p and h:
                out.append(LabelPair(h, "", (p,), label, source))
        return out
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and parts[2].strip() in ("0", "1") and parts[0].strip() and parts[1].strip():
                out.append(
                    LabelPair(
                        parts[1].strip(), "", (parts[0].strip(),), S if parts[2].strip() == "0" else N, source
                    )
                )
    return out


def load_fever_symmetric(path: Path, source: str = "fever_symmetric") -> list[LabelPair]:
    """Symmetric FEVER: (claim, evidence sentence) with SUPPORTS / REFUTES."""
    labels = {"SUPPORTS": S, "REFUTES": C, "NOT ENOUGH INFO": N}
    out = []
    for _, obj in _read_jsonl(path):
        label = labels.get(str(obj.get("gold_label", obj.get("label", ""))).strip().upper())
        claim, evidence = str(obj.get("claim", "")).strip(), str(obj.get("evidence", "")).strip()
        if label is not None and claim and evidence:
            out.append(LabelPair(_detok(claim), "", (_detok(evidence),), label, source))
    return out


def _detok(text: str) -> str:
    """Undo FEVER's spaced punctuation ("origin , associated" -> "origin, associated")."""
    text = re.sub(r"\s+([.,;:!?)\]'])", r"\1", text)
    text = re.sub(r"([(\[])\s+", r"\1", text)
    return text.replace("-LRB-", "(").replace("-RRB-", ")")


def load_pubmedqa(path: Path, source: str = "pubmedqa", *, skip_held_out: bool = False) -> list[LabelPair]:
    """PubMedQA PQA-L: the question as claim, the conclusion (long answer) as evidence;
    yes -> SUPPORT, no -> CONTRADICT, maybe -> NOT_ENOUGH_INFO. ``skip_held_out`` leaves out the ids of
    the cross-domain check (:func:`sciverify.data.sources.pubmedqa.is_held_out`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataFormatError(f"invalid JSON: {exc}", path) from None
    if not isinstance(data, dict):
        raise DataFormatError("expected an object keyed by PubMed id", path)
    labels = {"yes": S, "no": C, "maybe": N}
    out = []
    for pmid in sorted(data):
        if skip_held_out and is_held_out(pmid):
            continue
        item = data[pmid]
        label = labels.get(str(item.get("final_decision", "")).strip().lower())
        question, answer = str(item.get("QUESTION", "")).strip(), str(item.get("LONG_ANSWER", "")).strip()
        if label is None or not question or not answer:
            continue
        contexts = " ".join(str(c) for c in item.get("CONTEXTS", []))
        out.append(
            LabelPair(question_to_claim(question), "", (answer,), label, source, contexts + " " + answer)
        )
    return out


_EFFECT = {
    "significantly increased": "inc",
    "significantly increase": "inc",
    "significantly decreased": "dec",
    "significantly decrease": "dec",
    "no significant difference": "same",
}
_TEMPLATES = {
    "inc": ("{i} significantly increased {o} compared with {c}.", "{i} increases {o} relative to {c}."),
    "dec": ("{i} significantly decreased {o} compared with {c}.", "{i} reduces {o} relative to {c}."),
    "same": (
        "{i} had no significant effect on {o} compared with {c}.",
        "There is no significant difference in {o} between {i} and {c}.",
    ),
}


def _clean_span(text: str) -> str:
    return " ".join(text.split())


def load_evidence_inference(
    directory: Path, *, seed: int, source: str = "evidence_inference"
) -> list[LabelPair]:
    """Evidence Inference 2.0 as templated claims.

    For each valid (prompt, evidence span): the claim stating the annotated effect -> SUPPORT; the same
    claim with the opposite direction (increase <-> decrease; an effect where none was found, or none
    where one was) -> CONTRADICT; and the span of another prompt of the same article about a different
    outcome -> NOT_ENOUGH_INFO (a topical but silent sentence, the hard negative SciFact needs).
    """
    rng = random.Random(seed)
    prompts: dict[str, dict[str, str]] = {}
    ppath = directory / "prompts_merged.csv"
    with ppath.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            prompts[row["PromptID"]] = row
    apath = directory / "v2_annotations.csv"
    spans: dict[str, list[tuple[str, str]]] = defaultdict(list)  # pmcid -> [(prompt id, span)]
    seen: set[tuple[str, str]] = set()
    items: list[tuple[str, str, str]] = []  # (prompt id, direction, span)
    with apath.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("Valid Label", "").strip() != "True" or row["PromptID"] not in prompts:
                continue
            direction = _EFFECT.get(row.get("Label", "").strip().lower())
            span = _clean_span(row.get("Annotations", ""))
            if direction is None or len(span) < 40 or span.count(" ") < 6:
                continue
            key = (row["PromptID"], span)
            if key in seen:
                continue
            seen.add(key)
            items.append((row["PromptID"], direction, span))
            spans[row["PMCID"]].append((row["PromptID"], span))
    out = []
    for pid, direction, span in items:
        p = prompts[pid]
        fill = {"i": p["Intervention"].strip(), "o": p["Outcome"].strip(), "c": p["Comparator"].strip()}
        if not all(fill.values()):
            continue
        fill["i"] = fill["i"][:1].upper() + fill["i"][1:]
        if fill["o"][1:2].islower():
            fill["o"] = fill["o"][:1].lower() + fill["o"][1:]
        opposite = {"inc": "dec", "dec": "inc", "same": rng.choice(("inc", "dec"))}[direction]
        if direction != "same" and rng.random() < 0.3:
            opposite = "same"
        out.append(LabelPair(rng.choice(_TEMPLATES[direction]).format(**fill), "", (span,), S, source, span))
        out.append(LabelPair(rng.choice(_TEMPLATES[opposite]).format(**fill), "", (span,), C, source, span))
        others = [
            s for q, s in spans[p["PMCID"]] if prompts[q]["Outcome"].strip().lower() != fill["o"].lower()
        ]
        if others:
            other = rng.choice(others)
            out.append(
                LabelPair(rng.choice(_TEMPLATES[direction]).format(**fill), "", (other,), N, source, other)
            )
    return out


_CAD_HEADER = ("sentence1", "sentence2", "gold_label")


def load_cad_snli(aux_dir: Path, source: str = "cad_snli") -> list[LabelPair]:
    """Counterfactually augmented SNLI (train, dev and test TSVs: sentence1, sentence2, gold_label): pairs
    whose premise or hypothesis was minimally edited to flip the label. Its original pairs are SNLI dev
    and test pairs, which the ``snli`` set already has, so a pair whose (premise, hypothesis) occurs in
    SNLI is dropped."""
    snli = {(p.sentences[0], p.claim) for p in AUX_LOADERS["snli"](aux_dir, 0)}
    out, seen = [], set()
    for split in ("train", "dev", "test"):
        path = aux_dir / "cad_snli" / f"{split}.tsv"
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None)
            if header is None or [h.strip().lower() for h in header[:3]] != list(_CAD_HEADER):
                raise DataFormatError("expected header sentence1<TAB>sentence2<TAB>gold_label", path, 1)
            for row in reader:
                if len(row) < 3:
                    continue
                premise, hypothesis, label = row[0].strip(), row[1].strip(), _NLI.get(row[2].strip().lower())
                key = (premise, hypothesis)
                if label is None or not premise or not hypothesis or key in snli or key in seen:
                    continue
                seen.add(key)
                out.append(LabelPair(hypothesis, "", (premise,), label, source))
    return out


#: Breaking NLI's categories kept: one word swapped for its antonym (CONTRADICT) or a synonym (SUPPORT),
#: the lexical contrast of a direction; nationalities, colours, numbers and the like are left out.
BREAKING_NLI_CATEGORIES = frozenset({"antonyms", "antonyms_wordnet", "synonyms"})


def load_breaking_nli(path: Path, source: str = "breaking_nli") -> list[LabelPair]:
    """Breaking NLI (JSON lines: sentence1, sentence2, gold_label, category), antonym and synonym swaps."""
    out = []
    for _, obj in _read_jsonl(path):
        label = _NLI.get(str(obj.get("gold_label", "")).strip().lower())
        premise, hypothesis = str(obj.get("sentence1", "")).strip(), str(obj.get("sentence2", "")).strip()
        if label is not None and premise and hypothesis and obj.get("category") in BREAKING_NLI_CATEGORIES:
            out.append(LabelPair(hypothesis, "", (premise,), label, source))
    return out


#: SciNLI's relations as the label model's: only "entailment" (the second sentence restates the first) is
#: SUPPORT. "contrasting" ("however") and "reasoning" ("therefore") link two sentences of one argument
#: without one stating the other, and "contrasting" is not a contradiction, so those and "neutral" are
#: NOT_ENOUGH_INFO; SciNLI gives no CONTRADICT.
SCINLI_LABELS = {"entailment": S, "contrasting": N, "reasoning": N, "neutral": N}


def load_scinli(path: Path, source: str = "scinli") -> list[LabelPair]:
    """SciNLI (CSV: sentence1, sentence2, label; sentences from NLP papers), mapped by :data:`SCINLI_LABELS`:
    the second sentence is the claim, the first its evidence."""
    out = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or not {"sentence1", "sentence2", "label"} <= set(reader.fieldnames):
            raise DataFormatError("expected columns sentence1, sentence2, label", path, 1)
        for row in reader:
            label = SCINLI_LABELS.get(str(row.get("label") or "").strip().lower())
            first, second = str(row.get("sentence1") or "").strip(), str(row.get("sentence2") or "").strip()
            if label is not None and first and second:
                out.append(LabelPair(second, "", (first,), label, source))
    return out


AUX_LOADERS = {
    "mnli": lambda d, seed: load_nli_jsonl(d / "mnli" / "dev_matched.jsonl", "mnli"),
    "mnli_mismatched": lambda d, seed: load_nli_jsonl(
        d / "mnli_mismatched" / "mnli_dev_mismatched.jsonl", "mnli_mismatched"
    ),
    "scinli": lambda d, seed: load_scinli(d / "scinli" / "dev.csv") + load_scinli(d / "scinli" / "test.csv"),
    "snli": lambda d, seed: (
        load_nli_jsonl(d / "snli" / "dev.jsonl", "snli") + load_snli_tsv(d / "snli" / "test.tsv")
    ),
    "scitail": lambda d, seed: (
        load_scitail(d / "scitail" / "test.jsonl") + load_scitail(d / "scitail" / "dev_tokenized.txt")
    ),
    "fever_symmetric": lambda d, seed: (
        load_fever_symmetric(d / "fever_symmetric" / "fever_symmetric_dev.jsonl")
        + load_fever_symmetric(d / "fever_symmetric" / "fever_symmetric_test.jsonl")
    ),
    "pubmedqa": lambda d, seed: load_pubmedqa(d / "pubmedqa" / "ori_pqal.json"),
    "pubmedqa_train": lambda d, seed: load_pubmedqa(
        d / "pubmedqa" / "ori_pqal.json", "pubmedqa", skip_held_out=True
    ),
    "evidence_inference": lambda d, seed: load_evidence_inference(d / "evidence_inference", seed=seed),
    "cad_snli": lambda d, seed: load_cad_snli(d),
    "breaking_nli": lambda d, seed: load_breaking_nli(d / "breaking_nli" / "dataset.jsonl"),
}

#: Sets built from the SciFact corpus itself (no aux file; no claim read): name -> (corpus, limit, seed).
CORPUS_SETS = {"corpus_direction"}

AUX_FILES = {
    "mnli": ("mnli/dev_matched.jsonl",),
    "mnli_mismatched": ("mnli_mismatched/mnli_dev_mismatched.jsonl",),
    "scinli": ("scinli/dev.csv", "scinli/test.csv"),
    "snli": ("snli/dev.jsonl", "snli/test.tsv"),
    "scitail": ("scitail/test.jsonl", "scitail/dev_tokenized.txt"),
    "fever_symmetric": (
        "fever_symmetric/fever_symmetric_dev.jsonl",
        "fever_symmetric/fever_symmetric_test.jsonl",
    ),
    "pubmedqa": ("pubmedqa/ori_pqal.json",),
    "pubmedqa_train": ("pubmedqa/ori_pqal.json",),
    "evidence_inference": ("evidence_inference/v2_annotations.csv", "evidence_inference/prompts_merged.csv"),
    "cad_snli": (
        "cad_snli/train.tsv",
        "cad_snli/dev.tsv",
        "cad_snli/test.tsv",
        "snli/dev.jsonl",
        "snli/test.tsv",
    ),
    "breaking_nli": ("breaking_nli/dataset.jsonl",),
}


def _norm(text: str) -> str:
    return " ".join(WORD_TOKEN.findall(text.lower()))


_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+")


def drop_corpus_overlap(
    pairs: Sequence[LabelPair], corpus: Iterable[Abstract], min_chars: int = 40
) -> list[LabelPair]:
    """Pairs whose evidence or provenance shares no sentence (>= ``min_chars`` normalised characters)
    with any SciFact abstract or title: biomedical aux sets must not leak validation or test abstracts."""
    known: set[str] = set()
    for doc in corpus:
        for text in (doc.title, *doc.sentences):
            norm = _norm(text)
            if len(norm) >= min_chars:
                known.add(norm)
    kept = []
    for pair in pairs:
        texts = [pair.provenance, *pair.sentences] if pair.provenance else list(pair.sentences)
        pieces = (_norm(p) for t in texts for p in _SENT_SPLIT.split(t))
        if not any(len(p) >= min_chars and p in known for p in pieces):
            kept.append(pair)
    return kept


def load_aux(
    aux_dir: Path,
    sets: Sequence[tuple[str, int]],
    corpus: Iterable[Abstract],
    *,
    seed: int,
) -> list[LabelPair]:
    """Load the named aux sets, each capped at its pair budget (0 = all), overlap-filtered, seeded sample;
    a corpus set (:data:`CORPUS_SETS`) is built from ``corpus`` with its budget as the limit."""
    corpus = list(corpus)
    rng = random.Random(seed)
    out: list[LabelPair] = []
    for name, cap in sets:
        if name in CORPUS_SETS:
            out.extend(
                LabelPair(p.claim, p.title, p.sentences, S if p.supports else C, name)
                for p in direction_pairs(corpus, cap, seed)
            )
            continue
        if name not in AUX_LOADERS:
            known = sorted({*AUX_LOADERS, *CORPUS_SETS})
            raise DataFormatError(f"unknown aux set {name!r}; known: {known}", aux_dir)
        for rel in AUX_FILES[name]:
            if not (aux_dir / rel).is_file():
                raise DataFormatError(f"aux file missing for {name!r}", aux_dir / rel)
        pairs = AUX_LOADERS[name](aux_dir, seed)
        if name in ("pubmedqa", "pubmedqa_train", "evidence_inference"):
            pairs = drop_corpus_overlap(pairs, corpus)
        if cap and len(pairs) > cap:
            pairs = rng.sample(pairs, cap)
        out.extend(replace(p, provenance="") for p in pairs)
    return out
