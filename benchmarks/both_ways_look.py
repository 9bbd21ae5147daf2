"""The look that decides whether (N), reading each claim both ways, goes on to an end-to-end run.

docs/cross-validation.md, "Reading each claim both ways", wrote the rule first: each out-of-fold train
claim's gold evidence is read with its gold rationale by the label model of the claim's own fold
(``results/cv5/models/fold-K/label-<base>`` of the shipped run), once with the claim and once with its
plain negation (``negate(claim, allow_antonym=False)``); the two readings are averaged with the negation's
SUPPORT and CONTRADICT swapped. (N) goes on only if the side (SUPPORT against CONTRADICT) is then right more
often than with one reading. Prints that, per gold label, the 3-way accuracy, and the same with the
antonym-swapping negation for comparison. About five minutes of label-model reads on two cores.

    python benchmarks/both_ways_look.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sciverify.training.cv.plan import SHIPPED_RUN

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "scifact"
NAMES = ("SUPPORT", "CONTRADICT", "NOT_ENOUGH_INFO")


def both(p: np.ndarray, q: np.ndarray | None) -> np.ndarray:
    """The claim's reading averaged with its negation's, the negation's two sides swapped."""
    return p if q is None else (p + q[[1, 0, 2]]) / 2


def side(p: np.ndarray) -> str:
    return NAMES[0] if p[0] >= p[1] else NAMES[1]


def main() -> None:
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.data.splits import fold_claims
    from sciverify.models.label import LabelModel
    from sciverify.training.negation import negate

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--models", type=Path, default=ROOT / "results" / "cv5" / "models")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()

    claims = read_claims(args.data / "claims_train.jsonl")
    corpus = {str(a.doc_id): a for a in read_corpus(args.data / "corpus.jsonl")}
    fold_of = fold_claims(claims, 5, 13)
    rows: list[tuple[str, np.ndarray, np.ndarray | None, np.ndarray | None]] = []
    for k in range(5):
        model = LabelModel.load(args.models / f"fold-{k}" / f"label-{SHIPPED_RUN.label_base}")
        for claim in (c for c, f in zip(claims, fold_of, strict=True) if f == k and c.evidence):
            plain, any_rule = negate(claim.text, allow_antonym=False), negate(claim.text)
            for doc, sets in claim.evidence.items():
                ab = corpus[str(doc)]
                idx = sorted({j for s in sets for j in s.sentences})
                ev = [(ab.title, [ab.sentences[j] for j in idx if 0 <= j < len(ab.sentences)])]
                rows.append(
                    (
                        sets[0].label.value,
                        model.predict(claim.text, ev)[0],
                        model.predict(plain, ev)[0] if plain else None,
                        model.predict(any_rule, ev)[0] if any_rule else None,
                    )
                )
    n = len(rows)
    print(f"{n} gold evidence abstracts; a plain negation for {sum(r[2] is not None for r in rows)}")
    for name, pick in (
        ("one reading", lambda r: r[1]),
        ("both ways, plain negation", lambda r: both(r[1], r[2])),
        ("both ways, any negation rule", lambda r: both(r[1], r[3])),
    ):
        right = [side(pick(r)) == r[0] for r in rows]
        three = [NAMES[int(np.argmax(pick(r)))] == r[0] for r in rows]
        per = {g: np.mean([x for x, r in zip(right, rows, strict=True) if r[0] == g]) for g in NAMES[:2]}
        print(
            f"{name}: side right {np.mean(right):.3f} (SUPPORT {per['SUPPORT']:.3f}, CONTRADICT "
            f"{per['CONTRADICT']:.3f}); 3-way right {np.mean(three):.3f}"
        )


if __name__ == "__main__":
    main()
