"""The event store: one Redis Stream per game, appended by one Lua script.

Keys of a game share the hash tag of its partition ``{pN}`` (N from the game
id), which is also the tag of that partition's global feed, so the append
script runs unchanged on Redis Cluster:

* ``kifu:{pN}:game:<id>:log`` - the events; entry id ``<seq>-0`` is event ``seq``;
* ``kifu:{pN}:game:<id>:head`` - ``version`` and ``hash`` of the last event
  (never derived from XLEN, which changes if a stream is trimmed);
* ``kifu:{pN}:game:<id>:meta`` - server-only facts: the secret seed until the
  end, seat-token hashes, bot provenance;
* ``kifu:{pN}:idem:<id>:<key>`` - idempotency records;
* ``kifu:{pN}:quota:<name>`` - rate-limit counters of commands on the game's partition;
* ``kifu:{pN}:feed`` - one entry per appended command ``{g, from, to}``,
  read by the projectors through a consumer group;
* ``kifu:{pN}:due`` - the outbox: game (or tournament) id -> when it next needs
  a job (a bot's turn, a move timeout, a tournament step), in ms since the
  epoch. The append script writes it with the events, so a crash between an
  append and the enqueue of its job loses nothing: the sweeper
  (``entrypoints.sweeper``) enqueues what is overdue.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import orjson
import redis

from adapters.metrics import APPEND_SECONDS
from adapters.redis_client import AnyRedis, probe
from domain.record import GENESIS
from service.ports import (
    Append,
    DuplicateCommand,
    Head,
    HolderRefused,
    Keep,
    LogRead,
    Quota,
    QuotaExceeded,
    Quotas,
    VersionConflict,
    WriteUnconfirmed,
)

KEEP = Keep.KEEP


def _limits_and_periods(windows: Sequence[Quota]) -> list[int]:
    """The scripts' arguments for rate-limit counters: each one's limit, then its window in seconds."""
    return [x for w in windows for x in (w.limit, w.period_s)]


def _exceeded(counter: Any, ttl: Any) -> QuotaExceeded:
    """A script's "counter (from 1) went past its limit, whose window ends in ttl s"."""
    return QuotaExceeded(int(counter) - 1, max(1, int(ttl)))


APPEND_SCRIPT = (Path(__file__).with_name("append.lua")).read_text()  # read once, when the adapter is imported
QUOTA_SCRIPT = (Path(__file__).with_name("quota.lua")).read_text()
OLDER_DEPLOYMENT_PARTITIONS = 16  # the count of deployments from before it was recorded (``partitions_key``)
NEW_DEPLOYMENT_PARTITIONS = 128  # a new deployment's: up to 128 masters can share the game logs
DEFAULT_WAIT_MS = 1000  # how long an append waits for its replicas to confirm it (``wait_replicas``)
POLL_MS = 50  # on a cluster, how often ``wait_many`` looks at games spread over several partitions
IDEMPOTENCY_TTL_S = 24 * 3600


class EventStore:
    """Append-only game logs on Redis Streams."""

    def __init__(
        self,
        client: AnyRedis,
        partitions: int | None = None,
        prefix: str = "kifu",
        wait_replicas: int = 0,
        wait_ms: int = DEFAULT_WAIT_MS,
    ) -> None:
        """``partitions``: None for the deployment's count, read when first needed
        (``deployment_partitions``). ``wait_replicas``: how many replicas must confirm an append
        (``WAIT``, on the connection that appended) before it is acknowledged, within ``wait_ms`` (else
        ``WriteUnconfirmed``); 0: none."""
        self.redis = client
        self.wait_replicas = wait_replicas
        self._append_seconds = APPEND_SECONDS.labels(str(wait_replicas))
        self.wait_ms = wait_ms
        self.cluster = isinstance(client, redis.RedisCluster)
        self._partitions = partitions
        self.prefix = prefix
        self._append = client.register_script(APPEND_SCRIPT)
        self._count = client.register_script(QUOTA_SCRIPT)
        self.origin = secrets.token_hex(8)  # names this store's appends in their announcements

    @property
    def partitions(self) -> int:
        """The partition count: as given, or the deployment's (read once, when first needed)."""
        if self._partitions is None:
            self._partitions = deployment_partitions(self.redis, self.prefix)
        return self._partitions

    def partition(self, game_id: str) -> int:
        """The partition of a game: CRC-32 of its id modulo the partition count."""
        return zlib.crc32(game_id.encode()) % self.partitions

    def _tag(self, game_id: str) -> str:
        return f"{self.prefix}:{{p{self.partition(game_id)}}}"

    def log_key(self, game_id: str) -> str:
        return f"{self._tag(game_id)}:game:{game_id}:log"

    def head_key(self, game_id: str) -> str:
        return f"{self._tag(game_id)}:game:{game_id}:head"

    def meta_key(self, game_id: str) -> str:
        return f"{self._tag(game_id)}:game:{game_id}:meta"

    def idem_key(self, game_id: str, key: str) -> str:
        return f"{self._tag(game_id)}:idem:{game_id}:{key}"

    def feed_key(self, partition: int) -> str:
        return f"{self.prefix}:{{p{partition}}}:feed"

    def appended_channel(self, partition: int) -> str:
        """The sharded pub/sub channel on which the partition's appends are announced (its hash tag: the
        node that holds the partition's keys carries it)."""
        return f"{self.prefix}:{{p{partition}}}:appended"

    def due_key(self, partition: int) -> str:
        return f"{self.prefix}:{{p{partition}}}:due"

    def append(self, game_id: str, entry: Append) -> int:
        """Append a command's events atomically, with all ``entry`` carries, in one call of the append
        script; return the new version.

        Raises ``VersionConflict`` if the head moved (with the events since ``entry.after`` when they
        are few: the caller catches up without another round trip), ``DuplicateCommand`` if the
        idempotency key was seen before and ``HolderRefused`` if ``entry.holder`` does not hold (nothing
        is written in any of these cases). ``entry.quotas``, unless already counted (``Quotas.sent``),
        are counted first, in the same round trip, whatever the outcome; past one of them nothing is
        written (``QuotaExceeded``).
        """
        envelopes, expected_version, quotas = entry.envelopes, entry.after.version, entry.quotas
        if not envelopes:
            raise ValueError("nothing to append")
        if envelopes[0]["seq"] != expected_version + 1:
            raise ValueError("envelopes must start right after the expected version")
        idem_key, idem_record = entry.idempotency or ("", {})
        meta_args = [x for pair in (entry.meta or {}).items() for x in pair]
        keys = [
            self.log_key(game_id),
            self.head_key(game_id),
            self.feed_key(self.partition(game_id)),
            self.idem_key(game_id, idem_key or "-"),
            self.meta_key(game_id),
            self.due_key(self.partition(game_id)),
        ]
        windows = quotas.windows if quotas is not None and not quotas.sent else ()
        if quotas is not None:
            quotas.sent = True
        keys += [self.quota_key(game_id, w) for w in windows]
        args = [
            expected_version,
            entry.after.hash,
            game_id,
            "1" if idem_key else "0",
            orjson.dumps(idem_record),
            IDEMPOTENCY_TTL_S,
            envelopes[-1]["hash"],
            len(meta_args) // 2,
            len(envelopes),
            "" if entry.due is KEEP else "-" if entry.due is None else str(int(entry.due)),
            *(entry.holder or ("", "")),
            self.appended_channel(self.partition(game_id)),
            len(windows),
            self.origin,
            *_limits_and_periods(windows),
            *meta_args,
            *(orjson.dumps(e) for e in envelopes),
        ]
        confirmed = None
        started = time.perf_counter()
        if self.wait_replicas or self.cluster:
            (reply, *values), confirmed = self._append_on_master(keys, args)
        else:
            reply, *values = self._append(keys=keys, args=args)
        self._append_seconds.observe(time.perf_counter() - started)
        status = text(reply)
        if status == "conflict":
            tail = [orjson.loads(raw) for raw in values[1:]]
            raise VersionConflict(int(values[0]), tail)
        if status == "duplicate":
            raise DuplicateCommand(orjson.loads(values[0]))
        if status == "refused":
            raise HolderRefused(game_id)
        if status == "limited":
            raise _exceeded(values[0], values[1])
        if confirmed is not None and confirmed < self.wait_replicas:
            raise WriteUnconfirmed(
                f"{game_id}: {confirmed} of {self.wait_replicas} replicas confirmed within {self.wait_ms} ms"
            )
        return int(values[0])

    def _append_on_master(self, keys: list[str], args: list[Any]) -> tuple[list[Any], int | None]:
        """The append script, then (with ``wait_replicas``) ``WAIT`` on the same connection (it waits for
        what that connection wrote), in one round trip: the script's reply, and how many replicas
        confirmed (None: not asked). On a cluster both go straight to the master that holds the game's
        slot, as the cluster client knows it (a node's own client: cheaper than the cluster client's
        routing of each command); a MOVED reply (the slot moved) has it learn the slots again and ask
        once more, and a master down or demoted has it learn them for the next append (this one
        answers 503: a failover takes seconds)."""
        for attempt in range(2):
            server = self._server_of(keys[0])
            pipe = server.pipeline(transaction=False)
            pipe.evalsha(self._append.sha, len(keys), *keys, *args)
            if self.wait_replicas:
                cast(Any, pipe).execute_command("WAIT", self.wait_replicas, self.wait_ms)
            try:
                reply, *confirmed = pipe.execute()
            except redis.exceptions.NoScriptError:
                server.script_load(APPEND_SCRIPT)
                continue
            except redis.exceptions.MovedError:
                if attempt:
                    raise
                self._learn_topology()
                continue
            except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ReadOnlyError):
                self._learn_topology()  # a master down or demoted: the next append asks where its slot is now
                raise
            return list(reply), int(confirmed[0]) if confirmed else None
        raise redis.exceptions.TryAgainError("the append could not reach the master of its slot")

    def _learn_topology(self) -> None:
        """On a cluster, have the client ask the nodes again where the slots are (errors ignored: a
        cluster failing over may not answer yet; the next append asks again)."""
        if self.cluster:
            with contextlib.suppress(redis.RedisError, OSError):
                cast(Any, self.redis).nodes_manager.initialize()

    def _server_of(self, key: str) -> redis.Redis:
        """The server that holds ``key``: the client itself on one Redis, its master on a cluster."""
        if not self.cluster:
            return cast(redis.Redis, self.redis)
        return cast(redis.Redis, cast(Any, self.redis).get_node_from_key(key).redis_connection)

    def count(self, game_id: str, quotas: Quotas) -> None:
        """Count a command on the game that appended nothing against ``quotas`` (unless its append
        counted them); ``QuotaExceeded`` past one of them."""
        if quotas.sent or not quotas.windows:
            return
        quotas.sent = True
        keys = [self.quota_key(game_id, w) for w in quotas.windows]
        past, *ttl = self._count(keys=keys, args=_limits_and_periods(quotas.windows))
        if past:
            raise _exceeded(past, ttl[0])

    def quota_key(self, game_id: str, quota: Quota) -> str:
        """A rate-limit counter, kept with the game's keys (one hash slot: the append script counts it)."""
        return f"{self._tag(game_id)}:quota:{quota.name}"

    def head(self, game_id: str) -> Head:
        """The game's head (version 0 when it does not exist)."""
        version, digest = self.redis.hmget(self.head_key(game_id), "version", "hash")
        return _head(version, digest)

    def look(self, game_id: str, fields: Sequence[str] = (), after: int = 0, limit: int = 0) -> LogRead:
        """The head, meta ``fields`` and up to ``limit`` envelopes after ``after`` (never past that head),
        in one round trip (a pipeline of the commands needed)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hmget(self.head_key(game_id), "version", "hash")
        if fields:
            pipe.hmget(self.meta_key(game_id), list(fields))
        if limit > 0:
            pipe.xrange(self.log_key(game_id), min=f"{after + 1}-0", max="+", count=limit)
        (version, digest), *rest = pipe.execute()
        head = _head(version, digest)
        values = [text(v) if v is not None else None for v in rest.pop(0)] if fields else []
        envs = [env for env in _decoded(rest[0]) if env["seq"] <= head.version] if limit > 0 else []
        return LogRead(head, values, envs)  # (an append may land between the head's read and the log's)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Envelopes with ``seq > after`` in order (at most ``limit``)."""
        if limit is not None and limit <= 0:
            return []
        entries = self.redis.xrange(self.log_key(game_id), min=f"{after + 1}-0", max="+", count=limit)
        return _decoded(cast(Entries, entries))

    def read_many(self, ranges: Mapping[str, tuple[int, int]]) -> dict[str, list[dict[str, Any]]]:
        """``read(game, after, limit)`` for several games in one round trip: ``{game: (after, limit)}``."""
        wanted = [game_id for game_id, (_after, limit) in ranges.items() if limit > 0]
        pipe = self.redis.pipeline(transaction=False)
        for game_id in wanted:
            after, limit = ranges[game_id]
            pipe.xrange(self.log_key(game_id), min=f"{after + 1}-0", max="+", count=limit)
        got = dict(zip(wanted, pipe.execute())) if wanted else {}
        return {game_id: _decoded(got.get(game_id, [])) for game_id in ranges}

    def read_all(self, game_id: str, batch: int = 1000) -> Iterator[dict[str, Any]]:
        """Every envelope, read in batches."""
        after = 0
        while True:
            chunk = self.read(game_id, after, batch)
            yield from chunk
            if len(chunk) < batch:
                return
            after = chunk[-1]["seq"]

    def wait_for(self, game_id: str, after: int, block_ms: int) -> list[dict[str, Any]]:
        """Block until events after ``after`` exist (or ``block_ms`` passes)."""
        got = cast(
            list[tuple[bytes, Entries]],
            self.redis.xread({self.log_key(game_id): f"{after}-0"}, block=block_ms, count=500),
        )
        return [env for _stream, entries in got for env in _decoded(entries)]

    def wait_many(self, after: Mapping[str, int], block_ms: int) -> set[str]:
        """Block until one of several games has events after its version (or ``block_ms`` passes); which did.

        On one Redis, one blocking XREAD over every game's stream. On a cluster an XREAD's streams must
        share a slot, so the games are grouped by partition: one group blocks as on one Redis; several
        are read together without blocking (one pipeline, each node's reads in one round trip) every
        ``POLL_MS`` until one has moved or ``block_ms`` has passed.
        """
        if not after:
            return set()
        by_key = {self.log_key(g): g for g in after}
        groups: dict[int, dict[Any, Any]] = {}
        for game_id, version in after.items():
            groups.setdefault(self.partition(game_id) if self.cluster else 0, {})[self.log_key(game_id)] = (
                f"{version}-0"
            )
        if len(groups) == 1:
            (streams,) = groups.values()
            got = cast(list[tuple[bytes, Entries]], self.redis.xread(streams, block=block_ms, count=1))
            return {by_key[text(stream)] for stream, _entries in got or []}
        deadline = time.monotonic() + block_ms / 1000
        while True:
            pipe = self.redis.pipeline(transaction=False)
            for streams in groups.values():
                pipe.xread(streams, count=1)
            moved = {by_key[text(stream)] for got in pipe.execute() for stream, _entries in got or []}
            left = deadline - time.monotonic()
            if moved or left <= 0:
                return moved
            time.sleep(min(POLL_MS / 1000, left))

    def ping(self) -> str | None:
        """None when Redis answers a single PING within a second, else why not.

        A one-shot probe on its own connection, without the client's retries, so
        that a readiness check of a dead Redis answers within a second. On a
        cluster, every master is probed (and the cluster must say it is ``ok``).
        """
        return probe(self.redis)

    def overdue(self, now_ms: int, limit: int = 200) -> list[str]:
        """Ids (games and tournaments) whose next job was due by ``now_ms``, across every partition."""
        pipe = self.redis.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.zrangebyscore(self.due_key(p), "-inf", now_ms, start=0, num=limit)
        return [text(member) for members in pipe.execute() for member in members]

    def set_due(self, stream_id: str, due_ms: int | None) -> None:
        """When ``stream_id`` next needs a job (None: never), outside an append (the sweeper's own note)."""
        key = self.due_key(self.partition(stream_id))
        if due_ms is None:
            self.redis.zrem(key, stream_id)
        else:
            self.redis.zadd(key, {stream_id: due_ms})

    def meta(self, game_id: str) -> dict[str, str]:
        """The server-only meta hash of a game."""
        return {text(k): text(v) for k, v in self.redis.hgetall(self.meta_key(game_id)).items()}

    def reserve_creation(self, key_hash: str, fingerprint: str, fresh_id: str) -> str | None:
        """The game id of a creation key: ``fresh_id`` if the key is new, the first id if the
        same request used it before, ``None`` if a different request did (kept 24 h)."""
        slot = f"{self.prefix}:create-idem:{key_hash}"
        fresh = json.dumps({"id": fresh_id, "fingerprint": fingerprint})
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(slot, fresh, nx=True, ex=IDEMPOTENCY_TTL_S)
        pipe.get(slot)
        _created, raw = pipe.execute()
        known = json.loads(raw or fresh)
        return known["id"] if known["fingerprint"] == fingerprint else None

    def idempotency_record(self, game_id: str, key: str) -> dict[str, Any] | None:
        """The stored first answer for ``key``, if any."""
        raw = self.redis.get(self.idem_key(game_id, key))
        return json.loads(raw) if raw else None


def deployment_partitions(client: AnyRedis, prefix: str = "kifu") -> int:
    """The partition count of the deployment whose game logs ``client`` holds: the one it recorded
    (``<prefix>:partitions``); else, when it holds game logs from before the count was recorded, 16; else
    ``NEW_DEPLOYMENT_PARTITIONS``; recorded now when it was not (the first process to record wins).

    A game's keys carry its partition (``{pN}``, N = CRC-32 of its id modulo the count), so the count
    cannot change without moving every game's keys: it is decided once per deployment, by its data."""
    key = f"{prefix}:partitions"
    recorded = client.get(key)
    if recorded is None:
        pipe = client.pipeline(transaction=False)
        for p in range(OLDER_DEPLOYMENT_PARTITIONS):
            pipe.exists(f"{prefix}:{{p{p}}}:feed")
        older = any(pipe.execute())
        client.set(key, OLDER_DEPLOYMENT_PARTITIONS if older else NEW_DEPLOYMENT_PARTITIONS, nx=True)
        recorded = client.get(key)
    return int(cast(bytes, recorded))


Entries = Sequence[tuple[bytes, Mapping[bytes, bytes]]]


def text(value: bytes | str) -> str:
    """A Redis reply as text (this client does not decode replies itself)."""
    return value.decode() if isinstance(value, bytes) else value


def _head(version: bytes | str | None, digest: bytes | str | None) -> Head:
    return Head(int(version or 0), text(digest) if digest else GENESIS)


def _decoded(entries: Entries) -> list[dict[str, Any]]:
    """The envelopes of stream entries (each stored as JSON in field ``e``)."""
    return [orjson.loads(fields[b"e"]) for _id, fields in entries]
