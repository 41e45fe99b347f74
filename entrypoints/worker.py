"""``kifu worker``: the RQ worker that rides out a Redis outage in its own process.

A worker that exited whenever Redis failed would be restarted by ``kifu run``
while Redis was still down and exit again at once; the supervisor's back-off,
not Redis's return, would then decide when bots move again. So this process
loops: wait until Redis answers, run one RQ worker (a fresh one each time: RQ
registers each worker's name), and when Redis fails under it, forget that
worker (its death, its scheduler's lock) and start over. RQ's own reconnection
wait is capped at ``RECONNECT_WAIT_S`` (it doubles up to 60 s by default).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING

import redis

from entrypoints.supervisor import SignalSafeEvent, die_with, on_stop_signals

if TYPE_CHECKING:
    from redis.client import PubSubWorkerThread
    from rq import SimpleWorker

RECONNECT_WAIT_S = 1.0  # the RQ worker's longest wait between two reconnection attempts
SCHEDULER_CHECK_S = 1  # RQ maintenance (at most this often, between jobs): also restarts a dead scheduler
log = logging.getLogger(__name__)


def run_worker(client: redis.Redis, burst: bool = False, queues: Sequence[str] = ("kifu",)) -> None:
    """Work ``queues`` until a stop signal (or, with ``burst``, until they are empty)."""
    stopping = SignalSafeEvent()  # set by signal handlers, RQ's included
    if burst:
        worker = _new_worker(client, stopping, queues)
        worker.work(burst=True, with_scheduler=_schedules(queues), logging_level="WARNING")
        return
    os.register_at_fork(after_in_child=die_with(os.getpid()))  # RQ's forked scheduler dies with this process
    on_stop_signals(stopping.set)
    retired = None
    while not stopping.is_set():
        _await_redis(client, stopping)
        if retired is not None:
            _forget(retired)
        retired = _work_once(client, stopping, queues)


def _work_once(client: redis.Redis, stopping: threading.Event, queues: Sequence[str]) -> SimpleWorker | None:
    """One RQ worker's life, until a stop or a Redis failure RQ does not ride out itself; that worker."""
    rq_worker = None
    try:
        rq_worker = _new_worker(client, stopping, queues)
        rq_worker.work(with_scheduler=_schedules(queues), logging_level="WARNING")
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        log.warning("worker: Redis did not answer (%s); waiting for it", exc)
    else:
        if not stopping.is_set():  # RQ logged why; a fresh worker, but not in a tight loop
            stopping.wait(RECONNECT_WAIT_S)
    finally:
        on_stop_signals(stopping.set)  # RQ's own handlers talk to Redis, and belong to the old worker
    if rq_worker is not None:
        thread: PubSubWorkerThread | None = rq_worker.pubsub_thread  # typed None by RQ, set by its subscribe()
        if thread is not None:  # RQ stops it after registering the death, which fails while Redis is down
            thread.stop()
    return rq_worker


def _schedules(queues: Sequence[str]) -> bool:
    """Whether a worker of ``queues`` runs RQ's scheduler: only for ``kifu``, whose move timeouts are
    scheduled jobs (the analyses' queue has none, so its worker forks no scheduler process)."""
    return "kifu" in queues


def _new_worker(client: redis.Redis, stopping: threading.Event, queues: Sequence[str] = ("kifu",)) -> SimpleWorker:
    """A fresh RQ worker: RQ registers each worker's name in Redis, so a name serves one ``work()`` only.

    Its reconnection wait is capped at ``RECONNECT_WAIT_S`` (RQ doubles it up to
    60 s), and a stop signal also sets ``stopping``.
    """
    from rq import Queue, SimpleWorker

    class RidingWorker(SimpleWorker):
        max_connection_wait_time = RECONNECT_WAIT_S

        def request_stop(self, signum: int, frame: FrameType | None) -> None:
            stopping.set()
            super().request_stop(signum, frame)  # type: ignore[no-untyped-call]

    watched = [Queue(name, connection=client) for name in queues]
    return RidingWorker(watched, connection=client, maintenance_interval=SCHEDULER_CHECK_S)


def _forget(rq_worker: SimpleWorker) -> None:
    """Once Redis answers again: the death of a worker whose ``work()`` ended early, and its scheduler's
    lock, so that the next worker's scheduler need not wait a minute for it to expire."""
    with contextlib.suppress(redis.RedisError):
        rq_worker.register_death()  # type: ignore[no-untyped-call]
    if rq_worker.scheduler is not None:
        with contextlib.suppress(redis.RedisError):
            rq_worker.scheduler.release_locks()  # type: ignore[no-untyped-call]


def _await_redis(client: redis.Redis, stopping: threading.Event) -> None:
    """Return once Redis answers a PING, or on a stop (a client from a URL fails at once: no retries of its own)."""
    told = False
    while not stopping.is_set():
        try:
            client.ping()
            return
        except redis.RedisError as exc:
            if not told:
                log.warning("worker: Redis does not answer (%s); waiting for it", exc)
                told = True
        stopping.wait(RECONNECT_WAIT_S / 4)
