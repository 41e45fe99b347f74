"""Kifu against its peer, boardgame.io, back to back on one machine: ``kifu bench peer``
(or ``python -m bench.peer``).

The peer is San Ban on boardgame.io 0.50.2 (``bench/peers/boardgameio``: its stock server, in
memory and not durable, and its raw socket.io load generator; its README says what a figure
means). Kifu is the whole stack as ``make run`` starts it (``kifu run``: embedded Redis with AOF
``appendfsync always``, two API workers, the RQ workers, the projector, the sweeper), each action
durable before it is answered, measured by ``bench.loadgen`` in ``game`` mode (San Ban games back to
back over HTTP: a create, then nine actions, each answered 201).

Each run measures the peer, then Kifu (or Kifu first in even runs, so that neither always meets a
machine the other has just warmed): ``--clients`` games in play at once on each side (the peer's
``N``), ``--warmup`` seconds not counted, then a window of ``--seconds``. A run prints both figures,
their p99 and the ratio Kifu / peer; the summary gives the median ratio against the targets of
``MIN_RATIO`` and ``MAX_P99_MS``. The machine's CPU over each window comes from ``/proc/stat``.

Kifu's creation limit is lifted for the load (``CREATE_LIMIT``: the load creates some 150 games a
second from one address); every other limit stays as deployed. Both sides' load generators share
the machine with what they measure, as they would on any one machine: the peer's costs it about
half a core, ``bench.loadgen`` about a tenth (both are printed).

The peer needs Node (20 or later) and npm: its packages are installed once, with the versions its
``package.json`` pins, into ``.bench/boardgameio`` in the checkout (ignored by git).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.embedded_redis import free_port
from bench import loadgen

CHECKOUT = Path(__file__).resolve().parents[1]
PEER_SOURCE = CHECKOUT / "bench" / "peers" / "boardgameio"
PEER_HOME = CHECKOUT / ".bench" / "boardgameio"  # the copy npm installs into (ignored by git)
CREATE_LIMIT = "1000000/minute"
MIN_RATIO = 1.0  # Kifu's durable actions/s against the peer's in-memory moves/s
MAX_P99_MS = 50.0
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Side:
    """One side's figures over its window."""

    per_s: float  # moves (peer) or actions (Kifu) answered a second
    p99_ms: float
    machine_cpu: float  # the whole machine's busy time over the window, in cores
    detail: str


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine so far (``/proc/stat``)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return float(sum(fields) - idle), float(sum(fields))


def install_peer() -> Path:
    """The peer's files and packages in ``PEER_HOME``; ``npm install`` only when its package.json changed."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise SystemExit(f"the peer needs Node 20+ and npm: apt-get install -y nodejs npm (no {tool} here)")
    PEER_HOME.mkdir(parents=True, exist_ok=True)
    for source in PEER_SOURCE.rglob("*"):
        if source.is_file():
            target = PEER_HOME / source.relative_to(PEER_SOURCE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    stamp = PEER_HOME / "node_modules" / ".kifu-installed"
    wanted = (PEER_SOURCE / "package.json").read_text()
    if not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=PEER_HOME, check=True)
        stamp.write_text(wanted)
    return PEER_HOME


def measure_peer(home: Path, clients: int, seconds: float, warmup: float) -> Side:
    """One run of the peer's own load generator (it starts a fresh server and stops it)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peer.json"
        command = [
            "node", "load.js", "--client", "raw", "--concurrency", str(clients), "--runs", "1",
            "--duration", str(seconds), "--warmup", str(warmup), "--port", str(free_port()), "--json", str(out),
        ]  # fmt: skip
        env = {**os.environ, "NODE_ENV": "production"}
        subprocess.run(command, cwd=home, env=env, check=True, capture_output=True, timeout=seconds + warmup + 120)
        (result,) = json.loads(out.read_text())["results"]
    if result["errors"]:
        raise SystemExit(f"the peer's run had {result['errors']} errors: {result['errSample']}")
    detail = f"server CPU {result['serverCpuPct']:.0f}%, its load generator {result['loadgenCpuPct']:.0f}%"
    return Side(result["movesPerSec"], result["p99ms"], result["machineBusyPct"] / 100, detail)


@contextlib.contextmanager
def kifu_run(port: int, settings: Mapping[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """``kifu run`` on a fresh data directory, ``settings`` added to its environment: its base URL and pid
    once ``/readyz`` answers; stopped (Ctrl-C) after."""
    with tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"KIFU_RATE_LIMIT_CREATE": CREATE_LIMIT}
        env |= settings or {}
        command = [sys.executable, "-m", "entrypoints.cli", "run", "--port", str(port), "--data", data]
        with (Path(data) / "kifu-run.log").open("w") as log:
            proc = subprocess.Popen(command, cwd=CHECKOUT, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(base, proc)
            yield base, proc.pid
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"kifu run exited with code {proc.returncode} while starting")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{base}/readyz", timeout=2) as answer:
            if answer.status == 200:
                return
        time.sleep(0.2)  # polling a starting server: nothing announces readiness
    raise SystemExit(f"kifu run did not answer /readyz within {START_TIMEOUT_S:.0f} s")


def measure_kifu(clients: int, seconds: float, warmup: float) -> Side:
    """One window of ``bench.loadgen`` (``game`` mode) against a fresh ``kifu run``."""
    with kifu_run(free_port()) as (base, _pid):
        busy0, total0 = machine_busy()
        result = asyncio.run(loadgen.run("game", [base], clients, seconds, warmup))
        busy1, total1 = machine_busy()
    if result.failures:
        raise SystemExit(f"Kifu's run had failures: {dict(result.failures)}")
    cores = os.cpu_count() or 1
    # the window is inside [busy0, busy1]: warm-up and drain count too, so this is an upper bound
    machine = (busy1 - busy0) / (total1 - total0) * cores
    detail = f"load generator {100 * result.cpu_s / result.window_s:.0f}% of a core"
    p99 = loadgen.percentile(result.latencies_ms, 99)
    return Side(result.count / result.window_s, p99, machine, detail)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16, help="games in play at once, on each side")
    parser.add_argument("--seconds", type=float, default=15.0, help="each measured window")
    parser.add_argument("--warmup", type=float, default=3.0)
    args = parser.parse_args(argv)
    home = install_peer()
    print("peer: boardgame.io 0.50.2, in memory, raw socket.io client; Kifu: kifu run (durable), bench.loadgen")
    print(f"{args.clients} games at once, {args.warmup:g} s warm-up, {args.seconds:g} s window, {os.cpu_count()} cores")
    print("| run | peer moves/s | peer p99 ms | Kifu actions/s | Kifu p99 ms | Kifu / peer |")
    print("|---|---|---|---|---|---|")
    ratios, p99s = [], []
    for run in range(1, args.runs + 1):
        if run % 2:
            peer = measure_peer(home, args.clients, args.seconds, args.warmup)
            kifu = measure_kifu(args.clients, args.seconds, args.warmup)
        else:
            kifu = measure_kifu(args.clients, args.seconds, args.warmup)
            peer = measure_peer(home, args.clients, args.seconds, args.warmup)
        ratio = kifu.per_s / peer.per_s
        ratios.append(ratio)
        p99s.append(kifu.p99_ms)
        print(
            f"| {run} | {peer.per_s:,.0f} | {peer.p99_ms:.1f} | {kifu.per_s:,.0f} | {kifu.p99_ms:.1f} | {ratio:.2f}x |",
            flush=True,
        )
        cpu = f"machine {peer.machine_cpu:.2f} cores; Kifu's at most {kifu.machine_cpu:.2f} cores"
        print(f"|   | {peer.detail} | | {kifu.detail} | | {cpu} |", flush=True)
    ratio, p99 = statistics.median(ratios), statistics.median(p99s)
    met = "met" if ratio >= MIN_RATIO and p99 <= MAX_P99_MS else "not met"
    print(
        f"median Kifu / peer {ratio:.2f}x (target {MIN_RATIO:g}x), Kifu p99 {p99:.1f} ms "
        f"(target under {MAX_P99_MS:g} ms): {met}"
    )


if __name__ == "__main__":
    main()
