"""Wiring in one place: a Redis client -> adapters -> the service layer and the read models.

Entrypoints (the API, the CLI, the RQ jobs) call ``build`` once per process
and get their dependencies from the ``Kifu`` it returns; nothing else builds
adapters or reaches into them.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass

import redis
from rq import Queue

from adapters.announcements import AppendFollower
from adapters.metrics import RequestMetrics
from adapters.redis_store import DEFAULT_PARTITIONS, EventStore
from adapters.rq_scheduler import QUEUE_NAME, RQScheduler
from adapters.tickets import RedisTickets
from projections.games_list import GamesList
from projections.projector import Projector, rebuild
from projections.snapshots import Snapshots
from projections.standings import StandingsModel
from projections.tournaments_list import TournamentsList
from service.commands import Commands
from service.games import GameService
from service.memory import GameMemory
from service.ports import Scheduler
from service.streams import DEFAULT_TICKET_RESUME_S, DEFAULT_TICKET_TTL_S, Streams
from service.tournaments import TournamentService

# A command refused on a table that may be behind first sleeps this long (``GameMemory.settle``): under
# gevent, one round of the event loop that polls the sockets, so the listener's greenlet takes an
# announcement that arrived while the command ran (``time.sleep(0)`` would not poll them); in the
# two-connection shape of ``kifu bench compare`` this took the reads after such a refusal from 448 to
# 142 in a run. Where nothing listens it costs 0.1 ms on such a refusal, which then reads the game.
LET_ANNOUNCEMENTS_IN_S = 0.0001


@dataclass(frozen=True)
class Kifu:
    """Everything an entrypoint needs."""

    games: GameService
    commands: Commands
    tournaments: TournamentService
    streams: Streams
    games_list: GamesList
    standings: StandingsModel
    tournaments_list: TournamentsList
    metrics: RequestMetrics
    store: EventStore
    client: redis.Redis

    def projector(self, consumer: str | None = None) -> Projector:
        """A projector on the same Redis (the ``kifu projector`` process, tests)."""
        return Projector(self.store, self.client, consumer)

    def follow_appends(self, stop: threading.Event, ready: threading.Event | None = None) -> AppendFollower:
        """Keep this process's cached tables current with what other processes append, and learn the
        token hashes of the games they create (a daemon thread, a greenlet under gevent, listens): a
        seat whose game moved, or was created, through another process then acts in one round trip
        too (the memory's ``settle``: ``LET_ANNOUNCEMENTS_IN_S``). Only a shortcut: every command is still
        checked by the append."""
        follower = AppendFollower(self.store, self.games.memory.hear)
        thread = threading.Thread(target=follower.run, args=(stop, ready), name="kifu-follow-appends", daemon=True)
        thread.start()
        return follower

    def rebuild_projections(self) -> int:
        """Drop and rebuild every read model (safe while projectors run); the feed entries replayed."""
        return rebuild(self.store, self.client)


def build(
    client: redis.Redis,
    partitions: int = DEFAULT_PARTITIONS,
    scheduler: Scheduler | None = None,
    ticket_ttl_s: int = DEFAULT_TICKET_TTL_S,
    ticket_resume_s: int = DEFAULT_TICKET_RESUME_S,
) -> Kifu:
    """Wire Kifu on ``client``; bots and timeouts go to the RQ queue ``kifu`` unless ``scheduler`` is given."""
    store = EventStore(client, partitions)
    memory = GameMemory(settle=functools.partial(time.sleep, LET_ANNOUNCEMENTS_IN_S))
    sched = scheduler or RQScheduler(Queue(QUEUE_NAME, connection=client))
    games = GameService(store, memory, snapshots=Snapshots(client, store).load, scheduler=sched)
    return Kifu(
        games=games,
        commands=games.commands,
        tournaments=TournamentService(store=store, games=games, reader=games.reader, scheduler=sched),
        streams=Streams(
            games=games,
            reader=games.reader,
            store=store,
            tickets=RedisTickets(client),
            ttl_s=ticket_ttl_s,
            resume_s=ticket_resume_s,
        ),
        games_list=GamesList(client),
        standings=StandingsModel(client, store),
        tournaments_list=TournamentsList(client),
        metrics=RequestMetrics(client),
        store=store,
        client=client,
    )
