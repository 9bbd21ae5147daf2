"""The label-model candidates compared under the cross-fitted protocol (``sciverify train --cv 5``).

Run:  python benchmarks/bench_label_candidates.py [--run results/cv5] [--speed-claims N]

Quality comes from the committed out-of-fold files of each candidate (``<run>/<base>/oof_predictions.jsonl``,
every claim scored by models trained without its fold, the decision cross-fitted too), rescored here with
bootstrap intervals, plus label accuracy given gold evidence (each gold evidence abstract read with its gold
rationale by the fold's label model). Cost comes from the run's ``stages.json`` (training wall time per
fold) and, when a candidate's final model is on disk (``<run>/models/final-<base>/label``), its inference
time per (claim, abstract) pair on the fold-0 candidates, one pair per call as the pipeline calls it.
A candidate whose folds are not all finished is listed with the folds it has, and compared with the others on
the folds both have (the same claims). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

BASES = ("minilm", "mpnet")
FAMILIES = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")


def _fold_files(run: Path, base: str) -> list[Path]:
    return sorted(run.glob(f"fold-*/labels-{base}.jsonl"))


def _gold_accuracy(files: list[Path]) -> tuple[float, int, int, int]:
    """Accuracy, pairs, CONTRADICT right, CONTRADICT total over gold evidence abstracts."""
    names = ("SUPPORT", "CONTRADICT", "NOT_ENOUGH_INFO")
    right = total = c_right = c_total = 0
    for path in files:
        for line in path.open(encoding="utf-8"):
            for gold in json.loads(line)["gold"].values():
                probs = gold["probs"]
                pred = names[max(range(3), key=lambda i: probs[i])]
                total += 1
                right += pred == gold["label"]
                if gold["label"] == "CONTRADICT":
                    c_total += 1
                    c_right += pred == "CONTRADICT"
    return right / max(1, total), total, c_right, c_total


def _scores(run: Path, base: str) -> dict[str, tuple[float, float, float]] | None:
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_predictions
    from sciverify.scoring import bootstrap, score

    path = run / base / "oof_predictions.jsonl"
    if not path.exists():
        return None
    claims = {str(c.id): c for c in read_claims(resolve_data_dir().train)}
    preds = read_predictions(path)
    report = score([claims[str(p.id)] for p in preds], preds)
    boot = bootstrap(report.counts, n_boot=10_000, seed=13)
    return {f: (report.aggregate[f].f1, boot.stats[f]["f1"].low, boot.stats[f]["f1"].high) for f in FAMILIES}


def _speed(run: Path, base: str, n_claims: int) -> float | None:
    """Median ms per (claim, abstract) pair of the final label model, over fold 0's top-k candidates."""
    model_dir = run / "models" / f"final-{base}" / "label"
    if not (model_dir / "model.onnx").exists():
        return None
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_corpus
    from sciverify.data.records import doc_key
    from sciverify.models.label import LabelModel

    model = LabelModel.load(model_dir, threads=1)
    corpus = {doc_key(a.doc_id): a for a in read_corpus(resolve_data_dir().corpus)}
    rows = [json.loads(line) for line in (run / "fold-0" / "candidates.jsonl").open()][:n_claims]
    from sciverify.data.io import read_claims

    text = {str(c.id): c.text for c in read_claims(resolve_data_dir().train)}
    times = []
    for row in rows:
        for cand in row["candidates"]:
            doc = corpus[cand["doc_id"]]
            best = sorted(range(len(cand["scores"])), key=lambda i: -cand["scores"][i])[:2]
            evidence = (doc.title, [doc.sentences[i] for i in sorted(best)])
            start = time.perf_counter()
            model.predict_padded(text[str(row["id"])], [evidence])
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times) if times else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=Path("results/cv5"))
    ap.add_argument("--speed-claims", type=int, default=30)
    args = ap.parse_args()
    stages = json.loads((args.run / "stages.json").read_text()) if (args.run / "stages.json").exists() else {}
    print(
        "| label model | folds done | gold-evidence label accuracy | CONTRADICT right | "
        + " | ".join(f"{f} F1 (95% CI)" for f in FAMILIES)
        + " | train min/fold | ms/pair (int8, 1 thread) |"
    )
    print("|---|---:|---:|---:|" + "---:|" * len(FAMILIES) + "---:|---:|")
    for base in BASES:
        files = _fold_files(args.run, base)
        if not files:
            continue
        acc, n, c_right, c_total = _gold_accuracy(files)
        scores = _scores(args.run, base) if len(files) == len(list(args.run.glob("fold-*"))) else None
        cells = (
            [f"{f1:.3f} ({lo:.3f}-{hi:.3f})" for f1, lo, hi in scores.values()]
            if scores
            else ["folds missing"] * len(FAMILIES)
        )
        secs = [v["seconds"] for k, v in stages.items() if k.endswith(f"/label-{base}")]
        train = f"{statistics.mean(secs) / 60:.1f}" if secs else "-"
        ms = _speed(args.run, base, args.speed_claims)
        print(
            f"| {base} | {len(files)} | {acc:.3f} (n={n}) | {c_right}/{c_total} | "
            + " | ".join(cells)
            + f" | {train} | {'-' if ms is None else f'{ms:.1f}'} |"
        )
    _paired_on_shared_folds(args.run)


def _paired_on_shared_folds(run: Path) -> None:
    """Candidates with unfinished folds, against every other candidate on the folds both have: the same
    claims and the same gold evidence, so a partial run is already comparable."""
    done = {base: {f.parent.name for f in _fold_files(run, base)} for base in BASES}
    for base in BASES:
        for other in BASES:
            shared = sorted(done[base] & done[other])
            if other == base or not shared or len(done[base]) >= len(done[other]):
                continue
            cells = []
            for name in (base, other):
                acc, n, c_right, c_total = _gold_accuracy([run / f / f"labels-{name}.jsonl" for f in shared])
                cells.append(f"{name} {acc:.3f} (CONTRADICT {c_right}/{c_total})")
            print(f"\non {', '.join(shared)} (n={n} gold evidence abstracts): " + " against ".join(cells))


if __name__ == "__main__":
    main()
