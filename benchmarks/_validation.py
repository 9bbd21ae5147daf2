"""What the per-claim benchmarks share: their command line and the validation claims with a loaded Verifier.

Run as scripts (``python benchmarks/bench_x.py``), they import this module from their own folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def parse_args(doc: str, claims: int) -> argparse.Namespace:
    """``--claims N --k K --models DIR --index DIR``, described by the first line of ``doc``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--claims", type=int, default=claims)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--models", type=Path, default=None)
    ap.add_argument("--index", type=Path, default=None)
    return ap.parse_args()


def load(args: argparse.Namespace) -> tuple[list[Any], Any]:
    """The first ``args.claims`` claims of the fixed validation split, and a Verifier over the given index and
    models (None = the built-in index, the shipped models)."""
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims
    from sciverify.data.splits import split_claims
    from sciverify.pipeline.verify import Verifier

    claims = split_claims(read_claims(resolve_data_dir().train)).validation[: args.claims]
    return list(claims), Verifier.load(args.index, args.models, progress=False)
