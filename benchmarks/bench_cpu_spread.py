"""How far correct int8 computations on different CPUs land apart: the spread the canaries' limit must admit.

Run:  python benchmarks/bench_cpu_spread.py [--pairs 40] [--cpus Haswell Nehalem]

The shipped stance graphs (uint8 weights: no kernel can saturate) compute every integer product exactly on
every CPU, but the float work around them (layer norm, GELU, softmax, the activations' scales) runs
through kernels chosen by the CPU's features, and each layer re-quantises its input: a last-bit float
difference can move an activation by one step, and that step travels up the layers. This script measures
how far that moves the probabilities: on this CPU natively, then on each CPU of ``--cpus`` emulated by
``qemu-x86_64 -cpu NAME`` (Debian's qemu-user), for the label model's and the reader's canaries and for
``--pairs`` real (claim, sentence) pairs of train claims (the pairs of ``bench_int8.py``). Printed per CPU
and model: the largest difference from this CPU's outputs, the canaries' largest difference from their
recorded reference, and how many stance arg-maxes differ from this CPU's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _outputs(pairs: int) -> dict[str, dict[str, list[list[float]]]]:
    """Every output this CPU gives: per model, the canaries and the real pairs."""
    import onnx
    from bench_int8 import _pairs, _run, _session

    from sciverify.models.conformance import _run_stance
    from sciverify.models.label import exact_graph_bytes

    weights = Path(__file__).resolve().parents[1] / "src" / "sciverify" / "models" / "weights"
    real = _pairs(pairs)
    out: dict[str, dict[str, list[list[float]]]] = {}
    for kind in ("label", "reader"):
        directory = weights / kind
        session = _session(onnx.load_from_string(exact_graph_bytes(directory / "model.onnx")))
        out[kind] = {
            "canaries": _run_stance(kind, directory, session).tolist(),
            "pairs": _run(session, directory, real)[0].tolist(),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--cpus", nargs="*", default=["Haswell", "Nehalem"], help="qemu -cpu names")
    parser.add_argument("--emit", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit is not None:  # the emulated child: write this CPU's outputs and stop
        args.emit.write_text(json.dumps(_outputs(args.pairs)), encoding="utf-8")
        return

    from sciverify.models.conformance import cpu_info, emulation_env, read_canaries

    weights = Path(__file__).resolve().parents[1] / "src" / "sciverify" / "models" / "weights"
    reference = {kind: np.asarray(read_canaries(weights / kind)["reference"]) for kind in ("label", "reader")}
    runs = {"native": _outputs(args.pairs)}
    qemu = shutil.which("qemu-x86_64")
    for cpu in args.cpus:
        if qemu is None:
            print(f"skipped {cpu}: qemu-x86_64 not installed (apt-get install qemu-user)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "out.json"
            cmd = [qemu, "-cpu", cpu, sys.executable, __file__, "--pairs", str(args.pairs)]
            env = emulation_env(cpu)
            done = subprocess.run([*cmd, "--emit", str(path)], capture_output=True, text=True, env=env)
            if done.returncode != 0:
                print(f"{cpu}: failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
                continue
            runs[cpu] = json.loads(path.read_text(encoding="utf-8"))
    info = cpu_info()
    print(f"this CPU: {info.model} ({' '.join(info.flags)}); onnxruntime {info.onnxruntime}")
    print(f"{args.pairs} pairs")
    print()
    print("| CPU | model | canaries vs recorded reference | pairs: max diff vs this CPU | arg-max differs |")
    print("|---|---|---:|---:|---:|")
    native = runs["native"]
    for cpu, run in runs.items():
        for kind in ("label", "reader"):
            canary = float(np.abs(np.asarray(run[kind]["canaries"]) - reference[kind]).max())
            got, base = np.asarray(run[kind]["pairs"]), np.asarray(native[kind]["pairs"])
            diff = float(np.abs(got - base).max())
            flips = int((got.argmax(1) != base.argmax(1)).sum())
            print(f"| {cpu} | {kind} | {canary:.4f} | {diff:.4f} | {flips} of {len(got)} |")


if __name__ == "__main__":
    main()
