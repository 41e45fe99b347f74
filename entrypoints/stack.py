"""``kifu run``: the whole stack under one supervisor, on one data directory.

* the data directory is claimed with a lock (two stacks on one AOF would
  corrupt it), and whatever a dead ``kifu run`` on it left running is ended
  first (each child carries ``KIFU_RUN_DIR`` in its environment);
* the embedded Redis (unless ``REDIS_URL`` is set) is a dependency: started
  first and waited for, restarted at once, stopped last;
* the API, the worker, the projector and the sweeper are restarted when they
  exit; SIGCHLD wakes the loop, so a dead Redis is back at once;
* every child dies with this process (``supervisor.die_with``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shutil
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from adapters.signing_keys import DATA_DIR_ENV, key_file, load_or_create
from entrypoints.supervisor import Dependency, SignalSafeEvent, Supervisor, on_stop_signals

if TYPE_CHECKING:
    from adapters.embedded_redis import EmbeddedRedis

URL_FILE = "redis.url"
LOCK_FILE = "kifu-run.lock"
METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's multiprocess mode (adapters.metrics)
RUN_DIR_ENV = "KIFU_RUN_DIR"  # in every child's environment: how a later `kifu run` finds leftovers
WORKERS_ENV = "KIFU_WORKERS"  # how many `kifu worker` processes (bots, timeouts, tournaments)
IO_THREADS_ENV = "KIFU_REDIS_IO_THREADS"  # the embedded Redis's I/O threads (1: only its main thread)
API_WORKERS_ENV = "KIFU_API_WORKERS"  # how many API (gunicorn) workers `kifu serve` starts (default_api_workers)
OTHER_CORES = 4  # cores left to Redis, the projector, the RQ workers and the load beside the API workers
MAX_API_WORKERS = 12  # where one Redis's main thread saturates (docs/deployment.md: 14 served fewer actions)
POLL_S = 1.0  # the supervisor looks at its children at least this often (SIGCHLD wakes it at once)


def run_stack(port: int, data: Path) -> int:
    """Run until SIGTERM/Ctrl-C; the exit status (1 when a process kept failing)."""
    services = _services(port)  # first: a bad process count stops us before anything starts
    run_dir = data.resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    _claim(run_dir)
    _end_leftovers(run_dir)
    metrics = run_dir / "metrics"  # every process's metrics, added up by /metrics (adapters.metrics)
    shutil.rmtree(metrics, ignore_errors=True)
    metrics.mkdir()
    env = {**os.environ, RUN_DIR_ENV: str(run_dir), METRICS_DIR: str(metrics)}
    env.setdefault(DATA_DIR_ENV, str(run_dir))  # the signing key's home unless KIFU_SIGNING_KEY_FILE says
    load_or_create(key_file(run_dir))  # made once here, before the processes that sign start
    dependencies = {}
    if not os.environ.get("REDIS_URL"):
        embedded = _embedded_redis(run_dir)
        env["REDIS_URL"] = embedded.url
        dependencies["redis"] = Dependency(embedded.command(), embedded.answers)
    supervisor = Supervisor(services, env=env, dependencies=dependencies)
    try:
        supervisor.start()
        if dependencies:
            (run_dir / URL_FILE).write_text(env["REDIS_URL"] + "\n")  # for 'kifu verify', 'rebuild-projections'...
            click.echo(f"embedded Redis at {env['REDIS_URL']} (AOF, appendfsync always) in {data}/redis")
        click.echo(f"Kifu is running at http://127.0.0.1:{port}/v1/catalog  (Ctrl-C stops everything)")
        gave_up = not _supervise(supervisor)
    except RuntimeError as exc:  # Redis did not start
        raise click.ClickException(str(exc)) from None
    finally:
        supervisor.stop()
        (run_dir / URL_FILE).unlink(missing_ok=True)
    click.echo("Kifu stopped." if not gave_up else "Kifu stopped: a process kept failing (see above).")
    return 1 if gave_up else 0


def _services(port: int) -> dict[str, list[str]]:
    """The supervised processes, with ``KIFU_WORKERS`` RQ workers (2 unless set: one per core played bot
    games fastest on 2 cores, and kept a turn's longest wait lowest; the figures are in ``workers.batch``)
    and one more for the analyses of finished games (their own queue: ``adapters.analysis_store``). The API
    has ``KIFU_API_WORKERS`` gunicorn workers (``default_api_workers`` unless set; ``kifu serve`` reads it
    from the environment it inherits)."""
    kifu = [sys.executable, "-m", "entrypoints.cli"]
    workers = _count(WORKERS_ENV, 2)
    _count(API_WORKERS_ENV, 2)  # read by `kifu serve` itself; checked here so that a bad value stops us at once
    _count(IO_THREADS_ENV, 1)  # likewise, for the embedded Redis started later
    return {
        "api": [*kifu, "serve", "--port", str(port)],
        **{"worker" if i == 1 else f"worker-{i}": [*kifu, "worker"] for i in range(1, workers + 1)},
        "analyst": [*kifu, "worker", "--queue", "kifu-analysis"],  # analyses: seconds each, never ahead of a bot
        "projector": [*kifu, "projector"],
        "sweeper": [*kifu, "sweeper"],
    }


def default_api_workers(cores: int | None = None) -> int:
    """The API workers of a machine of ``cores`` cores (this one's by default) when ``KIFU_API_WORKERS`` is
    unset: one a core beyond ``OTHER_CORES``, at least 2 and at most ``MAX_API_WORKERS``. Two on the
    2-core development machine (one per core measured best there: README, Benchmarks), twelve on 16
    cores (the most of 1, 4, 8, 12 and 14 there, where one Redis saturates); between and beyond, not
    measured."""
    cores = cores if cores is not None else os.cpu_count() or 2
    return max(2, min(cores - OTHER_CORES, MAX_API_WORKERS))


def _count(name: str, default: int) -> int:
    """A count (of processes, of threads) from the environment: a whole number in ASCII digits, at least 1."""
    value = os.environ.get(name) or str(default)
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise click.ClickException(f"{name} must be a whole number, at least 1 (it is {value!r})")
    return int(value)


def _embedded_redis(run_dir: Path) -> EmbeddedRedis:
    """The embedded Redis, with ``KIFU_REDIS_IO_THREADS`` I/O threads (1 unless set: none beside the main
    thread). More let Valkey read, parse and answer its clients on other cores, so that its one main
    thread only runs the commands and writes the AOF; replies still leave only after the AOF's fsync
    (Valkey holds them back under ``appendfsync always``). Worth it on a machine with many cores
    (docs/deployment.md, "How many API workers one Redis serves"); on two it takes CPU from the API."""
    from adapters.embedded_redis import EmbeddedRedis

    (run_dir / "redis").mkdir(exist_ok=True)
    threads = _count(IO_THREADS_ENV, 1)
    extra = ["--io-threads", str(threads)] if threads > 1 else []
    return EmbeddedRedis(run_dir / "redis", port=int(os.environ.get("KIFU_REDIS_PORT", "0")) or None, extra=extra)


def _claim(run_dir: Path) -> None:
    """Hold a lock on the data directory for as long as this process lives (the kernel drops it when
    we die, however we die): two stacks on one AOF would corrupt it."""
    fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)  # left open on purpose
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise click.ClickException(f"another 'kifu run' is running with its data in {run_dir}") from None


def _end_leftovers(run_dir: Path, timeout_s: float = 10.0) -> None:
    """SIGKILL what a dead ``kifu run`` on this directory left running, and wait until it is gone.

    Its children die with it (``die_with``), but some take a moment (gunicorn's
    workers notice their master's death within a second), and a stack from
    before that change never dies: either would hold the port or write the AOF.
    """
    pids = _leftovers(run_dir)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        try:
            exited = os.pidfd_open(pid)  # readable once the process has exited
        except ProcessLookupError:
            continue
        try:
            select.select([exited], [], [], timeout_s)
        finally:
            os.close(exited)
    if pids:
        click.echo(f"ended {len(pids)} process(es) left over by an earlier 'kifu run' in {run_dir}")


def _leftovers(run_dir: Path) -> list[int]:
    """Processes started by a ``kifu run`` on ``run_dir``: each carries ``KIFU_RUN_DIR`` in its environment."""
    marker = f"{RUN_DIR_ENV}={run_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):  # gone meanwhile, or not ours to read
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def _supervise(supervisor: Supervisor) -> bool:
    """Restart children that exit until SIGTERM/Ctrl-C; False when one kept failing.

    SIGCHLD wakes the loop, so a dead Redis is restarted at once rather than at the next poll.
    """
    stopping, wake = SignalSafeEvent(), SignalSafeEvent()  # set by signal handlers: see SignalSafeEvent

    def stop() -> None:
        stopping.set()
        wake.set()

    on_stop_signals(stop)  # SIGINT too: a shell may start us with it ignored
    signal.signal(signal.SIGCHLD, lambda *_: wake.set())
    while not stopping.is_set():
        wake.clear()
        if not supervisor.poll():
            return False
        due = supervisor.next_restart_in()
        wake.wait(POLL_S if due is None else min(due, POLL_S))
    return True
