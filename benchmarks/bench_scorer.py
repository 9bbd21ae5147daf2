"""Rationale selection with and without the sentence scorer: quality on gold abstracts and cost per claim.

Run:  python benchmarks/bench_scorer.py [--claims N] [--k K] [--models DIR] [--index DIR]

Three selectors built from the same shipped files, side by side: the trees alone (the baseline, no
transformer), the shipped blend (the cross-encoder reads the trees' best ``scorer_top`` sentences of each
abstract), and the blend reading every sentence. Quality: sentence F1 on the gold evidence abstracts of
the validation claims (the top-k sentences above a threshold, at least one; best (k, threshold) per row,
as ``sciverify train`` chooses the blend weight). Cost: milliseconds per claim to score the sentences of
the fusion top-K candidates, the pipeline's real work, timed claim by claim and interleaved across the
three selectors so machine load hits all alike.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=0, help="first N validation claims (0 = all)")
    ap.add_argument("--k", type=int, default=5, help="candidate abstracts per claim for the timing")
    ap.add_argument("--models", type=Path, default=None)
    ap.add_argument("--index", type=Path, default=None)
    args = ap.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims
    from sciverify.pipeline.verify import Verifier
    from sciverify.training.rationale_train import blend, gold_abstract_rows, selection_f1

    claims = split_claims(read_claims(resolve_data_dir().train)).validation
    if args.claims:
        claims = claims[: args.claims]
    verifier = Verifier.load(args.index, args.models, progress=False)
    shipped = verifier.selector
    if getattr(shipped, "scorer", None) is None:
        raise SystemExit("the selector of these models has no sentence scorer: nothing to compare")
    w, top = shipped.scorer_weight, shipped.scorer_top
    selectors = {
        "trees only (baseline)": shipped.with_scorer(None, 0.0),
        f"blend, scorer reads top {top} (shipped)": shipped,
        "blend, scorer reads every sentence": shipped.with_scorer(shipped.scorer, w, 0),
    }
    rows_of = (shipped, shipped.scorer, claims, verifier.index, verifier.embed)
    read_top, read_all = gold_abstract_rows(*rows_of, top=top), gold_abstract_rows(*rows_of, top=0)
    gold = read_top.gold
    scores = dict(zip(selectors, (read_top.head, blend(read_top, w), blend(read_all, w)), strict=True))
    n_claims = sum(1 for c in claims if c.evidence)

    texts = [c.text for c in claims]
    hits, cembs = verifier.candidates(texts, args.k)
    timings: dict[str, list[float]] = {name: [] for name in selectors}
    for ci, text in enumerate(texts):
        inputs = [verifier.abstract_input(h.row) for h in hits[ci]]
        for name, sel in selectors.items():
            t0 = time.perf_counter()
            sel.score(text, cembs[ci], inputs)
            timings[name].append((time.perf_counter() - t0) * 1000)

    print(
        f"\n{len(gold)} gold evidence abstracts of {n_claims} validation claims; timing over "
        f"{len(texts)} claims x top {args.k} fusion candidates\n"
    )
    print("| selector | sentence F1 (gold abstracts) | best k, t | ms/claim p50 | ms/claim p95 |")
    print("|---|---:|---|---:|---:|")
    for name in selectors:
        f1, k, t = max(
            (selection_f1(gold, scores[name], k, t), k, t) for k in (2, 3) for t in (0.2, 0.3, 0.4, 0.5, 0.6)
        )
        ms = sorted(timings[name])
        print(
            f"| {name} | {f1:.3f} | {k}, {t} | {statistics.median(ms):.1f} | "
            f"{ms[int(0.95 * (len(ms) - 1))]:.1f} |"
        )


if __name__ == "__main__":
    main()
