"""The RQ worker ``kifu worker`` runs: a ``SimpleWorker`` (no fork per job) that retries Redis at least
once a second; and how many of them ``kifu run`` starts.

RQ doubles its wait between two reconnection attempts, up to a minute by
default: after a four-minute outage the worker slept a minute after Redis came
back. Checked on the worker object itself: an e2e test would need an outage of
several seconds to see the doubling (tests/e2e/test_recovery.py times the
worker's recovery after shorter ones).
"""

from __future__ import annotations

import threading

import pytest
import redis
from rq import SimpleWorker, Worker

from entrypoints.stack import WORKERS_ENV, _services
from entrypoints.worker import RECONNECT_WAIT_S, _new_worker


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
