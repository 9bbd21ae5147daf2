"""Retrieval quality against gold claims: recall@k and MRR, per claim and averaged.

Two notions of "relevant" are reported because they answer different questions: the abstracts with
gold evidence (what the verifier must see to score anything) and every cited abstract (what the
SciFact "oracle abstract" setting hands over). Claims with no relevant doc under a notion are left
out of that notion's averages rather than counted as zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sciverify.data.records import Claim, doc_key
from sciverify.retrieval.base import Hit

__all__ = ["CUTOFFS", "RetrievalReport", "evaluate_hits", "relevant_keys"]

CUTOFFS = (1, 3, 5, 10, 20)


@dataclass(frozen=True)
class RetrievalReport:
    """Averages over ``n_claims`` claims that have at least one relevant doc."""

    recall: dict[int, float]
    mrr: float
    n_claims: int

    def row(self) -> list[float]:
        """recall@1, @3, @5, @10, @20 and MRR, for a table."""
        return [self.recall[k] for k in CUTOFFS] + [self.mrr]


def relevant_keys(claim: Claim, relevance: str = "evidence") -> set[str]:
    """Doc keys that count as relevant: "evidence" (gold rationale docs) or "cited" (all cited docs)."""
    if relevance == "evidence":
        return set(claim.evidence)
    if relevance == "cited":
        return {doc_key(d) for d in claim.cited_doc_ids} | set(claim.evidence)
    raise ValueError(f"relevance must be 'evidence' or 'cited', got {relevance!r}")


def evaluate_hits(
    claims: Sequence[Claim], hits: Sequence[Sequence[Hit]], relevance: str = "evidence"
) -> RetrievalReport:
    """Recall@k for k in :data:`CUTOFFS` and MRR (first relevant hit) of ranked hits, one list per claim."""
    sums = dict.fromkeys(CUTOFFS, 0.0)
    rr = 0.0
    n = 0
    for claim, ranked in zip(claims, hits, strict=True):
        gold = relevant_keys(claim, relevance)
        if not gold:
            continue
        n += 1
        keys = [doc_key(h.doc_id) for h in ranked]
        for k in CUTOFFS:
            sums[k] += len(gold.intersection(keys[:k])) / len(gold)
        first = next((i for i, key in enumerate(keys) if key in gold), None)
        rr += 0.0 if first is None else 1.0 / (first + 1)
    if n == 0:
        return RetrievalReport(dict.fromkeys(CUTOFFS, 0.0), 0.0, 0)
    return RetrievalReport({k: v / n for k, v in sums.items()}, rr / n, n)
