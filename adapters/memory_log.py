"""The game logs in this process's memory: ``service.ports.EventLog`` without Redis.

It keeps the Redis store's contract (``adapters.redis_store`` and its ``append.lua``) to the letter:
the conditional append and its refusals, in the same order (quotas counted first, then the holder,
then the idempotency key, then the head), the events after the expected version carried by a conflict
when they are at most ``TAIL_MAX``, the meta hash, the outbox of due times, creation keys. Envelopes are
stored encoded (orjson) and decoded on every read, as from Redis, so that nothing a caller keeps is
shared with the log. It is for tests of the service layer that need no Redis, and for a stateful test
that holds it and the Redis store to the same answers; nothing here survives the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from domain.record import GENESIS
from service import ports
from service.ports import Append, Head, LogRead

TAIL_MAX = 64  # as append.lua: a conflict carries the events since when they are at most this many
WAIT_LIMIT = 500  # as the Redis store: events a wait answers at most


@dataclass
class _Game:
    log: list[bytes] = field(default_factory=list)  # envelope n at index n - 1, encoded
    head: Head = field(default_factory=lambda: Head(0, GENESIS))
    meta: dict[str, str] = field(default_factory=dict)
    records: dict[str, bytes] = field(default_factory=dict)  # idempotency key -> record, encoded


class MemoryLog:
    """Every game's log, meta hash and idempotency records; the outbox; creation keys (in memory).

    ``clock`` (seconds) times the rate-limit windows, as Redis's key expiry does.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._games: dict[str, _Game] = {}
        self._due: dict[str, int] = {}
        self._creations: dict[str, tuple[str, str]] = {}  # key hash -> (id, fingerprint)
        self._counters: dict[str, tuple[int, float]] = {}  # quota name -> (count, window end)
        self._changed = threading.Condition()

    # -- the one write ----------------------------------------------------------------

    def append(self, game_id: str, entry: Append) -> int:
        """``EventLog.append`` (see ``EventStore.append``)."""
        envelopes, expected, quotas = entry.envelopes, entry.after, entry.quotas
        if not envelopes:
            raise ValueError("nothing to append")
        if envelopes[0]["seq"] != expected.version + 1:
            raise ValueError("envelopes must start right after the expected version")
        encoded = [orjson.dumps(e) for e in envelopes]
        with self._changed:
            windows = quotas.windows if quotas is not None and not quotas.sent else ()
            if quotas is not None:
                quotas.sent = True
            self._count(game_id, windows)
            game = self._games.get(game_id) or _Game()
            if entry.holder is not None and game.meta.get(entry.holder[0]) != entry.holder[1]:
                raise ports.HolderRefused(game_id)
            idem_key, idem_record = entry.idempotency or ("", {})
            if idem_key and idem_key in game.records:
                raise ports.DuplicateCommand(orjson.loads(game.records[idem_key]))
            if game.head != expected:
                current = game.head.version
                behind = current > expected.version and current - expected.version <= TAIL_MAX
                tail = game.log[expected.version :] if behind else []
                raise ports.VersionConflict(current, [orjson.loads(raw) for raw in tail])
            game.log.extend(encoded)
            game.head = Head(expected.version + len(encoded), str(envelopes[-1]["hash"]))
            game.meta.update(entry.meta or {})
            if idem_key:
                game.records[idem_key] = orjson.dumps(idem_record)
            if entry.due is None:
                self._due.pop(game_id, None)
            elif entry.due is not ports.Keep.KEEP:
                self._due[game_id] = int(entry.due)
            self._games[game_id] = game
            self._changed.notify_all()
            return game.head.version

    def count(self, game_id: str, quotas: ports.Quotas) -> None:
        """Count a command that appended nothing against ``quotas`` (``EventStore.count``)."""
        if quotas.sent or not quotas.windows:
            return
        quotas.sent = True
        with self._changed:
            self._count(game_id, quotas.windows)

    def _count(self, game_id: str, windows: Sequence[ports.Quota]) -> None:
        """Count each window, the first one past its limit refusing (``ports.QuotaExceeded``), as the scripts do."""
        now = self._clock()
        for index, window in enumerate(windows):
            counted, ends = self._counters.get(window.name, (0, 0.0))
            if ends <= now:
                counted, ends = 0, now + window.period_s
            self._counters[window.name] = (counted + 1, ends)
            if counted + 1 > window.limit:
                raise ports.QuotaExceeded(index, max(1, round(ends - now)))

    # -- reads ------------------------------------------------------------------------

    def look(self, game_id: str, fields: Sequence[str] = (), after: int = 0, limit: int = 0) -> LogRead:
        with self._changed:
            game = self._games.get(game_id) or _Game()
            values = [game.meta.get(f) for f in fields]
            raw = game.log[after : after + limit] if limit > 0 else []
            return LogRead(game.head, values, [orjson.loads(r) for r in raw])

    def head(self, game_id: str) -> Head:
        return self.look(game_id).head

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        if limit is not None and limit <= 0:
            return []
        with self._changed:
            game = self._games.get(game_id) or _Game()
            raw = game.log[after : None if limit is None else after + limit]
        return [orjson.loads(r) for r in raw]

    def read_all(self, game_id: str, batch: int = 1000) -> Iterator[dict[str, Any]]:
        yield from self.read(game_id)

    def meta(self, game_id: str) -> dict[str, str]:
        with self._changed:
            return dict((self._games.get(game_id) or _Game()).meta)

    def idempotency_record(self, game_id: str, key: str) -> dict[str, Any] | None:
        with self._changed:
            raw = (self._games.get(game_id) or _Game()).records.get(key)
        return orjson.loads(raw) if raw is not None else None

    def wait_for(self, game_id: str, after: int, block_ms: int) -> list[dict[str, Any]]:
        """The events after ``after``, waiting up to ``block_ms`` for the first."""
        with self._changed:
            self._changed.wait_for(lambda: self.head(game_id).version > after, timeout=block_ms / 1000)
        return self.read(game_id, after, WAIT_LIMIT)

    def wait_many(self, after: Mapping[str, int], block_ms: int) -> set[str]:
        """Which of the games moved past their version, waiting up to ``block_ms`` for one to."""

        def moved() -> set[str]:
            return {g for g, v in after.items() if self.head(g).version > v}

        if not after:
            return set()
        with self._changed:
            self._changed.wait_for(moved, timeout=block_ms / 1000)
            return moved()

    # -- the outbox and creation keys ---------------------------------------------------

    def overdue(self, now_ms: int, limit: int = 200) -> list[str]:
        with self._changed:
            return [g for g, due in sorted(self._due.items(), key=lambda item: item[1]) if due <= now_ms][:limit]

    def set_due(self, stream_id: str, due_ms: int | None) -> None:
        with self._changed:
            if due_ms is None:
                self._due.pop(stream_id, None)
            else:
                self._due[stream_id] = due_ms

    def due(self, stream_id: str) -> int | None:
        """When ``stream_id`` next needs a job (None: never), as the outbox holds it (for tests)."""
        with self._changed:
            return self._due.get(stream_id)

    def reserve_creation(self, key_hash: str, fingerprint: str, fresh_id: str) -> str | None:
        with self._changed:
            known_id, known_fingerprint = self._creations.setdefault(key_hash, (fresh_id, fingerprint))
        return known_id if known_fingerprint == fingerprint else None
