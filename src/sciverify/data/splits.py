"""Claims cut into grouped folds (:func:`fold_claims`, the cross-fitted protocol's) or into a fixed
validation split (:func:`split_claims`, for quick benchmarks and test slices).

SciFact writes claims in families: an original claim, its negation, and siblings citing the same
abstracts. If a family straddled train and validation, the model would be graded on abstracts (and
near-copies of claims) it trained on. So claims are grouped by union-find over shared cited or evidence
doc ids, and whole groups are assigned to a side by a seeded hash of the group's smallest claim id:
deterministic, independent of file order, and stable when unrelated claims are added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import NamedTuple

from sciverify.data.records import Claim

__all__ = ["Partition", "Split", "claim_groups", "fold_claims", "partition_claims", "split_claims"]


class Split(NamedTuple):
    """Train and validation claims, in input order."""

    train: list[Claim]
    validation: list[Claim]


class Partition(NamedTuple):
    """A leaderboard gold cut into the part public scores use and the part kept for the final ranking."""

    public: list[Claim]
    private: list[Claim]


def claim_groups(claims: Sequence[Claim]) -> list[int]:
    """Group index per claim: claims linked through any shared cited/evidence doc share a group."""
    parent = list(range(len(claims)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, claim in enumerate(claims):
        docs = {str(d) for d in claim.cited_doc_ids} | set(claim.evidence)
        for doc in docs:
            if doc in owner:
                a, b = find(i), find(owner[doc])
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                owner[doc] = i
    return [find(i) for i in range(len(claims))]


def _bucket(key: str, seed: int) -> float:
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_claims(claims: Sequence[Claim], fraction: float = 0.2, seed: int = 13) -> Split:
    """Split claims so that about ``fraction`` of them (whole groups) land in validation."""
    groups = claim_groups(claims)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    is_val: dict[int, bool] = {}
    for g, idx in members.items():
        key = min(str(claims[i].id) for i in idx)
        is_val[g] = _bucket(key, seed) < fraction
    train = [c for c, g in zip(claims, groups, strict=True) if not is_val[g]]
    val = [c for c, g in zip(claims, groups, strict=True) if is_val[g]]
    return Split(train, val)


def fold_claims(claims: Sequence[Claim], folds: int = 5, seed: int = 13) -> list[int]:
    """The cross-validation fold (0 .. ``folds`` - 1) of each claim; whole groups share a fold.

    Groups are taken largest first (ties by the seeded hash of their smallest claim id) and each goes to
    the fold holding the fewest claims so far, so folds are balanced to within one group, deterministic,
    and independent of file order. Every stage of a cross-fitted run, including the decision layer's own
    cross-validation, uses these folds: a family of claims is never split across a fit and its test.
    """
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    groups = claim_groups(claims)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    order = sorted(
        members.values(),
        key=lambda idx: (-len(idx), _bucket(min(str(claims[i].id) for i in idx), seed)),
    )
    sizes = [0] * folds
    out = [0] * len(claims)
    for idx in order:
        f = min(range(folds), key=lambda j: (sizes[j], j))
        sizes[f] += len(idx)
        for i in idx:
            out[i] = f
    return out


def partition_claims(claims: Sequence[Claim], fraction: float = 0.5, seed: int = 13) -> Partition:
    """Cut a gold into public and private claims, whole groups on one side, about ``fraction`` private.

    A leaderboard scores public figures on the public part only, so a probe that reads labels out of
    them learns public labels. Families stay together for the same reason as in :func:`split_claims`:
    a negated sibling on the public side would give the private claim's label away. Groups are visited
    in the order of a seeded hash of their smallest claim id, and each goes private while that brings
    the private count closer to ``fraction`` of the claims: deterministic, independent of file order,
    and within one group of the target (a plain hash threshold can miss it by many claims on a small gold).
    """
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"fraction must be in [0, 1), got {fraction}")
    groups = claim_groups(claims)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    order = sorted(members.values(), key=lambda idx: _bucket(min(str(claims[i].id) for i in idx), seed))
    target = fraction * len(claims)
    private: set[int] = set()
    for idx in order:
        if abs(len(private) + len(idx) - target) < abs(len(private) - target):
            private.update(idx)
    return Partition(
        [c for i, c in enumerate(claims) if i not in private],
        [c for i, c in enumerate(claims) if i in private],
    )
