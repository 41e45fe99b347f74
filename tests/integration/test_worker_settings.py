"""The RQ worker ``kifu worker`` runs retries Redis at least once a second.

RQ doubles its wait between two reconnection attempts, up to a minute by
default: after a four-minute outage the worker slept a minute after Redis came
back. Checked on the worker object itself: an e2e test would need an outage of
several seconds to see the doubling (tests/e2e/test_recovery.py times the
worker's recovery after shorter ones).
"""

from __future__ import annotations

import threading

import redis

from entrypoints.worker import RECONNECT_WAIT_S, _new_worker


def test_the_worker_waits_at_most_a_second_between_reconnection_attempts(redis_client: redis.Redis) -> None:
    worker = _new_worker(redis_client, threading.Event())
    assert worker.max_connection_wait_time == RECONNECT_WAIT_S <= 1.0
