"""A real ``kifu run`` for the e2e tests: start it in a directory, wait for it, stop it, find its children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

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


@contextmanager
def kifu_serve_one_worker(
    redis_url: str, log_path: Path, **settings: str
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``kifu serve`` with one gevent worker on a free port, ``settings`` in its environment, logging to
    ``log_path``: the process and its port once it answers; stopped on exit."""
    from adapters.embedded_redis import free_port

    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, **settings}
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "entrypoints.cli", "serve", "--port", str(port), "--workers", "1"],
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok, "kifu serve to answer")
        yield proc, port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


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


def game_against_bot(base: str) -> tuple[str, dict[str, str]]:
    """A San Ban game, ann (seat 0, first) against a greedy bot, on a fixed deal: its id and ann's headers."""
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
    return game_id, ann
