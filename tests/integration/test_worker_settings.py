"""The RQ worker ``kifu worker`` runs: a ``SimpleWorker`` (no fork per job) that retries Redis at least
once a second; how many of them ``kifu run`` starts; how many API workers ``kifu serve`` starts; and
the embedded Redis's I/O threads.

RQ doubles its wait between two reconnection attempts, up to a minute by
default: after a four-minute outage the worker slept a minute after Redis came
back. Checked on the worker object itself: an e2e test would need an outage of
several seconds to see the doubling (tests/e2e/test_recovery.py times the
worker's recovery after shorter ones).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import click
import pytest
import redis
import requests
from rq import SimpleWorker, Worker

from adapters.embedded_redis import EmbeddedRedis, free_port
from bench.action_cost import children
from entrypoints.stack import (
    API_WORKERS_ENV,
    IO_THREADS_ENV,
    WORKERS_ENV,
    _embedded_redis,
    _services,
    default_api_workers,
)
from entrypoints.worker import RECONNECT_WAIT_S, _new_worker
from tests.support.kifu_run import wait_until

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_worker_waits_at_most_a_second_between_reconnection_attempts(redis_client: redis.Redis) -> None:
    worker = _new_worker(redis_client, threading.Event())
    assert worker.max_connection_wait_time == RECONNECT_WAIT_S <= 1.0


def test_the_worker_runs_each_job_in_its_own_process_without_forking(redis_client: redis.Redis) -> None:
    """RQ's default ``Worker`` forks a work horse per job: 15.5 ms a job against 7.7 ms for a
    ``SimpleWorker`` (``python -m bench.bot_throughput --fork``)."""
    worker = _new_worker(redis_client, threading.Event())
    assert isinstance(worker, SimpleWorker) and not isinstance(worker, Worker)


def test_kifu_run_starts_two_workers_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert [name for name in _services(8000) if name.startswith("worker")] == ["worker", "worker-2"]
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert [name for name in _services(8000) if name.startswith("worker")] == ["worker"]
    monkeypatch.setenv(WORKERS_ENV, "3")
    services = _services(8000)
    assert [name for name in services if name.startswith("worker")] == ["worker", "worker-2", "worker-3"]
    assert services["worker-3"] == services["worker"] and services["worker"][-1] == "worker"
    assert {"api", "projector", "sweeper"} <= set(services)


@pytest.mark.parametrize("name", [WORKERS_ENV, API_WORKERS_ENV, IO_THREADS_ENV])
@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "²", "٣"])
def test_kifu_run_refuses_a_count_that_is_not_a_whole_number_of_at_least_one(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(click.ClickException, match=name):
        _services(8000)


@pytest.mark.slow  # starts gunicorn with three workers
def test_kifu_serve_starts_as_many_api_workers_as_its_variable_says(
    redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    """``KIFU_API_WORKERS`` (which ``kifu run`` passes on to ``kifu serve``) sets gunicorn's worker count:
    three here (the default is two on up to six cores)."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_server.url, API_WORKERS_ENV: "3"}
    with (tmp_path / "serve.log").open("w") as log:
        command = [sys.executable, "-m", "entrypoints.cli", "serve", "--port", str(port)]
        proc = subprocess.Popen(command, cwd=CHECKOUT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:  # `kifu serve` execs gunicorn: the process started is its master, the workers its (only) descendants
        wait_until(lambda: requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok, "kifu serve to answer")
        wait_until(lambda: len(children(proc.pid)) >= 3, "three workers")
        assert len(children(proc.pid)) == 3
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize(("setting", "threads"), [(None, 1), ("1", 1), ("3", 3)])
def test_the_embedded_redis_runs_the_io_threads_its_variable_asks_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, setting: str | None, threads: int
) -> None:
    """``KIFU_REDIS_IO_THREADS`` reaches the server ``kifu run`` starts (none beside its main thread unless
    set), which keeps its AOF at ``appendfsync always``."""
    if setting is None:
        monkeypatch.delenv(IO_THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(IO_THREADS_ENV, setting)
    server = _embedded_redis(tmp_path).start()
    try:
        client = redis.Redis(port=server.port)
        assert client.config_get("io-threads") == {"io-threads": str(threads)}
        assert client.config_get("appendfsync") == {"appendfsync": "always"}
        client.close()
    finally:
        server.stop()


@pytest.mark.parametrize(("cores", "workers"), [(1, 2), (2, 2), (4, 2), (6, 2), (8, 4), (12, 8), (16, 12), (64, 12)])
def test_the_api_workers_unless_told_are_the_cores_less_four_from_two_to_twelve(cores: int, workers: int) -> None:
    """Two on the 2-core development machine, twelve on 16 cores: the most that measured best on each
    (one Redis saturates at twelve: docs/deployment.md)."""
    assert default_api_workers(cores) == workers


def test_the_api_workers_unless_told_follow_this_machines_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert default_api_workers() == 12
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: the smallest
    assert default_api_workers() == 2
