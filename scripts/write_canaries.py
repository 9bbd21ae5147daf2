"""Make int8 model directories exact on every CPU and record their canaries.

For each stance model directory given (``label/`` or ``reader/`` of a weights folder): rewrite its int8
weights as uint8 when they are int8 (``sciverify.models.int8.make_exact``: the same integer products, no
saturation on CPUs without VNNI), then write ``canaries.json`` (the expected outputs from the graph's own
arithmetic computed in float, and from the float graph). With ``--embedder``, also record the embedder's
canary vectors in the shipped weights folder. The shipped weights were made so with:

    .venv/bin/python scripts/write_canaries.py src/sciverify/models/weights/label \\
        src/sciverify/models/weights/reader --embedder
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dirs", nargs="*", type=Path, help="label/ or reader/ model directories")
    parser.add_argument("--embedder", action="store_true", help="also record the embedder's canaries")
    args = parser.parse_args()

    import onnx

    from sciverify.data.datasets import sha256_file
    from sciverify.data.io import write_text_atomic
    from sciverify.models.conformance import EMBEDDER_SENTENCES, write_canaries
    from sciverify.models.int8 import inspect_graph, make_exact
    from sciverify.retrieval.embedder import EMBEDDER_CANARIES, Embedder, default_onnx_path

    for directory in args.dirs:
        kind = "reader" if (directory / "training.json").exists() or directory.name == "reader" else "label"
        path = directory / "model.onnx"
        model = onnx.load(str(path))
        before = inspect_graph(model)
        if not before.exact:
            changed = make_exact(model)
            partial = path.with_name(path.name + ".partial")
            onnx.save(model, str(partial))
            partial.replace(path)
            print(f"{path}: {changed} int8 weights rewritten as uint8", file=sys.stderr)
        record = write_canaries(directory, kind)
        gap = float(np.abs(np.asarray(record["float"]) - np.asarray(record["reference"])).max())
        print(f"{directory}: {kind} canaries written; float graph within {gap:.4f}", file=sys.stderr)
    if args.embedder:
        vectors = Embedder().encode(list(EMBEDDER_SENTENCES))
        record = {
            "embedder_sha256": sha256_file(default_onnx_path()),
            "sentences": list(EMBEDDER_SENTENCES),
            "vectors": np.round(vectors, 7).tolist(),
        }
        write_text_atomic(EMBEDDER_CANARIES, json.dumps(record) + "\n")
        print(f"{EMBEDDER_CANARIES}: embedder canaries written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
