"""Leaderboard uploads under a crowd: N teams upload at once for T seconds, on a loopback server.

The server runs in this process (uvicorn in a thread, the configuration of ``sciverify serve``) against
the hidden gold of the tests (the validation split of ``claims_train.jsonl``, half private). Each client is
a team of its own with its own connection; it uploads a valid file, and on ``503``/``429`` waits as
``Retry-After`` says (capped at 2 s) and uploads again. Printed per configuration: uploads accepted
(201), shed (503) and refused per team (429), and the accepted uploads' latency p50/p95/max. The same
load runs first against an unbounded queue (``--scoring-queue`` huge: the server before bounded
scoring, where every upload waited its turn), then against the bounded queue, in the same run.

Run (SciFact data needed; loopback only):
    python benchmarks/load_leaderboard.py [--clients 30] [--seconds 20] [--scoring-queue 4]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path


def _gold(tmp: Path) -> tuple[Path, Path, bytes]:
    from sciverify.data.datasets import resolve_data_dir
    from sciverify.data.io import prediction_to_json, read_claims
    from sciverify.data.splits import split_claims
    from sciverify.scoring import oracle_predictions

    data = resolve_data_dir(None)
    claims = split_claims(read_claims(data.root / "claims_train.jsonl")).validation
    ids = {c.id for c in claims}
    lines = (data.root / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    gold = tmp / "gold.jsonl"
    gold.write_text("".join(x + "\n" for x in lines if json.loads(x)["id"] in ids), encoding="utf-8")
    content = b"".join(
        json.dumps(prediction_to_json(p)).encode() + b"\n" for p in oracle_predictions(claims)
    )
    return gold, data.corpus, content


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(args: argparse.Namespace, queue: int, label: str) -> None:
    import httpx
    import uvicorn

    from sciverify.serving.app import create_app
    from sciverify.serving.auth import add_submitter
    from sciverify.serving.server import uvicorn_config
    from sciverify.serving.settings import Settings

    tmp = Path(tempfile.mkdtemp(prefix="sciverify-loadlb-"))
    gold, corpus, content = _gold(tmp)
    settings = Settings(
        data_dir=tmp / "serve",
        leaderboard_gold=gold,
        corpus=corpus,
        n_boot=args.n_boot,
        preload_verifier=False,
        submissions_per_hour=1_000_000,
        submissions_per_day=1_000_000,
        scoring_queue=queue,
    )
    app = create_app(settings, preload=False)
    port = _free_port()
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/api/submissions"
    tokens = [add_submitter(app.state.db, f"team {i}") for i in range(args.clients)]
    accepted: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds

    def client(token: str) -> None:
        with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {token}"}) as http:
            sent = 0
            while time.monotonic() < stop and sent < args.max_per_client:
                sent += 1
                started = time.monotonic()
                r = http.post(url, files={"file": ("p.jsonl", content)})
                took = time.monotonic() - started
                with lock:
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                    if r.status_code == 201:
                        accepted.append(took)
                if r.status_code in (429, 503):
                    time.sleep(min(2.0, float(r.headers.get("Retry-After", "1"))))

    started = time.monotonic()
    clients = [threading.Thread(target=client, args=(t,)) for t in tokens]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    wall = time.monotonic() - started
    server.should_exit = True
    thread.join(timeout=30)
    accepted.sort()
    p95 = accepted[max(0, int(len(accepted) * 0.95) - 1)] if accepted else float("nan")
    median = statistics.median(accepted) if accepted else float("nan")
    worst = accepted[-1] if accepted else float("nan")
    other = sum(n for s, n in statuses.items() if s not in (201, 429, 503))
    print(
        f"{label:<24} {statuses.get(201, 0):>8} {statuses.get(503, 0):>6} {statuses.get(429, 0):>6} "
        f"{other:>6} {wall:>6.1f} {median:>7.2f} {p95:>7.2f} {worst:>7.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--max-per-client", type=int, default=200, help="upper bound on each client's requests")
    ap.add_argument("--scoring-queue", type=int, default=4)
    ap.add_argument("--n-boot", type=int, default=10_000)
    args = ap.parse_args()
    print(f"{args.clients} clients for {args.seconds:g} s, one team each; latency of accepted uploads in s")
    print(
        f"{'server':<24} {'accepted':>8} {'503':>6} {'429':>6} {'other':>6} {'wall':>6} "
        f"{'p50':>7} {'p95':>7} {'max':>7}"
    )
    run(args, 1_000_000, "unbounded queue")
    run(args, args.scoring_queue, f"bounded queue ({args.scoring_queue})")


if __name__ == "__main__":
    main()
