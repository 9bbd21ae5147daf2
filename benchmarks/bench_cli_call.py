"""What one ``sciverify verify`` call costs a user, and where the time goes.

A CLI call starts Python, imports sciverify, opens the index and loads three models (the rationale
trees, the label model and the reader, two int8 ONNX graphs), then judges one claim. The README's warm
figures (``verify`` p50) are the last part only; this prints the whole call and its parts:

- ``help``: ``sciverify --help``, the floor of any call (Python and the CLI's imports);
- ``cli verify``: ``sciverify verify CLAIM`` as a user runs it, wall time of the whole process;
- ``load``: in one process, the import and ``Verifier.load`` (index opened, models loaded);
- ``first claim`` and ``warm claim``: ``Verifier.verify`` on the first claim, then p50 over other claims;
- with ``--many N``: ``N`` claims checked by ``N`` calls of ``sciverify verify CLAIM`` against one call of
  ``sciverify verify -`` reading the same ``N`` claims from stdin (the models loaded once).

Each figure is the median of ``--repeats`` runs, every one measured in this run.

Run (default index, shipped models):
    python benchmarks/bench_cli_call.py [--repeats 3] [--claims 10] [--many 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

__all__ = ["main"]

CLAIM = "A deficiency of folate increases blood levels of homocysteine."

_IN_PROCESS = """
import json, sys, time
t0 = time.perf_counter()
from sciverify.pipeline.verify import load_verifier
verifier = load_verifier()
t1 = time.perf_counter()
verifier.verify(sys.argv[1])
t2 = time.perf_counter()
warm = []
for claim in json.loads(sys.argv[2]):
    s = time.perf_counter()
    verifier.verify(claim)
    warm.append(time.perf_counter() - s)
print(json.dumps({"load": t1 - t0, "first": t2 - t1, "warm": warm}))
"""


def _wall(argv: list[str], stdin: bytes = b"") -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, input=stdin)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--claims", type=int, default=10, help="claims for the warm p50 (claims_train.jsonl)")
    parser.add_argument("--many", type=int, default=0, help="also time N claims: N calls against one call")
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir

    lines = (resolve_data_dir(None).root / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    others = [json.loads(line)["claim"] for line in lines[: args.claims]]
    cli = [sys.executable, "-m", "sciverify"]
    help_s, cli_s, load_s, first_s, warm_s, apart_s, once_s = [], [], [], [], [], [], []
    many = others[: args.many]
    for _ in range(args.repeats):
        if many:
            apart_s.append(sum(_wall([*cli, "verify", claim]) for claim in many))
            once_s.append(_wall([*cli, "verify", "-"], stdin="".join(c + "\n" for c in many).encode()))
        help_s.append(_wall([*cli, "--help"]))
        cli_s.append(_wall([*cli, "verify", CLAIM]))
        done = subprocess.run([sys.executable, "-c", _IN_PROCESS, CLAIM, json.dumps(others)], check=True,
                              capture_output=True, text=True)
        parts = json.loads(done.stdout)
        load_s.append(parts["load"])
        first_s.append(parts["first"])
        warm_s.append(statistics.median(parts["warm"]))
    rows = [
        ("sciverify --help (start-up floor)", help_s),
        ("sciverify verify CLAIM (whole call)", cli_s),
        ("  import + Verifier.load (index, three models)", load_s),
        ("  first claim", first_s),
        (f"  warm claim (p50 of {args.claims})", warm_s),
    ]
    if many:
        rows += [(f"{len(many)} claims, one `verify CLAIM` call each", apart_s),
                 (f"{len(many)} claims, one `verify -` call", once_s)]
    print(f"median of {args.repeats} runs, seconds")
    for name, values in rows:
        print(f"{name:<48} {statistics.median(values):6.2f}   runs: {', '.join(f'{v:.2f}' for v in values)}")


if __name__ == "__main__":
    main()
