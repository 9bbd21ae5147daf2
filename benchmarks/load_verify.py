"""Load test of POST /api/verify: N concurrent clients for T seconds, real claims, real models.

Each client sends one claim at a time (claims from claims_test.jsonl, shuffled with ``--seed``) and
waits for the answer before sending the next. A ``503`` with ``Retry-After`` is the server shedding
load (admission control): the client counts it as *shed*, waits the time it was told, and goes on.
Anything else that is not a 200 is an error. Reported: accepted and shed requests, throughput of
accepted requests, and the accepted requests' p50/p95/p99 (queueing plus inference). Before the load,
the warm single-claim latency is measured on the same server (claims from claims_train.jsonl, one
at a time, never cached), so the p95 can be read as a multiple of it.

``--baseline-src DIR`` runs the same load, one after the other, against a server started from
another source tree (e.g. ``git archive`` of main at a fixed commit) and prints both side by side;
``--baseline-deadline-off`` runs it first against this tree with ``SCIVERIFY_VERIFY_DEADLINE=0`` (no
admission by deadline: only the FIFO bound sheds). ``--cold`` starts the load as soon as the server
answers ``/api/health``, while the verifier is still loading (a crowd arriving at start-up); the warm
single-claim latency is then measured after the load. Reported per run besides the latencies: the
server's longest wait of an accepted request for its claim to start (``longest_wait_ms``) and the
requests shed at the deadline (``expired``), from ``/api/health``.
``--src DIR`` starts "this tree" from a source tree too: this commit with the baseline's model weights
copied in measures the server code alone when the shipped models have changed in between.

Every client connects from 127.0.0.1, so the servers run with a per-address connection cap above the
client count (``SCIVERIFY_CONNECTIONS_PER_CLIENT``).

Run (starts its own servers on free loopback ports, default index):
    python benchmarks/load_verify.py [--clients 200] [--seconds 60] [--baseline-src /tmp/base/src] [--src DIR]
    python benchmarks/load_verify.py --clients 30 --seconds 30 --baseline-deadline-off [--cold]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

__all__ = ["LoadResult", "ServerProcess", "free_port", "load_claims", "run_load", "start_server"]


@dataclass
class LoadResult:
    """Latencies (seconds) of accepted requests, shed (503 + Retry-After) count, errors, wall time.

    ``answers``: for each claim answered, the seconds from its first request to its answer, the
    waits told by ``Retry-After`` and the retries included (what a person at the page waits).
    """

    latencies: list[float] = field(default_factory=list)
    answers: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    shed: int = 0
    wall: float = 0.0
    server: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> int:
        return len(self.latencies)

    def percentile(self, q: float, of: list[float] | None = None) -> float:
        values = self.latencies if of is None else of
        if not values:
            return float("nan")
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]

    def summary(self) -> dict[str, object]:
        return {
            "requests_ok": self.ok,
            "shed_503": self.shed,
            "errors": dict(self.errors),
            "wall_s": round(self.wall, 2),
            "throughput_rps": round(self.ok / self.wall, 2) if self.wall else 0.0,
            "p50_ms": round(1000 * self.percentile(50), 1),
            "p95_ms": round(1000 * self.percentile(95), 1),
            "p99_ms": round(1000 * self.percentile(99), 1),
            "max_ms": round(1000 * max(self.latencies), 1) if self.latencies else None,
            "answer_p50_ms": round(1000 * self.percentile(50, self.answers), 1),
            "answer_p95_ms": round(1000 * self.percentile(95, self.answers), 1),
            "server_queue": self.server.get("queue"),
        }


def load_claims(path: Path, seed: int = 0) -> list[str]:
    """Real claims from a SciFact claims file, shuffled reproducibly."""
    claims = [
        json.loads(line)["claim"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    random.Random(seed).shuffle(claims)
    return claims


async def _client(
    url: str, claims: list[str], start: int, deadline: float, timeout: float, result: LoadResult
) -> None:
    # one connection per client, in its own pool: a single httpx pool shared by 200 connections costs
    # its event loop about 10 ms of CPU per request (measured: 9.6 ms against 2.5 ms with a pool per
    # client), so the load generator, not the server, set the latencies and the throughput
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=60.0), limits=limits) as http:
        await _requests(http, url, claims, start, deadline, result)


async def _requests(
    http: httpx.AsyncClient, url: str, claims: list[str], start: int, deadline: float, result: LoadResult
) -> None:
    i = start
    retry = False
    first = 0.0
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        if not retry:  # after a 503 the client asks again for the same claim, as the page does
            claim = claims[i % len(claims)]
            i += 1
            first = t0
        retry = False
        try:
            r = await http.post(url + "/api/verify", json={"claim": claim, "k": 10})
        except httpx.TimeoutException:
            result.errors["timeout"] += 1
            continue
        except httpx.HTTPError as exc:
            result.errors[type(exc).__name__] += 1
            continue
        if r.status_code == 200 and b'"verdict"' in r.content:
            done = time.monotonic()
            result.latencies.append(done - t0)
            result.answers.append(done - first)
        elif r.status_code == 503 and r.headers.get("Retry-After", "").isdigit():
            result.shed += 1
            retry = True
            await asyncio.sleep(min(float(r.headers["Retry-After"]), max(0.0, deadline - time.monotonic())))
        else:
            result.errors[f"http_{r.status_code}"] += 1


async def _run(url: str, clients: int, seconds: float, claims: list[str], timeout: float) -> LoadResult:
    result = LoadResult()
    t0 = time.monotonic()
    deadline = t0 + seconds
    stride = max(1, len(claims) // clients)
    await asyncio.gather(
        *(_client(url, claims, c * stride, deadline, timeout, result) for c in range(clients))
    )
    result.wall = time.monotonic() - t0
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=60.0)) as http:
        try:
            result.server = (await http.get(url + "/api/health")).json()
        except httpx.HTTPError:
            pass
    return result


def run_load(
    url: str, *, clients: int = 200, seconds: float = 60.0, claims: list[str], timeout: float = 600.0
) -> LoadResult:
    """Drive ``clients`` concurrent clients against ``url`` for ``seconds`` (started requests finish)."""
    return asyncio.run(_run(url.rstrip("/"), clients, seconds, claims, timeout))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServerProcess:
    """A ``sciverify serve`` subprocess on a loopback port."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def wait_ready(self, timeout: float = 600.0, verifier: bool = True) -> dict[str, object]:
        """Poll /api/health until it answers (and the verifier is ready, when asked)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode}; log:\n{self.log.read_text()[-3000:]}"
                )
            try:
                health = httpx.get(self.url + "/api/health", timeout=5).json()
                if not verifier or health.get("verifier") == "ready":
                    return health
                if health.get("verifier") == "failed":
                    raise RuntimeError(f"verifier failed to load; log:\n{self.log.read_text()[-3000:]}")
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise TimeoutError(f"server not ready after {timeout} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def warm_single(url: str, claims: list[str], n: int = 10) -> list[float]:
    """Latencies of ``n`` distinct claims sent one at a time to an idle, warm server (after one warm-up)."""
    out = []
    with httpx.Client(timeout=120) as http:
        for i, claim in enumerate(claims[: n + 1]):
            for _ in range(120):  # after a --cold load the queue may still be draining: wait as told
                t0 = time.monotonic()
                r = http.post(url + "/api/verify", json={"claim": claim, "k": 10})
                if r.status_code != 503 or not r.headers.get("Retry-After", "").isdigit():
                    break
                time.sleep(float(r.headers["Retry-After"]))
            r.raise_for_status()
            if i:
                out.append(time.monotonic() - t0)
    return out


def start_server(
    data_dir: Path,
    *,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    port: int | None = None,
    src: Path | None = None,
) -> ServerProcess:
    """Start ``sciverify serve`` with its database in ``data_dir`` (logs to data_dir/server-PORT.log)."""
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / f"server-{port}.log"
    cmd = [
        sys.executable,
        "-m",
        "sciverify",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *args,
    ]
    full_env = {**os.environ, **(env or {})}
    if src is not None:  # another source tree (a baseline) wins over the installed package
        full_env["PYTHONPATH"] = str(src)
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=full_env)
    return ServerProcess(proc, f"http://127.0.0.1:{port}", log)


def _measure(
    label: str,
    src: Path | None,
    args: argparse.Namespace,
    claims: list[str],
    singles: list[str],
    env: dict[str, str] | None = None,
):
    tmp = Path(tempfile.mkdtemp(prefix="sciverify-load-"))
    cap = {"SCIVERIFY_CONNECTIONS_PER_CLIENT": str(max(32, 2 * args.clients + 8))}
    server = start_server(tmp, src=src, env={**cap, **(env or {})})
    try:
        t0 = time.monotonic()
        server.wait_ready(verifier=not args.cold)
        print(f"[{label}] server up in {time.monotonic() - t0:.1f} s at {server.url}", flush=True)
        if not args.cold:
            single = warm_single(server.url, singles)
        result = run_load(
            server.url, clients=args.clients, seconds=args.seconds, claims=claims, timeout=args.timeout
        )
        if args.cold:
            server.wait_ready()
            single = warm_single(server.url, singles)
    finally:
        server.stop()
    return single, result


def _row(label: str, single: list[float], r: LoadResult) -> str:
    s = r.summary()
    p50_single = 1000 * sorted(single)[len(single) // 2]
    return (
        f"| {label} | {r.ok} | {r.shed} | {sum(r.errors.values())} | {s['wall_s']} s | "
        f"{s['throughput_rps']} | "
        f"{p50_single:.0f} ms | {s['p50_ms']:.0f} ms | {s['p95_ms']:.0f} ms | {s['p99_ms']:.0f} ms | "
        f"{s['p95_ms'] / p50_single:.1f} | "
        f"{s['answer_p50_ms'] / 1000:.1f} / {s['answer_p95_ms'] / 1000:.1f} s | "
        f"{_counter(r, 'longest_wait_ms')} ms | {_counter(r, 'expired')} |"
    )


def _counter(r: LoadResult, name: str) -> object:
    queue = r.server.get("queue")
    return queue.get(name, "-") if isinstance(queue, dict) else "-"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=600.0, help="per-request client timeout (s)")
    parser.add_argument("--url", help="use a running server instead of starting one")
    parser.add_argument("--baseline-src", type=Path, help="source tree (its src/) of the baseline server")
    parser.add_argument(
        "--src",
        type=Path,
        help="source tree (its src/) of 'this tree' (default: the installed package); e.g. this commit with "
        "the baseline's weights copied in, to compare the server code with the same models",
    )
    parser.add_argument(
        "--claims", type=Path, help="claims file (default: claims_test.jsonl of the data dir)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--baseline-deadline-off",
        action="store_true",
        help="first run this tree with SCIVERIFY_VERIFY_DEADLINE=0 (no admission by deadline), the baseline",
    )
    parser.add_argument(
        "--cold", action="store_true", help="start the load while the verifier is still loading"
    )
    args = parser.parse_args()

    from sciverify.data.datasets import resolve_data_dir

    data = resolve_data_dir(None)
    claims = load_claims(args.claims or data.test, args.seed)
    singles = load_claims(data.root / "claims_train.jsonl", args.seed)[:11]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"python {platform.python_version()}"
    )
    print(
        f"load: {args.clients} clients x {args.seconds:.0f} s, {len(claims)} distinct real claims, "
        f"client timeout {args.timeout:.0f} s",
        flush=True,
    )
    if args.url is not None:
        single = warm_single(args.url, singles)
        result = run_load(
            args.url, clients=args.clients, seconds=args.seconds, claims=claims, timeout=args.timeout
        )
        runs = [("server at " + args.url, single, result)]
    else:
        runs = []
        if args.baseline_src is not None:
            runs.append(("baseline", *_measure("baseline", args.baseline_src, args, claims, singles)))
        elif args.baseline_deadline_off:
            off = {"SCIVERIFY_VERIFY_DEADLINE": "0"}
            runs.append(("deadline off", *_measure("deadline off", args.src, args, claims, singles, off)))
        runs.append(("this tree", *_measure("this tree", args.src, args, claims, singles)))
    print(
        "\n| server | accepted | shed (503) | errors | wall | accepted req/s | warm single p50 | "
        "p50 | p95 | p99 | p95 / single p50 | answer p50 / p95 (retries included) | longest wait to start | "
        "shed at the deadline |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, single, result in runs:
        print(_row(label, single, result))
    for label, _, result in runs:
        print(f"{label}: {json.dumps(result.summary())}")
    if len(runs) == 2:
        base, new = runs[0][2], runs[1][2]
        ratio = (
            (new.ok / new.wall) / (base.ok / base.wall)
            if base.ok and new.wall and base.wall
            else float("nan")
        )
        print(f"accepted throughput, this tree / baseline: {ratio:.2f}")
    if any(r.errors for _, _, r in runs[-1:]):
        sys.exit(1)


if __name__ == "__main__":
    main()
