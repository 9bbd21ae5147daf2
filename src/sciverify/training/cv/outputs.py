"""The out-of-fold model outputs on disk: written per fold by the stages, read back as
:class:`sciverify.decision.rule.ClaimOutputs` for the decision layer.

Two files per fold, joined by claim id (never by position):

* ``candidates.jsonl``: per claim, its top-k candidates in retrieval order, each with its doc id, retrieval
  score and the selector's score for every sentence (and, from a per-sentence reader, ``stance``: one
  SUPPORT/CONTRADICT/NEI triple per sentence);
* ``labels-<base>.jsonl``: per candidate, the label model's probabilities when it reads each set of
  :func:`sciverify.decision.rule.possible_reads` (``top1``: the best sentence, ``top2``: the best two, in
  abstract order; None where the abstract is too short), and per gold evidence abstract, its probabilities
  when reading the gold rationale.

The committed files of ``results/cv5`` are in this format; :func:`read_run_outputs` reads them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.io import read_jsonl, write_text_atomic
from sciverify.data.records import Claim, doc_key
from sciverify.decision.candidates import CandidateOutputs, ClaimOutputs
from sciverify.decision.sentence_rule import possible_reads
from sciverify.decision.settings import LABEL_READS
from sciverify.errors import ArtifactError
from sciverify.models.base import LabelPredictor
from sciverify.pipeline.verify import Verifier
from sciverify.retrieval.index import CorpusIndex

__all__ = [
    "CANDIDATES",
    "candidate_rows",
    "fold_rows",
    "label_rows",
    "labels_file",
    "load_outputs",
    "read_run_outputs",
    "write_rows",
]

CANDIDATES = "candidates.jsonl"


def labels_file(base: str) -> str:
    """The per-fold label outputs of one label model body."""
    return f"labels-{base}.jsonl"


def _round(values: Iterable[Any], digits: int = 5) -> list[float]:
    return [round(float(v), digits) for v in values]


def write_rows(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write rows as sorted-key JSON lines, atomically (the committed files' format)."""
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def fold_rows(run: Path, name: str, folds: Iterable[int]) -> list[dict[str, Any]]:
    """The rows of one per-fold file, fold after fold."""
    return [r for f in folds for r in read_jsonl(run / f"fold-{f}" / name)]


def candidate_rows(verifier: Verifier, claims: Sequence[Claim], k: int, fold: int) -> list[dict[str, Any]]:
    """Retrieval and every sentence's selector score for the ``k`` candidates of each claim."""
    hits, embs = verifier.candidates([c.text for c in claims], k)
    rows = []
    for n, claim in enumerate(claims):
        scores = verifier.score_candidates(claim.text, embs[n], hits[n])
        rows.append(
            {
                "id": claim.id,
                "fold": fold,
                "candidates": [
                    {"doc_id": doc_key(h.doc_id), "retrieval": round(float(h.score), 6), "scores": _round(s)}
                    for h, s in zip(hits[n], scores, strict=True)
                ],
            }
        )
    return rows


def label_rows(
    labeler: LabelPredictor, index: CorpusIndex, claims: Sequence[Claim], candidates: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Label probabilities for every read of each candidate (``top1``, ``top2``), and for each gold
    evidence abstract read with its gold rationale (how well the label model labels given gold evidence)."""
    by_id = {str(c.id): c for c in claims}
    out = []
    for row in candidates:
        claim = by_id[str(row["id"])]
        evidences: list[tuple[str, list[str]]] = []
        slots: list[tuple[int, str]] = []
        for i, cand in enumerate(row["candidates"]):
            r = index.row_of(cand["doc_id"])
            if r is None:
                raise ArtifactError(f"claim {row['id']}: doc {cand['doc_id']} is not in the index")
            sentences, title = index.sentences(r), index.title(r)
            for n, read in enumerate(possible_reads(np.asarray(cand["scores"]), LABEL_READS), start=1):
                evidences.append((title, [sentences[j] for j in read]))
                slots.append((i, f"top{n}"))
        gold_keys = []
        for key, sets in claim.evidence.items():
            r = index.row_of(key)
            if r is None:
                continue
            rationale = sorted({j for s in sets for j in s.sentences})
            sentences = index.sentences(r)
            evidences.append((index.title(r), [sentences[j] for j in rationale if 0 <= j < len(sentences)]))
            gold_keys.append((key, sets[0].label.value))
        probs = labeler.predict(claim.text, evidences) if evidences else np.zeros((0, 3))
        cands: list[dict[str, Any]] = [
            {f"top{n}": None for n in range(1, LABEL_READS + 1)} for _ in row["candidates"]
        ]
        for (i, name), p in zip(slots, probs[: len(slots)], strict=True):
            cands[i][name] = _round(p)
        gold = {
            key: {"label": label, "probs": _round(p)}
            for (key, label), p in zip(gold_keys, probs[len(slots) :], strict=True)
        }
        out.append({"id": row["id"], "candidates": cands, "gold": gold})
    return out


def _candidate(cand: Mapping[str, Any], reads: Mapping[str, Any]) -> CandidateOutputs:
    scores = np.asarray(cand["scores"], dtype=np.float32)
    label_reads: dict[tuple[int, ...], npt.NDArray[np.float32]] = {}
    for n, read in enumerate(possible_reads(scores, LABEL_READS), start=1):
        probs = reads.get(f"top{n}")
        if probs:
            label_reads[read] = np.asarray(probs, dtype=np.float32)
    stance = cand.get("stance")
    return CandidateOutputs(
        doc_id=cand["doc_id"],
        retrieval=float(cand["retrieval"]),
        scores=scores,
        label_reads=label_reads,
        stance=np.asarray(stance, dtype=np.float32).reshape(-1, 3) if stance is not None else None,
    )


def load_outputs(
    claims: Sequence[Claim],
    candidate_file_rows: Sequence[Mapping[str, Any]],
    label_file_rows: Sequence[Mapping[str, Any]],
) -> list[ClaimOutputs]:
    """Join the candidate and label files by claim id into per-claim outputs, in candidate-file order."""
    by_id = {str(c.id): c for c in claims}
    labels = {str(r["id"]): r for r in label_file_rows}
    out = []
    for row in candidate_file_rows:
        key = str(row["id"])
        if key not in by_id or key not in labels:
            raise ArtifactError(f"claim {key} is in the candidates file but not in the claims or labels file")
        lab, cands = labels[key]["candidates"], row["candidates"]
        if len(lab) != len(cands):
            raise ArtifactError(f"claim {key}: {len(cands)} candidates but {len(lab)} label rows")
        candidates = tuple(_candidate(c, r) for c, r in zip(cands, lab, strict=True))
        out.append(ClaimOutputs(by_id[key], candidates, int(row["fold"])))
    return out


def read_run_outputs(
    run: Path, claims: Sequence[Claim], base: str, folds: Sequence[int] | None = None
) -> list[ClaimOutputs]:
    """The out-of-fold outputs of one label base in a run directory, for the given folds (default: every
    fold with both a candidates file and that base's label file)."""
    run = Path(run)
    name = labels_file(base)
    if folds is None:
        folds = sorted(
            int(d.name.split("-")[1])
            for d in run.glob("fold-*")
            if (d / CANDIDATES).exists() and (d / name).exists()
        )
    return load_outputs(claims, fold_rows(run, CANDIDATES, folds), fold_rows(run, name, folds))
