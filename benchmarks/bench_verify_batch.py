"""Model time per claim by batch size: what ``SCIVERIFY_VERIFY_BATCH`` trades.

A larger batch could lower the model time per claim, but a request that shares a claim being computed
waits for the rest of its batch. Runs ``Verifier.verify_batch`` on distinct real claims (from
claims_train.jsonl, never repeated, so nothing is cached) with one worker thread, then with two side by
side as the server's two workers do, and prints seconds per batch and claims per second.

Run (default index, real models):
    python benchmarks/bench_verify_batch.py [--sizes 1 2 4 8] [--claims 8] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time

__all__ = ["main"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--claims", type=int, default=8, help="claims per worker at each size")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir
    from sciverify.pipeline.verify import load_verifier

    path = resolve_data_dir(None).root / "claims_train.jsonl"
    claims = [json.loads(line)["claim"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    random.Random(args.seed).shuffle(claims)
    verifier = load_verifier()
    verifier.verify_batch(claims[:2], args.k)  # warm-up
    lock = threading.Lock()
    next_claim = [2]

    def take(n: int) -> list[str]:
        with lock:
            start = next_claim[0]
            next_claim[0] += n
        return claims[start : start + n]

    for workers in (1, 2):
        for size in args.sizes:
            times: list[float] = []

            def run(size: int = size, times: list[float] = times) -> None:
                for _ in range(max(1, args.claims // size)):
                    batch = take(size)
                    t0 = time.monotonic()
                    verifier.verify_batch(batch, args.k)
                    with lock:
                        times.append(time.monotonic() - t0)

            threads = [threading.Thread(target=run) for _ in range(workers)]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.monotonic() - t0
            print(
                f"{workers} worker(s), batches of {size}: {sum(times) / len(times):.2f} s a batch, "
                f"{len(times) * size / wall:.2f} claims/s",
                flush=True,
            )


if __name__ == "__main__":
    main()
