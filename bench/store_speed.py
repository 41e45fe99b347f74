"""Store benchmarks against a real Redis (``REDIS_URL``, else an embedded one, AOF always).

* read: events per second reading a 20,000-event log through ``EventStore.read_all``
  (XRANGE in batches of 1,000 plus JSON decoding);
* load: time to load a game of about 1,000 events into a ``Table``, from the
  log alone and from its snapshot plus the tail (median of repeated loads,
  a fresh loader each time so no process cache helps).
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from adapters.embedded_redis import EmbeddedRedis
from adapters.redis_store import EventStore
from domain import engine
from domain.engine import Seat
from domain.events import Event
from domain.record import GENESIS, envelopes
from projections.projector import Projector
from projections.snapshots import Snapshots
from service.commands import fresh_salt
from service.memory import GameMemory
from service.ports import Append, Head
from service.reader import GameReader

AT = "2026-01-01T00:00:00.000Z"


@contextmanager
def redis_client() -> Iterator[redis.Redis]:
    """The server at REDIS_URL, or a fresh embedded one (appendfsync always)."""
    if os.environ.get("REDIS_URL"):
        yield redis.Redis.from_url(os.environ["REDIS_URL"])
        return
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp)) as server:
        yield redis.Redis(port=server.port)


def write_synthetic_log(store: EventStore, game_id: str, n_events: int, batch: int = 100) -> None:
    prev, version = GENESIS, 0
    while version < n_events:
        events = [Event("thing_happened", {"i": version + i, "payload": "x" * 64}) for i in range(batch)]
        envs = envelopes(events, version + 1, prev, AT, fresh_salt)
        store.append(game_id, Append(envs, Head(version, prev)))
        prev, version = envs[-1]["hash"], version + batch


def long_duel(store: EventStore, game_id: str, rounds: int) -> int:
    """A Kiri-ai game whose samurai stay at the edges, so it lasts ``rounds`` rounds."""
    seats = [Seat(0, "red"), Seat(1, "blue")]
    events = engine.create("kiri-ai", game_id, seats, b"bench", {"max_rounds": rounds})
    table = engine.replay(events)
    envs = envelopes(events, 1, GENESIS, AT, fresh_salt)
    store.append(game_id, Append(envs, Head(0, GENESIS)))
    rnd = random.Random(1)
    while not table.finished:
        seat = table.to_act[0]
        actions = [a for a in engine.legal_actions(table, seat) if a.get("first") == "retreat"]
        new, table = engine.step(
            table, seat, rnd.choice(actions or engine.legal_actions(table, seat)), salts=fresh_salt
        )
        batch = envelopes(new, envs[-1]["seq"] + 1, envs[-1]["hash"], AT, fresh_salt)
        store.append(game_id, Append(batch, Head(envs[-1]["seq"], envs[-1]["hash"])))
        envs = batch
    return table.version


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_read(store: EventStore) -> None:
    write_synthetic_log(store, "bench-read", 20_000)
    seconds = median_seconds(lambda: sum(1 for _ in store.read_all("bench-read")), 5)
    print(f"store: read 20,000 events in {seconds * 1000:.0f} ms -> {20_000 / seconds:,.0f} events/s")


def bench_load(store: EventStore, client: redis.Redis) -> None:
    version = long_duel(store, "bench-load", 100)
    Projector(store, client, consumer="bench").run_until_idle()
    snapshots = Snapshots(client, store)
    snap = snapshots.load("bench-load")
    cold = median_seconds(lambda: GameReader(store, GameMemory()).load("bench-load"), 10)
    warm = median_seconds(lambda: GameReader(store, GameMemory(), snapshots.load).load("bench-load"), 10)
    print(
        f"load: a {version}-event Kiri-ai game: {cold * 1000:.1f} ms from the log, "
        f"{warm * 1000:.1f} ms from its snapshot (at version {snap.version if snap else '-'}) plus the tail"
    )


def main(read: bool = True, load: bool = True) -> None:
    with redis_client() as client:
        client.flushall()
        store = EventStore(client)
        if read:
            bench_read(store)
            client.flushall()
        if load:
            bench_load(store, client)


if __name__ == "__main__":
    main()
