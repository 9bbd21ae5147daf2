"""Draw the abstracts that measure the study-facts tagger on text its rules were not written from.

The rules in :mod:`sciverify.pipeline.study` were written while reading the 76 abstracts of
``tests/fixtures/study_facts_labels.jsonl`` and the few read while they were revised (:data:`READ_BEFORE`), so
their accuracy there is not an estimate. This draws ``--n`` other SciFact corpus abstracts with a seeded
random draw and prints the seed and the doc ids; ``--show`` prints each abstract's text too, to label by hand.
Each later measurement leaves out every abstract read before it too (``--also-read``: earlier label files and
the abstracts a revision was written from), so that it is a fresh sample; without it the draw is the first
one's pool, and seed 41 gives again the 60 of ``tests/fixtures/study_facts_unseen60.jsonl``.

    python benchmarks/draw_study_facts.py ../shared/data/scifact/corpus.jsonl --seed 41 --n 60 [--show]
    # the second measurement (issue 50: the 60 of seed 41 and the issue's examples left out too):
    python benchmarks/draw_study_facts.py ../shared/data/scifact/corpus.jsonl --seed 50 --n 60 \\
        --also-read tests/fixtures/study_facts_unseen60.jsonl --also-read-ids 26488879 36082224
    # the fourth (issue 50's second round: every earlier label file left out too):
    python benchmarks/draw_study_facts.py ../shared/data/scifact/corpus.jsonl --seed 52 --n 60 \\
        --also-read tests/fixtures/study_facts_unseen60.jsonl tests/fixtures/study_facts_second60.jsonl \\
        tests/fixtures/study_facts_third60.jsonl --also-read-ids 26488879 36082224
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

LABELS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "study_facts_labels.jsonl"
#: Abstracts read while the rules were revised (the failures reported on them), left out of the draw too.
READ_BEFORE = frozenset({5698494, 26067999, 2052720, 27306942, 37424881})


def label_ids(path: Path) -> set[int]:
    """The doc ids of a label file (its ``_meta`` line has none)."""
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {r["doc_id"] for r in rows if "doc_id" in r}


def draw(corpus: Path, seed: int, n: int, also_read: Iterable[int] = ()) -> list[dict[str, Any]]:
    """``n`` corpus records drawn with ``random.Random(seed)`` from those never read while writing the rules
    (nor ``also_read``), in doc-id order before the draw (so the draw depends on the seed, the corpus and
    what was left out alone)."""
    seen = label_ids(LABELS) | READ_BEFORE | set(also_read)
    with open(corpus, encoding="utf-8") as f:
        docs = sorted((json.loads(line) for line in f if line.strip()), key=lambda d: int(d["doc_id"]))
    pool = [d for d in docs if d["doc_id"] not in seen]
    return random.Random(seed).sample(pool, n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--also-read", type=Path, nargs="*", default=[],
                    help="label files of earlier measurements: their abstracts are left out")
    ap.add_argument("--also-read-ids", type=int, nargs="*", default=[],
                    help="doc ids of other abstracts read while revising the rules: left out")
    ap.add_argument("--show", action="store_true", help="print each abstract's title and text too")
    args = ap.parse_args()
    extra = set(args.also_read_ids).union(*(label_ids(p) for p in args.also_read))
    drawn = draw(args.corpus, args.seed, args.n, extra)
    print(f"seed {args.seed}: {len(drawn)} abstracts")
    for d in drawn:
        print(d["doc_id"])
        if args.show:
            print("  TITLE:", d["title"])
            print("  " + " ".join(" ".join(s.split()) for s in d["abstract"]))
            print()


if __name__ == "__main__":
    main()
