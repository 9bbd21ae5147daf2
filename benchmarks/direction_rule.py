""" "Direction unclear" (A) and a verdict that needs weight (V), each chosen inside the folds.

The rules and their grids were written before any of these figures (docs/cross-validation.md, section
"Direction unclear" and a verdict that needs weight). This reads the committed out-of-fold evidence view
of a run (every paper shown at P(evidence) >= 0.3, each number from a model that never saw the claim's
fold), the leaderboard predictions of the same run and the gold claims, and prints:

1. per fold, the settings the other four folds chose;
2. (A): how often a shown paper is left without a side, the share of sides shown that are right, the
   verdicts that match gold, each against "off" with a paired bootstrap over claims, and the four SciFact
   figures if emitted abstracts left unclear were dropped from the predictions;
3. (V): verdicts matching gold, supported/refuted verdicts given and the share right, against w = 0;
4. the reliability of P(right side | evidence) on the shown gold evidence, and on the papers of claims that
   share a gold abstract with an opposite claim (contrastive pairs);
5. with ``--negated``: the same reliability on rule-negated train claims (``training/negation.py``), each
   read with its gold rationale by its own fold's label model and scored by the shipped calibrator (the
   right side of a negation is the opposite of the original's gold label).

    python benchmarks/direction_rule.py [--run results/cv5/mpnet6-all+reader-mpnet6-list] [--negated]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciverify.decision.verdict import Overall, is_unclear, weigh
from sciverify.scoring.metrics import FAMILIES
from sciverify.training.cv.plan import SHIPPED_RUN

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "results" / "cv5" / SHIPPED_RUN.name
DATA = ROOT.parent / "shared" / "data" / "scifact"

#: The grids, as the rule wrote them (0.0 is "off").
TAU_GRID = (0.0, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80)
WEIGHT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
#: A wrong side shown costs this many right ones.
WRONG_COST = 2.0
N_BOOT = 10_000


@dataclass(frozen=True)
class Shown:
    """One paper of the out-of-fold evidence view."""

    doc: str
    label: str
    p_evidence: float | None
    p_label_correct: float | None


@dataclass(frozen=True)
class ClaimRow:
    id: str
    fold: int
    gold: dict[str, str]  # doc -> gold label
    shown: list[Shown]

    @property
    def gold_verdict(self) -> Overall:
        labels = set(self.gold.values())
        if labels == {"SUPPORT"}:
            return Overall.SUPPORTED
        if labels == {"CONTRADICT"}:
            return Overall.REFUTED
        return Overall.CONFLICTING if labels else Overall.NOT_ENOUGH_EVIDENCE


def load(run: Path, claims_path: Path, folds: int, seed: int) -> list[ClaimRow]:
    from sciverify.data.io import read_claims
    from sciverify.data.splits import fold_claims

    claims = read_claims(claims_path)
    fold_of = fold_claims(claims, folds, seed)
    view: dict[str, list[Shown]] = {}
    for line in (run / "oof_evidence.jsonl").read_text(encoding="utf-8").splitlines():
        pred = json.loads(line)
        view[str(pred["id"])] = [
            Shown(str(d), e["label"], e.get("confidence"), e.get("p_label_correct"))
            for d, e in pred["evidence"].items()
        ]
    return [
        ClaimRow(
            str(c.id),
            f,
            {str(d): sets[0].label.value for d, sets in c.evidence.items()},
            view.get(str(c.id), []),
        )
        for c, f in zip(claims, fold_of, strict=True)
    ]


# ---- per-claim counts for a setting (each function returns one number per claim) ----


def side_counts(row: ClaimRow, tau: float) -> tuple[int, int, int]:
    """(right, wrong, unclear) over the shown papers that are gold evidence."""
    right = wrong = unclear = 0
    for s in row.shown:
        if s.doc not in row.gold or s.label not in ("SUPPORT", "CONTRADICT"):
            continue
        if is_unclear(s.label, s.p_label_correct, tau):
            unclear += 1
        elif s.label == row.gold[s.doc]:
            right += 1
        else:
            wrong += 1
    return right, wrong, unclear


def utility(row: ClaimRow, tau: float) -> float:
    right, wrong, _ = side_counts(row, tau)
    return right - WRONG_COST * wrong


def verdict(row: ClaimRow, tau: float, w: float) -> Overall:
    return weigh(row.shown, unclear_below=tau, min_weight=w).verdict


def matches(row: ClaimRow, tau: float, w: float) -> int:
    return int(verdict(row, tau, w) is row.gold_verdict)


def choose(
    rows: Sequence[ClaimRow], grid: Sequence[float], score: Callable[[ClaimRow, float], float]
) -> float:
    """The grid value with the highest total score over ``rows``; ties to the lower value."""
    totals = [sum(score(r, g) for r in rows) for g in grid]
    return grid[int(np.argmax(totals))]  # argmax keeps the first maximum: the lowest value


def nested_tau(rows: Sequence[ClaimRow]) -> dict[int, float]:
    """Per fold: tau chosen on the other folds' claims."""
    return {
        k: choose([r for r in rows if r.fold != k], TAU_GRID, utility) for k in sorted({r.fold for r in rows})
    }


def nested_w(rows: Sequence[ClaimRow], tau: Mapping[int, float]) -> dict[int, float]:
    """Per fold: w chosen on the other folds' claims, with that fold's tau in force."""
    return {
        k: choose(
            [r for r in rows if r.fold != k], WEIGHT_GRID, lambda r, g, t=tau[k]: float(matches(r, t, g))
        )
        for k in sorted({r.fold for r in rows})
    }


def nested(rows: Sequence[ClaimRow], a_in_force: bool) -> dict[int, tuple[float, float]]:
    """Per fold: (tau, w). (V) is "after (A)": with (A)'s tau when (A) ships, else with no side withheld."""
    tau = nested_tau(rows)
    in_force = tau if a_in_force else dict.fromkeys(tau, 0.0)
    w = nested_w(rows, in_force)
    return {k: (tau[k], w[k]) for k in tau}


def on_all(rows: Sequence[ClaimRow], a_in_force: bool) -> tuple[float, float]:
    """The same choices made on every claim: what ships."""
    tau = choose(rows, TAU_GRID, utility)
    t = tau if a_in_force else 0.0
    return tau, choose(rows, WEIGHT_GRID, lambda r, g: float(matches(r, t, g)))


# ---- paired bootstrap over claims of ratios and sums ----


def paired_ratio(
    num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray, seed: int = 0
) -> tuple[float, float, float, float, float]:
    """(a, b, a - b, low, high): ratios of summed numerators to denominators over claims, 95 % paired."""
    rng = np.random.default_rng(seed)
    n = len(num_a)
    idx = rng.integers(0, n, size=(N_BOOT, n))

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return num[idx].sum(1) / np.maximum(den[idx].sum(1), 1)

    d = ratio(num_a, den_a) - ratio(num_b, den_b)
    a = float(num_a.sum() / max(den_a.sum(), 1))
    b = float(num_b.sum() / max(den_b.sum(), 1))
    low, high = np.percentile(d, [2.5, 97.5])
    return a, b, a - b, float(low), float(high)


def _fmt(t: tuple[float, float, float, float, float], digits: int = 3) -> str:
    a, b, d, lo, hi = t
    return f"{a:.{digits}f} against {b:.{digits}f}: {d:+.{digits}f} ({lo:+.{digits}f}, {hi:+.{digits}f})"


def report_a(rows: Sequence[ClaimRow], chosen: Mapping[int, tuple[float, float]]) -> dict[str, Any]:
    tau_of = {r.id: chosen[r.fold][0] for r in rows}
    on = np.array([side_counts(r, tau_of[r.id]) for r in rows], dtype=np.float64)
    off = np.array([side_counts(r, 0.0) for r in rows], dtype=np.float64)
    shown = np.array([len(r.shown) for r in rows], dtype=np.float64)
    unclear_all = np.array(
        [sum(is_unclear(s.label, s.p_label_correct, tau_of[r.id]) for s in r.shown) for r in rows],
        dtype=np.float64,
    )
    right_share = paired_ratio(on[:, 0], on[:, 0] + on[:, 1], off[:, 0], off[:, 0] + off[:, 1])
    m_on = np.array([matches(r, tau_of[r.id], 0.0) for r in rows], dtype=np.float64)
    m_off = np.array([matches(r, 0.0, 0.0) for r in rows], dtype=np.float64)
    ones = np.ones(len(rows))
    verdicts = paired_ratio(m_on, ones, m_off, ones)
    return {
        "unclear_of_shown": (int(unclear_all.sum()), int(shown.sum())),
        "unclear_of_gold_shown": (int(on[:, 2].sum()), int(on.sum())),
        "right_sides": (int(on[:, 0].sum()), int(on[:, 0].sum() + on[:, 1].sum())),
        "right_sides_off": (int(off[:, 0].sum()), int(off[:, 0].sum() + off[:, 1].sum())),
        "wrong_sides": (int(on[:, 1].sum()), int(off[:, 1].sum())),
        "utility": (
            float((on[:, 0] - WRONG_COST * on[:, 1]).sum()),
            float((off[:, 0] - WRONG_COST * off[:, 1]).sum()),
        ),
        "share_right": right_share,
        "verdict_matches": (
            int(m_on.sum()),
            int(m_off.sum()),
            verdicts[2] * len(rows),
            verdicts[3] * len(rows),
            verdicts[4] * len(rows),
        ),
        "ships": bool(right_share[3] > 0 and not verdicts[4] < 0),
    }


def report_v(
    rows: Sequence[ClaimRow], chosen: Mapping[int, tuple[float, float]], a_in_force: bool
) -> dict[str, Any]:
    tau_of = {r.id: chosen[r.fold][0] if a_in_force else 0.0 for r in rows}
    w_of = {r.id: chosen[r.fold][1] for r in rows}
    v_on = [verdict(r, tau_of[r.id], w_of[r.id]) for r in rows]
    v_off = [verdict(r, tau_of[r.id], 0.0) for r in rows]
    decided = (Overall.SUPPORTED, Overall.REFUTED)
    gold = [r.gold_verdict for r in rows]

    def arrays(vs: Sequence[Overall]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        given = np.array([v in decided for v in vs], dtype=np.float64)
        right = np.array([v in decided and v is g for v, g in zip(vs, gold, strict=True)], dtype=np.float64)
        match = np.array([v is g for v, g in zip(vs, gold, strict=True)], dtype=np.float64)
        return given, right, match

    g_on, r_on, m_on = arrays(v_on)
    g_off, r_off, m_off = arrays(v_off)
    ones = np.ones(len(rows))
    match = paired_ratio(m_on, ones, m_off, ones)
    share = paired_ratio(r_on, g_on, r_off, g_off)
    return {
        "verdict_matches": (int(m_on.sum()), int(m_off.sum()), match[3] * len(rows), match[4] * len(rows)),
        "decided": (int(g_on.sum()), int(g_off.sum())),
        "share_right": share,
        "too_light": int(
            sum(
                v is Overall.NOT_ENOUGH_EVIDENCE and o is not Overall.NOT_ENOUGH_EVIDENCE
                for v, o in zip(v_on, v_off, strict=True)
            )
        ),
        "ships": bool(m_on.sum() > m_off.sum()),
    }


def four_figures(
    run: Path, claims_path: Path, rows: Sequence[ClaimRow], chosen: Mapping[int, tuple[float, float]]
) -> dict[str, Any]:
    """The four SciFact figures if emitted abstracts left unclear were dropped, paired against as-is."""
    from sciverify.scoring.compare import compare_files, comparison_dict

    tau_of = {r.id: chosen[r.fold][0] for r in rows}
    p_of = {(r.id, s.doc): s.p_label_correct for r in rows for s in r.shown}
    dropped = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "dropped.jsonl"
        lines = []
        for line in (run / "oof_predictions.jsonl").read_text(encoding="utf-8").splitlines():
            pred = json.loads(line)
            keep = {}
            for doc, e in pred["evidence"].items():
                if is_unclear(e["label"], p_of.get((str(pred["id"]), str(doc))), tau_of[str(pred["id"])]):
                    dropped += 1
                    continue
                keep[doc] = e
            lines.append(json.dumps({"id": pred["id"], "evidence": keep}))
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        result = compare_files(claims_path, out, run / "oof_predictions.jsonl", n_boot=N_BOOT)
    return {"dropped": dropped, "comparison": comparison_dict(result)}


# ---- reliability of P(right side | evidence) ----

BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


def reliability(pairs: Sequence[tuple[float, int]]) -> dict[str, Any]:
    """Bins of P(right side) with their mean and the share right, and the AUC (how well the number tells a
    right side from a wrong one: 0.5 is flat)."""
    p = np.array([x for x, _ in pairs], dtype=np.float64)
    y = np.array([v for _, v in pairs], dtype=np.int64)
    rows = []
    for lo, hi in zip(BINS, BINS[1:], strict=False):
        m = (p >= lo) & (p < hi)
        if m.any():
            rows.append(
                (f"{lo:.1f}-{min(hi, 1.0):.1f}", int(m.sum()), float(p[m].mean()), float(y[m].mean()))
            )
    pos, neg = p[y == 1], p[y == 0]
    auc = float(
        ((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())
        if len(pos) and len(neg)
        else float("nan")
    )
    return {
        "n": len(pairs),
        "right": int(y.sum()),
        "bins": rows,
        "auc": auc,
        "ece": float(sum(n * abs(mean - share) for _, n, mean, share in rows) / max(1, len(pairs))),
    }


def shown_reliability(rows: Sequence[ClaimRow], only: set[tuple[str, str]] | None = None) -> dict[str, Any]:
    pairs = []
    for r in rows:
        for s in r.shown:
            if s.doc in r.gold and s.label in ("SUPPORT", "CONTRADICT") and s.p_label_correct is not None:
                if only is None or (r.id, s.doc) in only:
                    pairs.append((float(s.p_label_correct), int(s.label == r.gold[s.doc])))
    return reliability(pairs)


def contrastive(rows: Sequence[ClaimRow]) -> set[tuple[str, str]]:
    """(claim, doc) of every claim that shares a gold abstract with a claim of the opposite label."""
    by_doc: dict[str, set[tuple[str, str]]] = {}
    for r in rows:
        for doc, label in r.gold.items():
            by_doc.setdefault(doc, set()).add((r.id, label))
    out = set()
    for doc, members in by_doc.items():
        if len({label for _, label in members}) > 1:
            out |= {(cid, doc) for cid, _ in members}
    return out


def negated(rows: Sequence[ClaimRow], claims_path: Path, corpus_path: Path, models: Path) -> dict[str, Any]:
    """Each claim with gold evidence negated by rule, read with the gold rationale by its fold's label
    model; P(right side) from the shipped calibrator; right means the side opposite the original gold."""
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.models.calibration import LABEL_CALIBRATION_FILE, LabelCalibrator
    from sciverify.models.label import LABEL_ORDER, LabelModel, default_label_weights_dir
    from sciverify.training.negation import negate

    calibrator = LabelCalibrator.load(
        default_label_weights_dir().parent / "rationale" / LABEL_CALIBRATION_FILE
    )
    corpus = {str(a.doc_id): a for a in read_corpus(corpus_path)}
    by_id = {str(c.id): c for c in read_claims(claims_path)}
    rng = random.Random(0)
    names = [x.value for x in LABEL_ORDER]
    pairs: list[tuple[float, int]] = []
    original: list[tuple[float, int]] = []
    flipped = read = 0
    for k in sorted({r.fold for r in rows}):
        model = LabelModel.load(models / f"fold-{k}" / f"label-{SHIPPED_RUN.label_base}")
        for r in (r for r in rows if r.fold == k and r.gold):
            claim = by_id[r.id]
            for doc, sets in claim.evidence.items():
                ab = corpus.get(str(doc))
                if ab is None:
                    continue
                gold = sets[0].label.value
                neg = negate(claim.text, rng, allow_antonym=gold == "SUPPORT")
                if neg is None:
                    continue
                idx = sorted({j for s in sets for j in s.sentences})
                ev = (ab.title, [ab.sentences[j] for j in idx if 0 <= j < len(ab.sentences)])
                probs = model.predict(claim.text, [ev])[0], model.predict(neg, [ev])[0]
                p_right = calibrator.predict([probs[0], probs[1]])
                side = [names[0] if p[0] >= p[1] else names[1] for p in probs]
                want_neg = "CONTRADICT" if gold == "SUPPORT" else "SUPPORT"
                original.append((float(p_right[0]), int(side[0] == gold)))
                pairs.append((float(p_right[1]), int(side[1] == want_neg)))
                read += 1
                flipped += int(side[0] != side[1])
    return {
        "pairs": read,
        "flipped": flipped,
        "original": reliability(original),
        "negated": reliability(pairs),
    }


def _print_reliability(name: str, rel: Mapping[str, Any]) -> None:
    print(
        f"\n{name}: {rel['n']} papers, {rel['right']} on the right side; AUC {rel['auc']:.3f}, "
        f"ECE {rel['ece']:.3f}"
    )
    print("| P(right side) | papers | mean | right side |\n|---|---:|---:|---:|")
    for label, n, mean, share in rel["bins"]:
        print(f"| {label} | {n} | {mean:.3f} | {share:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--run", type=Path, default=RUN)
    ap.add_argument("--claims", type=Path, default=DATA / "claims_train.jsonl")
    ap.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--negated", action="store_true", help="also read rule-negated claims (fold models)")
    ap.add_argument("--models", type=Path, default=ROOT / "results" / "cv5" / "models")
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args()

    rows = load(args.run, args.claims, args.folds, args.seed)
    print(f"{len(rows)} claims, run {args.run.name}")
    a = report_a(rows, nested(rows, True))
    chosen = nested(rows, a["ships"])
    for k, (tau, w) in chosen.items():
        print(f"fold {k}: tau {tau:g}, w {w:g} (chosen on the other folds)")
    ship = on_all(rows, a["ships"])
    print(f"on all claims: tau {ship[0]:g}, w {ship[1]:g}")

    print("\n(A) direction unclear, pooled out of fold")
    print(
        f"  shown papers left unclear: {a['unclear_of_shown'][0]} of {a['unclear_of_shown'][1]}; "
        f"gold evidence shown left unclear: {a['unclear_of_gold_shown'][0]} "
        f"of {a['unclear_of_gold_shown'][1]}"
    )
    print(
        f"  sides shown that are right: {a['right_sides'][0]}/{a['right_sides'][1]} against "
        f"{a['right_sides_off'][0]}/{a['right_sides_off'][1]}; share {_fmt(a['share_right'])}"
    )
    print(
        f"  wrong sides shown: {a['wrong_sides'][0]} against {a['wrong_sides'][1]}; "
        "utility (right - 2 wrong) "
        f"{a['utility'][0]:g} against {a['utility'][1]:g}"
    )
    vm = a["verdict_matches"]
    print(
        f"  verdicts matching gold: {vm[0]} against {vm[1]} "
        f"({vm[2]:+.0f}, interval {vm[3]:+.0f} to {vm[4]:+.0f})"
    )
    print(f"  ships by the rule: {a['ships']}")
    four = four_figures(args.run, args.claims, rows, chosen)
    print(f"  predictions with the {four['dropped']} emitted abstracts left unclear dropped, against as-is:")
    for family in FAMILIES:
        f1 = four["comparison"][family]["f1"]
        print(
            f"    {family}: {f1['a']:.3f} against {f1['b']:.3f}, "
            f"{f1['diff']:+.3f} ({f1['low']:+.3f}, {f1['high']:+.3f})"
        )

    v = report_v(rows, chosen, a["ships"])
    print(
        f"\n(V) a verdict that needs weight, pooled out of fold, after (A) "
        f"({'in force' if a['ships'] else 'which does not ship: no side withheld'})"
    )
    vm = v["verdict_matches"]
    print(
        f"  verdicts matching gold: {vm[0]} against {vm[1]} at w = 0 (paired {vm[0] - vm[1]:+d}, "
        f"interval {vm[2]:+.0f} to {vm[3]:+.0f})"
    )
    print(
        f"  supported or refuted verdicts given: {v['decided'][0]} against {v['decided'][1]}; "
        f"share right {_fmt(v['share_right'])}"
    )
    print(f"  verdicts turned to not enough evidence by the weight: {v['too_light']}")
    print(f"  ships by the rule: {v['ships']}")
    print(
        "  on all claims, each w (describes, chooses nothing): w, verdicts matching gold, supported or "
        "refuted given, share right"
    )
    t = ship[0] if a["ships"] else 0.0
    for w in WEIGHT_GRID:
        vs = [(verdict(r, t, w), r.gold_verdict) for r in rows]
        given = [(x, g) for x, g in vs if x in (Overall.SUPPORTED, Overall.REFUTED)]
        right = sum(x is g for x, g in given)
        print(f"    {w:g}: {sum(x is g for x, g in vs)}, {len(given)}, {right / max(1, len(given)):.3f}")

    _print_reliability(
        "P(right side | evidence) on the shown gold evidence, out of fold", shown_reliability(rows)
    )
    pairs = contrastive(rows)
    _print_reliability(
        "... on claims that share a gold abstract with an opposite claim", shown_reliability(rows, pairs)
    )
    neg: dict[str, Any] | None = None
    if args.negated:
        neg = negated(rows, args.claims, args.corpus, args.models)
        print(
            f"\nrule negations of train claims, read with the gold rationale by their fold's label model: "
            f"{neg['pairs']} pairs, side flipped in {neg['flipped']}"
        )
        _print_reliability("P(right side) on the original claims (same reads)", neg["original"])
        _print_reliability("P(right side) on their negations", neg["negated"])
    if args.json:
        args.json.write_text(
            json.dumps(
                {"chosen": chosen, "ships": ship, "a": a, "v": v, "four": four, "negated": neg},
                indent=1,
                default=str,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
