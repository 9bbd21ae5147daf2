"""The stance models' int8 graphs against their float graphs on real pairs, on this CPU.

Run:  python benchmarks/bench_int8.py [--pairs 400] [--models DIR]

For the label model and the reader of a weights folder: on (claim, gold rationale) pairs and (claim,
non-rationale sentence) pairs of the first train claims, each model's outputs through four graphs built from
its file (:mod:`sciverify.models.int8`), one call per pair as the pipeline calls it:

* ``shipped``: the graph as shipped (uint8 weights, exact on every CPU);
* ``as loaded here``: the graph the models load on this CPU (``label.exact_graph_bytes``): int8 weights
  again where the CPU has AVX-512 VNNI, whose u8 x s8 kernel cannot saturate, else the shipped one;
* ``as quantised``: the same weights as ``quantize_dynamic`` writes them (int8), the form shipped before,
  which saturates on CPUs without VNNI;
* ``reference``: the int8 arithmetic computed in float (what a correct kernel gives);
* ``float``: float activations, the same weights (the quantisation of activations removed).

Printed: the largest and mean difference of any output from the reference and from the float graph,
stance arg-max agreement with the float graph, and milliseconds per call, with the CPU's features.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def _pairs(n: int) -> list[tuple[str, str, str]]:
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.data.records import doc_key

    paths = resolve_data_dir()
    docs = {doc_key(a.doc_id): a for a in read_corpus(paths.corpus)}
    out: list[tuple[str, str, str]] = []
    for claim in read_claims(paths.train):
        for doc_id, sets in claim.evidence.items():
            doc = docs[doc_key(doc_id)]
            cited = {i for s in sets for i in s.sentences}
            out.append((claim.text, doc.title, doc.sentences[min(cited)]))
            other = [i for i in range(len(doc.sentences)) if i not in cited]
            if other:
                out.append((claim.text, doc.title, doc.sentences[other[len(other) // 2]]))
            break
        if len(out) >= n:
            break
    return out[:n]


def _session(model: object) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]


def _run(session: object, directory: Path, pairs: list[tuple[str, str, str]]) -> tuple[np.ndarray, float]:
    from tokenizers import Tokenizer

    from sciverify.models.label import encode_pairs, format_evidence

    max_length = int(json.loads((directory / "config.json").read_text(encoding="utf-8"))["max_length"])
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    names = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]
    rows, start = [], time.perf_counter()
    for claim, title, sentence in pairs:
        feeds = encode_pairs(tokenizer, [(claim, format_evidence(title, [sentence]))], max_length)
        rows.append(session.run(None, {k: v for k, v in feeds.items() if k in names})[0][0])  # type: ignore[attr-defined]
    return np.asarray(rows, dtype=np.float32), (time.perf_counter() - start) * 1000 / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--models", type=Path, default=None, help="weights folder (default: shipped)")
    args = parser.parse_args()

    import onnx

    from sciverify.models.conformance import cpu_info
    from sciverify.models.int8 import float_graph, make_signed, reference_graph
    from sciverify.models.label import exact_graph_bytes
    from sciverify.pipeline.verify import default_model_dir

    def as_quantised(model: onnx.ModelProto) -> onnx.ModelProto:
        out = onnx.ModelProto()
        out.CopyFrom(model)
        make_signed(out)
        return out

    pairs = _pairs(args.pairs)
    print(f"CPU: {cpu_info().line()}; {len(pairs)} pairs (gold rationale and another sentence per claim)\n")
    print(
        "| model | graph | max diff vs reference | max / mean diff vs float "
        "| stance agrees with float | ms/call |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for kind in ("label", "reader"):
        directory = (args.models or default_model_dir()) / kind
        shipped = onnx.load(str(directory / "model.onnx"))
        graphs = {
            "shipped": shipped,
            "as loaded here": onnx.load_from_string(exact_graph_bytes(directory / "model.onnx")),
            "as quantised (int8 weights)": as_quantised(shipped),
            "reference": reference_graph(shipped),
            "float": float_graph(shipped),
        }
        out = {name: _run(_session(g), directory, pairs) for name, g in graphs.items()}
        ref, flt = out["reference"][0], out["float"][0]
        for name, (values, ms) in out.items():
            d_ref = np.abs(values - ref).max()
            d_flt = np.abs(values - flt)
            agree = np.mean(values[:, :3].argmax(1) == flt[:, :3].argmax(1))
            print(
                f"| {kind} | {name} | {d_ref:.4f} | {d_flt.max():.4f} / {d_flt.mean():.4f} | "
                f"{agree:.3f} | {ms:.1f} |"
            )


if __name__ == "__main__":
    main()
