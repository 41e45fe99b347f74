"""How durable actions/s grow with API workers on one Redis: ``python -m bench.scale``.

For each count of API workers in ``--workers`` (``1,2,4`` by default), one row:

* ``kifu run`` on a fresh data directory with ``KIFU_API_WORKERS`` set to that count: the whole stack
  as ``make run`` starts it (the embedded Redis with AOF ``appendfsync always``, so a 201 means the
  events are on disk; the RQ workers, the projector, the sweeper), the creation limit lifted as in
  ``bench.peer`` (every other limit as deployed);
* ``--loadgens`` processes of ``bench.loadgen`` in ``game`` mode (San Ban games back to back: a
  create, then nine actions, each answered 201), ``--clients-per-worker`` connections per API worker
  in all, spread over them (``bench.loadgen`` costs about 50 µs of CPU a request: one process
  serves some 20,000 requests a second on a core);
* a warm-up, then one window of ``--seconds``, the same in every load generator (they start
  together; the first one reads every process's CPU time as its window opens and closes).

A row gives the actions answered a second (all load generators together), p50 and p99 over every
answer, and the CPU each part of the stack took over the window in cores: the API (gunicorn's
workers and master), Redis, the projector, the RQ workers and the sweeper, and the load generators;
then the whole machine's busy cores (``/proc/stat``). Redis's CPU per action gives how many actions/s
its one core would carry if its cost stayed linear, and so how many API workers, at the row's
actions/s per worker, one Redis would serve before its core saturates.

It is meant for a machine with many cores (``docs/deployment.md`` has a 16-core run); on two cores
the load generators and the stack share the machine and only the first rows mean anything.

On a machine with another Python and no network (as the 16-core run was), bring the run's dependencies as
wheels: ``.venv/bin/pip freeze --exclude-editable > /tmp/req.txt``, then ``pip download --no-deps
--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux2014_x86_64 --platform
manylinux_2_28_x86_64 -d wheels -r /tmp/req.txt`` (keep the run's packages, drop the test tools);
``gunicorn-h1c`` ships no wheel, so build it for that Python or leave it out (gunicorn then parses in
Python). There: ``pip install --no-index --no-deps --target /tmp/site wheels/*.whl``, then
``PYTHONPATH=/tmp/site python3 -m bench.scale ...`` from the checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import redis

from adapters.embedded_redis import free_port
from bench import loadgen
from bench.action_cost import TICKS, children, cpu_seconds, role, system_seconds
from bench.peer import kifu_run, machine_busy

ROLES = ("api", "redis", "projector", "worker", "sweeper")  # bench.action_cost.role's names


@dataclass(frozen=True)
class Share:
    """What one load generator measured over its window."""

    count: int
    window_s: float
    latencies_ms: list[float]
    failures: Counter[str]
    cpu_s: float  # the load generator's own thread
    probe: dict[str, float]  # CPU seconds of each role over the window (the first load generator only)
    total_count: int  # actions answered 201 over the whole run (warm-up and drain too)


@dataclass(frozen=True)
class Row:
    api_workers: int
    clients: int
    per_s: float
    p50_ms: float
    p99_ms: float
    cores: dict[str, float]  # each role's CPU over the window, in cores; "load" the load generators'
    machine_cores: float
    failures: Counter[str]
    redis_commands: list[tuple[str, float, float]]  # (command, calls an action, µs a call), most time first

    def us_per_action(self, role: str) -> float:
        """A role's CPU per action answered, in microseconds."""
        return self.cores[role] / self.per_s * 1e6 if self.per_s else 0.0

    @property
    def redis_us(self) -> float:
        """Redis's CPU per action answered, in microseconds."""
        return self.us_per_action("redis")


def stack_probe(pids: dict[int, str]) -> Callable[[], dict[str, float]]:
    """CPU seconds so far of each role of the stack's processes, and of the whole machine's busy time."""

    def probe() -> dict[str, float]:
        seconds = dict.fromkeys((*ROLES, "redis-system"), 0.0)
        for pid, what in pids.items():
            if what in seconds:
                try:
                    seconds[what] += cpu_seconds(pid)
                    if what == "redis":
                        seconds["redis-system"] += system_seconds(pid)
                except OSError:  # a process that exited meanwhile (the supervisor restarts it)
                    continue
        busy, _total = machine_busy()
        seconds["machine"] = busy / TICKS
        return seconds

    return probe


def one_load(
    mode: loadgen.Mode, base: str, clients: int, seconds: float, warmup: float, pids: dict[int, str] | None
) -> Share:
    """One load generator's run (in a process of its own); ``pids`` given, it also reads the stack's CPU."""
    probe = stack_probe(pids) if pids is not None else None
    result = asyncio.run(loadgen.run(mode, [base], clients, seconds, warmup, probe))
    return Share(
        result.count, result.window_s, result.latencies_ms, result.failures, result.cpu_s, result.probe,
        result.total_count,
    )  # fmt: skip


def redis_commands(pids: dict[int, str], actions: int) -> list[tuple[str, float, float]]:
    """Redis's ``INFO commandstats`` over the whole run: calls an action and µs a call of each command, most
    time first (the time a command ran, not its socket I/O or the AOF's fsync)."""
    api = next(p for p, what in pids.items() if what == "api")  # its environment names the embedded Redis
    environ = dict(v.split("=", 1) for v in Path(f"/proc/{api}/environ").read_text().split("\0") if "=" in v)
    client = redis.Redis.from_url(environ["REDIS_URL"])
    stats = client.info("commandstats")
    client.close()
    rows = [(name.removeprefix("cmdstat_"), v["calls"], v["usec"]) for name, v in stats.items()]
    rows.sort(key=lambda r: -r[2])
    return [(name, calls / max(actions, 1), usec / max(calls, 1)) for name, calls, usec in rows]


def measure(
    api_workers: int,
    clients: int,
    loadgens: int,
    seconds: float,
    warmup: float,
    mode: loadgen.Mode = "game",
    settings: Mapping[str, str] | None = None,
) -> Row:
    """One row: ``kifu run`` with ``api_workers`` API workers and ``settings`` in its environment, under
    ``clients`` connections (an even share of them in each of ``loadgens`` processes, in ``pair`` mode two
    a game)."""
    step = 2 if mode == "pair" else 1
    with kifu_run(free_port(), {"KIFU_API_WORKERS": str(api_workers), **(settings or {})}) as (base, supervisor):
        pids = {pid: role(pid) for pid in children(supervisor)}
        games = clients // step
        spread = [step * (games // loadgens + (i < games % loadgens)) for i in range(loadgens)]
        jobs = [(mode, base, n, seconds, warmup, pids if i == 0 else None) for i, n in enumerate(spread) if n]
        # spawned, not forked, and closed rather than terminated: Pool.terminate ends the children that
        # have not yet taken their end-of-work sentinel with SIGTERM, and a forked child keeps its parent's
        # handlers; where the parent only notes SIGTERM (kifu's processes, and a pytest-xdist worker after
        # a test that built one of their parts in-process), such a child waited for ever on the pool's
        # queue lock, and the row with it (make test hung once)
        pool = multiprocessing.get_context("spawn").Pool(len(jobs))
        try:
            shares = pool.starmap(one_load, jobs)
        finally:
            pool.close()  # the children exit once the work is done: no signal needed
            pool.join()
        commands = redis_commands(pids, sum(s.total_count for s in shares))
    window = statistics.fmean(s.window_s for s in shares)
    count = sum(s.count for s in shares)
    latencies = sorted(t for s in shares for t in s.latencies_ms)
    probe = shares[0].probe
    cores = {what: probe.get(what, 0.0) / window for what in ROLES}
    cores["load"] = sum(s.cpu_s for s in shares) / window
    cores["redis-system"] = probe.get("redis-system", 0.0) / window
    failures: Counter[str] = Counter()
    for share in shares:
        failures.update(share.failures)
    return Row(
        api_workers=api_workers,
        clients=sum(spread),
        per_s=count / window,
        p50_ms=loadgen.percentile(latencies, 50),
        p99_ms=loadgen.percentile(latencies, 99),
        cores=cores,
        machine_cores=probe.get("machine", 0.0) / window,
        failures=failures,
        redis_commands=commands,
    )


HEADER = (
    "| API workers | connections | actions/s | p50 ms | p99 ms | API cores | Redis | projector | RQ workers "
    "| sweeper | load generators | machine busy (cores) | API µs/action | Redis µs/action | failures |"
)


def line(row: Row) -> str:
    c = row.cores
    failures = ", ".join(f"{k}: {v}" for k, v in sorted(row.failures.items())) or "0"
    return (
        f"| {row.api_workers} | {row.clients} | {row.per_s:,.0f} | {row.p50_ms:.1f} | {row.p99_ms:.1f} "
        f"| {c['api']:.2f} | {c['redis']:.0%} | {c['projector']:.0%} | {c['worker']:.0%} | {c['sweeper']:.0%} "
        f"| {c['load']:.2f} | {row.machine_cores:.1f} | {row.us_per_action('api'):,.0f} | {row.redis_us:.1f} "
        f"| {failures} |"
    )


def saturation(row: Row) -> str:
    """Where one Redis's core would run out at this row's cost per action, if that cost stayed linear."""
    if not row.redis_us:
        return "Redis's CPU was not measured"
    ceiling = 1e6 / row.redis_us
    per_worker = row.per_s / row.api_workers
    return (
        f"at {row.api_workers} API workers: Redis {row.redis_us:.1f} µs of CPU an action, so one core carries "
        f"~{ceiling:,.0f} actions/s, ~{ceiling / per_worker:.0f} API workers at {per_worker:,.0f} actions/s each"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--workers", default="1,2,4", help="API worker counts, one row each (comma-separated)")
    parser.add_argument("--clients-per-worker", type=int, default=16, help="connections (games in play) per worker")
    parser.add_argument("--loadgens", type=int, default=0, help="load generator processes (0: one per 4 workers)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each measured window")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument(
        "--mode", choices=("game", "pair"), default="game", help="bench.loadgen's: one connection a game, or two"
    )
    parser.add_argument(
        "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
        help="a setting for kifu run's environment, e.g. KIFU_REDIS_IO_THREADS=4 (repeat)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    if not counts or min(counts) < 1:
        parser.error("--workers: API worker counts of at least 1")
    settings = dict(setting.split("=", 1) for setting in args.settings if "=" in setting)
    if len(settings) != len(args.settings):
        parser.error("--set takes NAME=VALUE")
    cores = os.cpu_count()
    print(f"kifu run (durable: AOF appendfsync always) on {cores} cores; bench.loadgen {args.mode} mode (San Ban)")
    if settings:
        print("settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print(f"{args.clients_per_worker} connections per API worker, {args.warmup:g} s warm-up, {args.seconds:g} s window")
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    rows = []
    for workers in counts:
        loadgens = args.loadgens or max(1, (workers + 3) // 4)
        clients = workers * args.clients_per_worker
        row = measure(workers, clients, loadgens, args.seconds, args.warmup, args.mode, settings)
        rows.append(row)
        print(line(row), flush=True)
    best = max(rows, key=lambda r: r.per_s)
    print(f"most: {best.per_s:,.0f} actions/s with {best.api_workers} API workers (p99 {best.p99_ms:.1f} ms)")
    print(saturation(best))
    system = best.cores["redis-system"] / best.cores["redis"] if best.cores["redis"] else 0.0
    print(f"Redis's CPU at that row: {system:.0%} in the kernel (sockets, AOF writes and fsyncs); its commands:")
    for name, per_action, usec in best.redis_commands[:8]:
        print(f"  {name}: {per_action:.2f} calls an action, {usec:.1f} µs a call")


if __name__ == "__main__":
    main()
