"""Wiring in one place: Redis client -> store -> tables -> service (+ RQ scheduler)."""

from __future__ import annotations

import redis
from rq import Queue

from projections import snapshots
from service.games import GameService, Scheduler
from service.store import DEFAULT_PARTITIONS, EventStore
from service.tables import TableLoader
from workers.scheduling import QUEUE_NAME, RQScheduler


def build_service(client: redis.Redis, partitions: int = DEFAULT_PARTITIONS,
                  scheduler: Scheduler | None = None) -> GameService:
    """A ``GameService`` on ``client``; bots and timeouts go to the RQ queue ``kifu``."""
    store = EventStore(client, partitions)
    tables = TableLoader(store, snapshots=lambda game_id: snapshots.load(store, game_id))
    sched = scheduler or RQScheduler(Queue(QUEUE_NAME, connection=client))
    return GameService(store=store, tables=tables, scheduler=sched)
