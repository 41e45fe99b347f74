"""Loading a game's table: process cache, then snapshot, then the log's tail.

A table is a pure function of the log, so any process can rebuild it; the
cache only saves work (it is never the source of truth: every load checks the
head in Redis first).
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock

from domain import engine
from domain.engine import Table
from domain.record import to_event
from service.errors import GameNotFound
from service.ports import EventLog, Head, SnapshotLoader


class TableLoader:
    """Rebuilds tables from the store, reusing cached tables and snapshots."""

    def __init__(self, store: EventLog, snapshots: SnapshotLoader | None = None, size: int = 2048) -> None:
        self.store = store
        self.snapshots = snapshots
        self.size = size
        self._cache: OrderedDict[str, Table] = OrderedDict()
        self._lock = Lock()

    def load(self, game_id: str, head: Head | None = None) -> tuple[Table, Head]:
        """The table at ``head`` (read now when not given), and that head."""
        head = head or self.store.head(game_id)
        if head.version == 0:
            raise GameNotFound(f"no game {game_id!r}")
        table = self._cached(game_id) or (self.snapshots(game_id) if self.snapshots else None)
        if table is not None and table.version > head.version:
            table = None
        after = table.version if table is not None else 0
        if after < head.version:
            envs = self.store.read(game_id, after, head.version - after)
            table = engine.replay([to_event(e) for e in envs], table)
        assert table is not None
        self.remember(game_id, table)
        return table, head

    def remember(self, game_id: str, table: Table) -> None:
        """Keep ``table`` as the newest known state of the game."""
        with self._lock:
            known = self._cache.get(game_id)
            if known is None or known.version <= table.version:
                self._cache[game_id] = table
            self._cache.move_to_end(game_id)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)

    def _cached(self, game_id: str) -> Table | None:
        with self._lock:
            return self._cache.get(game_id)
