"""Fit the label calibrator from a cross-fitted run, and write the out-of-fold evidence view.

A run directory of ``sciverify train --cv`` (such as the committed ``results/cv5``) holds, for every
train claim, its top-k candidates with sentence scores and the label probabilities of a label model
that never saw the claim. From those this module computes, per candidate, two out-of-fold numbers:

* P(evidence): the emit model, refitted five times, each time without the candidate's fold;
* P(label right | evidence): :class:`~sciverify.models.calibration.LabelCalibrator`, fitted on the gold
  evidence candidates of the other folds.

It then fits the calibrator on every fold (what ships, ``label_calibration.json``) and writes
``oof_evidence.jsonl``: the evidence view (every candidate at or above the display threshold) of every
claim with both numbers, so ``sciverify evaluate`` can print a reliability table for each.

The cross-validation's decision stage calls :func:`save_calibration` on the outputs it already holds;
``sciverify calibrate RUN`` reads them back from a run directory first
(:func:`sciverify.training.cv.recalibrate.calibrate_run`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import AbstractPrediction, Prediction
from sciverify.decision.candidates import ClaimOutputs
from sciverify.decision.settings import DecisionConfig
from sciverify.errors import ArtifactError
from sciverify.models.calibration import LabelCalibrator, fit_label_calibrator

__all__ = [
    "OOF_EVIDENCE",
    "CalibrationRun",
    "fit_label_calibration",
    "save_calibration",
]

OOF_EVIDENCE = "oof_evidence.jsonl"


@dataclass(frozen=True)
class CalibrationRun:
    """What one calibration fit produced.

    Attributes:
        calibrator: fitted on the gold evidence candidates of every fold (what ships).
        p_evidence: out-of-fold P(evidence) per claim, one value per candidate in retrieval order.
        p_label_correct: out-of-fold P(label right | evidence) per claim and candidate.
        evidence_view: per claim, the candidates at or above the display threshold, with both numbers
            (``confidence`` is P(evidence)).
        summary: counts and rates for the docs (rows, accuracy, shown, precision, recall).
    """

    calibrator: LabelCalibrator
    p_evidence: list[list[float]]
    p_label_correct: list[list[float]]
    evidence_view: list[Prediction]
    summary: dict[str, Any]


def fit_label_calibration(
    outputs: Sequence[ClaimOutputs],
    decision: DecisionConfig,
    *,
    show_threshold: float | None = None,
    source: str = "",
) -> CalibrationRun:
    """Both out-of-fold numbers for every candidate, the shipped calibrator and the evidence view.

    Args:
        outputs: per-claim out-of-fold outputs (:class:`sciverify.decision.rule.ClaimOutputs`), with
            the reader's outputs attached when the decision uses it.
        decision: the shipped :class:`~sciverify.decision.rule.DecisionConfig`: what was read, by the
            label model or the reader (its ``label_source``), and which sentences are listed, exactly as
            the Verifier decides (:func:`sciverify.decision.rule.stored_label_probs`).
        show_threshold: the display rule's P(evidence) threshold (default: the evidence view's).
        source: where the outputs come from, stored in the calibrator file.
    """
    from sciverify.decision.rule import emit_rows, shown_candidates, stored_label_probs
    from sciverify.decision.sentence_rule import label_of, listed_sentences
    from sciverify.models.emit import fit_emit
    from sciverify.pipeline.evidence import SHOW_THRESHOLD

    show = SHOW_THRESHOLD if show_threshold is None else show_threshold
    t = decision.sentence_threshold
    if not outputs:
        raise ArtifactError("no out-of-fold outputs to calibrate on")
    rows: list[npt.NDArray[np.float64]] = []
    y: list[int] = []
    groups: list[int] = []
    spans: list[tuple[int, int]] = []
    probs: list[dict[int, npt.NDArray[np.float32]]] = []
    scores: list[list[npt.NDArray[np.float32]]] = []
    for c in outputs:
        cands = [cand.limit_reads(decision) for cand in c.candidates]
        p = stored_label_probs(cands, decision)
        x = emit_rows(cands, p, decision)
        scores.append([cand.decision_scores(decision) for cand in cands])
        spans.append((len(rows), len(rows) + len(c.doc_ids)))
        rows.extend(x)
        y.extend(int(d in c.claim.evidence) for d in c.doc_ids)
        groups.extend([c.fold] * len(c.doc_ids))
        probs.append(p)
    folds = sorted(set(groups))
    remap = {f: n for n, f in enumerate(folds)}
    _, oof_emit = fit_emit(
        np.asarray(rows), np.asarray(y), np.asarray([remap[g] for g in groups]), folds=max(2, len(folds))
    )

    # the calibrator's rows: gold evidence candidates the label model read
    cal_probs: list[npt.NDArray[np.float32]] = []
    correct: list[int] = []
    cal_groups: list[int] = []
    where: list[tuple[int, int]] = []
    for n, c in enumerate(outputs):
        for i, doc in enumerate(c.doc_ids):
            if doc in c.claim.evidence and i in probs[n]:
                label = label_of(probs[n][i])
                cal_probs.append(probs[n][i])
                correct.append(int(label == c.claim.evidence[doc][0].label))
                cal_groups.append(c.fold)
                where.append((n, i))
    fitted_on = {
        "source": source,
        "claims": len(outputs),
        "gold_evidence_candidates": len(correct),
        "label_accuracy": round(float(np.mean(correct)) if correct else 0.0, 4),
        "sentence_threshold": t,
        "label_source": decision.label_source,
    }
    calibrator, _ = fit_label_calibrator(cal_probs, correct, cal_groups, fitted_on=fitted_on)
    # out of fold for every candidate (not only gold evidence): a calibrator fitted without its fold
    p_label: list[list[float]] = [[0.0] * len(c.doc_ids) for c in outputs]
    for fold in folds:
        held = [n for n, c in enumerate(outputs) if c.fold == fold]
        rest = [k for k, g in enumerate(cal_groups) if g != fold]
        if not rest:
            continue
        model, _ = fit_label_calibrator(
            [cal_probs[k] for k in rest], [correct[k] for k in rest], [cal_groups[k] for k in rest]
        )
        for n in held:
            idx = sorted(probs[n])
            values = model.predict([probs[n][i] for i in idx])
            for i, v in zip(idx, values, strict=True):
                p_label[n][i] = float(v)
    p_evidence = [[float(v) for v in oof_emit[a:b]] for a, b in spans]

    view: list[Prediction] = []
    shown = shown_evidence = 0
    for n, c in enumerate(outputs):
        evidence: dict[str, AbstractPrediction] = {}
        shown_here = shown_candidates(probs[n], p_evidence[n], show)
        for i in sorted(shown_here, key=lambda i: (-p_evidence[n][i], i)):
            listed = tuple(listed_sentences(scores[n][i], decision))
            evidence[c.doc_ids[i]] = AbstractPrediction(
                label_of(probs[n][i]), listed, round(p_evidence[n][i], 4), round(p_label[n][i], 4)
            )
            shown += 1
            shown_evidence += int(c.doc_ids[i] in c.claim.evidence)
        view.append(Prediction(c.claim.id, evidence))
    gold_in_top = int(sum(y))
    summary = {
        **fitted_on,
        "show_threshold": show,
        "candidates": len(y),
        "gold_evidence_in_candidates": gold_in_top,
        "shown": shown,
        "shown_precision": round(shown_evidence / max(1, shown), 4),
        "shown_recall_of_candidates": round(shown_evidence / max(1, gold_in_top), 4),
        "claims_with_evidence_shown": sum(1 for p in view if p.evidence),
    }
    return CalibrationRun(calibrator, p_evidence, p_label, view, summary)


def save_calibration(
    outputs: Sequence[ClaimOutputs], decision: DecisionConfig, base_dir: Path, *, source: str = ""
) -> CalibrationRun:
    """Fit from ``outputs`` and write ``label_calibration.json``, ``oof_evidence.jsonl`` and
    ``calibration_summary.json`` into ``base_dir`` (the cross-validation's decision stage calls this)."""
    from sciverify.data.io import write_predictions
    from sciverify.models.calibration import LABEL_CALIBRATION_FILE

    result = fit_label_calibration(outputs, decision, source=source)
    base_dir = Path(base_dir)
    base_dir.mkdir(parents=True, exist_ok=True)
    result.calibrator.save(base_dir / LABEL_CALIBRATION_FILE)
    write_predictions(base_dir / OOF_EVIDENCE, result.evidence_view)
    _write_summary(base_dir, result)
    return result


def _write_summary(base_dir: Path, result: CalibrationRun) -> None:
    from sciverify.data.io import write_text_atomic

    text = json.dumps(result.summary, indent=1, sort_keys=True) + "\n"
    write_text_atomic(base_dir / "calibration_summary.json", text)
