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
from pathlib import Path

import pytest
import requests

from tests.e2e.test_http import sse_events
from tests.support.kifu_run import TIMEOUT, child_running, game_against_bot, wait_until


def empty_cell(base: str, game_id: str) -> int:
    return requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()["state"]["board"].index(None)


def test_kifu_run_serves_plays_bots_projects_and_stops_cleanly(
    kifu_run: tuple[str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    base, proc = kifu_run
    assert {"san-ban", "nin-nal", "kiri-ai"} <= {g["id"] for g in requests.get(f"{base}/v1/catalog").json()["games"]}
    too_long = requests.get(f"{base}/v1/games/{'x' * 5000}", timeout=TIMEOUT)  # refused by gunicorn itself
    assert too_long.status_code == 414 and too_long.headers["Content-Type"] == "application/problem+json"
    assert too_long.json()["status"] == 414 and too_long.json()["type"] == "/problems/uri-too-long"  # no HTML
    game_id, ann = game_against_bot(base)
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
    # one scrape of the API sees every process's metrics: the worker's bot turn, the API's appends
    metrics = requests.get(f"{base}/metrics", timeout=TIMEOUT).text
    assert metric(metrics, "kifu_bot_turn_lag_seconds_count") >= 1  # counted in the worker process
    assert metric(metrics, 'kifu_append_seconds_count{wait="0"}') >= 2  # the creation and ann's move, at least
    assert (
        metric(metrics, 'kifu_http_requests_total{method="POST",route="/v1/games/<game_id>/actions",status="201"}') == 1
    )

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
    # the log is on disk: the AOF's increments (Redis 7 and Valkey write a directory of AOF files)
    assert sum(f.stat().st_size for f in (tmp_path / ".run" / "redis" / "appendonlydir").glob("*.incr.aof")) > 0
    assert not (tmp_path / ".run" / "redis.url").exists()  # the address of a stopped Redis is not left behind


def metric(exposition: str, name: str) -> float:
    """A sample's value in Prometheus text (summed over the lines that carry it; 0 when none does)."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in exposition.splitlines() if line.startswith(name + " "))
