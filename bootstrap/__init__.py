"""Wiring in one place: a Redis client -> adapters -> the service layer and the read models.

Entrypoints (the API, the CLI, the RQ jobs) call ``build`` once per process
and get their dependencies from the ``Kifu`` it returns; nothing else builds
adapters or reaches into them.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import redis
from rq import Queue

from adapters.analysis_store import RedisAnalyses
from adapters.announcements import AppendFollower
from adapters.redis_client import AnyRedis, connect_events
from adapters.redis_store import DEFAULT_WAIT_MS, EventStore
from adapters.rq_scheduler import QUEUE_NAME, RQScheduler
from adapters.signing_keys import FileSigning, KeyRegistry, key_file
from adapters.tickets import RedisTickets
from adapters.transparency_log import TransparencyLog
from projections.games_list import GamesList
from projections.projector import Projector, rebuild
from projections.snapshots import Snapshots
from projections.standings import StandingsModel
from projections.tournaments_list import TournamentsList
from service.analysis import AnalysisService
from service.commands import Commands, utc_now
from service.games import GameService
from service.memory import GameMemory
from service.ports import Scheduler, Signing
from service.streams import DEFAULT_TICKET_RESUME_S, DEFAULT_TICKET_TTL_S, Streams
from service.tournaments import TournamentService

# A command refused on a table that may be behind first sleeps this long (``GameMemory.settle``): under
# gevent, one round of the event loop that polls the sockets, so the listener's greenlet takes an
# announcement that arrived while the command ran (``time.sleep(0)`` would not poll them); in the
# two-connection shape of ``kifu bench compare`` this took the reads after such a refusal from 448 to
# 142 in a run. Where nothing listens it costs 0.1 ms on such a refusal, which then reads the game.
LET_ANNOUNCEMENTS_IN_S = 0.0001


def let_announcements_in() -> None:
    """``settle``: the pause, then a yield. When other greenlets hold the loop past the pause (a busy
    worker's other requests), the round that finds the listener's socket readable also finds the pause's
    timer expired, and libev runs the timer first (it queues the sockets' events, then the timers', and
    invokes the queue last in first): without the yield the command went on before the listener had
    read, every time (tests/integration/test_one_round_trip.py). The yield lets the loop finish that
    round, the listener's read included, before the command resumes."""
    time.sleep(LET_ANNOUNCEMENTS_IN_S)
    time.sleep(0)


@dataclass(frozen=True)
class Kifu:
    """Everything an entrypoint needs."""

    games: GameService
    commands: Commands
    tournaments: TournamentService
    analysis: AnalysisService
    streams: Streams
    games_list: GamesList
    standings: StandingsModel
    tournaments_list: TournamentsList
    store: EventStore
    client: redis.Redis
    signing: Signing
    notary: TransparencyLog

    def projector(self, consumer: str | None = None) -> Projector:
        """A projector on the same Redis (the ``kifu projector`` process, tests)."""
        return Projector(self.store, self.client, consumer, notary=self.notary)

    def follow_appends(self, stop: threading.Event, ready: threading.Event | None = None) -> list[AppendFollower]:
        """Keep this process's cached tables current with what other processes append, and learn the
        token hashes of the games they create (a daemon thread, a greenlet under gevent, listens): a
        seat whose game moved, or was created, through another process then acts in one round trip
        too (the memory's ``settle``: ``LET_ANNOUNCEMENTS_IN_S``). Only a shortcut: every command is still
        checked by the append. One listener on one Redis, one per master on a cluster; ``ready`` is set
        once every one of them listens."""
        followers = AppendFollower.followers(self.store, self.games.memory.hear)
        listening = [threading.Event() for _ in followers]
        for follower, event in zip(followers, listening):
            name = f"kifu-follow-appends-{follower.partitions[0]}"
            threading.Thread(target=follower.run, args=(stop, event), name=name, daemon=True).start()
        if ready is not None:
            threading.Thread(target=_set_when_all, args=(listening, ready), daemon=True).start()
        return followers

    def queue_depths(self) -> dict[str, int]:
        """The jobs waiting in each RQ queue (``kifu_queue_jobs``)."""
        return {QUEUE_NAME: Queue(QUEUE_NAME, connection=self.client).count}

    def rebuild_projections(self) -> int:
        """Drop and rebuild every read model (safe while projectors run); the feed entries replayed."""
        return rebuild(self.store, self.client)


def _set_when_all(events: list[threading.Event], done: threading.Event) -> None:
    for event in events:
        event.wait()
    done.set()


@dataclass(frozen=True)
class Events:
    """Where the game logs live when not on ``REDIS_URL``'s Redis, and how many replicas must confirm
    an append (within ``wait_ms``) before it is acknowledged."""

    client: AnyRedis
    wait_replicas: int
    wait_ms: int


def events_from(url: str, wait_replicas: int | None = None, wait_ms: int | None = None) -> Events:
    """The game logs at ``url`` (``redis+cluster://HOST:PORT``: a Redis Cluster; docs/deployment.md). On a
    cluster an append waits for one replica by default: an acknowledged action survives the loss of
    any one node."""
    client = connect_events(url)
    default = 1 if isinstance(client, redis.RedisCluster) else 0
    return Events(client, default if wait_replicas is None else wait_replicas, wait_ms or DEFAULT_WAIT_MS)


def events_from_environment() -> Events | None:
    """``events_from`` the ``KIFU_EVENTS_URL``, ``KIFU_EVENTS_WAIT_REPLICAS`` and ``KIFU_EVENTS_WAIT_MS``
    of the environment; None without a ``KIFU_EVENTS_URL``: the game logs share ``REDIS_URL``'s Redis."""
    url = os.environ.get("KIFU_EVENTS_URL")
    if not url:
        return None
    replicas, wait_ms = os.environ.get("KIFU_EVENTS_WAIT_REPLICAS"), os.environ.get("KIFU_EVENTS_WAIT_MS")
    return events_from(url, int(replicas) if replicas else None, int(wait_ms) if wait_ms else None)


def build(
    client: redis.Redis,
    partitions: int | None = None,
    scheduler: Scheduler | None = None,
    ticket_ttl_s: int = DEFAULT_TICKET_TTL_S,
    ticket_resume_s: int = DEFAULT_TICKET_RESUME_S,
    events: Events | None = None,
    signing: Signing | None = None,
) -> Kifu:
    """Wire Kifu on ``client``; bots and timeouts go to the RQ queue ``kifu`` unless ``scheduler`` is given.

    ``events``: where the game logs live (their per-game keys, the partition feeds, the outbox), when
    not on ``client`` (a Redis Cluster); everything else (RQ's queues, rate limits, read models and the
    projector's checkpoints, tickets, metrics) stays on ``client``. ``partitions``: the deployment's
    count unless given (``deployment_partitions``: read the first time the store needs it). ``signing``:
    the key that signs sealed heads and tree heads, by default the key file (``adapters.signing_keys``:
    ``KIFU_SIGNING_KEY_FILE``, else the data directory's), published, like the transparency log, where
    the game logs live."""
    store = (
        EventStore(events.client, partitions, wait_replicas=events.wait_replicas, wait_ms=events.wait_ms)
        if events is not None
        else EventStore(client, partitions)
    )
    memory = GameMemory(settle=let_announcements_in)
    sched = scheduler or RQScheduler(Queue(QUEUE_NAME, connection=client))
    logs = events.client if events is not None else client
    signing = signing or FileSigning(key_file(), KeyRegistry(logs), utc_now)
    notary = (
        TransparencyLog(logs, signing, wait_replicas=events.wait_replicas, wait_ms=events.wait_ms)
        if events is not None
        else TransparencyLog(logs, signing)
    )
    games = GameService(
        store, memory, snapshots=Snapshots(client, store).load, scheduler=sched, signing=signing, notary=notary
    )
    return Kifu(
        games=games,
        commands=games.commands,
        tournaments=TournamentService(store=store, games=games, reader=games.reader, scheduler=sched),
        analysis=AnalysisService(games, RedisAnalyses(client), utc_now),
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
        store=store,
        client=client,
        signing=signing,
        notary=notary,
    )
