"""Training: ``sciverify train`` (the cross-fitted models and figures) and ``calibrate`` (refit
P(label right | evidence) from a run)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import app, console, err_console
from sciverify.cli.options import DataOpt, IndexDirOpt

__all__ = ["calibrate", "train"]


@app.command("train")
def train(
    out: Annotated[
        Path | None, typer.Option("--out", help="Output directory.", show_default="runs/cvN-LABEL_BASE")
    ] = None,
    tiny: Annotated[bool, typer.Option("--tiny", help="Train on a small slice (CI smoke run).")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of every stage.")] = 13,
    index: IndexDirOpt = None,
    data: DataOpt = None,
    cv: Annotated[int, typer.Option("--cv", help="Grouped folds to cross-fit over (at least 2).")] = 5,
    label_base: Annotated[
        str,
        typer.Option(
            "--label-base",
            help="Label model: mpnet6 (shipped), mpnet6-all (an entailment stage on every auxiliary "
            "pair), mpnet6-direction (aimed at the side of a finding), minilm or mpnet.",
        ),
    ] = "mpnet6",
    no_final: Annotated[
        bool, typer.Option("--no-final", help="Stop after the estimate (no final models).")
    ] = False,
    reader: Annotated[
        str,
        typer.Option(
            "--reader",
            help="Per-sentence reader recipe trained in every fold (mpnet6, minilm, or mpnet6-all: "
            "mpnet6 from the label model's all-pairs entailment stage; empty: none).",
        ),
    ] = "",
    reader_role: Annotated[
        str,
        typer.Option(
            "--reader-role",
            help="The reader's grid: all (it lists, labels and informs emission), list (it only "
            "chooses the listed sentences of abstracts emitted without it) or every (both, and the label "
            "from the reader and the label model averaged). Roles share the folds.",
        ),
    ] = "all",
    entailment_only: Annotated[
        bool,
        typer.Option(
            "--entailment-only",
            help="Train (or resume) only the label model's shared entailment stage, then stop; "
            "rerun to go on from its last checkpoint.",
        ),
    ] = False,
    device: Annotated[
        str,
        typer.Option(
            "--device",
            help="Where the label model and reader train: auto (a CUDA GPU when torch sees one, else the "
            "CPU), cpu or cuda. Same recipe and checkpoints either way; everything written loads on a CPU.",
        ),
    ] = "auto",
) -> None:
    """Reproduce the shipped models and their cross-validated figures.

    Every train claim is scored by models trained without its fold (--cv N grouped folds), the decision
    is cross-fitted over those outputs, and the final models are trained on all claims. Resumable: rerun
    with the same --out to continue.
    """
    from sciverify.data.output_checks import check_output_dir
    from sciverify.training.cv import CvConfig, run_cv, train_entailment_stage
    from sciverify.training.messages import cv_lines

    out = check_output_dir(out or Path("runs") / f"cv{cv}-{label_base}", "run directory")
    cv_config = CvConfig(
        out_dir=out,
        folds=cv,
        seed=seed,
        label_base=label_base,
        tiny=tiny,
        final=not no_final,
        index_dir=index,
        data_dir=data,
        reader=reader,
        reader_role=reader_role,
    )
    if entailment_only:
        record = train_entailment_stage(cv_config, log=err_console.print, device=device)
        console.print(f"entailment stage done: {record['checkpoint']}", highlight=False)
        return
    summary = run_cv(cv_config, log=err_console.print, device=device)
    for line in cv_lines(summary, cv_config.out_dir):
        console.print(line)


@app.command("calibrate")
def calibrate(
    run: Annotated[Path, typer.Argument(help="A `sciverify train --cv` run directory, e.g. results/cv5.")],
    label_base: Annotated[
        str, typer.Option("--label-base", help="Whose label outputs: mpnet6 or minilm.")
    ] = "mpnet6",
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Also write the calibrator here (e.g. the shipped weights' "
                     "rationale/label_calibration.json)."),
    ] = None,
    reader: Annotated[
        str,
        typer.Option("--reader", help="The run's reader recipe, when the decision reads sentences with it."),
    ] = "",
    reader_role: Annotated[
        str,
        typer.Option(
            "--reader-role",
            help="Which of the run's reader grids decided (all, list or every; default: list when the "
            "decision's reader only lists, else all).",
        ),
    ] = "",
    models: Annotated[
        Path | None,
        typer.Option("--models", help="Whose pipeline.toml decides what was read (default: shipped)."),
    ] = None,
    data: DataOpt = None,
) -> None:
    """Fit P(label right | evidence) on a run's out-of-fold outputs; write the evidence view with both.

    Writes RUN/BASE/label_calibration.json, RUN/BASE/oof_evidence.jsonl (score it with `sciverify
    evaluate`: both reliability tables) and RUN/BASE/calibration_summary.json (BASE is
    BASE+reader-NAME with --reader).
    """
    from sciverify.data.output_checks import check_output_file
    from sciverify.training.cv.recalibrate import calibrate_run
    from sciverify.training.messages import calibration_lines

    if out is not None:
        check_output_file(out, "calibrator file")
    result = calibrate_run(
        run,
        label_base=label_base,
        reader=reader,
        reader_role=reader_role,
        data_dir=data,
        model_dir=models,
        out=out,
    )
    for line in calibration_lines(result.summary, run):
        console.print(line, highlight=False)
