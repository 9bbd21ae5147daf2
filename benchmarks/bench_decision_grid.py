"""The cross-fitted decision grid: how long one choice takes, against scoring every setting through serving.

Run:  python benchmarks/bench_decision_grid.py [--out results/cv5] [--label mpnet6-all] [--reader mpnet6]
      [--options 0,12,20] [--thresholds 0.2,0.5] [--claims PATH]

One ``choose_decision`` over the committed out-of-fold outputs of folds 1-4 (what fold 0's choice is fitted
on), for the given reader options (indices into ``decision.grid.READER_EVERY_OPTIONS``) and sentence
thresholds, with the full emit threshold and cap grid. The baseline, measured in the same run, is the plain
path: every setting's predictions made by ``decision.rule.picks`` and scored by ``rule.objective``. Both
must choose the same setting with the same objective; the script says so or fails.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciverify.decision.candidates import ClaimOutputs
from sciverify.decision.grid import DECISION_GRID, READER_EVERY_OPTIONS
from sciverify.decision.rule import objective, picks, to_prediction
from sciverify.decision.settings import learned_decision
from sciverify.training.cv.decision import choose_decision, fit_read_setting


def _plain(
    outputs: Sequence[ClaimOutputs], k: int, grid: Mapping[str, tuple[Any, ...]]
) -> tuple[dict[str, Any], float]:
    """The best setting and its objective, every setting predicted through ``picks`` and scored whole."""
    claims = [c.claim for c in outputs]
    best: tuple[dict[str, Any], float] | None = None
    for option in grid["reader"]:
        for t in grid["sentence_threshold"]:
            read_settings = {"sentence_threshold": t, **option}
            fitted = fit_read_setting(outputs, k, read_settings)
            for e in grid["emit_threshold"]:
                for m in grid["max_emitted"]:
                    settings = {**read_settings, "emit_threshold": e, "max_emitted": m}
                    s = learned_decision(settings, k)
                    preds = [
                        to_prediction(c.claim.id, c.doc_ids, picks(c.candidates, p, s, emit_probs=q))
                        for c, p, q in zip(fitted.outputs, fitted.reads.probs, fitted.emit_probs, strict=True)
                    ]
                    value = objective(claims, preds)
                    if best is None or value > best[1] + 1e-12:
                        best = (settings, value)
    assert best is not None
    return best


def main() -> None:
    from sciverify.data.io import read_claims
    from sciverify.training.cv.outputs import CANDIDATES, fold_rows, labels_file, load_outputs
    from sciverify.training.cv.reader import attach_reader

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/cv5"))
    ap.add_argument("--label", default="mpnet6-all")
    ap.add_argument("--reader", default="mpnet6")
    ap.add_argument("--options", default="0,12,20")
    ap.add_argument("--thresholds", default="0.2,0.5")
    ap.add_argument("--claims", type=Path, default=Path("../shared/data/scifact/claims_train.jsonl"))
    args = ap.parse_args()

    folds = range(5)
    candidates = fold_rows(args.out, CANDIDATES, folds)
    labels = fold_rows(args.out, labels_file(args.label), folds)
    outputs = load_outputs(read_claims(args.claims), candidates, labels)
    outputs = attach_reader(outputs, fold_rows(args.out, f"reader-{args.reader}.jsonl", folds))
    fitting = [c for c in outputs if c.fold != 0]
    grid = {
        **DECISION_GRID,
        "sentence_threshold": tuple(float(t) for t in args.thresholds.split(",")),
        "reader": tuple(READER_EVERY_OPTIONS[int(i)] for i in args.options.split(",")),
    }
    import sklearn.linear_model  # noqa: F401  (the first fit's import, off the clock)
    t0 = time.perf_counter()
    k = int(json.loads((args.out / "config.json").read_text(encoding="utf-8"))["k"])  # candidates per claim
    choice = choose_decision(fitting, k, grid)
    t_grid = time.perf_counter() - t0
    t0 = time.perf_counter()
    settings, value = _plain(fitting, k, grid)
    t_plain = time.perf_counter() - t0
    same = settings == choice.settings and value == choice.objective
    n = len(grid["reader"]) * len(grid["sentence_threshold"])
    cuts = len(DECISION_GRID["emit_threshold"]) * len(DECISION_GRID["max_emitted"])
    print(f"{len(fitting)} claims, {n} read settings x {cuts} emit settings")
    print(f"choose_decision        {t_grid:8.1f} s")
    print(f"baseline (picks+score) {t_plain:8.1f} s   x{t_plain / t_grid:.1f}")
    print(f"same choice: {same}   {json.dumps(choice.settings)}  objective {choice.objective:.6f}")
    if not same:
        raise SystemExit(f"the baseline chose {json.dumps(settings)} at {value!r}")


if __name__ == "__main__":
    main()
