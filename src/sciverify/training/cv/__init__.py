"""The cross-fitted training protocol behind ``sciverify train`` (see :mod:`sciverify.training.cv.run`)."""

from __future__ import annotations

from sciverify.decision.grid import DECISION_GRID, FIXED_DECISION
from sciverify.training.cv.decision import (
    DecisionChoice,
    choose_decision,
    cross_fit_decision,
    oracle_predictions,
)
from sciverify.training.cv.outputs import load_outputs, read_run_outputs
from sciverify.training.cv.plan import CV_AUX, SHIPPED_RUN, CvConfig, label_recipe
from sciverify.training.cv.run import OOF_PREDICTIONS, run_cv, train_entailment_stage

__all__ = [
    "CV_AUX",
    "DECISION_GRID",
    "FIXED_DECISION",
    "OOF_PREDICTIONS",
    "SHIPPED_RUN",
    "CvConfig",
    "DecisionChoice",
    "choose_decision",
    "cross_fit_decision",
    "label_recipe",
    "load_outputs",
    "oracle_predictions",
    "read_run_outputs",
    "run_cv",
    "train_entailment_stage",
]
