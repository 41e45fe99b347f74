"""`kifu run` as a new user starts it: embedded Redis, gunicorn API, worker, projector.

One test drives the whole stack as ``make run`` leaves it: a San Ban game against
a greedy bot (the worker answers the human's move), watched over SSE (through
gunicorn's gevent workers), the worker killed and restarted by the supervisor,
the game listed by the projector, then Ctrl-C (SIGINT) stops every process and the
embedded Redis.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from adapters.embedded_redis import free_port
from tests.e2e.test_http import sse_events

TIMEOUT = 20
DECKS = [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"], ["sb-006", "sb-007", "sb-008", "sb-009", "sb-010"]]


def wait_until(condition: Callable[[], Any], what: str, timeout_s: float = 30.0) -> Any:
    """Poll ``condition`` until it returns something truthy (waiting for a state, not a time).

    Used only for what other processes do on their own schedule and announce
    nowhere we can block on: gunicorn starting to listen, the supervisor's
    restart, the projector's eventually consistent list. The short pause
    between polls decides nothing; the deadline only turns a hang into a failure.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            found = condition()
        except requests.ConnectionError:
            found = None
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def child_running(parent: int, word: str) -> int | None:
    """The pid of a child of ``parent`` whose command line contains ``word`` (from /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and word.encode() in argv:
            return int(entry.name)
    return None


def empty_cell(base: str, game_id: str) -> int:
    return requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()["state"]["board"].index(None)


def start_kifu_run(directory: Path, port: int, **env: str) -> subprocess.Popen[str]:
    """``kifu run`` in ``directory`` (its data in .run, as under make run), logging to kifu-run.log there."""
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"PORT": str(port)} | env
    with (directory / "kifu-run.log").open("a") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "entrypoints.cli", "run"],
            cwd=directory,
            env=environ,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def ready(base: str) -> bool:
    return requests.get(f"{base}/readyz", timeout=2).status_code == 200


def stop_kifu_run(proc: subprocess.Popen[str], directory: Path) -> None:
    """Stop it the normal way if a failed test left it running; show its log (pytest prints it on failure)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    print((directory / "kifu-run.log").read_text()[-4000:])


@pytest.fixture
def kifu_run(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    proc = start_kifu_run(tmp_path, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: ready(base), "readyz")
        yield base, proc
    finally:
        stop_kifu_run(proc, tmp_path)


def test_kifu_run_serves_plays_bots_projects_and_stops_cleanly(
    kifu_run: tuple[str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    base, proc = kifu_run
    assert {"san-ban", "nin-nal", "kiri-ai"} <= {g["id"] for g in requests.get(f"{base}/v1/catalog").json()["games"]}
    too_long = requests.get(f"{base}/v1/games/{'x' * 5000}", timeout=TIMEOUT)  # refused by gunicorn itself
    assert too_long.status_code == 414 and too_long.headers["Content-Type"] == "application/problem+json"
    assert too_long.json()["status"] == 414 and too_long.json()["type"] == "/problems/uri-too-long"  # no HTML
    created = requests.post(
        f"{base}/v1/games",
        timeout=TIMEOUT,
        json={
            "game": "san-ban",
            "players": [{"name": "ann"}, {"name": "hal", "bot": "greedy"}],
            "options": {"mode": "standard"},
            "deal": {"first": 0, "decks": DECKS},
        },
    )
    assert created.status_code == 201, created.text
    game_id, ann = created.json()["id"], {"Authorization": f"Bearer {created.json()['seats'][0]['token']}"}
    with requests.get(f"{base}/v1/games/{game_id}/events/stream", headers=ann, stream=True, timeout=TIMEOUT) as stream:
        frames = sse_events(stream)
        placed = requests.post(
            f"{base}/v1/games/{game_id}/actions",
            headers=ann,
            timeout=TIMEOUT,
            json={"action": {"type": "place", "cell": 4, "card": "sb-001"}},
        )
        assert placed.status_code == 201, placed.text
        bot_moves = (f for f in frames if f["event"] == "action_taken" and f["data"]["data"]["seat"] == 1)
        assert next(bot_moves)["data"]["data"]["action"]["type"] == "place"  # the worker played the bot

    # the supervisor restarts a worker that dies; the bot then answers the next move
    worker = child_running(proc.pid, "worker")
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: child_running(proc.pid, "worker") not in (None, worker), "the worker to be restarted")
    version = requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()["version"]
    with requests.get(
        f"{base}/v1/games/{game_id}/events/stream", headers=ann, stream=True, timeout=TIMEOUT, params={"after": version}
    ) as stream:
        frames = sse_events(stream)
        placed = requests.post(
            f"{base}/v1/games/{game_id}/actions",
            headers=ann,
            timeout=TIMEOUT,
            json={"action": {"type": "place", "cell": empty_cell(base, game_id), "card": "sb-002"}},
        )
        assert placed.status_code == 201, placed.text
        seats = (f["data"]["data"]["seat"] for f in frames if f["event"] == "action_taken")
        assert next(seats) == 0 and next(seats) == 1  # the restarted worker played the bot

    listed = wait_until(
        lambda: requests.get(f"{base}/v1/games", params={"game": "san-ban"}).json()["items"],
        "the projector to list the game",
    )
    assert [g["id"] for g in listed] == [game_id]

    # next to the running service, the CLI finds its embedded Redis, and a rebuild pauses the projector
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    rebuilt = subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "rebuild-projections"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert rebuilt.returncode == 0 and "rebuilt from" in rebuilt.stdout, rebuilt.stderr
    later = requests.post(
        f"{base}/v1/games", timeout=TIMEOUT, json={"game": "san-ban", "players": [{"name": "ann"}, {"name": "bob"}]}
    ).json()["id"]
    wait_until(
        lambda: later in {g["id"] for g in requests.get(f"{base}/v1/games").json()["items"]},
        "the projector to go on after the rebuild",
    )

    proc.send_signal(signal.SIGINT)  # Ctrl-C (SIGTERM takes the same path)
    assert proc.wait(timeout=30) == 0
    assert "Kifu stopped." in (tmp_path / "kifu-run.log").read_text()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{base}/healthz", timeout=2)
    assert (tmp_path / ".run" / "redis" / "appendonly.aof").stat().st_size > 0  # the log is on disk (AOF)
    assert not (tmp_path / ".run" / "redis.url").exists()  # the address of a stopped Redis is not left behind
