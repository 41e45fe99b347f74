"""What one action costs, by stage, across every process of ``kifu run``: ``python -m bench.action_cost``.

It starts ``kifu run`` on a fresh data directory (``bench.peer.kifu_run``), drives it with
``bench.loadgen`` in ``game`` mode (San Ban games back to back: a create, then nine actions), and over
the measured window:

* reads each process's CPU time from ``/proc/<pid>/stat`` (API workers, RQ workers, projector,
  sweeper, Redis, the supervisor and gunicorn's master);
* samples every Python process of the stack with py-spy (``--nonblocking``: it never pauses them);
* puts each sample in the first of ``STAGES`` that any frame of its stack matches: the specific
  stages first, the HTTP server and the framework last (so a socket write under redis-py is the Redis
  round trip, under gunicorn's response writer the response, and the rules are the rules wherever
  the framework called them from);
* shares each process's CPU time out over its stages by their share of its samples.

Figures are microseconds of CPU per action answered in the window (the creates' cost included: one
create per nine actions, as a game needs). Redis's own CPU has no Python stack: it is one line. The
sum is the machine's CPU per action; the load generator's share is printed apart.

Needs py-spy (``pip install -e '.[bench]'``; it reads the processes' memory, so run as their user or root).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from adapters.embedded_redis import free_port
from bench import loadgen
from bench.peer import kifu_run

TICKS = 100.0  # /proc/<pid>/stat's clock ticks a second (USER_HZ)

# (stage, pattern over a frame's "function (file:line)"), in the order a sample is judged.
STAGES: list[tuple[str, str]] = [
    ("Redis round trip", r"\((redis/|hiredis)"),
    (
        "signing, transparency log",
        r"\((domain/signatures|adapters/signing_keys|adapters/transparency_log|cryptography/)",
    ),
    ("hashing, envelopes", r"\((domain/record|domain/canonical|domain/merkle)"),
    ("rules", r"\((domain/games/|domain/engine|domain/contract)"),
    ("validation (marshmallow)", r"\((marshmallow/|entrypoints/api/schemas)"),
    ("rate limits", r"\((limits/|entrypoints/api/limits)"),
    ("auth (tokens, seats)", r"identify_actor|bearer_token|_caller \("),
    ("request body, JSON", r"\((entrypoints/api/body|json/|orjson)"),
    ("response (build, write)", r"fast_json|jsonify|gunicorn/http/wsgi|gunicorn/util|write_whole|_one_send|Response"),
    ("service (commands, reads)", r"\((service/|adapters/)"),
    ("HTTP parse (gunicorn)", r"gunicorn/http/"),
    ("routing, Flask, werkzeug", r"\((flask/|werkzeug/|blinker/|entrypoints/api/)"),
    ("metrics", r"prometheus_client"),
    ("gunicorn, gevent", r"\((gunicorn/|gevent/|greenlet)"),
]
PROCESS_STAGES = {"projector": "projector", "worker": "RQ workers", "sweeper": "sweeper"}


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, parent in parents.items() if parent == p]
        found += kids
        frontier += kids
    return found


def role(pid: int) -> str:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    words = [w.decode(errors="replace") for w in argv]
    line = " ".join(words)
    if "valkey-server" in line or "redis-server" in line:
        return "redis"
    if "gunicorn" in line:
        return "api"
    for name in ("projector", "sweeper", "worker"):
        if name in words:
            return name
    return "other"


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command's name (utime is [11], stime [12])."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / TICKS


def system_seconds(pid: int) -> float:
    """The kernel's share of a process's CPU so far (stime): for Redis, its socket reads and writes and the
    AOF's writes and fsyncs."""
    return int(_stat(pid)[12]) / TICKS


def stage_of(stack: Sequence[str], process: str) -> str:
    if process in PROCESS_STAGES:
        return PROCESS_STAGES[process]
    if any("AppendFollower" in frame for frame in stack):
        return "listener (appends followed)"
    for stage, pattern in STAGES:
        if any(re.search(pattern, frame) for frame in stack):
            return stage
    return "other"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples a second per process")
    parser.add_argument("--keep", type=Path, default=None, help="copy py-spy's raw profiles (role-pid.txt) here")
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        raise SystemExit("needs py-spy: .venv/bin/pip install -e '.[bench]'")
    with tempfile.TemporaryDirectory() as tmp, kifu_run(free_port()) as (base, supervisor):
        pids = {p: role(p) for p in [supervisor, *children(supervisor)]}
        spies: dict[int, tuple[subprocess.Popen[bytes], Path]] = {}
        cpu0: dict[int, float] = {}

        def probe() -> dict[str, float]:
            if not cpu0:
                for pid, what in pids.items():
                    cpu0[pid] = cpu_seconds(pid)
                    if what not in ("redis", "other") and pid != supervisor:
                        out = Path(tmp) / f"{pid}.txt"
                        command = [spy, "record", "-p", str(pid), "-d", str(args.seconds), "-r", str(args.rate)]
                        command += ["-f", "raw", "-o", str(out), "--nonblocking"]
                        spies[pid] = (
                            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
                            out,
                        )
                return {}
            return {str(pid): cpu_seconds(pid) - cpu0[pid] for pid in pids}

        result = asyncio.run(loadgen.run("game", [base], args.clients, args.seconds, args.warmup, probe=probe))
        for pid, (proc, out) in spies.items():
            proc.wait(timeout=args.seconds + 60)
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(out, args.keep / f"{pids[pid]}-{pid}.txt")
        per_stage: dict[str, float] = {}
        for pid, what in pids.items():
            cpu = result.probe.get(str(pid), 0.0)
            if pid in spies:
                samples: Counter[str] = Counter()
                for line in spies[pid][1].read_text().splitlines():
                    stack, _, count = line.rpartition(" ")
                    samples[stage_of(stack.split(";"), what)] += int(count)
                total = sum(samples.values()) or 1
                for stage, n in samples.items():
                    per_stage[stage] = per_stage.get(stage, 0.0) + cpu * n / total
            else:
                name = "Redis server" if what == "redis" else "supervisor, other"
                per_stage[name] = per_stage.get(name, 0.0) + cpu
    actions = result.count
    print(f"kifu run, bench.loadgen game mode, {args.clients} connections, {result.window_s:.1f} s window:")
    print(f"{actions:,} actions ({actions / result.window_s:,.0f}/s) and {result.creates:,} creates answered")
    print("| stage | CPU per action (us) | share |")
    print("|---|---|---|")
    whole = sum(per_stage.values())
    for stage, seconds in sorted(per_stage.items(), key=lambda item: -item[1]):
        print(f"| {stage} | {1e6 * seconds / actions:,.0f} | {100 * seconds / whole:.1f}% |")
    print(f"| **all of Kifu** | **{1e6 * whole / actions:,.0f}** | 100% |")
    print(f"load generator: {1e6 * result.cpu_s / actions:,.0f} us per action (not in the table)")


if __name__ == "__main__":
    main()
