"""How far dynamic int8 quantisation moves each label-model body from its float graph.

Run:  python benchmarks/bench_int8_drift.py [--bases minilm mpnet]

For each body: a fresh classifier (seeded; its untrained head scaled by ``--head-scale`` so that small
changes of the pooled vector show in the probabilities), exported as the label model is exported, once as
float and once int8, then run on a few real claim-rationale pairs padded into one batch. Prints the largest
absolute difference of a probability against torch for both graphs. The float graph checks the export; the
int8 row is what quantisation costs that body. mpnet is assembled from its PyPI parts on first use.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

PAIRS = (
    (
        "ALDH1 expression is associated with poorer prognosis for breast cancer.",
        "ALDH1 positivity predicted poor overall survival in 245 patients.",
    ),
    (
        "Vitamin D prevents fractures.",
        "No effect was observed in the randomized trial of older adults over five years of daily dosing.",
    ),
    (
        "Statins reduce mortality after a first myocardial infarction.",
        "Among 4,444 patients, simvastatin lowered all-cause mortality by 30 % over 5.4 years.",
    ),
)


def drift(base: str, head_scale: float) -> tuple[float, float]:
    import numpy as np
    import onnxruntime as ort
    import torch

    from sciverify.models.label_torch import base_model_dir, build_classifier, export_onnx, training_tokenizer
    from sciverify.training.bases import ensure_mpnet

    body = ensure_mpnet() if base == "mpnet" else base_model_dir()
    model = build_classifier(body, seed=0)
    with torch.no_grad():
        model.head.weight.mul_(head_scale)
    model.eval()
    tok = training_tokenizer(body)
    enc = [tok.encode(claim, text) for claim, text in PAIRS]
    pad = 1 if base == "mpnet" else 0
    width = max(len(e.ids) for e in enc)
    ids = np.array([e.ids + [pad] * (width - len(e.ids)) for e in enc], dtype=np.int64)
    mask = np.array([[1] * len(e.ids) + [0] * (width - len(e.ids)) for e in enc], dtype=np.int64)
    segments = bool(getattr(model, "takes_segment_ids", True))
    with torch.no_grad():
        ref = model(torch.tensor(ids), torch.tensor(mask), None, probs=True).numpy()
    feeds = {"input_ids": ids, "attention_mask": mask}
    if segments:
        feeds["token_type_ids"] = np.zeros_like(ids)
    out: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sciverify-int8-") as tmp:
        path = export_onnx(model, Path(tmp) / "model.onnx", keep_float=True)
        for graph in (path.with_suffix(".fp32.onnx"), path):
            got = ort.InferenceSession(str(graph)).run(None, feeds)[0]
            out.append(float(np.abs(got - ref).max()))
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bases", nargs="+", default=["minilm", "mpnet"], choices=["minilm", "mpnet"])
    ap.add_argument("--head-scale", type=float, default=50.0)
    args = ap.parse_args()
    print("| body | float graph: max abs diff of a probability | int8 graph: max abs diff |")
    print("|---|---:|---:|")
    for base in args.bases:
        fp32, int8 = drift(base, args.head_scale)
        print(f"| {base} | {fp32:.2e} | {int8:.3f} |")


if __name__ == "__main__":
    main()
