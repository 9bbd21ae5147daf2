"""The shipped decision pinned: what the shipped settings, emit model and label calibrator make of twelve
fixed train claims.

The committed-run test recomputes the cross-validation with the settings each fold chose; nothing watched
the settings that ship, so changing one (``max_emitted``, a threshold in ``decision/decision.toml``) or
the rule passed every test. Here the shipped decision decides four SUPPORT, four CONTRADICT and four
claims without evidence from what the shipped run's models said of their candidates (``results/cv5``, the
out-of-fold outputs the shipped emit model and calibrator were fitted on, read back as the committed-run
test reads them): what ``predict`` writes, what the evidence view adds and the overall verdict must equal
the committed ``tests/fixtures/shipped_decision.json`` exactly. Reading stored outputs rather than running
the models keeps the pin the same on every CPU (the int8 kernels of one may move a probability in the
third place) and takes seconds; that the live Verifier decides as the stored path does is
tests/e2e/test_reader_cv.py's. After an intended change, refresh the pin with :data:`REFRESH` and commit
it with the change.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sciverify.data.io import read_claims
from sciverify.decision.rule import decide_claim, emit_probabilities, stored_label_probs, to_prediction
from sciverify.decision.verdict import weigh
from sciverify.models.calibration import LABEL_CALIBRATION_FILE, LabelCalibrator
from sciverify.models.emit import EMIT_FILE, EmitModel
from sciverify.pipeline.config import default_model_dir, tuned_config
from sciverify.pipeline.evidence import SHOW_THRESHOLD
from sciverify.training.cv import SHIPPED_RUN, read_run_outputs
from sciverify.training.cv.outputs import fold_rows
from sciverify.training.cv.reader import attach_reader, reader_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "shipped_decision.json"
RUN = ROOT / "results" / "cv5"
#: Train claims by id: SUPPORT, CONTRADICT, then no evidence.
CLAIM_IDS = (9, 12, 22, 30, 2, 28, 32, 40, 0, 4, 6, 10)
#: The command that rewrites the fixture from the decision as it is now.
REFRESH = "SCIVERIFY_REFRESH_PIN=1 python -m pytest tests/e2e/test_shipped_decision.py"


@dataclass(frozen=True)
class _Shown:
    label: str
    p_evidence: float | None
    p_label_correct: float | None


def _observed(scifact) -> list[dict[str, Any]]:
    claims = read_claims(scifact.train)
    outputs = {c.claim.id: c for c in read_run_outputs(RUN, claims, SHIPPED_RUN.label_base)}
    outputs = [outputs[i] for i in CLAIM_IDS]
    outputs = attach_reader(outputs, fold_rows(RUN, reader_file(SHIPPED_RUN.reader), range(5)))
    models = default_model_dir()
    cfg = tuned_config(models).decision
    emit = EmitModel.load(models / "rationale" / EMIT_FILE)
    calibrator = LabelCalibrator.load(models / "rationale" / LABEL_CALIBRATION_FILE)
    out = []
    for claim in outputs:
        candidates = claim.limited(cfg).candidates
        probs = stored_label_probs(candidates, cfg)
        emit_probs = emit_probabilities(candidates, probs, cfg, emit)
        assert emit_probs is not None
        decided = decide_claim(candidates, probs, cfg, emit_probs, SHOW_THRESHOLD)
        emitted, shown = decided.emitted, decided.shown
        picked = [*emitted, *shown]
        p_label = {v.candidate: round(float(p), 4) for v, p in
                   zip(picked, calibrator.predict([probs[v.candidate] for v in picked]), strict=True)}
        pred = to_prediction(claim.claim.id, claim.doc_ids, emitted, p_label)
        papers = [_Shown(str(v.label), round(emit_probs[v.candidate], 4), p_label[v.candidate])
                  for v in picked]
        weighed = weigh(papers)
        out.append({
            "id": claim.claim.id,
            "predicted": {
                str(doc): {"label": str(e.label), "sentences": list(e.sentences), "confidence": e.confidence,
                           "p_label_correct": e.p_label_correct}
                for doc, e in pred.evidence.items()
            },
            "shown": [
                {"doc_id": claim.doc_ids[v.candidate], "label": str(v.label), "sentences": list(v.sentences),
                 "p_evidence": round(emit_probs[v.candidate], 4)}
                for v in shown
            ],
            "overall": str(weighed.verdict),
            "why": weighed.why,
        })
    assert all(np.isfinite(p) for c in out for e in c["shown"] for p in [e["p_evidence"]])
    return out


def _lines(pinned: list[dict[str, Any]]) -> list[str]:
    return json.dumps(pinned, indent=1, sort_keys=True).splitlines()


def test_the_shipped_decision_says_what_is_pinned(scifact) -> None:
    observed = _observed(scifact)
    if os.environ.get("SCIVERIFY_REFRESH_PIN"):
        FIXTURE.write_text("\n".join(_lines(observed)) + "\n", encoding="utf-8")
        pytest.skip(f"rewrote {FIXTURE.relative_to(ROOT)}; commit it with the change that moved it")
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    if expected != observed:
        diff = "\n".join(difflib.unified_diff(_lines(expected), _lines(observed), "pinned", "now",
                                               lineterm=""))
        pytest.fail(
            f"the shipped decision no longer decides what {FIXTURE.relative_to(ROOT)} pins:\n{diff}\n"
            f"if the change is intended, refresh the pin and commit it with the change: {REFRESH}",
            pytrace=False,
        )
    # the slice holds every kind of outcome: claims with abstracts emitted, shown only, and nothing
    assert any(c["predicted"] for c in observed) and any(not c["predicted"] for c in observed)
    assert any(c["shown"] for c in observed)
