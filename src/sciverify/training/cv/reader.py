"""The reader under the cross-validation protocol: trained per fold, read out of fold, milestones.

For each fold the reader (:mod:`sciverify.training.reader_train`) is trained on the other folds' claims
(hard negatives from their retrieved abstracts: retrieval learns nothing from claims, so nothing of the
fold leaks in) and then reads **every** sentence of the fold's candidates and of its claims' gold evidence
abstracts. Reading every sentence costs a few minutes per fold and lets the decision layer choose, inside
the folds, how many of the selector's best sentences the reader reads at run time
(:meth:`sciverify.decision.rule.CandidateOutputs.limit_reads`). The outputs go to
``fold-N/reader-<name>.jsonl``:

``{"id": claim id, "candidates": [[[p_support, p_contradict, p_nei, p_rationale] per sentence] per
candidate], "gold": {doc id: [[...] per sentence]}}`` (``gold`` only for evidence abstracts not among the
candidates).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.io import read_jsonl
from sciverify.data.records import Abstract, Claim
from sciverify.decision.candidates import ClaimOutputs
from sciverify.errors import ArtifactError
from sciverify.models.base import SentenceReader
from sciverify.training.cv.outputs import CANDIDATES
from sciverify.training.reader_data import scifact_examples
from sciverify.training.reader_train import ReaderTrainConfig, train_reader

__all__ = [
    "READER_WORK",
    "ReaderRows",
    "attach_reader",
    "read_fold",
    "read_reader_rows",
    "reader_file",
    "reader_milestones",
    "retrieved_doc_ids",
    "train_fold_reader",
]

R = 3
#: The reader's resumable state under ``<run>/models/`` (the auxiliary stage is shared by every fold).
READER_WORK = "reader-work"


def reader_file(name: str) -> str:
    """The per-fold output file of a reader recipe."""
    return f"reader-{name}.jsonl"


def _round(a: npt.NDArray[np.float32]) -> list[list[float]]:
    return [[round(float(v), 5) for v in row] for row in a]


def retrieved_doc_ids(run: Path, folds: int) -> dict[str, list[str]]:
    """Every claim's retrieved doc ids, in rank order, from the run's candidate files."""
    out: dict[str, list[str]] = {}
    for f in range(folds):
        for row in read_jsonl(run / f"fold-{f}" / CANDIDATES):
            out[str(row["id"])] = [c["doc_id"] for c in row["candidates"]]
    return out


def train_fold_reader(
    config: ReaderTrainConfig,
    train: Sequence[Claim],
    held: Sequence[Claim],
    docs: Mapping[str, Abstract],
    retrieved: Mapping[str, Sequence[str]],
    model_dir: Path,
    work: Path,
    log: Callable[[str], None],
    device: str = "cpu",
) -> None:
    """Train the reader on ``train`` into ``model_dir`` unless it is there, on ``device``; the int8 export
    is checked against the float graph on the held-out claims' sentences, or, for a final model that holds
    no claim out, on its training claims' (the check measures the export's fidelity, not quality, so seen
    pairs serve; without them the shipped graph would go unchecked)."""
    if (model_dir / "training.json").exists():
        return
    check = scifact_examples(held or train, docs, seed=config.seed, negated=False, negatives_per_claim=0)
    report = train_reader(
        config, train, docs, model_dir, work, retrieved=retrieved, check=check, log=log, device=device
    )
    if report is None:
        raise ArtifactError(f"reader training for {model_dir} stopped before its end")


def read_fold(
    reader: SentenceReader,
    held: Sequence[Claim],
    rows: Sequence[Mapping[str, Any]],
    docs: Mapping[str, Abstract],
) -> list[dict[str, Any]]:
    """Every sentence of each held-out claim's candidates and gold evidence abstracts, read."""
    by_id = {str(c.id): c for c in held}
    out = []
    for row in rows:
        claim = by_id[str(row["id"])]
        keys = [c["doc_id"] for c in row["candidates"]]
        extra = [k for k in claim.evidence if k not in keys and k in docs]
        pairs = [(docs[k].title, s) for k in keys + extra for s in docs[k].sentences]
        read = reader.read_pairs(claim.text, pairs)
        blocks, start = [], 0
        for k in keys + extra:
            n = len(docs[k].sentences)
            blocks.append(_round(read[start : start + n]))
            start += n
        out.append(
            {
                "id": row["id"],
                "candidates": blocks[: len(keys)],
                "gold": dict(zip(extra, blocks[len(keys) :], strict=True)),
            }
        )
    return out


def attach_reader(
    outputs: Sequence[ClaimOutputs], rows: Sequence[Mapping[str, Any]]
) -> list[ClaimOutputs]:
    """The claims' outputs with the reader's stance and P(rationale) of every sentence, by claim id."""
    by_id = {str(r["id"]): r for r in rows}
    out = []
    for c in outputs:
        row = by_id.get(str(c.claim.id))
        if row is None:
            raise ArtifactError(f"claim {c.claim.id} has no reader outputs")
        if len(row["candidates"]) != len(c.candidates):
            raise ArtifactError(
                f"claim {c.claim.id}: {len(c.candidates)} candidates but reader rows for "
                f"{len(row['candidates'])}"
            )
        cands = []
        for cand, read in zip(c.candidates, row["candidates"], strict=True):
            a = np.asarray(read, dtype=np.float32).reshape(-1, 4)
            if len(a) != len(cand.scores):
                raise ArtifactError(
                    f"claim {c.claim.id}, doc {cand.doc_id}: reader rows do not match its sentences"
                )
            cands.append(replace(cand, stance=a[:, :3].copy(), rationale=a[:, R].copy()))
        out.append(replace(c, candidates=tuple(cands)))
    return out


@dataclass(frozen=True)
class ReaderRows:
    """One claim's out-of-fold reader outputs, arrays of shape (sentences, 4), keyed by doc id."""

    claim: Claim
    candidates: dict[str, npt.NDArray[np.float32]]
    candidate_order: tuple[str, ...]
    trees: dict[str, npt.NDArray[np.float32]]
    gold_extra: dict[str, npt.NDArray[np.float32]]

    def outputs(self, key: str) -> npt.NDArray[np.float32] | None:
        """The reader's outputs for an abstract, candidate or gold."""
        return self.candidates.get(key, self.gold_extra.get(key))


def read_reader_rows(run: Path, claims: Sequence[Claim], name: str) -> list[ReaderRows]:
    """Join every fold's reader file with its candidates file by claim id."""
    run = Path(run)
    by_id = {str(c.id): c for c in claims}
    out = []
    for d in sorted(run.glob("fold-*")):
        path = d / reader_file(name)
        if not path.exists():
            continue
        cands = {str(r["id"]): r for r in read_jsonl(d / CANDIDATES)}
        for row in read_jsonl(path):
            key = str(row["id"])
            if key not in by_id or key not in cands:
                raise ArtifactError(f"{path}: claim {key} is not in the claims or the candidates file")
            order = tuple(c["doc_id"] for c in cands[key]["candidates"])
            if len(order) != len(row["candidates"]):
                raise ArtifactError(
                    f"{path}: claim {key} has {len(order)} candidates but reader rows for "
                    f"{len(row['candidates'])}"
                )
            out.append(
                ReaderRows(
                    claim=by_id[key],
                    candidates={
                        k: np.asarray(v, dtype=np.float32).reshape(-1, 4)
                        for k, v in zip(order, row["candidates"], strict=True)
                    },
                    candidate_order=order,
                    trees={
                        c["doc_id"]: np.asarray(c["scores"], dtype=np.float32)
                        for c in cands[key]["candidates"]
                    },
                    gold_extra={
                        k: np.asarray(v, dtype=np.float32).reshape(-1, 4) for k, v in row["gold"].items()
                    },
                )
            )
    return out


def reader_milestones(rows: Sequence[ReaderRows]) -> dict[str, Any]:
    """The reader's milestones, out of fold, with the trees' figure beside the reader's.

    - top-1 gold: among retrieved gold evidence abstracts, how often the best sentence is a gold rationale
      sentence (reader: highest P(rationale); trees: highest score);
    - gold-evidence label accuracy: the stance read from the gold rationale sentences
      (:func:`sciverify.decision.rule.reader_label`), three-way;
    - SUPPORT vs CONTRADICT on gold rationales: the same, deciding between the two labels only.
    """
    from sciverify.decision.sentence_rule import reader_label
    from sciverify.training.label_data import LABEL_INDEX

    top_reader = top_trees = retrieved = 0
    correct3 = correct2 = total = 0
    for r in rows:
        for key, sets in r.claim.evidence.items():
            gold = sorted({i for s in sets for i in s.sentences})
            y = LABEL_INDEX[sets[0].label]
            out = r.outputs(key)
            if out is None:
                continue
            if key in r.candidates:
                retrieved += 1
                top_reader += int(int(np.argmax(out[:, R])) in gold)
                top_trees += int(int(np.argmax(r.trees[key])) in gold)
            p = reader_label(out[:, :3], out[:, R], gold)
            total += 1
            correct3 += int(int(np.argmax(p)) == y)
            correct2 += int(int(np.argmax(p[:2])) == y)
    return {
        "claims": len(rows),
        "retrieved_gold_abstracts": retrieved,
        "top1_gold_reader": top_reader / retrieved if retrieved else 0.0,
        "top1_gold_trees": top_trees / retrieved if retrieved else 0.0,
        "gold_evidence_abstracts": total,
        "gold_label_accuracy": correct3 / total if total else 0.0,
        "support_vs_contradict": correct2 / total if total else 0.0,
    }
