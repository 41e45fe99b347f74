"""Reading games: a table at the game's head (memory, then snapshot, then the log's tail), and who calls.

A load checks the head in the store: answers are never given from the memory alone. (A command may
start from the memory instead, because its conditional append is the check: ``service.commands``.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from domain import engine
from domain.engine import Table
from domain.record import to_event
from service.errors import Forbidden, GameNotFound, Unauthorized
from service.memory import Facts, GameMemory, token_hash
from service.ports import GameLog, Head, Notary, SnapshotLoader

GAME_ID_PREFIX = "g"
HOLD, TOURNAMENT = "hold", "tournament"  # meta fields of a tournament's game
SIGNATURE = "signature"  # meta field of a sealed game: its head's signature, written with the seal
TAIL_READ = 64  # events read with the head of a game held here; a longer tail is read as usual
FIRST_READ = 64  # events read with a command's identification of a game this process does not hold


def log_missing(notary: Notary, store: GameLog, game_ids: Sequence[str]) -> None:
    """Log in ``notary`` every signed game of ``game_ids`` its tree does not hold yet: one round trip asks
    which, only those are read and added (nothing is written for the logged ones; a game sealed by a server
    without a key is not signed, nor logged). The projector and a tournament's archive both catch up so."""
    for game_id in notary.missing(game_ids):
        raw = store.look(game_id, [SIGNATURE]).fields[0]
        if raw is not None:
            notary.add(json.loads(raw))


@dataclass(frozen=True)
class Caller:
    """An identified caller: their seat (None: spectator) and the head seen while identifying; ``table``:
    the game at that head, when this process holds it now (None: load it)."""

    seat: int | None
    head: Head
    table: Table | None = field(default=None, compare=False, repr=False)


class GameReader:
    """Loads tables at the game's head and identifies callers, reusing the process's memory."""

    def __init__(self, log: GameLog, memory: GameMemory, snapshots: SnapshotLoader | None = None) -> None:
        self.log = log
        self.memory = memory
        self.snapshots = snapshots

    def load(self, game_id: str, head: Head | None = None) -> tuple[Table, Head]:
        """The table at ``head`` (read now when not given), and that head.

        With the game held and no head given, the head and the events since the table held are read in
        one round trip.
        """
        if not game_id.startswith(GAME_ID_PREFIX):  # the store also holds tournaments' logs
            raise GameNotFound(f"no game {game_id!r}")
        if head is None:
            refreshed = self._refreshed(game_id)
            if refreshed is not None:
                return refreshed
        head = head or self.log.head(game_id)
        if head.version == 0:
            raise GameNotFound(f"no game {game_id!r}")
        table, held = self.memory.known(game_id) or (None, None)
        if table is not None and held is not None:
            ahead = table.version > head.version  # another greenlet appended meanwhile
            other = table.version == head.version and held.hash != head.hash  # a table of another log
            if ahead or other:
                table = None
        built = self._built(game_id, head, table, held) if table is not None else None
        if built is None:  # nothing held, or the table held is not a prefix of this log
            built = self._built(game_id, head, self.snapshots(game_id) if self.snapshots else None, None)
        assert built is not None
        if built.version == head.version:  # else the log is shorter than its head says: hold nothing
            self.memory.remember(game_id, built, head.hash)
        return built, head

    def _built(self, game_id: str, head: Head, start: Table | None, held: Head | None) -> Table | None:
        """``start`` (None: nothing) brought up to ``head`` with the log's events since; None when the log
        does not continue ``start`` (its first event's ``prev`` is not the hash of ``held``, the head
        ``start`` was at, when known)."""
        after = start.version if start is not None else 0
        if after >= head.version:
            return start
        envs = self.log.read(game_id, after, head.version - after)
        if start is not None and held is not None and envs and envs[0]["prev"] != held.hash:
            return None
        return engine.replay([to_event(e) for e in envs], start)

    def caught_up(self, game_id: str, table: Table, head: Head) -> tuple[Table, Head]:
        """``table`` (at ``head``, from this process's memory) brought up to the game's head: one round
        trip when the log continues it, else as ``load``."""
        return self._refreshed(game_id, (table, head)) or self.load(game_id)

    def _refreshed(self, game_id: str, held: tuple[Table, Head] | None = None) -> tuple[Table, Head] | None:
        """The table held (``held``, else the memory's) brought up to the game's head in one round trip
        (None: the game is not held, or what was read does not continue it)."""
        held = held or self.memory.known(game_id)
        if held is None:
            return None
        table, was = held
        seen = self.log.look(game_id, after=was.version, limit=TAIL_READ)
        if seen.head.version == 0 or seen.head.version != was.version + len(seen.envelopes):
            return None
        if not seen.envelopes:
            return (table, seen.head) if seen.head == was else None
        return self.memory.caught_up(game_id, table, was, seen.envelopes)

    def identify(
        self,
        game_id: str,
        token: str | None,
        read_log: bool = False,
        ticket_seat: Callable[[], int] | None = None,
        digest: str | None = None,
    ) -> Caller:
        """Who is calling (a seat, or None for a spectator) and the game's head, in one round trip;
        ``read_log``: with the start of the log too, so that a short game this process does not hold
        is held once the caller is known (no second read before a command). ``ticket_seat``: the seat
        a stream ticket opens (it raises ``Unauthorized`` for a bad ticket), asked only once the game
        is known to exist and the token names no seat; that seat reads a held game as its token does.
        ``digest``: the token's hash, when the caller has it already."""
        if not game_id.startswith(GAME_ID_PREFIX):  # the store also holds tournaments' logs
            raise GameNotFound(f"no game {game_id!r}")
        digest = digest or (token_hash(token) if token is not None else None)
        token_field = f"tok:{digest}" if digest is not None else "-"
        seen = self.log.look(game_id, [token_field, HOLD, TOURNAMENT], limit=FIRST_READ if read_log else 0)
        seat, hold, tournament = seen.fields
        if seen.head.version == 0:
            raise GameNotFound(f"no game {game_id!r}")
        if token is not None and seat is None and not (tournament and self._entrant_of(tournament, token)):
            raise Unauthorized("this token is not a seat of this game")
        by_ticket = ticket_seat() if seat is None and ticket_seat is not None else None
        if hold == "1" and seat is None and by_ticket is None:
            raise Forbidden(
                "this game belongs to a duplicate tournament round whose deal other tables are still playing: "
                "only its own seats may read it until the round is over"
            )
        table = self.memory.meet(game_id, digest, int(seat) if seat is not None else None, seen.envelopes, seen.head)
        return Caller(int(seat) if seat is not None else by_ticket, seen.head, table)

    def _entrant_of(self, tournament: str, token: str) -> bool:
        """Whether ``token`` is an entrant's (or the organiser's) of ``tournament``: in another table's
        game of the same event it reads as a spectator, not as an unknown token."""
        seen = self.log.look(tournament, [f"tok:{token_hash(token)}"])
        return seen.head.version > 0 and seen.fields[0] is not None

    def facts(self, game_id: str) -> Facts:
        """The game's unchanging meta facts, from the memory or read once."""
        known = self.memory.facts(game_id)
        if known is None:
            meta = self.log.meta(game_id)
            known = Facts(meta["seed"], meta.get(TOURNAMENT), meta.get(HOLD) is not None)
            self.memory.remember_facts(game_id, known)
        return known
