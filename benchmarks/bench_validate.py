"""Validation and scoring time of one leaderboard upload, for the worst shapes a 5 MiB file can take.

Each shape is a file of ``--mib`` MiB built against the hidden gold of the tests (the fixed validation
split of ``claims_train.jsonl``, half of it private) and the SciFact corpus, scored by
``Leaderboard.score`` exactly as the server scores an upload (validation against the public claim ids,
then both parts of the gold with the bootstrap). Beside it, the validator of an older tree
(``--baseline-rev``, default the release before linear validation) is timed in the same run on the same
shape cut to ``--baseline-items`` repeated indices, and its time is extrapolated to the full file by its
quadratic growth (it counted each listed index with ``list.count``).

Run (SciFact data needed):
    python benchmarks/bench_validate.py [--mib 5] [--n-boot 10000] [--baseline-rev 6421980]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _gold(tmp: Path) -> tuple[Path, Path]:
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims

    data = resolve_data_dir(None)
    ids = {c.id for c in split_claims(read_claims(data.root / "claims_train.jsonl")).validation}
    lines = (data.root / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    gold = tmp / "gold.jsonl"
    gold.write_text("".join(x + "\n" for x in lines if json.loads(x)["id"] in ids), encoding="utf-8")
    return gold, data.corpus


def _fill(size: int, line: Callable[[int], bytes]) -> bytes:
    out: list[bytes] = []
    total = 0
    i = 0
    while total < size:
        piece = line(i)
        if total + len(piece) > size:
            break
        out.append(piece)
        total += len(piece)
        i += 1
    return b"".join(out)


def shapes(size: int, claim_ids: list[Any], sizes: dict[str, int]) -> dict[str, tuple[bytes, str]]:
    """Files of about ``size`` bytes: (content, what it is)."""
    docs = sorted(sizes, key=int)
    first = claim_ids[0]
    rest = b"".join(json.dumps({"id": c, "evidence": {}}).encode() + b"\n" for c in claim_ids[1:])
    head = json.dumps({"id": first, "evidence": {docs[0]: {"label": "SUPPORT", "sentences": []}}})
    room = size - len(rest) - len(head)
    n_repeat = room // 2
    repeats = head.replace('"sentences": []', '"sentences": [' + ",".join(["0"] * n_repeat) + "]")
    n_distinct = room // 8
    distinct = head.replace('"sentences": []', '"sentences": [' + ",".join(map(str, range(n_distinct))) + "]")

    def many_docs(listing: Callable[[str], list[int]]) -> bytes:
        """One line per claim, each listing corpus abstracts until the file reaches ``size``."""
        per_line = size // len(claim_ids)
        lines = []
        j = 0
        for cid in claim_ids:
            ev: dict[str, Any] = {}
            used = 40
            while used < per_line:
                doc = docs[j % len(docs)]
                j += 1
                entry = {"label": "SUPPORT", "sentences": listing(doc)}
                used += len(json.dumps({doc: entry}))
                ev[doc] = entry
            lines.append(json.dumps({"id": cid, "evidence": ev}).encode() + b"\n")
        return b"".join(lines)

    return {
        "repeats": (
            repeats.encode() + b"\n" + rest,
            f"one abstract listing sentence 0 {n_repeat:,} times",
        ),
        "distinct": (
            distinct.encode() + b"\n" + rest,
            f"one abstract listing {n_distinct:,} distinct indices",
        ),
        "many_abstracts": (
            many_docs(lambda d: [0]),
            "every claim listing corpus abstracts, one sentence each (valid)",
        ),
        "full_abstracts": (
            many_docs(lambda d: list(range(sizes[d]))),
            "every claim listing corpus abstracts with all their sentences (valid)",
        ),
        "repeats_everywhere": (
            many_docs(lambda d: [0] * sizes[d]),
            "every abstract listing sentence 0 as often as the abstract has sentences",
        ),
        "unknown_ids": (
            _fill(size, lambda i: json.dumps({"id": f"x{i}", "evidence": {}}).encode() + b"\n"),
            "one line per unknown claim id (a problem per line)",
        ),
    }


def _old_validator(rev: str) -> ModuleType | None:
    """The validator module of ``rev`` (None outside a git checkout or without that revision)."""
    try:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:src/sciverify/scoring/validate.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp(prefix="sciverify-oldval-")) / "old_validate.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_validate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_validate"] = module
    spec.loader.exec_module(module)
    return module


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=float, default=5.0)
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--baseline-rev", default="6421980")
    ap.add_argument(
        "--baseline-items", type=int, default=8000, help="repeated indices the old validator gets"
    )
    ap.add_argument("--verbose", action="store_true", help="print each invalid file's first problem")
    args = ap.parse_args()

    from sciverify.scoring import load_gold
    from sciverify.serving.db import Database
    from sciverify.serving.leaderboard import Leaderboard

    tmp = Path(tempfile.mkdtemp(prefix="sciverify-benchval-"))
    gold, corpus = _gold(tmp)
    db = Database(f"sqlite:///{tmp / 'lb.db'}")
    db.migrate()
    lb = Leaderboard(db, gold=gold, corpus=corpus, n_boot=args.n_boot, seed=0, per_hour=10)
    lb.check()
    sizes = dict(lb._corpus_sizes or {})
    claim_ids = [c.id for c in lb._public]
    size = int(args.mib * 1024 * 1024)
    old = _old_validator(args.baseline_rev)
    golds = load_gold(gold)
    print(
        f"python {sys.version.split()[0]}; {len(claim_ids)} claims, n_boot {args.n_boot}, "
        f"files of {args.mib} MiB"
    )
    print(f"{'shape':<20} {'bytes':>9} {'valid':>5} {'score s':>8}  old validator")
    for name, (content, what) in shapes(size, claim_ids, sizes).items():
        seconds, scored = _timed(lambda content=content: lb.score(content, "upload.jsonl"))
        old_text = "-"
        if old is not None and name in ("repeats", "distinct"):
            first = json.loads(content.split(b"\n", 1)[0])
            doc, entry = next(iter(first["evidence"].items()))
            full = len(entry["sentences"])
            entry["sentences"] = entry["sentences"][: args.baseline_items]
            small = tmp / "old.jsonl"
            small.write_text(json.dumps(first) + "\n", encoding="utf-8")
            old_s, _ = _timed(lambda small=small: old.load_predictions(small, golds, sizes))
            new_s, _ = _timed(lambda small=small: lb.score(small.read_bytes(), "small.jsonl"))
            factor = (full / args.baseline_items) ** 2
            old_text = (
                f"{old_s:.2f} s at {args.baseline_items:,} indices (new: {new_s:.3f} s); "
                f"x{factor:,.0f} -> ~{old_s * factor / 3600:,.0f} h at {full:,}"
            )
        print(f"{name:<20} {len(content):>9,} {scored.valid!s:>5} {seconds:>8.2f}  {old_text}")
        print(f"{'':<20} {what}")
        if not scored.valid and args.verbose:
            print(f"{'':<20} first problem: {scored.problems[0]['message'][:100]}")
    lb.close()
    db.dispose()


if __name__ == "__main__":
    main()
