"""Accuracy of the study-facts tagger per field on hand-labelled abstracts (docs/evidence.md).

Reads label files (doc ids and labels; by default ``tests/fixtures/study_facts_fourth60.jsonl``, 60
abstracts drawn at random by ``benchmarks/draw_study_facts.py`` (seed 52) and labelled before the second
round of issue 50 was written or ran on them; ``study_facts_third60.jsonl`` (seed 51), labelled before the
first round ran on them and then used for the second; ``study_facts_second60.jsonl`` (seed 50), labelled
before that revision and then used for it; ``study_facts_unseen60.jsonl`` (seed 41), the same for the
revision before; and ``study_facts_labels.jsonl``, the abstracts the first rules were written from) and the
SciFact corpus, tags each abstract with :func:`sciverify.pipeline.study.study_facts`, and prints per sample
how many designs, systems and sample sizes match the label; how often a fact is shown (a design or system
other than "other", a sample size), and how often a shown fact is right; then every miss:

    python benchmarks/study_facts.py ../shared/data/scifact/corpus.jsonl [--labels FILE ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sciverify.pipeline.study import study_facts

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
LABELS = tuple(FIXTURES / f"study_facts_{name}.jsonl"
               for name in ("fourth60", "third60", "second60", "unseen60", "labels"))
FIELDS = ("design", "system", "sample_size")


def read_labels(path: Path) -> list[dict[str, Any]]:
    """The label rows of ``path`` (a first line holding ``"_meta"``, the draw's seed, is skipped)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "_meta" not in r]


def shown(field: str, value: object) -> bool:
    """Whether the page shows a badge for this value ("other" and an unknown size show none)."""
    return value is not None if field == "sample_size" else value != "other"


def score(labels: list[dict[str, Any]], docs: dict[int, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """One table row per sample and field, and the misses."""
    rows, misses = [], []
    for sample in dict.fromkeys(x["sample"] for x in labels):
        part = [x for x in labels if x["sample"] == sample]
        for field in FIELDS:
            right = n_shown = right_shown = 0
            for x in part:
                d = docs[x["doc_id"]]
                got = getattr(study_facts(d["title"], d["abstract"]), field)
                right += got == x[field]
                if shown(field, got):
                    n_shown += 1
                    right_shown += got == x[field]
                if got != x[field]:
                    misses.append(f"  {sample} {x['doc_id']} {field}: tagged {got!r}, labelled {x[field]!r}")
            n = len(part)
            when = f"{right_shown}/{n_shown} ({100 * right_shown / n_shown:.0f} %)" if n_shown else "-"
            rows.append(f"| {sample} ({n}) | {field} | {right}/{n} ({100 * right / n:.0f} %) "
                        f"| {n_shown}/{n} ({100 * n_shown / n:.0f} %) | {when} |")
    return rows, misses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--labels", type=Path, nargs="+", default=list(LABELS))
    args = ap.parse_args()
    labels = [row for path in args.labels for row in read_labels(path)]
    wanted = {x["doc_id"] for x in labels}
    docs = {}
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["doc_id"] in wanted:
                docs[d["doc_id"]] = d
    rows, misses = score(labels, docs)
    head = "| sample | field | right | shown (coverage) | right when shown |"
    print(head, "|---|---|---:|---:|---:|", *rows, sep="\n")
    print("misses:", *misses, sep="\n")


if __name__ == "__main__":
    main()
