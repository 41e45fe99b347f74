"""Bot throughput: bot-only games played by the real worker (``kifu worker``), in 1..W processes.

    python -m bench.bot_throughput --games 1,10,100,500 --workers 1,2

For each number of games N and of worker processes W: a fresh embedded Redis
(AOF, ``appendfsync always``, as under ``kifu run``; or ``REDIS_URL``, flushed),
W ``kifu worker`` processes (the same command ``kifu run`` starts), each warmed
up on a few games first; then N games created through ``GameService``
(``bootstrap.build``, not HTTP), alternately San Ban and Kiri-ai, greedy
against random, every seat a bot, and their first turns enqueued together, so
that N games are in flight at once. It waits until every game is over (the
outbox is empty: a finished game has nothing due), stops the workers, then
reads every log and prints:

* moves/s overall: every bot move of every game, over the time from the first
  turns' enqueueing to the last move;
* per game: moves/s from then to its last move (median over games);
* a bot turn's wait: from the event that made the seat to act (the last event
  before the move that was not a secret commitment; for a first move, the
  enqueueing) to the move's own event, from the envelopes' ``at`` (ms),
  p50/p99/max;
* RQ jobs run per move, and CPU per move (the workers; Redis when embedded).

Figures only, nothing asserted. ``--batch 1,16/20`` runs candidates in turn (moves a job may play in
its game, optionally ``/ms``: ``workers.batch``'s budget; ``1`` is one job per move), ``--repeat``
runs each several times and prints medians and ranges, ``--env NAME=VALUE`` passes other settings to
the workers, and ``--fork`` times RQ's forking ``Worker`` against ``SimpleWorker``, a job per move.
The figures, and the design chosen from them, are in docs/performance.md, section "Bot turns in batches".
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import redis
from rq import Worker

from adapters.embedded_redis import EmbeddedRedis
from bootstrap import Kifu, build
from service.ports import NoScheduler

GAMES = ("san-ban", "kiri-ai")
BOTS = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
MOVES = ("action_taken", "choice_committed")  # a seat's own move (its seat in data.seat)
WARM_UP = 3  # games played by each worker before measuring (imports, wiring)
STALL_S = 600.0  # give up on a run that has not finished by then (a stalled game is reported)


@dataclass
class Run:
    games: int
    workers: int
    seconds: float
    moves: int
    jobs: int
    per_game: list[float]
    waits: list[int]
    worker_cpu_s: float
    redis_cpu_s: float | None
    unfinished: int


@contextmanager
def redis_server() -> Iterator[tuple[redis.Redis, str, int | None]]:
    """The server at REDIS_URL, or a fresh embedded one (appendfsync always): client, URL, its pid."""
    if os.environ.get("REDIS_URL"):
        url = os.environ["REDIS_URL"]
        yield redis.Redis.from_url(url), url, None
        return
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp)) as server:
        assert server.process is not None
        yield redis.Redis(port=server.port), server.url, server.process.pid


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its reaped children so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class Recorder(NoScheduler):
    """Keeps the bot turns asked for, so that every game's first turn can be enqueued at one moment."""

    def __init__(self) -> None:
        self.turns: list[tuple[str, int, int]] = []

    def bot_turn(self, game_id: str, seat: int, version: int, urgent: bool = False) -> None:
        self.turns.append((game_id, seat, version))


def jobs_run(client: redis.Redis) -> int:
    return sum(rq.successful_job_count + rq.failed_job_count for rq in Worker.all(connection=client))


def start_workers(url: str, count: int, env: Mapping[str, str]) -> list[subprocess.Popen[bytes]]:
    environ = {**os.environ, "REDIS_URL": url, **env}
    return [
        subprocess.Popen([sys.executable, "-m", "entrypoints.cli", "worker"], env=environ, start_new_session=True)
        for _ in range(count)
    ]


def stop_workers(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        proc.wait(timeout=30)


def wait_for(condition: Any, timeout_s: float, poll_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(poll_s)
    return False


def outstanding(kifu: Kifu) -> int:
    """Games that still need a job (the outbox: a finished game has nothing due)."""
    pipe = kifu.client.pipeline(transaction=False)
    for partition in range(kifu.store.partitions):
        pipe.zcard(kifu.store.due_key(partition))
    return sum(pipe.execute())


def ms(at: str) -> int:
    return int(datetime.fromisoformat(at).timestamp() * 1000)


def analyse(kifu: Kifu, game_ids: Sequence[str], started: int) -> tuple[int, list[float], list[int], int, int]:
    """Moves, per-game moves/s, waits (ms), the last move (ms) and unfinished games, for games whose
    first turns were asked for at ``started`` (ms)."""
    moves, per_game, waits = 0, [], []
    last, unfinished = started, 0
    for game_id in game_ids:
        envs = kifu.store.read(game_id)
        created = max(ms(envs[0]["at"]), started)
        since, game_moves, game_last = created, 0, created
        for env in envs:
            at = ms(env["at"])
            if env["type"] in MOVES:
                waits.append(at - since)
                game_moves += 1
                game_last = at
            if env["type"] != "choice_committed":
                since = at
        unfinished += envs[-1]["type"] != "game_sealed"
        moves += game_moves
        last = max(last, game_last)
        per_game.append(game_moves / max(game_last - created, 1) * 1000)
    return moves, per_game, waits, last, unfinished


def run_once(client: redis.Redis, url: str, redis_pid: int | None, n: int, w: int, env: Mapping[str, str]) -> Run:
    client.flushall()
    kifu = build(client)
    workers = start_workers(url, w, env)
    try:
        wait_for(lambda: len(Worker.all(connection=client)) == w, 60)
        for _ in range(WARM_UP * w):  # each worker imports the jobs and wires itself on its first job
            kifu.games.create_game("san-ban", BOTS, None, None)
        wait_for(lambda: outstanding(kifu) == 0, STALL_S)
        jobs0 = jobs_run(client)
        held = Recorder()
        creating = build(client, scheduler=held).games
        game_ids = [creating.create_game(GAMES[i % len(GAMES)], BOTS, None, None).body["id"] for i in range(n)]
        cpu0 = sum(cpu_seconds(p.pid) for p in workers)
        redis0 = cpu_seconds(redis_pid) if redis_pid else None
        started = int(time.time() * 1000)
        for turn in held.turns:  # every game's first turn asked for at once: N games in flight together
            kifu.games.scheduler.bot_turn(*turn)
        wait_for(lambda: outstanding(kifu) == 0, STALL_S, poll_s=0.1)
        worker_cpu = sum(cpu_seconds(p.pid) for p in workers) - cpu0
        redis_cpu = cpu_seconds(redis_pid) - redis0 if redis_pid and redis0 is not None else None
        jobs = jobs_run(client) - jobs0
    finally:
        stop_workers(workers)
    moves, per_game, waits, last, unfinished = analyse(kifu, game_ids, started)
    return Run(n, w, (last - started) / 1000, moves, jobs, per_game, waits, worker_cpu, redis_cpu, unfinished)


def fork_cost(client: redis.Redis, games: int = 20) -> None:
    """RQ's forking ``Worker`` against ``SimpleWorker`` (``kifu worker``'s base), one move per job, run in
    this process in burst mode over the same kind of games: the cost of a fork per job."""
    from rq import Queue, SimpleWorker

    from adapters.rq_scheduler import QUEUE_NAME
    from workers import batch

    batch.BATCH_MOVES = 1
    for worker_class in (SimpleWorker, SimpleWorker, Worker):  # the first run warms this process up
        client.flushall()
        kifu = build(client)
        game_ids = [kifu.games.create_game(GAMES[i % len(GAMES)], BOTS, None, None).body["id"] for i in range(games)]
        start = time.perf_counter()
        worker_class([Queue(QUEUE_NAME, connection=client)], connection=client).work(
            burst=True, logging_level="WARNING"
        )
        elapsed = time.perf_counter() - start
        moves = sum(env["type"] in MOVES for game_id in game_ids for env in kifu.store.read(game_id))
        print(f"{worker_class.__name__:>12}: {moves} moves, one job each: {elapsed * 1000 / moves:.1f} ms per job")


def quantile(values: Sequence[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))]) if ordered else 0.0


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):6.0f} [{min(values):.0f}-{max(values):.0f}]".ljust(20)


def report(label: str, run: Run) -> str:
    moves = max(run.moves, 1)
    redis_cpu = f"{run.redis_cpu_s * 1000 / moves:.2f}" if run.redis_cpu_s is not None else "-"
    return (
        f"{label:>9} {run.games:>5} {run.workers:>2} | {run.moves / max(run.seconds, 1e-3):7.0f}"
        f" {statistics.median(run.per_game):8.1f}"
        f" | {quantile(run.waits, 0.5):5.0f} {quantile(run.waits, 0.99):6.0f} {max(run.waits, default=0):6.0f}"
        f" | {run.moves:6d} {run.seconds:6.1f} {run.jobs / moves:5.2f}"
        f" | {run.worker_cpu_s * 1000 / moves:7.2f} {redis_cpu:>5}"
        + (f" | {run.unfinished} UNFINISHED" if run.unfinished else "")
    )


HEADER = (
    "    batch games  W | moves/s game m/s | wait ms p50    p99    max |  moves      s jobs/move"
    " | CPU ms/move: workers redis"
)


def candidates(batch: str) -> list[tuple[str, dict[str, str]]]:
    """``--batch 1,8/20``: moves per job (1: no batching), optionally ``/ms``, as the workers' settings."""
    found = []
    for item in filter(None, batch.split(",")):
        moves, _, budget_ms = item.partition("/")
        env = {"KIFU_BOT_BATCH_MOVES": moves} | ({"KIFU_BOT_BATCH_MS": budget_ms} if budget_ms else {})
        found.append((item, env))
    return found or [("default", {})]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="1,10,100,500", help="comma-separated numbers of concurrent games")
    parser.add_argument("--workers", default="1,2", help="comma-separated numbers of worker processes")
    parser.add_argument(
        "--batch", default="", help="candidates, run in turn: moves per job, or moves/ms (e.g. 1,8/20; default: as set)"
    )
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the workers (repeatable)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each combination")
    parser.add_argument("--fork", action="store_true", help="only RQ's forking Worker against SimpleWorker")
    args = parser.parse_args(argv)
    if args.fork:
        with redis_server() as (client, _url, _pid):
            fork_cost(client)
        return
    env = dict(item.split("=", 1) for item in args.env)
    print(f"bot throughput ({os.cpu_count()} cores){': ' + ', '.join(args.env) if args.env else ''}")
    print(HEADER)
    runs: dict[tuple[str, int, int], list[Run]] = {}
    with redis_server() as (client, url, redis_pid):
        for n in (int(x) for x in args.games.split(",")):
            for w in (int(x) for x in args.workers.split(",")):
                for _ in range(args.repeat):
                    for label, settings in candidates(args.batch):
                        run = run_once(client, url, redis_pid, n, w, env | settings)
                        runs.setdefault((label, n, w), []).append(run)
                        print(report(label, run), flush=True)
    if args.repeat > 1:
        print(f"\nmedian [range] of {args.repeat} runs")
        print("    batch games  W | moves/s             | wait p99 ms          | max ms")
        for (label, n, w), done in runs.items():
            print(
                f"{label:>9} {n:>5} {w:>2} | {spread([r.moves / max(r.seconds, 1e-3) for r in done])}"
                f" | {spread([quantile(r.waits, 0.99) for r in done])}"
                f" | {spread([float(max(r.waits, default=0)) for r in done])}"
            )


if __name__ == "__main__":
    main()
