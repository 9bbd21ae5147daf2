"""The label-model candidates compared under the cross-fitted protocol (``sciverify train --cv 5``).

Run:  python benchmarks/bench_label_candidates.py [--run results/cv5] [--speed-claims N]

Quality comes from the committed out-of-fold files of each candidate (``<run>/<base>/oof_predictions.jsonl``,
every claim scored by models trained without its fold, the decision cross-fitted too), rescored here with
bootstrap intervals, plus label accuracy given gold evidence (each gold evidence abstract read with its gold
rationale by the fold's label model). Cost comes from the run's ``stages.json`` (training wall time per
fold) and, when a candidate's model is on disk (its final model, the shipped MiniLM model, or fold 0's model
under ``<run>/models/``), its inference time per (claim, abstract) pair on the fold-0 candidates, one pair
per call as the pipeline calls it.
A candidate whose folds are not all finished is listed with the folds it has, and compared with the others on
the folds both have (the same claims): label accuracy given gold evidence, and, from two shared folds on, the
whole pipeline with the fixed decision cross-fitted over those folds alone.

A second table says where each candidate's points go: the open pipeline against the same outputs with the
decision layer replaced by an oracle that emits exactly the gold evidence abstracts among the candidates
(so only the label model, the selector and retrieval cost anything), and that oracle with gold labels too
(only the selector and retrieval). Prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

BASES = ("minilm", "mpnet6", "mpnet")
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
    """Median ms per (claim, abstract) pair of the label model, over fold 0's top-k candidates: the final
    model when it is on disk, else the shipped one when it is this base's final model, else fold 0's
    (same architecture and size, trained on fewer claims)."""
    shipped = Path(__file__).resolve().parents[1] / "src" / "sciverify" / "models" / "weights" / "label"
    dirs = [run / "models" / f"final-{base}" / "label", run / "models" / "fold-0" / f"label-{base}"]
    if base == "minilm":
        dirs.insert(1, shipped)
    model_dir = next((d for d in dirs if (d / "model.onnx").exists()), None)
    if model_dir is None:
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
    _where_points_go(args.run)


def _f1s(claims: list, preds: list) -> list[float]:
    from sciverify.scoring import score

    agg = score(claims, preds).aggregate
    return [agg[f].f1 for f in FAMILIES]


def _where_points_go(run: Path) -> None:
    """Open pipeline against the oracle decision layers, per candidate with every fold (see the docstring)."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_predictions
    from sciverify.training.cv import oracle_predictions, read_run_outputs

    claims = read_claims(resolve_data_dir().train)
    folds = len(list(run.glob("fold-*")))
    print("\n| label model | decision layer | " + " | ".join(f"{f} F1" for f in FAMILIES) + " |")
    print("|---|---|" + "---:|" * len(FAMILIES))
    for base in BASES:
        if len(_fold_files(run, base)) != folds or not (run / base / "oof_predictions.jsonl").exists():
            continue
        outputs = read_run_outputs(run, claims, base)
        scored = [c.claim for c in outputs]
        by_id = {str(p.id): p for p in read_predictions(run / base / "oof_predictions.jsonl")}
        rows = {
            "open pipeline (reported)": [by_id[str(c.id)] for c in scored],
            "oracle: emits exactly the gold evidence among the candidates": oracle_predictions(outputs, 5),
            "oracle emission and gold labels": oracle_predictions(outputs, 5, gold_label=True),
        }
        for name, preds in rows.items():
            print(f"| {base} | {name} | " + " | ".join(f"{v:.3f}" for v in _f1s(scored, preds)) + " |")


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
            if len(shared) >= 2:
                _pipeline_on_folds(run, (base, other), [int(f.split("-")[1]) for f in shared])


def _pipeline_on_folds(run: Path, bases: tuple[str, ...], folds: list[int]) -> None:
    """The whole pipeline of each base on the same folds, the fixed decision's emit model cross-fitted over
    those folds alone (fewer fitting claims than the reported run, the same for both)."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.training.cv import FIXED_DECISION, cross_fit_decision, read_run_outputs

    claims = read_claims(resolve_data_dir().train)
    grid = {name: (value,) for name, value in FIXED_DECISION.items()}
    print(
        f"\n| label model, folds {', '.join(map(str, folds))} only | "
        + " | ".join(f"{f} F1" for f in FAMILIES)
        + " |"
    )
    print("|---|" + "---:|" * len(FAMILIES))
    for base in bases:
        outputs = read_run_outputs(run, claims, base, folds)
        preds, _ = cross_fit_decision(outputs, 5, grid)
        f1 = _f1s([c.claim for c in outputs], preds)
        print(f"| {base} | " + " | ".join(f"{v:.3f}" for v in f1) + " |")


if __name__ == "__main__":
    main()
