"""A new user's first hour, timed in a fresh clone: set-up, the first answers, the main job, the server.

Clones the repository (its committed HEAD) into a new directory with the SciFact data beside it (a link to
this checkout's ``../shared``), and with an empty pip cache and empty per-user data and cache directories,
so nothing this machine already built or downloaded is reused. Then it times, one after another:

1. ``./scripts/setup`` (its own per-step lines are kept: packages, Swagger UI, index);
2. the first ``sciverify verify "CLAIM"`` (a whole process: Python, the index, three models, one claim);
3. ``sciverify verify -`` with 20 claims on stdin (the first 20 of ``claims_test.jsonl``);
4. ``sciverify predict claims_test.jsonl -o pred.jsonl`` (300 claims);
5. ``sciverify serve``: from the start of the process to the first answer of ``POST /api/verify``.

The baseline, measured in the same run unless ``--no-baseline``: ``sciverify index --default`` in the same
clone, which embeds the corpus as set-up did before the index shipped (6 to 12 minutes on 2 cores), so
the index step's time sits beside what it replaced. The CPU (``lscpu``), core count and load average are
printed with the figures: on a machine shared with other work the times are longer than on idle cores.

Run (needs the network for pip, like any fresh set-up; takes 5 to 20 minutes):
    python benchmarks/bench_first_hour.py [--repo .] [--keep DIR] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["main"]

CLAIM = "A deficiency of folate increases blood levels of homocysteine."
SERVER_WAIT_S = 300.0


def _cpu() -> str:
    """Model name, the instruction sets that decide the int8 kernels, and the core count."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return f"unknown CPU, {os.cpu_count()} cores"
    model = re.search(r"Model name:\s*(.+)", text)
    found = re.search(r"Flags:\s*(.+)", text)
    flags = set(found.group(1).split()) if found else set()
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8") if f in flags]
    name = model.group(1).strip() if model else "unknown CPU"
    return f"{name} ({', '.join(isa) or 'no AVX2'}), {os.cpu_count()} cores"


def _timed(
    label: str, cmd: list[str], cwd: Path, env: dict[str, str], log: Path, stdin: str | None = None
) -> float:
    """Run ``cmd``, its output appended to ``log``; returns wall seconds. Exits naming ``log`` on failure."""
    started = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(
            cmd, cwd=cwd, env=env, input=stdin, text=True, stdout=out, stderr=subprocess.STDOUT
        )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{label} failed (exit {done.returncode}); see {log}")
    print(f"  {label:<44} {seconds:7.1f} s", flush=True)
    return seconds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_first_answer(clone: Path, env: dict[str, str], log: Path) -> float:
    """Seconds from starting ``sciverify serve`` to its first answer of ``POST /api/verify``."""
    port = _free_port()
    body = json.dumps({"claim": CLAIM}).encode()
    started = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write("\n$ sciverify serve\n")
        out.flush()
        server = subprocess.Popen(
            [str(clone / ".venv/bin/sciverify"), "serve", "--port", str(port)],
            cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
        try:
            while time.perf_counter() - started < SERVER_WAIT_S:
                if server.poll() is not None:
                    sys.exit(f"the server exited ({server.returncode}); see {log}")
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/api/verify", body, {"Content-Type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        if response.status == 200 and json.loads(response.read()):
                            seconds = time.perf_counter() - started
                            label = "serve: start to first /api/verify answer"
                            print(f"  {label:<44} {seconds:7.1f} s", flush=True)
                            return seconds
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    time.sleep(0.2)
            sys.exit(f"no answer from the server in {SERVER_WAIT_S:.0f} s; see {log}")
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep it (default: a temp dir)")
    parser.add_argument("--no-baseline", action="store_true", help="skip timing `sciverify index --default`")
    args = parser.parse_args()

    repo = args.repo.resolve()
    shared = (repo / ".." / "shared").resolve()
    data = shared / "data" / "scifact"
    if not (data / "corpus.jsonl").is_file():
        sys.exit(f"no SciFact data at {data}: the clone finds it at ../shared/data/scifact")
    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="first-hour-"))
    if work.exists() and any(work.iterdir()):
        sys.exit(f"{work} is not empty; give a new directory")
    work.mkdir(parents=True, exist_ok=True)
    clone = work / "main"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCIVERIFY_", "PIP_", "VIRTUAL_ENV"))}
    env.update(
        PIP_CACHE_DIR=str(work / "pip-cache"),
        XDG_DATA_HOME=str(work / "data-home"),
        XDG_CACHE_HOME=str(work / "cache-home"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    log = work / "first-hour.log"
    cpu = _cpu()
    load_before = os.getloadavg()[0]
    print(f"first hour in a fresh clone: {work}\nCPU: {cpu}; load average {load_before:.1f} at the start")
    try:
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
        (work / "shared").symlink_to(shared)
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
        ).stdout.strip()
        print(f"commit {commit}; empty pip cache, per-user data and cache directories")
        figures = {"setup": _timed("./scripts/setup", ["./scripts/setup"], clone, env, log)}
        steps = re.findall(r"setup: (.+) done in (\d+) s", log.read_text(encoding="utf-8"))
        for name, seconds in steps:
            print(f"    {name:<42} {int(seconds):7d} s")
        sv = str(clone / ".venv/bin/sciverify")
        figures["first verify"] = _timed('first `verify "CLAIM"`', [sv, "verify", CLAIM], clone, env, log)
        test = data / "claims_test.jsonl"
        twenty = [json.loads(line)["claim"] for line in test.read_text(encoding="utf-8").splitlines()[:20]]
        figures["verify 20"] = _timed(
            "`verify -` with 20 claims", [sv, "verify", "-"], clone, env, log, "\n".join(twenty) + "\n"
        )
        figures["predict"] = _timed(
            "`predict claims_test.jsonl` (300 claims)",
            [sv, "predict", str(test), "-o", str(work / "pred.jsonl")], clone, env, log,
        )
        figures["serve"] = _server_first_answer(clone, env, log)
        if not args.no_baseline:
            print("baseline, the same clone:")
            figures["baseline index build"] = _timed(
                "`index --default` (embedding, as set-up did)", [sv, "index", "--default"], clone, env, log
            )
        load_after = os.getloadavg()[0]
        print(f"load average {load_after:.1f} at the end; CPU: {cpu}")
        print("figures: " + json.dumps({k: round(v, 1) for k, v in figures.items()}))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
