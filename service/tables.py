"""Loading a game's table: process cache, then snapshot, then the log's tail.

A table is a pure function of the log, so any process can rebuild it; the
cache only saves work. A load checks the head in Redis first; a command may
instead start from ``known``, the table this process last saw with the head
hash it was at, because its conditional append is the check: if the game
moved meanwhile the append is refused with the events since, and the command
is decided again on the game as it is (``GameService._commit``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from threading import Lock
from typing import Any

import orjson

from domain import engine
from domain.engine import Table
from domain.record import GENESIS, to_event
from service.errors import GameNotFound
from service.ports import EventLog, Head, SnapshotLoader

TAIL_READ = 64  # events read with the head of a cached game; a longer tail is read as usual
HEARD_GAMES = 1024  # games not held here whose announced start is kept (undecoded), the latest ones
HEARD_RUNS = 32  # announced appends kept per such game; a longer run is dropped (the game is read)


class TableLoader:
    """Rebuilds tables from the store, reusing cached tables and snapshots."""

    def __init__(self, store: EventLog, snapshots: SnapshotLoader | None = None, size: int = 2048) -> None:
        self.store = store
        self.snapshots = snapshots
        self.size = size
        self._cache: OrderedDict[str, tuple[Table, str]] = OrderedDict()  # table, hash of its last event
        self._lock = Lock()
        self._heard: OrderedDict[str, list[bytes]] = OrderedDict()  # game -> announced envelope arrays
        self.let_announcements_in: Callable[[], object] = lambda: None  # see ``newer``

    def load(self, game_id: str, head: Head | None = None) -> tuple[Table, Head]:
        """The table at ``head`` (read now when not given), and that head.

        With the game cached and no head given, the head and the events since the cached table are read
        in one round trip.
        """
        if head is None:
            refreshed = self._refreshed(game_id)
            if refreshed is not None:
                return refreshed
        head = head or self.store.head(game_id)
        if head.version == 0:
            raise GameNotFound(f"no game {game_id!r}")
        table, digest = self._cached(game_id) or (None, None)
        ahead = table is not None and table.version > head.version  # another greenlet appended meanwhile
        other = table is not None and table.version == head.version and digest != head.hash
        if ahead or other:  # ``other``: a table of another log at that version; never answer from it
            table = None
        built = self._built(game_id, head, table, digest) if table is not None else None
        if built is None:  # nothing cached, or the cached table is not a prefix of this log
            built = self._built(game_id, head, self.snapshots(game_id) if self.snapshots else None, None)
        assert built is not None
        if built.version == head.version:  # else the log is shorter than its head says: hold nothing
            self.remember(game_id, built, head.hash)
        return built, head

    def _built(self, game_id: str, head: Head, start: Table | None, digest: str | None) -> Table | None:
        """``start`` (None: nothing) brought up to ``head`` with the log's events since; None when the log
        does not continue ``start`` (its first event's ``prev`` is not ``digest``, the hash ``start``
        ended with, when known)."""
        after = start.version if start is not None else 0
        if after >= head.version:
            return start
        envs = self.store.read(game_id, after, head.version - after)
        if start is not None and digest is not None and envs and envs[0]["prev"] != digest:
            return None
        return engine.replay([to_event(e) for e in envs], start)

    def _refreshed(self, game_id: str) -> tuple[Table, Head] | None:
        """The cached table brought up to the game's head in one round trip (None: the game is not
        cached, or what was read does not continue it)."""
        known = self.known(game_id)
        if known is None:
            return None
        table, held = known
        head, tail = self.store.head_and_tail(game_id, held.version, TAIL_READ)
        if head.version == 0 or head.version != held.version + len(tail):
            return None
        if not tail:
            return (table, head) if head == held else None
        return self.caught_up(game_id, table, held, tail)

    def known(self, game_id: str) -> tuple[Table, Head] | None:
        """The newest table this process has seen of the game, with its head (None: not cached). It may
        be behind the game: only a conditional append can rely on it."""
        cached = self._cached(game_id)
        return (cached[0], Head(cached[0].version, cached[1])) if cached is not None else None

    def caught_up(
        self, game_id: str, table: Table, head: Head, tail: Sequence[Mapping[str, Any]]
    ) -> tuple[Table, Head] | None:
        """``table`` (at ``head``) with ``tail``, the envelopes that follow it, applied; None when the
        tail does not continue that head's chain."""
        if not tail or tail[0]["seq"] != head.version + 1 or tail[0]["prev"] != head.hash:
            return None
        table = engine.replay([to_event(e) for e in tail], table)
        head = Head(table.version, tail[-1]["hash"])
        self.remember(game_id, table, head.hash)
        return table, head

    def newer(self, game_id: str, head: Head) -> tuple[Table, Head] | None:
        """The game's table held here, if what other processes announced moved it past ``head``; else
        None. ``let_announcements_in`` runs first: where appends are followed (``GameService.hear``) it
        lets the listener run once (``Kifu.follow_appends``), so that an announcement that arrived while
        this request ran is applied before the request is answered from a read instead."""
        self.let_announcements_in()
        known = self.known(game_id)
        return known if known is not None and known[1].version > head.version else None

    def adopt(self, game_id: str, envs: Sequence[Mapping[str, Any]], head: Head) -> None:
        """Hold the game built from ``envs``, its whole log up to ``head`` read along with something else
        (nothing when the game is held already, or ``envs`` is not the whole log)."""
        if self._cached(game_id) is None and envs and len(envs) == head.version and envs[-1]["hash"] == head.hash:
            self.remember(game_id, engine.replay([to_event(e) for e in envs]), head.hash)

    def follow(self, game_id: str, envs: Sequence[Mapping[str, Any]]) -> None:
        """Apply events another process appended to the game's cached table, when they continue it
        (else nothing: the game is not cached here, or this process made or already has them)."""
        known = self.known(game_id)
        if known is not None:
            self.caught_up(game_id, *known, envs)

    def hear(self, game_id: str, first: int, envelopes: bytes) -> None:
        """Another process announced events ``first``... of the game (``envelopes``: their JSON array).
        Applied to the table held when they continue it; kept undecoded when they start a game not
        held here, or follow such a start, for ``held_or_heard`` to build when a command meets it."""
        cached = self._cache.get(game_id)  # a read of one entry: no lock needed
        if cached is not None:
            if cached[0].version == first - 1:
                self.follow(game_id, orjson.loads(envelopes))
            return
        with self._lock:
            kept = self._heard.get(game_id)
            if first == 1:
                self._heard[game_id] = [envelopes]
                while len(self._heard) > HEARD_GAMES:
                    self._heard.popitem(last=False)
            elif kept is not None and len(kept) < HEARD_RUNS:
                kept.append(envelopes)
            elif kept is not None:
                del self._heard[game_id]

    def held_or_heard(self, game_id: str) -> tuple[Table, Head] | None:
        """``known``; else the game built from what was announced of it from its first event on, when
        that is an unbroken chain (then held); else None. Like ``known``, only a conditional append
        can rely on it."""
        known = self.known(game_id)
        if known is not None:
            return known
        with self._lock:
            kept = self._heard.pop(game_id, None)
        if kept is None:
            return None
        try:
            envs = [env for run in kept for env in orjson.loads(run)]
            digest = GENESIS
            for seq, env in enumerate(envs, 1):
                if env["seq"] != seq or env["prev"] != digest:
                    return None  # an announcement was missed
                digest = env["hash"]
            table = engine.replay([to_event(e) for e in envs])
        except Exception:  # not a game's log: an announcement is never trusted to be one
            return None
        self.remember(game_id, table, digest)
        return table, Head(table.version, digest)

    def remember(self, game_id: str, table: Table, head_hash: str) -> None:
        """Keep ``table`` as the newest known state of the game (``head_hash``: the hash of its last event)."""
        with self._lock:
            known = self._cache.get(game_id)
            if known is None or known[0].version < table.version:
                self._cache[game_id] = (table, head_hash)
            self._cache.move_to_end(game_id)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)

    def forget(self, game_id: str) -> None:
        """Drop the game from the cache."""
        with self._lock:
            self._cache.pop(game_id, None)

    def _cached(self, game_id: str) -> tuple[Table, str] | None:
        with self._lock:
            return self._cache.get(game_id)
