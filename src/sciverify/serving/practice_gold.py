"""A practice gold for trying a leaderboard phase with files that exist.

SciFact's test gold is not public, so a phase cannot be tried on it. The practice gold is the fixed
validation split of the train claims (:func:`sciverify.data.splits.split_claims`: whole claim families,
about a fifth), written as a gold file with its evidence, beside a public claims file of the same claims
with ids and texts only: what a team is given. It is for trying the server; its claims are train claims,
seen by the shipped models, so its scores say nothing about any system.
"""

from __future__ import annotations

from pathlib import Path

from sciverify.data.io import iter_jsonl, read_claims, write_jsonl
from sciverify.data.output_checks import check_output_file
from sciverify.data.splits import split_claims

__all__ = ["write_practice_gold"]


def write_practice_gold(train: Path, gold_out: Path, claims_out: Path) -> int:
    """Write the practice gold and its public claims file; returns how many claims they hold.

    Raises:
        DataFormatError: the train claims are malformed, or an output cannot be written (before writing).
    """
    check_output_file(gold_out, "gold file", inputs=[train])
    check_output_file(claims_out, "claims file", inputs=[train, gold_out])
    ids = {c.id for c in split_claims(read_claims(train)).validation}
    rows = [obj for _, obj in iter_jsonl(train) if obj["id"] in ids]
    write_jsonl(gold_out, rows)
    write_jsonl(claims_out, ({"id": obj["id"], "claim": obj["claim"]} for obj in rows))
    return len(rows)
