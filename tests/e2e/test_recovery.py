"""`kifu run` survives what kill -9 does to it, each process in turn.

* the embedded server (Valkey) killed: the supervisor reaps it and starts it again on the same
  port with the same AOF; the API, the worker, the projector and the sweeper
  reconnect by themselves (none of them exits), and nothing acknowledged is lost.
* `kifu run` itself killed: every process of its stack dies with it, the port is
  free, and a new `kifu run` on the same port and data directory starts and finds
  the data; what an old stack left running is ended by the next one, and a second
  `kifu run` on a directory in use is refused.
* Redis gone for a while: the RQ worker rides it out in its own process (same
  pid), even when it starts while Redis is down, and plays bot turns again soon
  after Redis is back, its forked scheduler included.

The recovery targets (Redis killed -> ready within 5 s; the worker playing again
within 3 s of Redis answering) are asserted with the time measured.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from rq import Queue, Worker
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler

from adapters.embedded_redis import EmbeddedRedis, free_port
from adapters.rq_scheduler import QUEUE_NAME
from bootstrap import Kifu, build
from tests.support.kifu_run import (
    TIMEOUT,
    child_running,
    game_against_bot,
    ready,
    start_kifu_run,
    stop_kifu_run,
    wait_until,
)

BOTS = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]


def proc_stat(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: [state, ppid, pgrp, ...] ([] once the process is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return []


SERVERS = ("valkey-server", "redis-server")  # the embedded server's process name (Valkey, or a Redis on PATH)


def children(parent: int) -> dict[int, str]:
    """The live children of ``parent``, pid -> command name (``/proc/<pid>/comm``)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := proc_stat(int(entry.name)))[1:2] == [str(parent)] and stat[0] != "Z":
            try:
                found[int(entry.name)] = (entry / "comm").read_text().strip()
            except FileNotFoundError:
                continue
    return found


def descendants(root: int) -> set[int]:
    """Every process under ``root`` (children first found by their parent pid)."""
    found: set[int] = set()
    todo = [root]
    while todo:
        kids = set(children(todo.pop())) - found
        found |= kids
        todo.extend(kids)
    return found


def redis_child(parent: int) -> int:
    (pid,) = [pid for pid, name in children(parent).items() if name in SERVERS]
    return pid


def wait_all_exit(pids: set[int], timeout_s: float) -> set[int]:
    """Block on each process's pidfd until it has exited; the pids still running at the deadline."""
    fds = {}
    for pid in pids:
        try:
            fds[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + timeout_s
    try:
        for fd in fds.values():
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        return {pid for pid, fd in fds.items() if not select.select([fd], [], [], 0)[0]}
    finally:
        for fd in fds.values():
            os.close(fd)


def play_against_bot(base: str) -> tuple[str, dict[str, str]]:
    """A San Ban game ann vs a greedy bot; ann places a card and the worker answers for the bot."""
    game_id, ann = game_against_bot(base)
    place(base, game_id, ann, "sb-001")
    return game_id, ann


def place(base: str, game_id: str, ann: dict[str, str], card: str) -> None:
    """Ann places ``card``; returns once the bot has answered (the worker is up)."""
    game = requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()
    cell = game["state"]["board"].index(None)
    action = {"action": {"type": "place", "cell": cell, "card": card}}
    placed = requests.post(f"{base}/v1/games/{game_id}/actions", headers=ann, timeout=TIMEOUT, json=action)
    assert placed.status_code == 201, placed.text
    wait_until(lambda: version(base, game_id) > placed.json()["version"], "the bot to answer")


def version(base: str, game_id: str) -> int:
    return int(requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()["version"])


def test_a_killed_redis_is_restarted_with_its_data_and_everything_reconnects(
    kifu_run: tuple[str, subprocess.Popen[str]],
) -> None:
    base, proc = kifu_run
    game_id, ann = play_against_bot(base)
    before = version(base, game_id)
    services = {pid: name for pid, name in children(proc.pid).items() if name not in SERVERS}
    old = redis_child(proc.pid)

    killed = time.monotonic()
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: ready(base), "readyz after the kill", timeout_s=10)
    back = time.monotonic() - killed
    assert back < 5.0, f"ready again {back:.2f} s after the kill"
    assert proc_stat(old) == []  # reaped by the supervisor, not left a zombie
    assert redis_child(proc.pid) != old

    assert version(base, game_id) == before  # nothing acknowledged was lost (AOF, appendfsync always)
    place(base, game_id, ann, "sb-002")  # the worker reconnected and plays the bot again
    moving = time.monotonic() - killed
    assert moving < 5.0, f"the bot answered {moving:.2f} s after the kill"
    later = requests.post(f"{base}/v1/games", timeout=TIMEOUT, json={"game": "san-ban", "players": BOTS}).json()["id"]
    wait_until(
        lambda: later in {g["id"] for g in requests.get(f"{base}/v1/games", timeout=TIMEOUT).json()["items"]},
        "the projector to list a game created after the restart",
    )
    assert {pid: name for pid, name in children(proc.pid).items() if name not in SERVERS} == services  # none exited


def test_killing_kifu_run_takes_its_whole_stack_with_it_and_a_new_one_starts_in_its_place(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    first = start_kifu_run(tmp_path, port, KIFU_API_WORKERS="2")  # the process count below, on any machine
    second: subprocess.Popen[str] | None = None
    try:
        wait_until(lambda: ready(base), "readyz")
        game_id, _ann = play_against_bot(base)
        commands = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") for pid in children(first.pid)}
        workers = [pid for pid, argv in commands.items() if b"worker" in argv and b"kifu-analysis" not in argv]
        assert len(workers) == 2  # KIFU_WORKERS' default
        assert len([pid for pid, argv in commands.items() if b"kifu-analysis" in argv]) == 1  # the analyst
        wait_until(lambda: any(child_running(w, "worker") for w in workers), "a worker to fork its RQ scheduler")
        stack = descendants(first.pid)
        # redis, gunicorn and its 2 workers, 2 RQ workers and the scheduler one of them forked, the analyst (no
        # scheduler of its own), projector, sweeper
        assert len(stack) == 10

        first.kill()
        first.wait()
        assert wait_all_exit(stack, timeout_s=10) == set()
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{base}/healthz", timeout=2)

        second = start_kifu_run(tmp_path, port)  # same port, same data directory
        wait_until(lambda: ready(base), "readyz of the new kifu run")
        assert requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).status_code == 200  # the data is there
    finally:
        stop_kifu_run(second or first, tmp_path)


def test_a_new_kifu_run_ends_what_an_old_one_left_and_refuses_to_share_a_live_directory(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    run_dir = tmp_path / ".run"
    run_dir.mkdir()
    squatter = subprocess.Popen(  # a process of an old stack that did not die: it holds the API's port
        [
            sys.executable,
            "-c",
            "import signal, socket\n"
            f"s = socket.create_server(('127.0.0.1', {port}))\n"
            "print('listening', flush=True)\n"
            "signal.pause()",
        ],
        env={**os.environ, "KIFU_RUN_DIR": str(run_dir.resolve())},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert squatter.stdout is not None and squatter.stdout.readline() == "listening\n"
    first = start_kifu_run(tmp_path, port)
    try:
        wait_until(lambda: ready(base), "readyz in place of the leftover")
        assert squatter.wait(timeout=10) == -signal.SIGKILL
        assert "left over by an earlier 'kifu run'" in (tmp_path / "kifu-run.log").read_text()

        again = subprocess.run(
            [sys.executable, "-m", "entrypoints.cli", "run", "--port", str(free_port())],
            cwd=tmp_path,
            env={k: v for k, v in os.environ.items() if k != "REDIS_URL"},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert again.returncode != 0 and "another 'kifu run' is running" in again.stderr
        assert ready(base) and first.poll() is None  # the running one is untouched
    finally:
        if squatter.poll() is None:
            squatter.kill()
            squatter.wait()
        stop_kifu_run(first, tmp_path)


class KifuWorker:
    """``kifu worker`` alone on a Redis the test stops and starts (same port, same AOF directory)."""

    def __init__(self, directory: Path) -> None:
        self.redis = EmbeddedRedis(directory / "redis")
        self.log = directory / "worker.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "entrypoints.cli", "worker"],
                env={**os.environ, "REDIS_URL": self.redis.url},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start_redis(self) -> Kifu:
        """Start Redis (again: same port, same AOF); once it answers, the wiring of a client on it."""
        self.redis = EmbeddedRedis(self.redis.directory, port=self.redis.port).start()
        return build(redis.Redis(port=self.redis.port))

    def kill_redis(self) -> None:
        assert self.redis.process is not None
        self.redis.process.kill()
        self.redis.process.wait()

    def scheduler(self, kifu: Kifu, other_than: int | None = None) -> int | None:
        """The scheduler process at work: the one holding RQ's scheduler lock, a child of the worker process."""
        name = kifu.client.get(RQScheduler.get_locking_key(QUEUE_NAME))
        pid = kifu.client.hget(SCHEDULER_KEY_TEMPLATE % name.decode(), "pid") if name else None
        found = int(pid) if pid else None
        return found if found != other_than and found in children(self.proc.pid) else None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        self.redis.stop()
        print(self.log.read_text()[-4000:])


def bot_game_moves_within(kifu: Kifu, seconds: float) -> Any:
    """Create a bot-vs-bot game; the worker's first move must come within ``seconds`` (a blocking read)."""
    game_id = kifu.games.create_game("san-ban", BOTS, None, None).body["id"]
    moved = kifu.store.wait_for(game_id, after=kifu.store.head(game_id).version, block_ms=int(seconds * 1000))
    assert moved, f"no bot move within {seconds} s"
    return game_id


def test_the_worker_rides_out_redis_outages_in_its_own_process(tmp_path: Path) -> None:
    worker = KifuWorker(tmp_path)
    try:
        # started while Redis is down: it waits instead of exiting
        wait_until(lambda: worker.proc.poll() is not None or "waiting for it" in worker.log.read_text(), "a retry")
        assert worker.proc.poll() is None
        kifu = worker.start_redis()
        first = bot_game_moves_within(kifu, 3.0)

        # Redis killed while the worker waits for jobs, long enough for RQ's forked scheduler to give up (it
        # exits on a connection error): the worker rides it out in RQ's loop and forks the scheduler again
        wait_until(lambda: kifu.games.view(first, None)["status"] == "finished", "the bots to finish")
        wait_until(lambda: [w.get_state() for w in Worker.all(connection=kifu.client)] == ["idle"], "an idle worker")
        scheduler = wait_until(lambda: worker.scheduler(kifu), "the worker to fork its scheduler")
        worker.kill_redis()
        assert wait_all_exit({scheduler}, timeout_s=15) == set()
        kifu = worker.start_redis()
        bot_game_moves_within(kifu, 3.0)
        assert worker.proc.poll() is None and kifu.store.head(first).version > 3  # same process; data kept
        scheduler = wait_until(lambda: worker.scheduler(kifu, other_than=scheduler), "the worker to fork it again")

        # Redis killed during a job: RQ's work() ends (its teardown fails too); a fresh RQ worker takes over
        # once Redis is back, with a scheduler of its own (the lock of the old one was released for it)
        job = Queue(QUEUE_NAME, connection=kifu.client).enqueue("time.sleep", 1)
        wait_until(lambda: job.get_status(refresh=True) == "started", "the job to start")
        worker.kill_redis()
        wait_until(lambda: worker.proc.poll() is not None or "Redis did not answer" in worker.log.read_text(), "an end")
        assert worker.proc.poll() is None
        kifu = worker.start_redis()
        bot_game_moves_within(kifu, 3.0)
        scheduler = wait_until(lambda: worker.scheduler(kifu, other_than=scheduler), "a fresh worker's scheduler")

        # killed outright, it takes its scheduler with it (Redis, still up, would keep that one alive)
        worker.proc.kill()
        worker.proc.wait()
        assert wait_all_exit({scheduler}, timeout_s=5) == set()
    finally:
        worker.close()
