"""Symmetric inference: does reading a claim's rule negation as well put the finding on the right side?

Run:  python benchmarks/bench_symmetric.py [--run results/cv5] [--label mpnet6-direction]

For every train claim with gold evidence, its fold's label model (``<run>/models/fold-N/label-NAME/``,
trained without the claim; the fold models stay on disk after ``sciverify train --cv``) reads each gold
evidence abstract's gold rationale twice: with the claim, and with its rule negation
(:func:`sciverify.training.negation.negate`). Plain: the side with the larger of P(SUPPORT), P(CONTRADICT)
for the claim. Symmetric: P(SUPPORT) averaged with the negation's P(CONTRADICT) and the other way round,
so a model that keeps its side when the claim is negated is pulled towards even. Prints SUPPORT-vs-
CONTRADICT accuracy on the pairs both settings call SUPPORT or CONTRADICT, and how often the negation's
side is the claim's opposite.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=Path("results/cv5"))
    ap.add_argument("--label", default="mpnet6-direction")
    args = ap.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.data.records import Label, doc_key
    from sciverify.models.label import LabelModel
    from sciverify.training.negation import negate

    paths = resolve_data_dir()
    claims = {str(c.id): c for c in read_claims(paths.train)}
    docs = {doc_key(a.doc_id): a for a in read_corpus(paths.corpus)}
    fold_of = json.loads((args.run / "folds.json").read_text())["fold_of"]
    rng = random.Random(0)
    counts = {"pairs": 0, "negated": 0, "plain": 0, "symmetric": 0, "negation_opposite": 0}
    for fold in sorted(set(fold_of.values())):
        model = LabelModel.load(args.run / "models" / f"fold-{fold}" / f"label-{args.label}")
        for cid, claim in claims.items():
            if fold_of[cid] != fold:
                continue
            for key, sets in claim.evidence.items():
                doc = docs.get(key)
                gold = sets[0].label
                if doc is None or gold is Label.NOT_ENOUGH_INFO:
                    continue
                rationale = sorted({i for s in sets for i in s.sentences})
                evidence = [(doc.title, [doc.sentences[i] for i in rationale])]
                p = model.predict(claim.text, evidence)[0]
                counts["pairs"] += 1
                negated = negate(claim.text, rng, allow_antonym=gold is Label.SUPPORT)
                q = model.predict(negated, evidence)[0] if negated else p[[1, 0, 2]]
                counts["negated"] += int(negated is not None)
                want = 0 if gold is Label.SUPPORT else 1
                counts["plain"] += int(int(p[1] > p[0]) == want)
                s, c = (p[0] + q[1]) / 2, (p[1] + q[0]) / 2
                counts["symmetric"] += int(int(c > s) == want)
                counts["negation_opposite"] += int(negated is not None and (p[1] > p[0]) != (q[1] > q[0]))
    n = counts["pairs"]
    print(
        f"label model {args.label}, {n} gold evidence abstracts (gold rationale), {counts['negated']} negated"
    )
    print("| reading | SUPPORT vs CONTRADICT right |")
    print("|---|---:|")
    print(f"| plain | {counts['plain'] / n:.3f} ({counts['plain']}/{n}) |")
    print(
        f"| symmetric (claim and its negation) | {counts['symmetric'] / n:.3f} ({counts['symmetric']}/{n}) |"
    )
    neg = max(1, counts["negated"])
    print(
        f"\nthe negation's side is the claim's opposite: {counts['negation_opposite'] / neg:.3f} "
        f"({counts['negation_opposite']}/{counts['negated']})"
    )


if __name__ == "__main__":
    main()
