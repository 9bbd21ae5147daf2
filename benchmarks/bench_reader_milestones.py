"""The reader's milestones, out of fold, beside the trees and the label model they would replace.

Run:  python benchmarks/bench_reader_milestones.py [--cv results/cv5] [--reader mpnet6] [--label mpnet6]

Read from a cross-validation run (every figure is out of fold: each claim's outputs come from models
trained on the other folds):

* **top-1 gold**: among the gold evidence abstracts that retrieval put in the top 5, how often the best
  sentence is a gold rationale sentence (reader: highest P(rationale); trees: highest selector score);
* **gold-evidence label accuracy**: the label read from the gold rationale sentences, three-way (reader:
  stance averaged over them, weighted by P(rationale); label model: its probabilities for the gold rationale);
* **SUPPORT vs CONTRADICT**: the same, deciding between the two labels only.

The last column is ``label_source = "both"`` given the gold rationale: the label model's probabilities
averaged with the reader's stance over the gold sentences, as the decision averages them.

Targets: top-1 gold >= 0.72, label accuracy >= 0.72, SUPPORT vs CONTRADICT >= 0.80. Only folds that have
a reader file are counted, for every row alike.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

TARGETS = {"top1": 0.72, "label": 0.72, "sc": 0.80}


def _gold_reads(run: Path, label: str, folds: list[int]) -> dict[tuple[str, str], tuple[np.ndarray, int]]:
    """The label model's probabilities from each (claim id, gold evidence abstract)'s gold rationale, with
    the gold label's index."""
    order = ("SUPPORT", "CONTRADICT", "NOT_ENOUGH_INFO")
    out = {}
    for f in folds:
        path = run / f"fold-{f}" / f"labels-{label}.jsonl"
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                for key, g in row["gold"].items():
                    probs = np.asarray(g["probs"], dtype=np.float64)
                    out[(str(row["id"]), str(key))] = (probs, order.index(g["label"]))
    return out


def _label_model(reads: dict[tuple[str, str], tuple[np.ndarray, int]]) -> dict[str, float]:
    n = len(reads)
    c3 = sum(int(int(np.argmax(p)) == y) for p, y in reads.values())
    c2 = sum(int(int(np.argmax(p[:2])) == y) for p, y in reads.values())
    return {"n": n, "label": c3 / n if n else float("nan"), "sc": c2 / n if n else float("nan")}


def _both(rows: list, reads: dict[tuple[str, str], tuple[np.ndarray, int]]) -> dict[str, float]:
    """``label_source = "both"`` given the gold rationale: the label model's probabilities averaged with
    the reader's stance over the gold sentences (the decision's own rule, ``reader_label``)."""
    from sciverify.decision.sentence_rule import reader_label
    from sciverify.training.cv.reader import R
    from sciverify.training.label_data import LABEL_INDEX

    n = c3 = c2 = 0
    for r in rows:
        for key, sets in r.claim.evidence.items():
            out, read = r.outputs(key), reads.get((str(r.claim.id), str(key)))
            if out is None or read is None:
                continue
            gold = sorted({i for s in sets for i in s.sentences})
            p = (read[0] + reader_label(out[:, :R], out[:, R], gold)) / 2.0
            y = LABEL_INDEX[sets[0].label]
            n += 1
            c3 += int(int(np.argmax(p)) == y)
            c2 += int(int(np.argmax(p[:2])) == y)
    return {"n": n, "label": c3 / n if n else float("nan"), "sc": c2 / n if n else float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cv", type=Path, default=Path("results/cv5"))
    ap.add_argument("--reader", default="mpnet6", help="reader recipe name (fold-N/reader-<name>.jsonl)")
    ap.add_argument("--label", default="mpnet6", help="label model base (fold-N/labels-<base>.jsonl)")
    ap.add_argument("--data", type=Path, default=None)
    args = ap.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.training.cv.reader import read_reader_rows, reader_file, reader_milestones

    claims = read_claims(resolve_data_dir(args.data).train)
    folds = sorted(
        int(d.name.split("-")[1]) for d in args.cv.glob("fold-*") if (d / reader_file(args.reader)).exists()
    )
    if not folds:
        raise SystemExit(f"no fold of {args.cv} has {reader_file(args.reader)}: run the reader stage first")
    rows = read_reader_rows(args.cv, claims, args.reader)
    m = reader_milestones(rows)
    reads = _gold_reads(args.cv, args.label, folds)
    lm = _label_model(reads)
    print(
        f"folds {folds}: {m['claims']} claims out of fold, {m['retrieved_gold_abstracts']} retrieved gold"
        f" evidence abstracts, {m['gold_evidence_abstracts']} gold evidence abstracts in all"
    )
    both = _both(rows, reads)
    print("| milestone | target | reader | previous model | both averaged (label_source both) |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| top-1 sentence is gold (retrieved gold evidence) | {TARGETS['top1']:.2f} |"
        f" {m['top1_gold_reader']:.3f} | {m['top1_gold_trees']:.3f} (trees) | |"
    )
    print(
        f"| gold-evidence label accuracy | {TARGETS['label']:.2f} | {m['gold_label_accuracy']:.3f} |"
        f" {lm['label']:.3f} (label model, {lm['n']} abstracts) | {both['label']:.3f} ({both['n']}) |"
    )
    print(
        f"| SUPPORT vs CONTRADICT on gold rationales | {TARGETS['sc']:.2f} |"
        f" {m['support_vs_contradict']:.3f} |"
        f" {lm['sc']:.3f} (label model) | {both['sc']:.3f} |"
    )


if __name__ == "__main__":
    main()
