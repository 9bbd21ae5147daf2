"""Refit the label calibrator of a finished cross-fitted run: ``sciverify calibrate RUN``.

The cross-validation fits the calibrator when its decision stage runs (:mod:`sciverify.training.calibrate`);
this reads a run directory's stored out-of-fold outputs back, so the calibrator and the evidence view can be
refitted later (for instance under the decision settings a weights folder ships) without retraining.
"""

from __future__ import annotations

from pathlib import Path

from sciverify.errors import ArtifactError
from sciverify.training.calibrate import CalibrationRun, save_calibration

__all__ = ["calibrate_run"]


def calibrate_run(
    run: Path,
    *,
    label_base: str = "mpnet6",
    reader: str = "",
    reader_role: str = "",
    data_dir: Path | None = None,
    model_dir: Path | None = None,
    out: Path | None = None,
) -> CalibrationRun:
    """Fit the label calibrator from an existing cross-fitted run directory.

    Writes ``<run>/<label_base>/label_calibration.json`` (and ``out`` if given) and
    ``<run>/<label_base>/oof_evidence.jsonl``; with ``reader``, the reader's out-of-fold outputs are
    attached and the files go to ``<run>/<label_base>+reader-<reader>/`` (``...-list/`` when the reader
    only lists, ``...-every/`` with ``reader_role="every"``: the role is the decision's unless named). The
    decision settings are those ``model_dir`` ships
    (:func:`~sciverify.pipeline.config.tuned_config`; default: the shipped weights), so the numbers
    describe what ships.
    """
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.pipeline.config import default_model_dir, tuned_config
    from sciverify.training.cv.outputs import fold_rows, read_run_outputs
    from sciverify.training.cv.plan import run_name
    from sciverify.training.cv.reader import attach_reader, reader_file

    run = Path(run)
    if not run.is_dir():
        raise ArtifactError(f"{run}: not a cross-validation run directory")
    claims = read_claims(resolve_data_dir(data_dir).train)
    outputs = read_run_outputs(run, claims, label_base)
    if not outputs:
        raise ArtifactError(f"{run}: no fold has both candidates.jsonl and labels-{label_base}.jsonl")
    models = Path(model_dir) if model_dir is not None else default_model_dir()
    decision = tuned_config(models).decision
    name = label_base
    if reader:
        folds = sorted({c.fold for c in outputs})
        outputs = attach_reader(outputs, fold_rows(run, reader_file(reader), folds))
        role = reader_role or ("list" if decision.reader_lists_only else "all")
        name = run_name(label_base, reader, role)
    elif decision.uses_reader:
        raise ArtifactError(
            f"{models}: the decision reads sentences with a reader; name the run's reader (--reader)"
        )
    result = save_calibration(outputs, decision, run / name, source=f"{run.name}/{name}")
    if out is not None:
        result.calibrator.save(Path(out))
    return result
