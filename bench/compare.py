"""Kifu against its baselines, in one invocation: ``kifu bench compare`` (or ``python -m bench.compare``).

What runs, in order (every process it starts is stopped at the end, also on Ctrl-C, SIGTERM or an error):

1. an embedded Redis (AOF ``appendfsync always``, as under ``kifu run``) in a temporary directory;
2. the HTTP baseline: ``bench.noop_app`` (one POST route: parse the JSON body, answer 201) under the
   gunicorn command of ``kifu serve``, as two single-worker servers; ``bench.loadgen`` in ``noop`` mode;
3. Kifu: two ``kifu serve --workers 1`` servers (rate limits as deployed, except the creation limit:
   ``CREATE_LIMIT``) and the projector; no RQ worker or sweeper (human-only games give them nothing to
   do). ``bench.loadgen`` in ``game`` mode (one connection per game, games spread over both servers),
   then in ``pair`` mode (two connections per game, its seats on the two servers, so two processes);
4. the store against raw redis-py on the same Redis (keys under their own prefix, ``bench``), one
   client, one store call and one baseline call in turn (which goes first alternating), ``--ops`` each:
   ``EventStore.append`` of a real San Ban action's envelopes against a minimal Lua script that only
   XADDs them, and ``EventStore.read`` against ``XRANGE`` plus ``orjson.loads``. A figure is 1 / the
   median round trip, so that a round trip stalled by another process counts against neither side.

Each load measurement: ``--clients`` connections (in ``pair`` mode that many games on twice as many
connections: the same requests in flight in every shape), ``--warmup`` seconds not recorded, then a
window of ``--seconds``: answers 201 a second, latency p50/p99/max (targets on actions alone; creates
printed apart), failures (any non-201 answer). The table gives each figure, its ratio to its baseline
and its target (``MIN_RATIO``, ``MIN_ACTIONS_S``, ``MAX_P99_MS``, ``MIN_PAIR_RATIO``,
``MIN_STORE_RATIO``), met or not. The CPU of the load generator, the servers, Redis, the projector and
whatever else ran ("not ours") is printed as a share of one core: they all share the machine.

``--url-a``/``--url-b``: measure Kifu servers already running (``--url-b`` defaults to ``--url-a``);
their CPU is then not known. ``--wrk``: also run wrk (``bench/wrk_san_ban.lua``, and a no-op POST)
against port A, as a cross-check of the load generator. Figures, and what the load generator costs
them: docs/performance.md, section "Measuring".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
import redis

from adapters.embedded_redis import EmbeddedRedis, free_port
from adapters.redis_store import Entries, EventStore
from bench import api_load
from bench.loadgen import DECKS, NOOP_BODY, NOOP_PATH, SHAPES, Mode, Result, percentile, run
from domain import engine
from domain.engine import Seat
from domain.record import GENESIS, envelopes
from service.ports import Append, Head

CREATE_LIMIT = "1000000/minute"  # the load creates ~200 games/s from one address; every other limit as deployed
START_TIMEOUT_S = 60.0
MACHINE = "machine"  # cpu_seconds: every process on the machine (/proc/stat)
AT = "2026-01-01T00:00:00.000Z"
DEAL = {"first": 0, "decks": [list(deck) for deck in DECKS]}
MIN_RATIO = 0.5  # Kifu's actions/s against the no-op POST's
MIN_ACTIONS_S = 1700.0
MAX_P99_MS = 20.0
MIN_PAIR_RATIO = 0.95  # two connections per game against one: "not slower", within run-to-run noise
MIN_STORE_RATIO = 0.8
RAW_XADD = """
for i = 1, #ARGV do
  redis.call("XADD", KEYS[1], "*", "e", ARGV[i])
end
return #ARGV
"""


@dataclass
class Options:
    seconds: float = 15.0
    warmup: float = 3.0
    clients: int = 16
    ops: int = 5000
    url_a: str | None = None
    url_b: str | None = None
    wrk: bool = False


@dataclass
class Figure:
    """One row of the table."""

    name: str
    unit: str
    value: float
    ratio: float | None = None  # to its baseline
    baseline: str = ""
    target: str = ""
    met: bool | None = None


# -- processes --------------------------------------------------------------------------------------------


class Processes:
    """The child processes of a comparison: started in their own sessions, logging to files, all stopped
    by ``stop_all`` (the masters are sent SIGTERM and waited for, then their process groups SIGKILL)."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        with (self.logs / f"{name}.log").open("ab") as log:
            proc = subprocess.Popen(
                list(argv),
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.running[name] = proc
        return proc

    def log_tail(self, name: str, lines: int = 20) -> str:
        path = self.logs / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def wait_until_answers(self, name: str, check: Callable[[], bool]) -> None:
        """Poll ``check`` until it is true (the server listens and answers); fail if the process exits."""
        proc = self.running[name]
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError, urllib.error.URLError):
                if check():
                    return
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start:\n{self.log_tail(name)}")
            time.sleep(0.05)

    def stop(self, *names: str) -> None:
        procs = [(n, self.running.pop(n)) for n in names if n in self.running]
        for _name, proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for _name, proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # its own session: this group is ours alone
                proc.wait(timeout=5)

    def stop_all(self) -> None:
        self.stop(*list(self.running))

    def pids(self, *names: str) -> list[int]:
        return [self.running[n].pid for n in names if n in self.running]


def gunicorn_argv(app: str, port: int) -> list[str]:
    """``kifu serve``'s gunicorn command line, one worker, for ``app``."""
    from entrypoints.gunicorn_command import gunicorn_argv as serve_argv

    return serve_argv(app, "127.0.0.1", port, 1)


def answers(url: str, path: str, body: bytes | None = None, status: int = 200) -> bool:
    """Whether ``url + path`` answers ``status`` now (a POST of ``body`` when given)."""
    request = urllib.request.Request(
        url + path,
        data=body,
        method="POST" if body is not None else "GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=2) as response:
        return int(response.status) == status


def cpu_seconds(groups: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds (user + system) so far of each group of processes, each process with its descendants
    (from ``/proc/<pid>/stat``, Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    totals = {}
    for name, roots in groups.items():
        total, todo, seen = 0.0, list(roots), set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            total += times.get(pid, 0.0)
            todo.extend(children.get(pid, []))
        totals[name] = total
    with open("/proc/stat") as f:  # first line: cpu user nice system idle iowait irq softirq steal ...
        jiffies = [int(x) for x in f.readline().split()[1:9]]
    totals[MACHINE] = (sum(jiffies) - jiffies[3] - jiffies[4]) / tick  # all but idle and iowait
    return totals


def cpu_report(result: Result) -> str:
    """Who used the CPU over a window, each as a share of one core; "not ours" is what processes other
    than the comparison's took (another job on the machine makes the figures unfair)."""
    window = result.window_s
    ours = {k: v for k, v in result.probe.items() if k != MACHINE}
    parts = [f"load generator {result.cpu_core_share:.0%}"] + [f"{k} {v / window:.0%}" for k, v in ours.items()]
    if MACHINE in result.probe:
        busy = result.probe[MACHINE] / window
        not_ours = busy - result.cpu_core_share - sum(ours.values()) / window
        parts.append(f"whole machine {busy:.0%} of {(os.cpu_count() or 1) * 100}% (not ours {max(0.0, not_ours):.0%})")
    return ", ".join(parts)


# -- load -------------------------------------------------------------------------------------------------


def measure(
    mode: Mode, urls: tuple[str, str], options: Options, groups: dict[str, list[int]], label: str, clients: int
) -> Result:
    print(f"\n== {label}: bench.loadgen --mode {mode} --clients {clients}, {urls[0]} + {urls[1]}", flush=True)
    result = asyncio.run(run(mode, urls, clients, options.seconds, options.warmup, probe=lambda: cpu_seconds(groups)))
    for line in result.report():
        print(line)
    print(f"  CPU over the window (share of one core): {cpu_report(result)}")
    return result


def wrk_noop(url: str, options: Options, tmp: Path) -> str:
    script = tmp / "wrk_noop.lua"
    script.write_text(
        f'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = \'{NOOP_BODY.decode()}\'\n'
    )
    return api_load.run_wrk(url + NOOP_PATH, int(options.seconds), options.clients, script) or ""


def wrk_rate(output: str, pattern: str) -> float | None:
    found = re.search(pattern, output)
    return float(found.group(1)) if found else None


# -- store ------------------------------------------------------------------------------------------------


def action_envelopes() -> list[dict[str, Any]]:
    """The envelopes of a real San Ban action: the first ``place`` of the benchmark's fixed deal."""
    seats = [Seat(0, "bench-a"), Seat(1, "bench-b")]

    def salt() -> str:
        return secrets.token_hex(16)

    opening = engine.create("san-ban", "g-bench", seats, secrets.token_bytes(32), {"mode": "standard"}, DEAL)
    table = engine.replay(opening)
    head = envelopes(opening, 1, GENESIS, AT, salt)[-1]
    events, _table = engine.step(table, 0, {"type": "place", "cell": 0, "card": DECKS[0][0]}, salts=salt)
    return envelopes(events, head["seq"] + 1, head["hash"], AT, salt)


def interleaved(ops: int, store: Callable[[int], object], raw: Callable[[int], object]) -> tuple[Timings, Timings]:
    """Each round trip of ``store(i)`` and ``raw(i)`` timed, for i < ops, one of each in turn (which goes
    first alternates)."""
    clock = time.perf_counter
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(ops):
        for side in (0, 1) if i % 2 else (1, 0):
            t0 = clock()
            (store, raw)[side](i)
            times[side].append(clock() - t0)
    return Timings(sorted(times[0])), Timings(sorted(times[1]))


@dataclass
class Timings:
    """Sorted round-trip times (s) of one side of a store benchmark."""

    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rate(self) -> float:
        """Round trips a second, from the median round trip: one preempted by another process on the
        machine counts against neither side."""
        return 1 / self.median

    def summary(self) -> str:
        us = [t * 1e6 for t in self.seconds]
        mean = statistics.fmean(us)
        return (
            f"median {statistics.median(us):,.0f} us, mean {mean:,.0f} us ({1e6 / mean:,.0f}/s), "
            f"p99 {percentile(us, 99):,.0f} us"
        )


def store_figures(client: redis.Redis, ops: int) -> list[Figure]:
    store = EventStore(client, prefix="bench")
    game = "g-bench-" + secrets.token_hex(4)
    log, raw_log = store.log_key(game), store.log_key(game) + ":raw"
    action = action_envelopes()
    k = len(action)
    warm = 200
    batches = [[{**env, "seq": i * k + j + 1} for j, env in enumerate(action)] for i in range(warm + ops)]
    head = action[-1]["hash"]  # every batch ends with the same hash: the head the next append expects
    raw_xadd = client.register_script(RAW_XADD)
    size = sum(len(orjson.dumps(e)) for e in action)
    print(
        f"\n== store vs raw redis-py: {ops:,} sequential round trips each (interleaved), "
        f"payload a San Ban action's {k} envelopes ({size:,} bytes of JSON)"
    )

    def append(i: int) -> None:
        store.append(game, Append(batches[i], Head(i * k, head if i else GENESIS), due=None))

    def xadd(i: int) -> None:
        raw_xadd(keys=[raw_log], args=[orjson.dumps(e) for e in batches[i]])

    def read(i: int) -> None:
        store.read(game, i * k, k)

    def xrange(i: int) -> None:
        entries = cast(Entries, client.xrange(log, min=f"{i * k + 1}-0", max="+", count=k))
        [orjson.loads(fields[b"e"]) for _id, fields in entries]

    for i in range(warm):
        append(i)
        xadd(i)
    appends, xadds = interleaved(ops, lambda i: append(warm + i), lambda i: xadd(warm + i))
    if store.read(game, (warm + ops - 1) * k, k) != batches[-1]:
        raise RuntimeError("the store did not read back what it appended")
    for i in range(warm):
        read(i)
        xrange(i)
    reads, xranges = interleaved(ops, read, xrange)
    client.delete(log, raw_log, store.head_key(game), store.meta_key(game))
    for name, timings in (
        ("EventStore.append", appends),
        ("raw Lua XADD", xadds),
        ("EventStore.read", reads),
        ("raw XRANGE + orjson", xranges),
    ):
        print(f"  {name:<20} {timings.summary()}")
    target = f">= {MIN_STORE_RATIO:.2f} x"
    append_ratio, read_ratio = xadds.median / appends.median, xranges.median / reads.median
    return [
        Figure("raw Lua XADD (EVALSHA)", "ops/s", xadds.rate),
        Figure(
            "EventStore.append (Lua)",
            "ops/s",
            appends.rate,
            append_ratio,
            "raw XADD",
            target,
            append_ratio >= MIN_STORE_RATIO,
        ),
        Figure("raw XRANGE + orjson", "ops/s", xranges.rate),
        Figure("EventStore.read", "ops/s", reads.rate, read_ratio, "raw XRANGE", target, read_ratio >= MIN_STORE_RATIO),
    ]


# -- the comparison ---------------------------------------------------------------------------------------


def load_figures(noop: Result, game: Result | None, pair: Result | None) -> list[Figure]:
    figures = [Figure("no-op Flask POST", "req/s", noop.rate), Figure("  p99", "ms", noop.p99)]
    for shape in (game, pair):
        if shape is None:
            continue
        ratio = shape.rate / noop.rate if noop.rate else 0.0
        figures.append(
            Figure(
                f"Kifu action, {'one connection' if shape.mode == 'game' else 'two connections'} per game",
                "actions/s",
                shape.rate,
                ratio,
                "no-op",
                f">= {MIN_RATIO:.2f} x, >= {MIN_ACTIONS_S:,.0f}/s",
                ratio >= MIN_RATIO and shape.rate >= MIN_ACTIONS_S,
            )
        )
        figures.append(Figure("  p99", "ms", shape.p99, target=f"< {MAX_P99_MS:.0f} ms", met=shape.p99 < MAX_P99_MS))
        failed = sum(shape.total_failures.values())
        figures.append(Figure("  failures (non-201)", "answers", failed, target="0", met=failed == 0))
    if game is not None and pair is not None and game.rate:
        ratio = pair.rate / game.rate
        figures.append(
            Figure(
                "two connections / one",
                "ratio",
                ratio,
                ratio,
                "one conn.",
                f">= {MIN_PAIR_RATIO:.2f} x",
                ratio >= MIN_PAIR_RATIO,
            )
        )
    return figures


def table(figures: Sequence[Figure]) -> str:
    rows = [("figure", "unit", "value", "ratio", "to", "target", "met")]
    for f in figures:
        value = f"{f.value:,.2f}" if f.unit == "ratio" else f"{f.value:,.1f}" if f.unit == "ms" else f"{f.value:,.0f}"
        ratio = f"{f.ratio:.2f}" if f.ratio is not None else ""
        met = "" if f.met is None else "met" if f.met else "NOT MET"
        rows.append((f.name, f.unit, value, ratio, f.baseline, f.target, met))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = {2, 3}
    lines = []
    for n, row in enumerate(rows):
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


@dataclass
class Run:
    """One comparison's state: its options, temporary directory, children and what they measured."""

    options: Options
    tmp: Path
    procs: Processes
    env: dict[str, str]
    redis_pid: int
    results: dict[str, Result] = field(default_factory=dict)
    wrk_outputs: list[str] = field(default_factory=list)

    def two_servers(self, name: str, argv: Callable[[int], list[str]], check: Callable[[str], bool]) -> list[str]:
        """Start ``name-0`` and ``name-1`` (``argv(port)``) on two free ports; their base URLs once they answer."""
        ports = (free_port(), free_port())
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        for i, port in enumerate(ports):
            self.procs.start(f"{name}-{i}", argv(port), self.env)
        for i, url in enumerate(urls):
            self.procs.wait_until_answers(f"{name}-{i}", functools.partial(check, url))
        return urls

    def noop(self) -> None:
        urls = self.two_servers(
            "noop",
            lambda port: gunicorn_argv("bench.noop_app:app", port),
            lambda url: answers(url, NOOP_PATH, NOOP_BODY, 201),
        )
        groups = {"no-op servers": self.procs.pids("noop-0", "noop-1")}
        self.results["noop"] = measure(
            "noop", (urls[0], urls[1]), self.options, groups, "no-op Flask POST", self.options.clients
        )
        if self.options.wrk:
            self.wrk_outputs.append(wrk_noop(urls[0], self.options, self.tmp))
        self.procs.stop("noop-0", "noop-1")

    def kifu(self) -> None:
        groups: dict[str, list[int]] = {}  # servers given by URL: their processes (and Redis) are not known here
        if self.options.url_a:
            urls = [self.options.url_a, self.options.url_b or self.options.url_a]
            label = "Kifu API (running at the URLs given)"
        else:
            kifu = [sys.executable, "-m", "entrypoints.cli"]
            self.procs.start("projector", [*kifu, "projector"], self.env)
            urls = self.two_servers(
                "api",
                lambda port: [*kifu, "serve", "--workers", "1", "--port", str(port)],
                lambda url: answers(url, "/readyz"),
            )
            groups = {
                "API servers": self.procs.pids("api-0", "api-1"),
                "Redis": [self.redis_pid],
                "projector": self.procs.pids("projector"),
            }
            label = "Kifu API + projector"
        pair = (urls[0], urls[1])
        for mode in ("game", "pair"):
            # the same number of games in play, so of requests in flight, in both shapes: a pair's two
            # connections take turns, so --clients games need twice as many connections
            clients = self.options.clients * (2 if mode == "pair" else 1)
            label_mode = f"{label}, {SHAPES[mode]}"
            self.results[mode] = measure(mode, pair, self.options, groups, label_mode, clients)
        if self.options.wrk:
            self.wrk_outputs.append(api_load.run_wrk(urls[0], int(self.options.seconds), self.options.clients) or "")
        self.procs.stop("api-0", "api-1", "projector")

    def print_wrk(self) -> None:
        print("\n== wrk cross-check, against port A alone (one single-worker server)")
        for out in self.wrk_outputs:
            print("\n".join("  " + line for line in out.splitlines()))
        noop_rate = wrk_rate(self.wrk_outputs[0], r"Requests/sec:\s*([\d.]+)")
        kifu_rate = wrk_rate(self.wrk_outputs[-1], r"\(([\d.]+) actions/s\)")
        if noop_rate and kifu_rate:
            print(
                f"  wrk: Kifu {kifu_rate:,.0f} actions/s / no-op {noop_rate:,.0f} req/s = {kifu_rate / noop_rate:.2f}"
            )

    def print_cpu(self) -> None:
        print(f"\nCPU over each window, as a share of one core (the machine has {os.cpu_count()} cores):")
        for mode, r in self.results.items():
            print(f"  {mode:<5} {cpu_report(r)}")
        mine = ", ".join(f"{mode} {r.cpu_machine_share:.0%}" for mode, r in self.results.items())
        print(f"  the load generator's share of the whole machine: {mine}")


def compare(options: Options) -> list[Figure]:
    """Run everything (see the module's docstring); print as it goes, then the table; return its rows."""
    print(
        f"bench compare: {options.clients} clients, warm-up {options.warmup:g} s, window {options.seconds:g} s "
        f"per measurement; {os.cpu_count()} cores; load generator: bench.loadgen (Python asyncio, one thread, "
        "in this process)"
    )
    with tempfile.TemporaryDirectory(prefix="kifu-compare-") as tmp_name:
        tmp = Path(tmp_name)
        procs = Processes(tmp)
        server = EmbeddedRedis(tmp / "redis")
        try:
            server.start()
            assert server.process is not None
            env = {**os.environ, "REDIS_URL": server.url, "KIFU_RATE_LIMIT_CREATE": CREATE_LIMIT}
            run = Run(options, tmp, procs, env, server.process.pid)
            run.noop()
            run.kifu()
            figures = load_figures(run.results["noop"], run.results["game"], run.results["pair"])
            client = redis.Redis(port=server.port)
            try:
                figures += store_figures(client, options.ops)
            finally:
                client.close()
        finally:
            procs.stop_all()
            server.stop()
    if options.wrk:
        run.print_wrk()
    print("\n== summary\n" + table(figures))
    run.print_cpu()
    return figures


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C (so every child is stopped), while this runs."""

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None, options: Options | None = None) -> None:
    if options is None:
        parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.split("\n")[0])
        parser.add_argument("--seconds", type=float, default=Options.seconds, help="each measured window")
        parser.add_argument("--warmup", type=float, default=Options.warmup, help="before each window")
        parser.add_argument(
            "--clients",
            type=int,
            default=Options.clients,
            help="clients: connections (games in play in pair mode, on twice as many connections)",
        )
        parser.add_argument("--ops", type=int, default=Options.ops, help="round trips per store figure")
        parser.add_argument("--url-a", default=None, help="a running Kifu API instead of starting two")
        parser.add_argument("--url-b", default=None, help="the second running API (seat 1 in pair mode)")
        parser.add_argument("--wrk", action="store_true", help="also run wrk against port A (cross-check)")
        args = parser.parse_args(argv)
        options = Options(**vars(args))
    if shutil.which("wrk") is None and options.wrk:
        raise SystemExit("--wrk: wrk is not installed")
    try:
        with sigterm_as_exit():
            compare(options)
    except KeyboardInterrupt:
        raise SystemExit("bench compare: interrupted (every process it started is stopped)") from None


if __name__ == "__main__":
    main()
