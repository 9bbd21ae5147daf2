"""The overall verdict out of fold: how many claims' verdicts match gold, counting papers vs weighing them.

Reads an evidence-view file written out of fold (``sciverify calibrate RUN`` writes
``RUN/<base>/oof_evidence.jsonl``: every paper shown at P(evidence) >= 0.3, each with ``confidence`` =
P(evidence) and ``p_label_correct``, by models that never saw the claim) and the gold claims. A claim's gold
verdict is *supported* when its evidence abstracts support it, *refuted* when they refute it, *not enough
evidence* when it has none (SciFact never mixes labels within a claim, so gold is never *conflicting*).
Prints, for the old rule (which groups hold a paper) and the weighed rule (:mod:`sciverify.decision.verdict`,
at several ratios, with no minimum weight: ``benchmarks/direction_rule.py`` measures that one), the
matches and the verdicts given.

    python benchmarks/verdict_rule.py results/cv5/mpnet6+reader-mpnet6-list/oof_evidence.jsonl \
        ../shared/data/scifact/claims_train.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sciverify.decision.verdict import WIN_RATIO, Overall, weigh


@dataclass(frozen=True)
class Shown:
    label: str
    p_evidence: float | None
    p_label_correct: float | None


def gold_verdicts(path: Path) -> dict[object, Overall]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        claim = json.loads(line)
        labels = {s["label"] for sets in claim.get("evidence", {}).values() for s in sets}
        if labels == {"SUPPORT"}:
            out[claim["id"]] = Overall.SUPPORTED
        elif labels == {"CONTRADICT"}:
            out[claim["id"]] = Overall.REFUTED
        elif labels:
            out[claim["id"]] = Overall.CONFLICTING
        else:
            out[claim["id"]] = Overall.NOT_ENOUGH_EVIDENCE
    return out


def shown(path: Path) -> dict[object, list[Shown]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        pred = json.loads(line)
        out[pred["id"]] = [
            Shown(e["label"], e.get("confidence"), e.get("p_label_correct"))
            for e in pred["evidence"].values()
        ]
    return out


def by_groups(papers: list[Shown]) -> Overall:
    """The rule before: which groups hold a paper."""
    labels = {p.label for p in papers}
    if {"SUPPORT", "CONTRADICT"} <= labels:
        return Overall.CONFLICTING
    if "SUPPORT" in labels:
        return Overall.SUPPORTED
    return Overall.REFUTED if "CONTRADICT" in labels else Overall.NOT_ENOUGH_EVIDENCE


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("evidence", type=Path)
    ap.add_argument("gold", type=Path)
    args = ap.parse_args()
    gold, views = gold_verdicts(args.gold), shown(args.evidence)
    ids = [i for i in gold if i in views]
    print(f"{len(ids)} claims; gold: {dict(Counter(gold[i].value for i in ids))}")

    def report(name: str, rule: object) -> None:
        given = {i: rule(views[i]) for i in ids}  # type: ignore[operator]
        right = sum(given[i] is gold[i] for i in ids)
        two_sided = [i for i in ids if by_groups(views[i]) is Overall.CONFLICTING]
        right2 = sum(given[i] is gold[i] for i in two_sided)
        print(f"{name:<28} {right:>4}/{len(ids)} match gold; on the {len(two_sided)} claims with papers on "
              f"both sides {right2} match; given: {dict(Counter(v.value for v in given.values()))}")

    report("by groups (before)", by_groups)
    for ratio in (1.5, 2.0, 3.0):
        name = f"weighed, {ratio:g}:1" + (" (shipped)" if ratio == WIN_RATIO else "")
        report(name, lambda p, r=ratio: weigh(p, r, min_weight=0.0).verdict)


if __name__ == "__main__":
    main()
