"""What one process remembers of games: a pure cache, no I/O.

A table is a pure function of its game's log, so any process can rebuild it;
remembering one only saves work. Nothing here is trusted: a command decided on
a table from this memory (or on a seat recalled from it) is checked by its
conditional append, which compares the head hash and the token's seat, so a
memory that is behind, or was told something false, costs a retry, never a
wrong answer.

The memory holds, each bounded (least recently stored dropped first):

* tables, each with the hash of its last event (``known``, ``remember``);
* the starts of games this process does not hold, as other processes announced
  them, still encoded (``hear``, ``held_or_heard``);
* seats by token hash: met by this process, and heard of, apart (so that a
  cluster's creations never push out the seats met here);
* each game's unchanging facts (seed, tournament, held).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Any

import orjson

from domain import engine
from domain.canonical import sha256_hex
from domain.engine import Table
from domain.record import GENESIS, to_event
from service.ports import Announcement, Head

HEARD_GAMES = 1024  # games not held here whose announced start is kept (undecoded), the latest ones
HEARD_RUNS = 32  # announced appends kept per such game; a longer run is dropped (the game is read)
SEATS_PER_TABLE = 4  # seats kept per table kept (each memory of seats, and of facts)


def token_hash(token: str) -> str:
    """How a seat token is kept: its SHA-256 (the token itself is never kept, here or in the store)."""
    return sha256_hex(token.encode())


@dataclass(frozen=True)
class Facts:
    """What a game's meta hash says that never changes once the game exists: its seed (secret until the
    seal), its tournament, and whether a tournament created it held (unsealed until released)."""

    seed: str
    tournament: str | None
    held: bool


@dataclass(frozen=True)
class Recalled:
    """What the memory holds for a command on a game: the table and its head (None: not held), the seat
    of the caller's token (None: not known here) and ``holder``, what the append must check for that
    seat (the token's meta field and its seat); ``digest``: the token's hash (None: no token)."""

    table: Table | None
    head: Head | None
    seat: int | None
    holder: tuple[str, str] | None
    digest: str | None


class GameMemory:
    """One process's memory of games (see the module's docstring). Thread-safe.

    ``settle`` runs before the memory is asked whether it heard of something newer (``newer``): where a
    listener hands over announcements (``hear``) it lets that listener run once, so that an announcement
    that arrived while a command ran is taken before the command is answered from a read instead.
    """

    def __init__(self, size: int = 2048, settle: Callable[[], object] = lambda: None) -> None:
        self.size = size
        self._settle = settle
        self._lock = Lock()
        self._tables: OrderedDict[str, tuple[Table, str]] = OrderedDict()  # table, hash of its last event
        self._heard: OrderedDict[str, list[bytes]] = OrderedDict()  # game -> announced envelope arrays
        self._seats: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._seats_heard: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._facts: OrderedDict[str, Facts] = OrderedDict()

    # -- tables ---------------------------------------------------------------------

    def known(self, game_id: str) -> tuple[Table, Head] | None:
        """The newest table this process has seen of the game, with its head (None: not held). It may be
        behind the game: only a conditional append can rely on it."""
        with self._lock:
            held = self._tables.get(game_id)
        return (held[0], Head(held[0].version, held[1])) if held is not None else None

    def recall(self, game_id: str, token: str | None) -> Recalled:
        """For a command: the seat of ``token`` (None: not known here), and
        the table held; when the seat is known, also a table built from what was heard of the game
        (``held_or_heard``), so that a seat told of by another process acts without a read."""
        seat = digest = None
        if token is not None:
            digest = token_hash(token)
            with self._lock:
                seat = self._seats.get((game_id, digest), self._seats_heard.get((game_id, digest)))
        held = self.held_or_heard(game_id) if seat is not None else self.known(game_id)
        table, head = held or (None, None)
        return Recalled(table, head, seat, (f"tok:{digest}", str(seat)) if seat is not None else None, digest)

    def remember(self, game_id: str, table: Table, head_hash: str) -> None:
        """Keep ``table`` as the newest known state of the game (``head_hash``: the hash of its last event)."""
        with self._lock:
            held = self._tables.get(game_id)
            if held is None or held[0].version < table.version:
                self._tables[game_id] = (table, head_hash)
            self._tables.move_to_end(game_id)
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)

    def forget(self, game_id: str, token: str | None = None) -> None:
        """Drop the game's table, and what is remembered of the token's seat in it."""
        with self._lock:
            self._tables.pop(game_id, None)
            if token is not None:
                self._seats.pop((game_id, token_hash(token)), None)
                self._seats_heard.pop((game_id, token_hash(token)), None)

    def caught_up(
        self, game_id: str, table: Table, head: Head, tail: Sequence[Mapping[str, Any]]
    ) -> tuple[Table, Head] | None:
        """``table`` (at ``head``) with ``tail``, the envelopes that follow it, applied and remembered;
        None when the tail does not continue that head's chain."""
        if not tail or tail[0]["seq"] != head.version + 1 or tail[0]["prev"] != head.hash:
            return None
        table = engine.replay([to_event(e) for e in tail], table)
        head = Head(table.version, tail[-1]["hash"])
        self.remember(game_id, table, head.hash)
        return table, head

    def adopt(self, game_id: str, envs: Sequence[Mapping[str, Any]], head: Head) -> None:
        """Hold the game built from ``envs``, its whole log up to ``head`` read along with something else
        (nothing when the game is held already, or ``envs`` is not the whole log)."""
        if self.known(game_id) is None and envs and len(envs) == head.version and envs[-1]["hash"] == head.hash:
            self.remember(game_id, engine.replay([to_event(e) for e in envs]), head.hash)

    def meet(
        self, game_id: str, token_digest: str | None, seat: int | None, envs: Sequence[Mapping[str, Any]], head: Head
    ) -> Table | None:
        """What identifying a caller read: the seat of the token whose hash is ``token_digest`` (when it is
        one) and, when ``envs`` is the whole log up to ``head``, the game (``adopt``). The table at ``head``
        when held now, else None."""
        if token_digest is not None and seat is not None:
            self.remember_seat(game_id, token_digest, seat)
        self.adopt(game_id, envs, head)
        held = self.known(game_id)
        return held[0] if held is not None and held[1] == head else None

    def newer(self, game_id: str, head: Head) -> tuple[Table, Head] | None:
        """The table held, if what other processes announced moved it past ``head`` (after ``settle``)."""
        self._settle()
        held = self.known(game_id)
        return held if held is not None and held[1].version > head.version else None

    # -- what other processes announce ------------------------------------------------

    def hear(self, heard: Announcement) -> None:
        """What another process appended, as it announced it: events that continue a table held are
        applied to it; the start of a game not held is kept undecoded (``held_or_heard`` builds it when a
        command meets the game); the seats whose token hashes the append named are remembered. Only a
        shortcut, never taken on trust: each command's append checks the head hash and the token's seat."""
        self._hear_events(heard.game_id, heard.first, heard.envelopes)
        for field_name, seat in heard.seats.items():
            self._keep(self._seats_heard, (heard.game_id, field_name.removeprefix("tok:")), seat)

    def follow(self, game_id: str, envs: Sequence[Mapping[str, Any]]) -> None:
        """Apply events another process appended to the game's table held, when they continue it (else
        nothing: the game is not held here, or this process made or already has them)."""
        held = self.known(game_id)
        if held is not None:
            self.caught_up(game_id, *held, envs)

    def _hear_events(self, game_id: str, first: int, envelopes: bytes) -> None:
        with self._lock:
            held = self._tables.get(game_id)
        if held is not None:
            if held[0].version == first - 1:
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
        that is an unbroken chain (then held); else None. Like ``known``, only a conditional append can
        rely on it."""
        held = self.known(game_id)
        if held is not None:
            return held
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

    # -- seats and facts ------------------------------------------------------------

    def remember_seat(self, game_id: str, token_digest: str, seat: int) -> None:
        """The token with hash ``token_digest`` is seat ``seat`` of the game (this process met it)."""
        self._keep(self._seats, (game_id, token_digest), seat)

    def facts(self, game_id: str) -> Facts | None:
        with self._lock:
            return self._facts.get(game_id)

    def remember_facts(self, game_id: str, facts: Facts) -> None:
        self._keep(self._facts, game_id, facts)

    def _keep(self, memory: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        with self._lock:
            memory[key] = value
            memory.move_to_end(key)
            while len(memory) > self.size * SEATS_PER_TABLE:
                memory.popitem(last=False)
