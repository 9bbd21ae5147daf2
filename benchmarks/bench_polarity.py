"""Polarity: does the pipeline put a finding on the right side, and does negating a claim flip it?

Run:  python benchmarks/bench_polarity.py [--runs DIR ...] [--models DIR ...] [--negate N] [--out DIR]

Three tables.

1. **Out of fold** (the committed predictions of each ``--runs`` folder, every train claim held out from
   the models that judged it): of the gold evidence abstracts the pipeline emits, the share with the right
   SUPPORT/CONTRADICT label (all, SUPPORT, CONTRADICT), in the leaderboard predictions
   (``oof_predictions.jsonl``) and in the evidence view (``oof_evidence.jsonl``, every paper shown).
2. **Opposite pairs, out of fold**: SciFact's annotators wrote many claims as negations of others, so some
   train claims share a gold evidence abstract with the opposite label. Per such pair: both right (each
   claim gets that abstract with its own gold label), and, where both claims get the abstract, whether the
   label flips between them (chance would be 50 %).
3. **Rule negations, final models** (``--negate N``: the first N test claims and their rule negation,
   :func:`sciverify.training.negation.negate`; ``--models``: model directories, default the shipped ones):
   where a claim and its negation both get the same abstract, the share whose label flips; and the plain
   facts of ``tests/fixtures/facts_negations.jsonl`` (a claim, its negation, the side a reader expects):
   verdicts of both wordings.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sciverify.training.cv.plan import SHIPPED_RUN

#: The shipped run first, then the release before it (its label model read 6,420 entailment pairs once).
RUNS = tuple(dict.fromkeys((f"results/cv5/{SHIPPED_RUN.name}", "results/cv5/mpnet6+reader-mpnet6-list")))
FACTS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "facts_negations.jsonl"


def _gold(path: Path) -> dict[str, dict[str, str]]:
    """claim id -> {doc id: gold label} (a claim's evidence sets on one abstract share one label)."""
    from sciverify.data.io import read_claims

    return {str(c.id): {d: sets[0].label.value for d, sets in c.evidence.items()} for c in read_claims(path)}


def _predicted(path: Path) -> dict[str, dict[str, str]]:
    """claim id -> {doc id: predicted label} of one predictions file."""
    from sciverify.data.io import read_predictions

    return {str(p.id): {d: ab.label.value for d, ab in p.evidence.items()} for p in read_predictions(path)}


def side_accuracy(
    gold: Mapping[str, Mapping[str, str]], pred: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    """Of the gold evidence abstracts emitted, how many carry the gold label (all, and by gold label)."""
    right: dict[str, int] = defaultdict(int)
    seen: dict[str, int] = defaultdict(int)
    for cid, docs in gold.items():
        for doc, label in docs.items():
            got = pred.get(cid, {}).get(doc)
            if got is None:
                continue
            for key in ("all", label):
                seen[key] += 1
                right[key] += int(got == label)
    return {
        key: {
            "emitted": seen[key],
            "right": right[key],
            "share": round(right[key] / seen[key], 3) if seen[key] else None,
        }
        for key in ("all", "SUPPORT", "CONTRADICT")
    }


def opposite_pairs(gold: Mapping[str, Mapping[str, str]]) -> list[tuple[str, str, str]]:
    """(claim a, claim b, doc) for every two train claims with opposite gold labels on one abstract."""
    by_doc: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for cid, docs in gold.items():
        for doc, label in docs.items():
            by_doc[doc].append((cid, label))
    pairs = []
    for doc, rows in sorted(by_doc.items()):
        for i, (a, la) in enumerate(rows):
            for b, lb in rows[i + 1 :]:
                if la != lb:
                    pairs.append((a, b, doc))
    return pairs


def pair_figures(
    pairs: Sequence[tuple[str, str, str]],
    gold: Mapping[str, Mapping[str, str]],
    pred: Mapping[str, Mapping[str, str]],
) -> dict[str, Any]:
    both_right = both_emitted = flipped = 0
    for a, b, doc in pairs:
        pa, pb = pred.get(a, {}).get(doc), pred.get(b, {}).get(doc)
        both_right += int(pa == gold[a][doc] and pb == gold[b][doc])
        if pa is not None and pb is not None:
            both_emitted += 1
            flipped += int(pa != pb)
    return {
        "pairs": len(pairs),
        "both_right": both_right,
        "both_right_share": round(both_right / len(pairs), 3) if pairs else None,
        "both_emitted": both_emitted,
        "flipped": flipped,
        "flip_share": round(flipped / both_emitted, 3) if both_emitted else None,
    }


def _share(row: Mapping[str, Any]) -> str:
    return "-" if row["share"] is None else f"{row['share']:.3f} ({row['right']}/{row['emitted']})"


def out_of_fold(runs: Iterable[Path], gold_path: Path) -> list[dict[str, Any]]:
    gold = _gold(gold_path)
    pairs = opposite_pairs(gold)
    rows = []
    for run in runs:
        for name in ("oof_predictions.jsonl", "oof_evidence.jsonl"):
            path = run / name
            if not path.exists():
                continue
            pred = _predicted(path)
            rows.append(
                {
                    "run": run.name,
                    "file": name,
                    "side": side_accuracy(gold, pred),
                    "pairs": pair_figures(pairs, gold, pred),
                }
            )
    return rows


def _verdicts(verifier: Any, texts: Sequence[str]) -> list[dict[str, str]]:
    from sciverify.data.records import Claim

    preds = verifier.predict([Claim(i, t) for i, t in enumerate(texts)])
    return [{str(k): ab.label.value for k, ab in p.evidence.items()} for p in preds]


def negation_flips(model_dir: Path | None, claims: Sequence[str]) -> dict[str, Any]:
    from sciverify.pipeline.verify import Verifier
    from sciverify.training.negation import negate

    rng = random.Random(0)
    pairs = [(c, n) for c in claims if (n := negate(c, rng)) is not None]
    verifier = Verifier.load(None, model_dir, progress=False)
    first = _verdicts(verifier, [c for c, _ in pairs])
    second = _verdicts(verifier, [n for _, n in pairs])
    shared = flipped = 0
    for a, b in zip(first, second, strict=True):
        for doc in a.keys() & b.keys():
            shared += 1
            flipped += int(a[doc] != b[doc])
    facts = [json.loads(line) for line in FACTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    fact_rows = []
    for fact in facts:
        views = [verifier.verify(fact["claim"]), verifier.verify(fact["negation"])]
        fact_rows.append([_overall(v) for v in views] + [fact["expected"]])
    return {
        "models": str(model_dir or "shipped"),
        "claims_negated": len(pairs),
        "shared_abstracts": shared,
        "flipped": flipped,
        "flip_share": round(flipped / shared, 3) if shared else None,
        "facts": fact_rows,
    }


def _overall(view: Sequence[Any]) -> str:
    """The overall verdict the page shows (:func:`sciverify.decision.verdict.weigh`)."""
    from sciverify.decision.verdict import weigh

    return str(weigh(view).verdict.value)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=Path, nargs="*", default=[Path(r) for r in RUNS])
    ap.add_argument(
        "--models", type=Path, nargs="*", default=None, help="model directories (default: shipped)"
    )
    ap.add_argument(
        "--negate", type=int, default=0, help="test claims to negate with the final models (0: skip)"
    )
    ap.add_argument("--out", type=Path, default=Path("out/polarity"))
    args = ap.parse_args()
    from sciverify.data.datasets import resolve_data_dir

    data = resolve_data_dir()
    rows = out_of_fold(args.runs, data.root / "claims_train.jsonl")
    print(
        "out of fold, 809 train claims: the right side among emitted gold evidence abstracts; opposite pairs"
    )
    print(
        "| run | file | right side (all) | SUPPORT | CONTRADICT | opposite pairs both right "
        "| flipped when both emitted |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        s, p = r["side"], r["pairs"]
        print(
            f"| {r['run']} | {r['file']} | {_share(s['all'])} | {_share(s['SUPPORT'])} "
            f"| {_share(s['CONTRADICT'])} | {p['both_right_share']} ({p['both_right']}/{p['pairs']}) "
            f"| {p['flip_share']} ({p['flipped']}/{p['both_emitted']}) |"
        )
    result: dict[str, Any] = {"out_of_fold": rows}
    if args.negate > 0:
        from sciverify.data.io import read_claims

        test = [c.text for c in read_claims(data.root / "claims_test.jsonl")][: args.negate]
        result["negation"] = [negation_flips(m, test) for m in (args.models or [None])]
        print("\nfinal models: rule-negated test claims (same abstract for both wordings: label flipped)")
        print(
            "| models | claims negated | shared abstracts | flipped "
            "| plain facts: verdict pairs (claim / negation / expected) |"
        )
        print("|---|---:|---:|---:|---|")
        for n in result["negation"]:
            facts = "; ".join(f"{a}/{b}/{e}" for a, b, e in n["facts"])
            print(
                f"| {n['models']} | {n['claims_negated']} | {n['shared_abstracts']} "
                f"| {n['flip_share']} ({n['flipped']}) | {facts} |"
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "polarity.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
