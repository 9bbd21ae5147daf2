"""``sciverify train --cv 5``: cross-fitted models, an honest estimate, and the final models.

A figure is an estimate of quality on unseen claims only if the claims it is scored on chose nothing: no
model weight, threshold, seed or setting. So every train claim is scored by models that never saw it
(stacking, Wolpert 1992):

1. The claims are cut into grouped folds (:func:`sciverify.data.splits.fold_claims`: a claim, its negation
   and its siblings citing the same abstracts share a fold). For each fold, the rationale selector and the
   label model are trained on the other folds and run on the fold's claims: retrieval, a score for every
   sentence of the top ``k`` abstracts, and label probabilities for what the label model would read. The
   label model's auxiliary entailment stage sees no SciFact claim, so one checkpoint serves every fold.
2. The decision layer (the emit model and the thresholds) is then evaluated by a second cross-validation
   over those out-of-fold outputs, on the same folds: for each fold it is fitted and its thresholds are
   chosen on the other folds only. The pooled predictions of all claims are *the* reported figures
   (``sciverify evaluate`` on ``oof_predictions.jsonl`` gives them with bootstrap intervals).
3. The decision is fitted once more on all out-of-fold outputs, and the final selector and label model are
   trained on all claims with the same recipe: those are what ships.

Every stage writes its outputs atomically and is skipped when they exist, so a killed run (or a run in a
later session) resumes where it stopped; ``stages.json`` records each stage's wall time. The small files
(fold plan, per-claim outputs, predictions, summaries) are meant to be committed; model files go under
``models/``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Claim, Prediction, doc_key
from sciverify.errors import ArtifactError, ConfigError
from sciverify.models.decision import DecisionConfig, decide

__all__ = [
    "CV_AUX",
    "DECISION_GRID",
    "FIXED_DECISION",
    "ClaimOutputs",
    "CvConfig",
    "DecisionChoice",
    "cross_fit_decision",
    "label_recipe",
    "load_outputs",
    "oracle_predictions",
    "read_run_outputs",
    "run_cv",
]

#: The auxiliary entailment pairs of the cross-validated recipe (set, pair budget; 0 = all): the sets that
#: teach polarity (biomedical effect directions, claims refuted by evidence, NLI contradiction) first,
#: about 6,400 pairs, so that the 109M-parameter body's stage fits in well under an hour on two cores.
CV_AUX: tuple[tuple[str, int], ...] = (
    ("evidence_inference", 2000),
    ("mnli", 2000),
    ("fever_symmetric", 0),
    ("scitail", 500),
    ("pubmedqa", 500),
)

#: The decision settings chosen inside the folds: the sentence threshold (what is listed, and whether the
#: label model reads the second-best sentence), the emit threshold on the emit model's P(evidence) and
#: the most abstracts emitted per claim.
DECISION_GRID: dict[str, tuple[Any, ...]] = {
    "sentence_threshold": (0.2, 0.3, 0.4, 0.5, 0.6),
    "emit_threshold": tuple(round(0.1 + 0.05 * i, 2) for i in range(15)),
    "max_emitted": (1, 2, 3),
}
#: The fixed, documented default the tuned decision must beat under the paired bootstrap (the 95 % interval
#: of the difference in the mean of the two headline F1s above zero) to ship instead: a sentence
#: is listed when the selector gives it even odds (VeriSci's 0.5), an abstract is emitted when the emit
#: model thinks evidence likelier than not, and a claim gets its one most confident abstract.
FIXED_DECISION: dict[str, Any] = {"sentence_threshold": 0.5, "emit_threshold": 0.5, "max_emitted": 1}
#: Sentences the label model reads (the best two above the threshold, else the best one) and the most a
#: verdict lists (the abstract metric reads up to three).
LABEL_READS, MAX_LISTED = 2, 3

CANDIDATES = "candidates.jsonl"
FOLDS_FILE = "folds.json"
STAGES_FILE = "stages.json"
OOF_PREDICTIONS = "oof_predictions.jsonl"
OOF_FIXED = "oof_predictions_fixed.jsonl"


@dataclass(frozen=True)
class CvConfig:
    """What one cross-fitted run does.

    Attributes:
        out_dir: run directory (resumable: finished stages are skipped).
        folds: number of grouped folds.
        seed: seed of every stage.
        label_base: the label model's body (``mpnet6``, the shipped one; ``minilm`` or ``mpnet``).
        k: candidate abstracts judged per claim (fixed, not tuned).
        tiny: CI-sized recipes on a slice of the claims.
        max_claims: score only the first claims of each fold (0 = all; ``tiny`` sets 12).
        final: also train the final models on all claims.
        index_dir: corpus index (default: the SciFact index).
        data_dir: SciFact data directory.
    """

    out_dir: Path
    folds: int = 5
    seed: int = 13
    label_base: str = "mpnet6"
    k: int = 5
    tiny: bool = False
    max_claims: int = 0
    final: bool = True
    index_dir: Path | None = None
    data_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.folds < 2:
            raise ConfigError(f"--cv needs at least 2 folds, got {self.folds}")
        if self.k < 1:
            raise ConfigError(f"k must be at least 1, got {self.k}")


def label_recipe(base: str, seed: int, tiny: bool, aux_checkpoint: Path | None) -> Any:
    """The label model's recipe under the protocol, fixed before any fold was scored.

    Every body gets the same SciFact data: two epochs over the gold rationales, the claim-like sentences
    of cited abstracts without evidence (NOT_ENOUGH_INFO) and rule-negated claims with flipped labels
    (for CONTRADICT). MiniLM first gets the auxiliary entailment stage on :data:`CV_AUX` and trains every
    layer at the rates its earlier recipes found. all-mpnet-base-v2 (``mpnet``, the first recipe, stopped
    after one fold: it underfit) trains its top 6 of 12 layers at 3e-5 and skips the auxiliary stage.
    ``mpnet6``, the second and last mpnet recipe (fixed before any of its folds was scored), keeps the body's
    lowest 6 layers and trains all of them, through the same auxiliary stage as MiniLM (worth about 14
    points of accuracy to MiniLM, docs/experiments-label.md) and SciFact stage, at 5e-5 for the body (the
    top of the usual range for a base-width encoder on a few thousand pairs) and 1e-3 for the fresh head.
    """
    from sciverify.training.label_train import LabelTrainConfig

    checkpoint = str(aux_checkpoint) if aux_checkpoint is not None else None
    if tiny:
        return replace(LabelTrainConfig.tiny(seed), base=base, aux_checkpoint=checkpoint, eval_torch=False)
    common: dict[str, Any] = {
        "seed": seed,
        "aux_sets": CV_AUX,
        "epochs": 2,
        "retrieved_negatives": 0,
        "per_set": False,
        "mixed": False,
        "negation_augment": True,
        "negated_nei": False,
        "eval_torch": False,
        "aux_checkpoint": checkpoint,
        "base": base,
        "log_every": 20,
    }
    if base == "mpnet":
        mpnet = {**common, "aux_sets": (), "aux_checkpoint": None}
        return LabelTrainConfig(**mpnet, lr_body=3e-5, lr_head=1e-3, trainable_layers=6)
    if base == "mpnet6":
        return LabelTrainConfig(**common, lr_body=5e-5, lr_head=1e-3)
    return LabelTrainConfig(**common)


# ------------------------------------------------------------------------------------------ stage runner


class _Stages:
    """Runs named stages once: a stage whose outputs all exist is skipped; wall times go to stages.json."""

    def __init__(self, root: Path, log: Callable[[str], None]) -> None:
        self.path = root / STAGES_FILE
        self.log = log
        self.times: dict[str, Any] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def run(self, name: str, outputs: Sequence[Path], fn: Callable[[], Any]) -> bool:
        if outputs and all(p.exists() for p in outputs):
            self.log(f"[{name}] done before: skipped")
            return False
        self.log(f"[{name}] ...")
        start = time.perf_counter()
        fn()
        seconds = round(time.perf_counter() - start, 1)
        if self.path.exists():  # another run may have recorded stages meanwhile
            self.times = {**json.loads(self.path.read_text()), **self.times}
        self.times[name] = {"seconds": seconds, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        _write_text(self.path, json.dumps(self.times, indent=1, sort_keys=True) + "\n")
        self.log(f"[{name}] {seconds:.0f} s")
        return True


def _write_text(path: Path, text: str) -> None:
    """Write atomically: a killed run never leaves a half file that a resumed run would trust."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    _write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _round(values: Any, digits: int = 5) -> list[float]:
    return [round(float(v), digits) for v in values]


# ------------------------------------------------------------------------------------ per-fold outputs


@dataclass
class ClaimOutputs:
    """One claim's out-of-fold model outputs: its top-k candidates in retrieval order, each with the
    selector's score for every sentence and the label model's probabilities when reading the best sentence
    (``top1``) and the best two (``top2``; None for a one-sentence abstract)."""

    claim: Claim
    fold: int
    doc_ids: list[str]
    retrieval: list[float]
    scores: list[npt.NDArray[np.float32]]
    top1: list[npt.NDArray[np.float32]] = field(default_factory=list)
    top2: list[npt.NDArray[np.float32] | None] = field(default_factory=list)


def _best(scores: npt.NDArray[np.floating], n: int) -> list[int]:
    """The ``n`` best sentences, best first (ties: earlier sentence)."""
    return [int(i) for i in np.argsort(-np.asarray(scores), kind="stable")[:n]]


def _candidate_rows(verifier: Any, claims: Sequence[Claim], k: int, fold: int) -> list[dict[str, Any]]:
    texts = [c.text for c in claims]
    hits, embs = verifier.candidates(texts, k)
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


def _label_rows(
    labeler: Any, index: Any, claims: Sequence[Claim], candidates: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Label probabilities for each candidate's best one and best two sentences, and for each gold
    evidence abstract read with its gold rationale (how well the label model labels given gold evidence)."""
    by_id = {str(c.id): c for c in claims}
    out = []
    for row in candidates:
        claim = by_id[str(row["id"])]
        evidences: list[tuple[str, list[str]]] = []
        slots: list[tuple[int, str]] = []
        for i, cand in enumerate(row["candidates"]):
            r = index.row_of(cand["doc_id"])
            sentences, title = index.sentences(r), index.title(r)
            best = _best(np.asarray(cand["scores"]), LABEL_READS)
            for name, chosen in (("top1", best[:1]), ("top2", best[:2] if len(best) > 1 else [])):
                if chosen:
                    evidences.append((title, [sentences[j] for j in sorted(chosen)]))
                    slots.append((i, name))
        gold_keys = []
        for key, sets in claim.evidence.items():
            r = index.row_of(key)
            if r is None:
                continue
            rat = sorted({j for s in sets for j in s.sentences})
            sentences = index.sentences(r)
            evidences.append((index.title(r), [sentences[j] for j in rat if 0 <= j < len(sentences)]))
            gold_keys.append((key, sets[0].label.value))
        probs = labeler.predict(claim.text, evidences) if evidences else np.zeros((0, 3))
        cands: list[dict[str, Any]] = [{"top1": None, "top2": None} for _ in row["candidates"]]
        for (i, name), p in zip(slots, probs[: len(slots)], strict=True):
            cands[i][name] = _round(p)
        gold = {
            key: {"label": label, "probs": _round(p)}
            for (key, label), p in zip(gold_keys, probs[len(slots) :], strict=True)
        }
        out.append({"id": row["id"], "candidates": cands, "gold": gold})
    return out


def load_outputs(
    claims: Sequence[Claim], candidate_rows: Sequence[dict[str, Any]], label_rows: Sequence[dict[str, Any]]
) -> list[ClaimOutputs]:
    """Join the candidate and label files by claim id (never by position) into per-claim outputs."""
    by_id = {str(c.id): c for c in claims}
    labels = {str(r["id"]): r for r in label_rows}
    out = []
    for row in candidate_rows:
        key = str(row["id"])
        if key not in by_id or key not in labels:
            raise ArtifactError(f"claim {key} is in the candidates file but not in the claims or labels file")
        lab = labels[key]["candidates"]
        cands = row["candidates"]
        if len(lab) != len(cands):
            raise ArtifactError(f"claim {key}: {len(cands)} candidates but {len(lab)} label rows")
        out.append(
            ClaimOutputs(
                claim=by_id[key],
                fold=int(row["fold"]),
                doc_ids=[c["doc_id"] for c in cands],
                retrieval=[float(c["retrieval"]) for c in cands],
                scores=[np.asarray(c["scores"], dtype=np.float32) for c in cands],
                top1=[np.asarray(x["top1"] or (0.0, 0.0, 1.0), dtype=np.float32) for x in lab],
                top2=[np.asarray(x["top2"], dtype=np.float32) if x["top2"] else None for x in lab],
            )
        )
    return out


def read_run_outputs(
    run: Path, claims: Sequence[Claim], base: str, folds: Sequence[int] | None = None
) -> list[ClaimOutputs]:
    """The out-of-fold outputs of one label base in a run directory, for the given folds (default: every
    fold with both a candidates file and that base's label file)."""
    run = Path(run)
    if folds is None:
        folds = sorted(
            int(d.name.split("-")[1])
            for d in run.glob("fold-*")
            if (d / CANDIDATES).exists() and (d / f"labels-{base}.jsonl").exists()
        )
    return load_outputs(
        claims, _fold_rows(run, CANDIDATES, folds), _fold_rows(run, f"labels-{base}.jsonl", folds)
    )


def _fold_rows(run: Path, name: str, folds: Iterable[int]) -> list[dict[str, Any]]:
    """The rows of one per-fold file, fold after fold."""
    return [r for f in folds for r in _read_jsonl(run / f"fold-{f}" / name)]


def oracle_predictions(
    outputs: Sequence[ClaimOutputs], k: int, *, gold_label: bool = False, threshold: float | None = None
) -> list[Prediction]:
    """Predictions that emit exactly the gold evidence abstracts among each claim's candidates: the
    ceiling of the decision layer's "which abstracts" for these label and selector outputs. Sentences are
    listed and read as the fixed decision does; ``gold_label`` also puts the gold label in place of the
    label model's (then only rationale selection and retrieval cost anything)."""
    from sciverify.models.decision import confidence_of, listed_sentences

    t = float(FIXED_DECISION["sentence_threshold"] if threshold is None else threshold)
    cfg = _decision_config({"sentence_threshold": t, "emit_threshold": 0.0, "max_emitted": k}, k)
    preds = []
    for c in outputs:
        probs = _read_probs(c, t)
        evidence = {}
        for i, doc in enumerate(c.doc_ids):
            if doc not in c.claim.evidence or i not in probs:
                continue
            label, _ = confidence_of(probs[i], 0.0, i, cfg)
            if gold_label:
                label = c.claim.evidence[doc][0].label
            evidence[doc] = AbstractPrediction(label, tuple(listed_sentences(c.scores[i], cfg)), 1.0)
        preds.append(Prediction(c.claim.id, evidence))
    return preds


# ------------------------------------------------------------------------------------- decision layer


@dataclass(frozen=True)
class DecisionChoice:
    """A decision setting with its emit model; ``objective`` is what chose it (on the fitting claims)."""

    settings: dict[str, Any]
    emit: Any
    objective: float

    def config(self, k: int) -> DecisionConfig:
        return _decision_config(self.settings, k)


def _decision_config(settings: dict[str, Any], k: int) -> DecisionConfig:
    return DecisionConfig(
        sentence_threshold=float(settings["sentence_threshold"]),
        max_sentences=LABEL_READS,
        max_listed=MAX_LISTED,
        min_rationale_score=0.0,
        max_labelled=k,
        emit_threshold=float(settings["emit_threshold"]),
        rationale_power=0.0,
        max_emitted=int(settings["max_emitted"]),
        confidence="learned",
    )


def _read_probs(c: ClaimOutputs, threshold: float) -> dict[int, npt.NDArray[np.float32]]:
    """What the label model said about each candidate under ``threshold``: the best two sentences when
    the second clears it, else the best one (as :func:`sciverify.models.decision.select_sentences`)."""
    out: dict[int, npt.NDArray[np.float32]] = {}
    for i, s in enumerate(c.scores):
        if not len(s):
            continue
        order = _best(s, 2)
        pair = c.top2[i]
        two = pair is not None and len(order) > 1 and float(s[order[1]]) >= threshold
        out[i] = pair if pair is not None and two else c.top1[i]
    return out


def _features(outputs: Sequence[ClaimOutputs], threshold: float) -> tuple[Any, Any, Any, list[Any]]:
    from sciverify.models.emit import emit_features

    rows: list[Any] = []
    y: list[int] = []
    groups: list[int] = []
    spans: list[tuple[int, int]] = []
    probs: list[dict[int, npt.NDArray[np.float32]]] = []
    for c in outputs:
        p = _read_probs(c, threshold)
        x = emit_features(c.retrieval, c.scores, p, threshold)
        spans.append((len(rows), len(rows) + len(c.doc_ids)))
        rows.extend(x)
        y.extend(int(d in c.claim.evidence) for d in c.doc_ids)
        groups.extend([c.fold] * len(c.doc_ids))
        probs.append(p)
    return np.asarray(rows), np.asarray(y), np.asarray(groups), [spans, probs]


def _predict(
    outputs: Sequence[ClaimOutputs],
    cfg: DecisionConfig,
    probs: Sequence[dict[int, npt.NDArray[np.float32]]],
    emit: Sequence[Sequence[float]],
) -> list[Prediction]:
    preds = []
    for n, c in enumerate(outputs):
        verdicts = decide(c.scores, probs[n], cfg, emit[n])
        evidence = {
            c.doc_ids[v.candidate]: AbstractPrediction(v.label, v.sentences, round(v.confidence, 4))
            for v in verdicts
        }
        preds.append(Prediction(c.claim.id, evidence))
    return preds


def _objective(claims: Sequence[Claim], preds: Sequence[Prediction]) -> float:
    from sciverify.scoring import score

    agg = score(claims, preds).aggregate
    return (agg["abstract_rationalized"].f1 + agg["sentence_label"].f1) / 2.0


def choose_decision(
    outputs: Sequence[ClaimOutputs], k: int, grid: dict[str, tuple[Any, ...]]
) -> DecisionChoice:
    """Fit the emit model on ``outputs`` and choose the settings of ``grid`` that score best on them, each
    claim judged by an emit model fitted without its fold (inner cross-validation on the same folds)."""
    from sciverify.models.emit import fit_emit

    claims = [c.claim for c in outputs]
    folds = sorted({c.fold for c in outputs})
    remap = {f: n for n, f in enumerate(folds)}
    best: DecisionChoice | None = None
    for t in grid["sentence_threshold"]:
        x, y, groups, (spans, probs) = _features(outputs, t)
        inner = np.asarray([remap[g] for g in groups])
        model, oof = fit_emit(x, y, inner, folds=max(2, len(folds)))
        per_claim = [list(oof[a:b]) for a, b in spans]
        for e in grid["emit_threshold"]:
            for m in grid["max_emitted"]:
                settings = {"sentence_threshold": t, "emit_threshold": e, "max_emitted": m}
                value = _objective(claims, _predict(outputs, _decision_config(settings, k), probs, per_claim))
                if best is None or value > best.objective + 1e-12:
                    best = DecisionChoice(settings, model, value)
    if best is None:
        raise ConfigError("the decision grid is empty")
    return best


def cross_fit_decision(
    outputs: Sequence[ClaimOutputs], k: int, grid: dict[str, tuple[Any, ...]]
) -> tuple[list[Prediction], list[dict[str, Any]]]:
    """Pooled predictions of every claim, each by a decision fitted and tuned on the other folds only;
    and, per fold, what was chosen there."""
    preds_by_id: dict[str, Prediction] = {}
    chosen = []
    for fold in sorted({c.fold for c in outputs}):
        fit_on = [c for c in outputs if c.fold != fold]
        held = [c for c in outputs if c.fold == fold]
        choice = choose_decision(fit_on, k, grid)
        t = choice.settings["sentence_threshold"]
        x, _, _, (spans, probs) = _features(held, t)
        emit = choice.emit.predict(x) if len(x) else np.zeros(0)
        per_claim = [list(emit[a:b]) for a, b in spans]
        for p in _predict(held, choice.config(k), probs, per_claim):
            preds_by_id[str(p.id)] = p
        chosen.append(
            {"fold": fold, **choice.settings, "objective_on_other_folds": round(choice.objective, 4)}
        )
    return [preds_by_id[str(c.claim.id)] for c in outputs], chosen


# ----------------------------------------------------------------------------------------------- driver


def _fixed_grid() -> dict[str, tuple[Any, ...]]:
    return {name: (value,) for name, value in FIXED_DECISION.items()}


def _score_summary(claims: Sequence[Claim], preds: Sequence[Prediction], seed: int) -> dict[str, Any]:
    from sciverify.scoring import score
    from sciverify.scoring.bootstrap import bootstrap

    report = score(claims, preds)
    boot = bootstrap(report.counts, n_boot=10_000, seed=seed)
    out: dict[str, Any] = {}
    for family, prf in report.aggregate.items():
        ci = boot.stats[family]["f1"]
        out[family] = {
            "precision": round(prf.precision, 4),
            "recall": round(prf.recall, 4),
            "f1": round(prf.f1, 4),
            "f1_ci95": [round(ci.low, 4), round(ci.high, 4)],
        }
    return out


def _tuned_against_fixed(
    claims: Sequence[Claim], tuned: Sequence[Prediction], fixed: Sequence[Prediction], seed: int
) -> dict[str, Any]:
    """Paired bootstrap (10,000 resamples of claims) of the cross-fitted tuned decision against the fixed
    default, on each headline F1 and on their mean (the objective the tuning maximises). The tuned
    settings keep their place only if the objective's 95 % interval of the difference lies above zero."""
    from sciverify.scoring import paired_bootstrap, score
    from sciverify.scoring.bootstrap import bootstrap_totals, resample_indices
    from sciverify.scoring.metrics import metric_arrays

    a, b = score(claims, tuned), score(claims, fixed)
    paired = paired_bootstrap(a, b, n_boot=10_000, seed=seed)
    out: dict[str, Any] = {}
    for family in ("abstract_rationalized", "sentence_label"):
        st = paired.stats[family]["f1"]
        out[family] = {
            "diff": round(st.diff, 4),
            "ci95": [round(st.low, 4), round(st.high, 4)],
            "p_value": round(st.p_value, 4),
        }
    idx = resample_indices(len(claims), 10_000, seed)

    def objective(counts: Any) -> Any:
        m = metric_arrays(counts)
        return (m["abstract_rationalized"]["f1"] + m["sentence_label"]["f1"]) / 2

    diff = objective(bootstrap_totals(a.counts, idx)) - objective(bootstrap_totals(b.counts, idx))
    low, high = np.percentile(diff, [2.5, 97.5])
    point = float(objective(a.counts.sum(0)) - objective(b.counts.sum(0)))
    out["objective"] = {"diff": round(point, 4), "ci95": [round(float(low), 4), round(float(high), 4)]}
    out["tuned_wins"] = bool(low > 0)
    return out


def _gold_label_accuracy(label_rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from sciverify.models.label import LABEL_ORDER

    names = [x.value for x in LABEL_ORDER]
    total = right = 0
    confusion = {a: dict.fromkeys(names, 0) for a in names[:2]}
    for row in label_rows:
        for g in row["gold"].values():
            pred = names[int(np.argmax(g["probs"]))]
            confusion[g["label"]][pred] += 1
            total += 1
            right += int(pred == g["label"])
    return {"evidence_abstracts": total, "accuracy": round(right / max(1, total), 4), "confusion": confusion}


def _fold_splits(
    claims: Sequence[Claim], fold_of: Sequence[int], folds: int, limit: int
) -> list[tuple[list[Claim], list[Claim]]]:
    """Per fold: the claims its models train on (every other fold) and the claims they score (its own,
    the first ``limit`` of them when ``limit`` > 0)."""
    out = []
    for fold in range(folds):
        train = [c for c, f in zip(claims, fold_of, strict=True) if f != fold]
        held = [c for c, f in zip(claims, fold_of, strict=True) if f == fold]
        out.append((train, held[:limit] if limit else held))
    return out


def run_cv(cfg: CvConfig, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run (or resume) the cross-fitted protocol; returns the summary written to ``<base>/summary.json``."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_corpus, write_predictions
    from sciverify.data.splits import fold_claims
    from sciverify.models.label import LabelModel
    from sciverify.models.rationale import TrainedSelector
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import Verifier
    from sciverify.retrieval.base import make_retriever
    from sciverify.retrieval.embedder import get_embedder
    from sciverify.retrieval.index import CorpusIndex, ensure_default_index
    from sciverify.training.label_train import ensure_aux_checkpoint, train_label_model
    from sciverify.training.rationale_train import RationaleTrainConfig, train_rationale_selector

    say = log or (lambda m: print(m, file=sys.stderr, flush=True))
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stages = _Stages(out, say)
    paths = resolve_data_dir(cfg.data_dir)
    claims = read_claims(paths.train)
    fold_of = fold_claims(claims, cfg.folds, cfg.seed)
    plan = {
        "folds": cfg.folds,
        "seed": cfg.seed,
        "fold_of": {str(c.id): f for c, f in zip(claims, fold_of, strict=True)},
    }
    folds_path = out / FOLDS_FILE
    if folds_path.exists() and json.loads(folds_path.read_text())["fold_of"] != plan["fold_of"]:
        raise ArtifactError(f"{folds_path} holds another fold plan (other claims or seed); use a fresh --out")
    _write_text(folds_path, json.dumps(plan, indent=0, sort_keys=True) + "\n")
    limit = cfg.max_claims or (12 if cfg.tiny else 0)
    config_record = {
        **asdict(cfg),
        "out_dir": str(cfg.out_dir),
        "index_dir": str(cfg.index_dir or ""),
        "data_dir": str(cfg.data_dir or ""),
    }
    _write_text(out / "config.json", json.dumps(config_record, indent=1, sort_keys=True, default=str) + "\n")

    index = CorpusIndex.open(cfg.index_dir) if cfg.index_dir else ensure_default_index(progress=True)
    embed = get_embedder(index.config.max_length).encode
    pipeline = PipelineConfig().with_k(cfg.k)
    retriever = make_retriever(index, pipeline.retrieval)
    corpus = read_corpus(paths.corpus)
    models = out / "models"
    base = cfg.label_base
    lcfg = label_recipe(base, cfg.seed, cfg.tiny, None if cfg.tiny else models / f"aux-{base}.pt")
    aux_ckpt = Path(lcfg.aux_checkpoint) if lcfg.aux_checkpoint else None
    rcfg = replace(RationaleTrainConfig.tiny() if cfg.tiny else RationaleTrainConfig(), seed=cfg.seed)

    splits = _fold_splits(claims, fold_of, cfg.folds, limit)
    for fold, (train, held) in enumerate(splits):
        fdir = out / f"fold-{fold}"
        sel_dir = models / f"fold-{fold}" / "rationale"

        def candidates(
            train: list[Claim] = train,
            held: list[Claim] = held,
            sel_dir: Path = sel_dir,
            fdir: Path = fdir,
            fold: int = fold,
        ) -> None:
            if not (sel_dir / "config.json").exists():
                fitted, _ = train_rationale_selector(rcfg, train, index, embed=embed, log=say)
                fitted.save(sel_dir)
            verifier = Verifier(index, retriever, embed, TrainedSelector.load(sel_dir), None, pipeline)
            _write_jsonl(fdir / CANDIDATES, _candidate_rows(verifier, held, cfg.k, fold))

        stages.run(f"fold-{fold}/selector+candidates", [fdir / CANDIDATES], candidates)

    # the label models second: the selectors' stage is cheap, so a run's first minutes give every fold's
    # candidates (and catch problems early) before the long training starts
    for fold, (train, held) in enumerate(splits):
        fdir = out / f"fold-{fold}"
        label_dir = models / f"fold-{fold}" / f"label-{base}"

        def labels(
            train: list[Claim] = train,
            held: list[Claim] = held,
            label_dir: Path = label_dir,
            fdir: Path = fdir,
        ) -> None:
            if not (label_dir / "model.onnx").exists():
                if aux_ckpt is not None:
                    ensure_aux_checkpoint(lcfg, corpus, progress=True)
                metrics = train_label_model(lcfg, train, corpus, label_dir, progress=True)
                _write_text(
                    fdir / f"label-{base}.train.json", json.dumps(metrics, indent=1, default=str) + "\n"
                )
            labeler = LabelModel.load(label_dir)
            rows = _read_jsonl(fdir / CANDIDATES)
            _write_jsonl(fdir / f"labels-{base}.jsonl", _label_rows(labeler, index, held, rows))

        stages.run(f"fold-{fold}/label-{base}", [fdir / f"labels-{base}.jsonl"], labels)

    # the decision layer, cross-fitted over the pooled out-of-fold outputs
    label_rows = _fold_rows(out, f"labels-{base}.jsonl", range(cfg.folds))
    outputs = load_outputs(claims, _fold_rows(out, CANDIDATES, range(cfg.folds)), label_rows)
    scored = [c.claim for c in outputs]
    bdir = out / base
    summary: dict[str, Any] = {"label_base": base, "claims": len(scored), "k": cfg.k}

    def decision() -> None:
        t0 = time.perf_counter()
        preds, per_fold = cross_fit_decision(outputs, cfg.k, DECISION_GRID)
        fixed, _ = cross_fit_decision(outputs, cfg.k, _fixed_grid())
        test = _tuned_against_fixed(scored, preds, fixed, cfg.seed)
        keep_tuned = test["tuned_wins"]
        # the reported predictions are those of the decision that ships
        write_predictions(bdir / OOF_PREDICTIONS, preds if keep_tuned else fixed)
        write_predictions(bdir / OOF_FIXED, fixed)
        write_predictions(bdir / "oof_predictions_tuned.jsonl", preds)
        final = choose_decision(outputs, cfg.k, DECISION_GRID if keep_tuned else _fixed_grid())
        final.emit.save(bdir / "emit.json")
        from sciverify.training.calibrate import save_calibration

        save_calibration(outputs, final.config(cfg.k), bdir, source=f"{out.name}/{base}")
        summary.update(
            {
                "tuned": _score_summary(scored, preds if keep_tuned else fixed, cfg.seed),
                "tuned_decision": _score_summary(scored, preds, cfg.seed),
                "fixed": _score_summary(scored, fixed, cfg.seed),
                "fixed_settings": FIXED_DECISION,
                "tuned_against_fixed": test,
                "decision_shipped": "tuned" if keep_tuned else "fixed",
                "chosen_per_fold": per_fold,
                "final_decision": final.settings,
                "gold_evidence_labels": _gold_label_accuracy(label_rows),
                "decision_seconds": round(time.perf_counter() - t0, 1),
                "label_recipe": asdict(lcfg),
            }
        )
        _write_text(bdir / "summary.json", json.dumps(summary, indent=1, sort_keys=True, default=str) + "\n")

    stages.run(f"decision-{base}", [bdir / "summary.json"], decision)
    summary = json.loads((bdir / "summary.json").read_text())

    if cfg.final:
        final_dir = models / f"final-{base}"

        def final_selector() -> None:
            selector, _ = train_rationale_selector(rcfg, claims, index, embed=embed, log=say)
            selector.save(final_dir / "rationale")

        stages.run("final/selector", [final_dir / "rationale" / "config.json"], final_selector)

        def final_label() -> None:
            if aux_ckpt is not None:
                ensure_aux_checkpoint(lcfg, corpus, progress=True)
            metrics = train_label_model(lcfg, claims, corpus, final_dir / "label", progress=True)
            _write_text(bdir / "final-label.train.json", json.dumps(metrics, indent=1, default=str) + "\n")

        stages.run(f"final/label-{base}", [final_dir / "label" / "model.onnx"], final_label)
        data_files = {"claims_train.jsonl": paths.train, "corpus.jsonl": paths.corpus}
        _finish_final(final_dir, bdir, summary, cfg, data_files)
    return summary


def _finish_final(
    final_dir: Path, bdir: Path, summary: dict[str, Any], cfg: CvConfig, data_files: dict[str, Path]
) -> None:
    """Put the decision chosen on all out-of-fold outputs beside the final models, so the directory has
    the layout of the shipped weights (``sciverify verify --models DIR``), and stamp both model
    directories with a manifest whose metrics are the cross-validated figures."""
    import shutil

    from sciverify.models.artifacts import write_manifest
    from sciverify.models.emit import EMIT_FILE
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.pipeline.verify import PIPELINE_TOML

    settings = summary["final_decision"]
    tuned = replace(PipelineConfig().with_k(cfg.k), decision=_decision_config(settings, cfg.k))
    tuned.dump_toml(final_dir / "rationale" / PIPELINE_TOML)
    shutil.copyfile(bdir / "emit.json", final_dir / "rationale" / EMIT_FILE)
    from sciverify.models.calibration import LABEL_CALIBRATION_FILE

    if (bdir / LABEL_CALIBRATION_FILE).exists():
        shutil.copyfile(bdir / LABEL_CALIBRATION_FILE, final_dir / "rationale" / LABEL_CALIBRATION_FILE)
    command = f"sciverify train --cv {cfg.folds} --label-base {cfg.label_base} --seed {cfg.seed}"
    metrics = {"cross_validated": summary["tuned"], "gold_evidence_labels": summary["gold_evidence_labels"]}
    extra = {"trained_on": "all claims of claims_train.jsonl", "decision": summary["decision_shipped"]}
    for part in ("rationale", "label"):
        write_manifest(
            final_dir / part,
            seed=cfg.seed,
            command=command,
            data_files=data_files,
            metrics=metrics,
            extra=extra,
        )
