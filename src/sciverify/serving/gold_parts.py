"""The public and private parts of a hidden gold: which claims are private, the files each part is
scored from, and the figures kept of one part's scoring.

The cut is the operator's list (``--leaderboard-private-ids``) or a seeded family-preserving one
(:func:`sciverify.data.splits.partition_claims`). Each part is written as a gold file of its own, so
the scorer's leaderboard rationale cap and every figure of the public part come from public claims
only. Problems with the operator's list name its file and line; they go to the operator's console.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciverify.data.records import Claim
from sciverify.errors import ConfigError
from sciverify.scoring import FAMILIES

__all__ = ["choose_private", "figures", "lines_for", "phase_key", "read_private_ids", "write_parts"]


def read_private_ids(path: Path, gold_ids: set[str]) -> list[str]:
    """The operator's private claim ids (one a line, ``#`` comments allowed), each checked against
    the gold.

    Raises:
        ConfigError: the file is missing or empty, an id is not in the gold (``FILE:LINE``), or every
            gold claim would be private.
    """
    if not path.is_file():
        raise ConfigError(f"private ids file not found: {path}")
    out: list[str] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        if text not in gold_ids:
            raise ConfigError(f"{path}:{number}: claim id {text!r} is not in the leaderboard gold")
        out.append(text)
    if not out:
        raise ConfigError(f"{path}: no claim ids (one claim id a line)")
    if set(out) >= gold_ids:
        raise ConfigError(f"{path}: every gold claim is private; leave some for the public figures")
    return out


def choose_private(
    golds: Sequence[Claim],
    gold_sha256: str,
    *,
    gold_public: bool,
    ids_file: Path | None,
    fraction: float,
    seed: int | None,
) -> frozenset[str]:
    """The private claim ids: none for a public gold, the operator's file, else a seeded cut.

    With ``seed`` None the cut's seed is derived from the gold's sha256: it cannot be recomputed by
    anyone who does not hold the gold.
    """
    if gold_public:
        if ids_file is not None:
            raise ConfigError("a public gold has no private part: drop --leaderboard-private-ids")
        return frozenset()
    if ids_file is not None:
        return frozenset(read_private_ids(ids_file, {str(g.id) for g in golds}))
    if fraction <= 0:
        return frozenset()
    from sciverify.data.splits import partition_claims

    cut = partition_claims(golds, fraction, int(gold_sha256[:15], 16) if seed is None else seed)
    if not cut.public or not any(c.evidence for c in cut.public):
        raise ConfigError("the private fraction leaves no public claim with evidence: lower it")
    return frozenset(str(c.id) for c in cut.private)


def phase_key(gold_sha256: str, private_ids: frozenset[str]) -> str:
    """The key rows are stored under: the gold's sha256, and with a private part, a digest of both
    (a new cut of the same gold is a new phase)."""
    if not private_ids:
        return gold_sha256
    joined = ",".join(sorted(private_ids))
    return hashlib.sha256(f"{gold_sha256}:{joined}".encode()).hexdigest()


def write_parts(gold: Path, private_ids: frozenset[str], root: Path) -> dict[str, Path]:
    """The gold's lines of each part in ``root/public.jsonl`` (and ``private.jsonl``), as read."""
    public: list[str] = []
    private: list[str] = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        if line.strip():
            (private if str(json.loads(line)["id"]) in private_ids else public).append(line + "\n")
    parts = {"public": root / "public.jsonl"}
    parts["public"].write_text("".join(public), encoding="utf-8")
    if private:
        parts["private"] = root / "private.jsonl"
        parts["private"].write_text("".join(private), encoding="utf-8")
    return parts


def lines_for(content: bytes, lines: dict[str, int], ids: set[str] | frozenset[str]) -> bytes:
    """The upload's lines that predict the claims ``ids`` (the rest are not scored in that part)."""
    keep = {number for key, number in lines.items() if key in ids}
    # Numbered as the validator numbers them: one record per b"\n"-terminated line.
    return b"".join(line for i, line in enumerate(io.BytesIO(content), start=1) if i in keep)


def figures(result: Any) -> tuple[dict[str, dict[str, float]], list[list[int]]]:
    """Aggregate metrics (with bootstrap intervals) and the per-claim count matrix of one
    ``EvaluationResult``."""
    metrics: dict[str, dict[str, float]] = {}
    for family in FAMILIES:
        prf = result.report.aggregate[family]
        interval = result.bootstrap.stats[family]["f1"] if result.bootstrap is not None else None
        metrics[family] = {
            "precision": float(prf.precision),
            "recall": float(prf.recall),
            "f1": float(prf.f1),
            "f1_low": float(interval.low) if interval else float(prf.f1),
            "f1_high": float(interval.high) if interval else float(prf.f1),
        }
    counts = [[int(x) for x in row] for row in result.report.counts.tolist()]
    return metrics, counts
