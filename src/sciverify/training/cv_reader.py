"""The reader under the cross-validation protocol: trained per fold, read out of fold, milestones.

It runs on a cross-validation run directory whose fold plan (``folds.json``) and candidate files
(``fold-N/candidates.jsonl``, the top 5 retrieved abstracts of each claim) exist. For each fold the reader
is trained on the other folds' claims (hard negatives from their retrieved abstracts: retrieval learns
nothing from claims, so nothing of the fold leaks in) and then reads **every** sentence of the fold's
candidates and of its claims' gold evidence abstracts. Reading every sentence here costs a few minutes per
fold and lets the decision layer choose, inside the folds, how many of the trees' best sentences the
reader reads at run time. The outputs go to ``fold-N/reader-<name>.jsonl``:

``{"id": claim id, "candidates": [[[p_support, p_contradict, p_nei, p_rationale] per sentence] per
candidate], "gold": {doc id: [[...] per sentence]}}`` (``gold`` only for evidence abstracts not among the
candidates).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Abstract, Claim, doc_key
from sciverify.errors import ArtifactError
from sciverify.training.reader_data import scifact_examples
from sciverify.training.reader_train import ReaderTrainConfig, train_reader

__all__ = [
    "ReaderRows",
    "reader_file",
    "reader_milestones",
    "read_reader_rows",
    "run_reader_cv",
]

S, C, N, R = 0, 1, 2, 3


def reader_file(name: str) -> str:
    """The per-fold output file of a reader recipe."""
    return f"reader-{name}.jsonl"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)


def _round(a: npt.NDArray[np.float32]) -> list[list[float]]:
    return [[round(float(v), 5) for v in row] for row in a]


def _retrieved(run: Path, folds: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in range(folds):
        for row in _read_jsonl(run / f"fold-{f}" / "candidates.jsonl"):
            out[str(row["id"])] = [c["doc_id"] for c in row["candidates"]]
    return out


def _read_fold(
    model_dir: Path, claims: Sequence[Claim], rows: Sequence[dict[str, Any]], docs: Mapping[str, Abstract]
) -> list[dict[str, Any]]:
    from sciverify.models.reader import ReaderModel

    reader = ReaderModel.load(model_dir)
    by_id = {str(c.id): c for c in claims}
    out = []
    for row in rows:
        claim = by_id[str(row["id"])]
        keys = [c["doc_id"] for c in row["candidates"]]
        cands = [_round(reader.read(claim.text, docs[k].title, docs[k].sentences)) for k in keys]
        gold = {
            k: _round(reader.read(claim.text, docs[k].title, docs[k].sentences))
            for k in claim.evidence
            if k not in keys and k in docs
        }
        out.append({"id": row["id"], "candidates": cands, "gold": gold})
    return out


def run_reader_cv(
    run: Path,
    claims: Sequence[Claim],
    corpus: Sequence[Abstract],
    *,
    config: ReaderTrainConfig | None = None,
    name: str = "mpnet6",
    final: bool = True,
    log: Callable[[str], None] = print,
) -> None:
    """Train and read the reader for every fold of ``run`` (skipping folds already read), then train the
    final reader on all claims into ``run/models/final/reader``. Resumable: rerun to continue."""
    config = config or ReaderTrainConfig()
    run = Path(run)
    plan = json.loads((run / "folds.json").read_text(encoding="utf-8"))
    fold_of = {str(k): int(v) for k, v in plan["fold_of"].items()}
    folds = max(fold_of.values()) + 1
    docs = {doc_key(a.doc_id): a for a in corpus}
    retrieved = _retrieved(run, folds)
    work = run / "models" / f"reader-{name}-work"
    stages_path = run / "stages.json"
    for f in range(folds):
        target = run / f"fold-{f}" / reader_file(name)
        if target.exists():
            continue
        start = time.time()
        train = [c for c in claims if fold_of.get(str(c.id)) != f]
        held = [c for c in claims if fold_of.get(str(c.id)) == f]
        check = scifact_examples(held, docs, seed=config.seed, negated=False, negatives_per_claim=0)
        model_dir = run / "models" / f"fold-{f}" / f"reader-{name}"
        if not (model_dir / "training.json").exists():
            log(f"[reader fold {f}] training on {len(train)} claims")
            if (
                train_reader(config, train, docs, model_dir, work, retrieved=retrieved, check=check, log=log)
                is None
            ):
                return
        rows = _read_jsonl(run / f"fold-{f}" / "candidates.jsonl")
        log(f"[reader fold {f}] reading {len(rows)} claims")
        _write_jsonl(target, _read_fold(model_dir, held, rows, docs))
        _record(stages_path, f"fold-{f}/reader-{name}", time.time() - start)
    if final:
        model_dir = run / "models" / "final" / f"reader-{name}"
        if not (model_dir / "training.json").exists():
            start = time.time()
            log(f"[reader final] training on all {len(claims)} claims")
            if train_reader(config, claims, docs, model_dir, work, retrieved=retrieved, log=log) is None:
                return
            _record(stages_path, f"final-reader-{name}", time.time() - start)


def _record(path: Path, stage: str, seconds: float) -> None:
    times = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    times[stage] = {"seconds": round(seconds, 1), "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


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


def read_reader_rows(run: Path, claims: Sequence[Claim], name: str = "mpnet6") -> list[ReaderRows]:
    """Join every fold's reader file with its candidates file by claim id."""
    run = Path(run)
    by_id = {str(c.id): c for c in claims}
    out = []
    for d in sorted(run.glob("fold-*")):
        path = d / reader_file(name)
        if not path.exists():
            continue
        cands = {str(r["id"]): r for r in _read_jsonl(d / "candidates.jsonl")}
        for row in _read_jsonl(path):
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


def _stance(outputs: npt.NDArray[np.float32], sentences: Sequence[int]) -> npt.NDArray[np.float32]:
    """The abstract's stance from a set of its sentences: their stance probabilities, each weighted by its
    P(rationale), averaged."""
    idx = [i for i in sentences if 0 <= i < len(outputs)]
    if not idx:
        return np.asarray([0.0, 0.0, 1.0], dtype=np.float32)
    part = outputs[idx]
    w = np.maximum(part[:, R], 1e-6)
    return np.asarray((part[:, :3] * w[:, None]).sum(0) / w.sum(), dtype=np.float32)


def reader_milestones(rows: Sequence[ReaderRows]) -> dict[str, Any]:
    """The issue's three milestones, out of fold, with the trees' figure beside the reader's.

    - top-1 gold: among retrieved gold evidence abstracts, how often the best sentence is a gold rationale
      sentence (reader: highest P(rationale); trees: highest score);
    - gold-evidence label accuracy: the stance read from the gold rationale sentences, three-way;
    - SUPPORT vs CONTRADICT on gold rationales: the same, deciding between the two labels only.
    """
    from sciverify.training.label_data import LABEL_INDEX

    top_reader = top_trees = retrieved = 0
    correct3 = correct2 = total = 0
    for r in rows:
        for key, sets in r.claim.evidence.items():
            gold = {i for s in sets for i in s.sentences}
            y = LABEL_INDEX[sets[0].label]
            out = r.outputs(key)
            if out is None:
                continue
            if key in r.candidates:
                retrieved += 1
                top_reader += int(int(np.argmax(out[:, R])) in gold)
                top_trees += int(int(np.argmax(r.trees[key])) in gold)
            p = _stance(out, sorted(gold))
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
