"""Leaderboard uploads under a crowd: N teams upload at once for T seconds, on a loopback server.

The server runs in this process (uvicorn in a thread, the configuration of ``sciverify serve``) against
the hidden gold of the tests (the validation split of ``claims_train.jsonl``, half private). Each client is
a team of its own with its own connection; it uploads a valid file, and on ``503``/``429`` waits as
``Retry-After`` says (capped at 2 s) and uploads again. Printed per configuration: uploads accepted
(201), shed (503) and refused per team (429), and the accepted uploads' latency p50/p95/max. The same
load runs first against an unbounded queue (``--scoring-queue`` huge: the server before bounded
scoring, where every upload waited its turn), then against the bounded queue, in the same run.

With ``--heavy N`` it measures fair scoring instead: N teams upload valid files of nearly the upload
limit (``--heavy-bytes``, the gold's evidence plus thousands of other abstracts) in a loop, and once the
queue is full of them another team uploads an ordinary file, retrying as told. Printed: one heavy file's
scoring time (measured alone first), how long the other team waited from its first try to its 201, and
how many 503s it got; first with the queue that counted uploads in arrival order (the server before
fair scoring), then with the server's queue, in the same run.

Run (SciFact data needed; loopback only):
    python benchmarks/load_leaderboard.py [--clients 30] [--seconds 20] [--scoring-queue 4]
    python benchmarks/load_leaderboard.py --heavy 5 [--heavy-bytes 5000000] [--seconds 180]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
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


def _heavy(gold: Path, corpus: Path, size: int) -> bytes:
    """A valid file of about ``size`` bytes, built as the serving tests build theirs (one builder, so the
    benchmark times the file the tests admit)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "serving"))
    from serving_doubles import heavy_lines

    return heavy_lines(gold, corpus, size)


def _count_only_queue(workers: int, waiting: int) -> object:
    """The scoring queue before fair scoring: admission by count alone, slots in arrival order."""
    from sciverify.serving.scoring_queue import ScoringQueue

    class CountOnly(ScoringQueue):
        def _order(self, team: int, cost: int) -> tuple[float, int, int]:
            return (0.0, 0, next(self._seq))

    return CountOnly(workers, waiting, None)


def run(args: argparse.Namespace, queue: int, label: str, fair: bool = True) -> None:
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
    if args.heavy:
        settings = settings.model_copy(update={"max_upload_bytes": args.heavy_bytes + 65536})
    app = create_app(settings, preload=False)
    port = _free_port()
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/api/submissions"
    if not fair:  # the app builds its queue at start-up: replace it now
        app.state.scoring_queue = _count_only_queue(settings.scoring_workers, queue)
    if args.heavy:
        try:
            _heavy_run(args, app, url, content, _heavy(gold, corpus, args.heavy_bytes), label)
        finally:
            server.should_exit = True
            thread.join(timeout=30)
        return
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


def _heavy_run(
    args: argparse.Namespace, app: object, url: str, light: bytes, heavy: bytes, label: str
) -> None:
    import httpx

    from sciverify.serving.auth import add_submitter

    lb = app.state.leaderboard  # type: ignore[attr-defined]
    started = time.monotonic()
    lb.score(heavy, "heavy.jsonl")
    one_file = time.monotonic() - started
    db = app.state.db  # type: ignore[attr-defined]
    tokens = [add_submitter(db, f"heavy {i}") for i in range(args.heavy)]
    other = add_submitter(db, "another team")
    done = threading.Event()
    stop = time.monotonic() + args.seconds
    heavy_201 = heavy_503 = 0
    lock = threading.Lock()

    def heavy_client(token: str) -> None:
        nonlocal heavy_201, heavy_503
        with httpx.Client(timeout=300, headers={"Authorization": f"Bearer {token}"}) as http:
            while not done.is_set() and time.monotonic() < stop:
                r = http.post(url, files={"file": ("heavy.jsonl", heavy)})
                with lock:
                    heavy_201 += r.status_code == 201
                    heavy_503 += r.status_code == 503
                if r.status_code in (429, 503):
                    time.sleep(min(2.0, float(r.headers.get("Retry-After", "1"))))

    clients = [threading.Thread(target=heavy_client, args=(t,)) for t in tokens]
    for c in clients:
        c.start()
    time.sleep(1.5 * one_file)  # the heavy files hold every place they can get, and are being scored
    refused = 0
    first = time.monotonic()
    waited = float("nan")
    with httpx.Client(timeout=300, headers={"Authorization": f"Bearer {other}"}) as http:
        while time.monotonic() < stop:
            r = http.post(url, files={"file": ("p.jsonl", light)})
            if r.status_code == 201:
                waited = time.monotonic() - first
                break
            refused += 1
            time.sleep(min(2.0, float(r.headers.get("Retry-After", "1"))))
    done.set()
    for c in clients:
        c.join()
    print(
        f"{label:<34} {one_file:>9.1f} {waited:>9.1f} {refused:>8} {heavy_201:>10} {heavy_503:>10}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--max-per-client", type=int, default=200, help="upper bound on each client's requests")
    ap.add_argument("--scoring-queue", type=int, default=4)
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--heavy", type=int, default=0, help="teams sending heavy files (fair-scoring mode)")
    ap.add_argument("--heavy-bytes", type=int, default=5_000_000, help="size of each heavy file")
    args = ap.parse_args()
    if args.heavy:
        print(
            f"{args.heavy} teams sending valid {args.heavy_bytes / 1e6:.1f} MB files, then another team "
            "an ordinary one; seconds"
        )
        print(
            f"{'server':<34} {'one file':>9} {'other in':>9} {'its 503':>8} {'heavy 201':>10} "
            f"{'heavy 503':>10}"
        )
        run(args, args.scoring_queue, "count-only queue, arrival order", fair=False)
        run(args, args.scoring_queue, "cost-aware queue, fair order")
        return
    print(f"{args.clients} clients for {args.seconds:g} s, one team each; latency of accepted uploads in s")
    print(
        f"{'server':<24} {'accepted':>8} {'503':>6} {'429':>6} {'other':>6} {'wall':>6} "
        f"{'p50':>7} {'p95':>7} {'max':>7}"
    )
    run(args, 1_000_000, "unbounded queue")
    run(args, args.scoring_queue, f"bounded queue ({args.scoring_queue})")


if __name__ == "__main__":
    main()
