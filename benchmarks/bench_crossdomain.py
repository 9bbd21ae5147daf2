"""The cross-domain check: the open pipeline on held-out PubMedQA claims, beside other model sets.

Run:  python benchmarks/bench_crossdomain.py [--models DIR ...] [--out out/crossdomain]

A seeded 30 % of PubMedQA's labelled questions never enter training
(:mod:`sciverify.data.sources.pubmedqa`); those answered yes or no that a rule can write as a statement
become claims (SUPPORT / CONTRADICT), checked in the open setting against a corpus of all 1,000 PubMedQA
abstracts. Each claim's own abstract is its evidence and the conclusion's sentences are its rationale.
Nothing is tuned on these claims: they are a check that a change which helps SciFact does not hurt
another domain, reported beside the SciFact figures.

Every ``--models`` directory (default: the shipped weights) runs on the same claims and index in one
run, with its own ``pipeline.toml``. Printed per system: the four SciFact F1s with 95 % bootstrap
intervals (claims resampled, seed 0), how many claims got no verdict, and of the emitted abstracts how
many are the right paper and how many carry the right label; then every later system's paired bootstrap
difference against the first (the gate of docs/cross-validation.md vetoes only when the label-only
interval lies wholly below zero).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def _index(out: Path, corpus: list[Any]) -> Path:
    from sciverify.data.sources.common import write_corpus
    from sciverify.retrieval.builder import build_index

    index_dir = out / "index"
    if not (index_dir / "manifest.json").exists():
        corpus_path = out / "corpus.jsonl"
        write_corpus(corpus, corpus_path)
        build_index(corpus_path, index_dir, progress=False)
    return index_dir


def _system(
    name: str, index_dir: Path, model_dir: Path | None, claims: list[Any]
) -> tuple[dict[str, Any], Any]:
    from sciverify.data.records import doc_key
    from sciverify.pipeline.verify import Verifier
    from sciverify.scoring import bootstrap, score

    verifier = Verifier.load(index_dir, model_dir, progress=False)
    t0 = time.perf_counter()
    preds = verifier.predict(claims)
    seconds = time.perf_counter() - t0
    report = score(claims, preds)
    boot = bootstrap(report.counts, n_boot=2000, seed=0)
    gold = {str(c.id): c for c in claims}
    emitted = right_paper = right_label = 0
    for p in preds:
        claim = gold[str(p.id)]
        for key, ab in p.evidence.items():
            emitted += 1
            if key in claim.evidence:
                right_paper += 1
                right_label += int(claim.gold_label(doc_key(key)) is ab.label)
    return {
        "system": name,
        "f1": {fam: round(prf.f1, 4) for fam, prf in report.aggregate.items()},
        "ci95": {fam: [round(s["f1"].low, 4), round(s["f1"].high, 4)] for fam, s in boot.stats.items()},
        "claims": len(claims),
        "no_verdict": sum(1 for p in preds if not p.evidence),
        "emitted": emitted,
        "right_paper": right_paper,
        "right_label": right_label,
        "seconds_per_claim": round(seconds / max(1, len(claims)), 3),
    }, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, nargs="*", default=[], help="model directories (default: shipped)")
    ap.add_argument(
        "--aux", type=Path, default=None, help="auxiliary data directory (default: beside SciFact)"
    )
    ap.add_argument("--out", type=Path, default=Path("out/crossdomain"))
    args = ap.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.sources.pubmedqa import read_pubmedqa_check

    aux = args.aux or resolve_data_dir().root.parent / "aux"
    claims, corpus = read_pubmedqa_check(aux / "pubmedqa" / "ori_pqal.json")
    labels = {
        lab: sum(1 for c in claims for s in c.evidence.values() if s[0].label.value == lab)
        for lab in ("SUPPORT", "CONTRADICT")
    }
    print(
        f"cross-domain check: {len(claims)} held-out PubMedQA claims {labels}, corpus {len(corpus)} abstracts"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    index_dir = _index(args.out, corpus)
    systems = [("shipped", None)] if not args.models else [(str(m), m) for m in args.models]
    done = [_system(name, index_dir, model_dir, claims) for name, model_dir in systems]
    rows = [row for row, _ in done]
    fams = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")
    print(
        "| system | " + " | ".join(fams) + " | no verdict | emitted | right paper | right label | s/claim |"
    )
    print("|---|" + "---:|" * (len(fams) + 5))
    for r in rows:
        cells = [f"{r['f1'][f]:.3f} ({r['ci95'][f][0]:.3f}-{r['ci95'][f][1]:.3f})" for f in fams]
        print(
            f"| {r['system']} | "
            + " | ".join(cells)
            + f" | {r['no_verdict']}/{r['claims']} | {r['emitted']} | {r['right_paper']} | {r['right_label']}"
            + f" | {r['seconds_per_claim']} |"
        )
    if len(done) > 1:
        from sciverify.scoring.compare import paired_bootstrap

        base_row, base_report = done[0]
        print(f"\npaired against {base_row['system']} (95 % interval, 10,000 draws, seed 0):")
        print("| system | " + " | ".join(fams) + " |")
        print("|---|" + "---:|" * len(fams))
        for row, report in done[1:]:
            paired = paired_bootstrap(report, base_report, n_boot=10_000, seed=0)
            diffs = {fam: paired.stats[fam]["f1"] for fam in fams}
            row["paired_vs_first"] = {
                fam: [round(d.diff, 4), round(d.low, 4), round(d.high, 4)] for fam, d in diffs.items()
            }
            print(
                f"| {row['system']} | "
                + " | ".join(f"{d.diff:+.3f} ({d.low:+.3f}, {d.high:+.3f})" for d in diffs.values())
                + " |"
            )
    (args.out / "crossdomain.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
