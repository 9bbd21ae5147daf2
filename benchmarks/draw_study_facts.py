"""Draw the abstracts that measure the study-facts tagger on text its rules were not written from.

The rules in :mod:`sciverify.pipeline.study` were written while reading the 76 abstracts of
``tests/fixtures/study_facts_labels.jsonl`` and the few read while they were revised (:data:`READ_BEFORE`), so
their accuracy there is not an estimate. This draws ``--n`` other SciFact corpus abstracts with a seeded
random draw and prints the seed and the doc ids; ``--show`` prints each abstract's text too, to label by hand
(``tests/fixtures/study_facts_unseen60.jsonl`` holds the labels, committed before the rules ran on them).

    python benchmarks/draw_study_facts.py ../shared/data/scifact/corpus.jsonl --seed 41 --n 60 [--show]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

LABELS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "study_facts_labels.jsonl"
#: Abstracts read while the rules were revised (the failures reported on them), left out of the draw too.
READ_BEFORE = frozenset({5698494, 26067999, 2052720, 27306942, 37424881})


def draw(corpus: Path, seed: int, n: int) -> list[dict[str, Any]]:
    """``n`` corpus records drawn with ``random.Random(seed)`` from those never read while writing the rules,
    in doc-id order before the draw (so the draw depends on the seed and the corpus alone)."""
    seen = {json.loads(line)["doc_id"] for line in LABELS.read_text(encoding="utf-8").splitlines()}
    seen |= READ_BEFORE
    with open(corpus, encoding="utf-8") as f:
        docs = sorted((json.loads(line) for line in f if line.strip()), key=lambda d: int(d["doc_id"]))
    pool = [d for d in docs if d["doc_id"] not in seen]
    return random.Random(seed).sample(pool, n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--show", action="store_true", help="print each abstract's title and text too")
    args = ap.parse_args()
    drawn = draw(args.corpus, args.seed, args.n)
    print(f"seed {args.seed}: {len(drawn)} abstracts")
    for d in drawn:
        print(d["doc_id"])
        if args.show:
            print("  TITLE:", d["title"])
            print("  " + " ".join(" ".join(s.split()) for s in d["abstract"]))
            print()


if __name__ == "__main__":
    main()
