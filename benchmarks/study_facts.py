"""Accuracy of the study-facts tagger per field on the hand-labelled abstracts (docs/evidence.md).

Reads ``tests/fixtures/study_facts_labels.jsonl`` (doc ids and labels) and the SciFact corpus, tags each
abstract with :func:`sciverify.pipeline.study.study_facts`, and prints per sample (random, targeted) how many
designs, systems and sample sizes match, then every miss:

    python benchmarks/study_facts.py ../shared/data/scifact/corpus.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sciverify.pipeline.study import study_facts

LABELS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "study_facts_labels.jsonl"
FIELDS = ("design", "system", "sample_size")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    args = ap.parse_args()
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    wanted = {x["doc_id"] for x in labels}
    docs = {}
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["doc_id"] in wanted:
                docs[d["doc_id"]] = d
    misses = []
    for sample in sorted({x["sample"] for x in labels}):
        part = [x for x in labels if x["sample"] == sample]
        right = dict.fromkeys(FIELDS, 0)
        for x in part:
            d = docs[x["doc_id"]]
            facts = study_facts(d["title"], d["abstract"])
            for field in FIELDS:
                got = getattr(facts, field)
                right[field] += got == x[field]
                if got != x[field]:
                    misses.append(f"  {sample} {x['doc_id']} {field}: tagged {got!r}, labelled {x[field]!r}")
        print(f"{sample} ({len(part)} abstracts): " + ", ".join(
            f"{field} {right[field]}/{len(part)} ({100 * right[field] / len(part):.0f} %)" for field in FIELDS
        ))
    print("misses:", *misses, sep="\n")


if __name__ == "__main__":
    main()
