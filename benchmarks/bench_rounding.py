"""How many leaderboard predictions move when only float rounding moves: a stand-in for another CPU.

Run:  python benchmarks/bench_rounding.py [--claims 300]

The shipped int8 graphs compute their integer products exactly on every CPU (:mod:`sciverify.models.int8`),
but the float layers around them (layer norm, softmax, GELU, the attention products) round differently on
SSE, AVX2 and AVX-512 kernels, and a rounding that moves an activation across a quantisation step moves
the rest. No second CPU is at hand here, so this predicts the test claims twice in one process: once as
shipped, once with onnxruntime's graph optimisations off for the label model and the reader (no fused
kernels: the same arithmetic in another order, a rounding change of the kind another CPU makes), and
counts the (claim, abstract, label) outputs and rationale sentences that differ.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any
from unittest import mock


def _unfused(active: bool) -> contextlib.AbstractContextManager[object]:
    """While active, every onnxruntime session is made without graph optimisations (no fused kernels)."""
    import onnxruntime as ort

    class Unfused(ort.SessionOptions):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL

    return mock.patch.object(ort, "SessionOptions", Unfused) if active else contextlib.nullcontext()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--claims", type=int, default=300, help="claims of claims_test.jsonl")
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.models.conformance import cpu_info
    from sciverify.pipeline.verify import Verifier

    claims = read_claims(resolve_data_dir().test, require_text=True)[: args.claims]
    runs = []
    for unfused in (False, True):
        with _unfused(unfused):
            verifier = Verifier.load(progress=False)
        runs.append(
            {
                (p.id, doc, e.label.value): tuple(e.sentences)
                for p in verifier.predict(claims)
                for doc, e in p.evidence.items()
            }
        )
    shipped, moved = runs
    labels = set(shipped) ^ set(moved)
    rationales = sum(1 for key in set(shipped) & set(moved) if shipped[key] != moved[key])
    print(f"CPU: {cpu_info().line()}; {len(claims)} test claims")
    print(
        f"abstract outputs: {len(shipped)} shipped, {len(moved)} with unfused kernels; "
        f"{len(labels)} (claim, abstract, label) outputs in one run only "
        f"({100 * len(labels) / len(claims):.2f} per hundred claims); "
        f"{rationales} shared outputs with other rationale sentences"
    )


if __name__ == "__main__":
    main()
