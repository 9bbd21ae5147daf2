"""The multi-team label attack against a hidden-gold leaderboard, replayed in-process and counted.

Each target claim gets three fresh teams. All upload the same good submission (the gold's own
evidence for most claims, nothing for every fourth, so the board is not at its ceiling), except for the
target claim, which is labelled SUPPORT by the first team, CONTRADICT by the second and left empty by
the third. Comparing the three first releases of abstract label-only F1 reads the claim's label: the
higher of SUPPORT/CONTRADICT is the guess; equal figures mean the attacker learns nothing. The script
counts correct guesses for targets in the public part and in the private part of the gold. It then
closes the phase and repeats the comparison on the final ranking (rank, then the group's label-only
figure) for the private targets: what the same teams read once the private part is revealed.

Run (SciFact data needed; the gold is the fixed validation split of claims_train.jsonl, as in the tests):
    python benchmarks/attack_leaderboard.py [--targets 10] [--fraction 0.5] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=10, help="claims attacked in each part")
    parser.add_argument("--fraction", type=float, default=0.5, help="private share of the gold")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from fastapi.testclient import TestClient

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import prediction_to_json, read_claims
    from sciverify.data.splits import split_claims
    from sciverify.scoring import oracle_predictions
    from sciverify.serving.app import create_app
    from sciverify.serving.auth import add_submitter
    from sciverify.serving.settings import Settings

    data = resolve_data_dir(None)
    claims = read_claims(data.root / "claims_train.jsonl")
    gold = split_claims(claims).validation
    tmp = Path(tempfile.mkdtemp(prefix="sciverify-attack-"))
    gold_path = tmp / "gold.jsonl"
    ids = {c.id for c in gold}
    lines = (data.root / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    gold_path.write_text("".join(x + "\n" for x in lines if json.loads(x)["id"] in ids), encoding="utf-8")
    oracle = {str(p.id): prediction_to_json(p) for p in oracle_predictions(gold)}
    base = {k: (v if i % 4 else {"id": v["id"], "evidence": {}}) for i, (k, v) in enumerate(oracle.items())}
    settings = Settings(
        data_dir=tmp / "serve",
        leaderboard_gold=gold_path,
        corpus=data.corpus,
        n_boot=200,
        preload_verifier=False,
        leaderboard_private_fraction=args.fraction,
    )
    with TestClient(create_app(settings, preload=False)) as client:
        lb = client.app.state.leaderboard
        public = {str(c.id) for c in lb.public_golds()}
        truth = {str(c.id): {s.label.value for sets in c.evidence.values() for s in sets} for c in gold}
        single = [k for k, labels in truth.items() if len(labels) == 1]  # one label: a clear answer
        rng = random.Random(args.seed)
        targets = {
            "public": rng.sample(sorted(k for k in single if k in public), args.targets),
            "private": rng.sample(sorted(k for k in single if k not in public), args.targets),
        }
        n = 0
        teams: dict[str, dict[str | None, str]] = {}
        print(f"gold {len(gold)} claims, private part {len(gold) - len(public)}; release rule {lb.rule}")
        for part, claim_ids in targets.items():
            correct = undecided = 0
            for claim in claim_ids:
                released = {}
                for label in ("SUPPORT", "CONTRADICT", None):
                    n += 1
                    token = add_submitter(lb.db, f"sybil-{n:03d}")
                    teams.setdefault(claim, {})[label] = f"sybil-{n:03d}"
                    evidence = (
                        {
                            d: {"label": label, "sentences": e["sentences"]}
                            for d, e in oracle[claim]["evidence"].items()
                        }
                        if label
                        else {}
                    )
                    rows = {**base, claim: {"id": oracle[claim]["id"], "evidence": evidence}}
                    body = b"".join(json.dumps(r).encode() + b"\n" for r in rows.values())
                    r = client.post(
                        "/api/submissions",
                        headers={"Authorization": f"Bearer {token}"},
                        files={"file": ("p.jsonl", body)},
                    )
                    got = r.json().get("released") or {}
                    released[label] = got.get("abstract_label_only")
                s, c = released["SUPPORT"], released["CONTRADICT"]
                if s == c:
                    undecided += 1
                    continue
                guess = "SUPPORT" if (s or 0) > (c or 0) else "CONTRADICT"
                correct += guess in truth[claim]
            print(
                f"{part:>7}: {len(claim_ids)} claims attacked, {correct} labels read correctly, "
                f"{len(claim_ids) - correct - undecided} wrongly, {undecided} indistinguishable "
                f"({3 * len(claim_ids)} fresh teams)"
            )
        from sciverify.serving.phase import close_phase

        close_phase(lb.db)
        final = {e["submitter"]: e for e in client.get("/api/leaderboard/final").json()["entries"]}
        correct = undecided = 0
        for claim in targets["private"]:
            shown = {
                label: (
                    -final[teams[claim][label]]["rank"],
                    final[teams[claim][label]]["figures"]["abstract_label_only"],
                )
                for label in ("SUPPORT", "CONTRADICT")
            }
            if shown["SUPPORT"] == shown["CONTRADICT"]:
                undecided += 1
                continue
            guess = "SUPPORT" if shown["SUPPORT"] > shown["CONTRADICT"] else "CONTRADICT"
            correct += guess in truth[claim]
        wrong = len(targets["private"]) - correct - undecided
        print(
            f"after the close, private: {correct} labels read correctly from the final ranking, "
            f"{wrong} wrongly, {undecided} indistinguishable"
        )


if __name__ == "__main__":
    main()
