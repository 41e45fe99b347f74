"""Stream tickets, and each seat's turn across games: what a browser's ``EventSource`` needs.

A browser cannot send ``Authorization`` with an ``EventSource``, and a seat
token must never appear in a URL (logs, history, referrers keep URLs). So a
seat trades its token (in a header or a body) for a *ticket*: random, good for
reading one game as one seat, or for the turn notifications of a list of
seats. Only the ticket's SHA-256 is stored.

A ticket has two lives (docs/api.md, "Stream tickets"):

* it *opens* streams for ``ttl_s`` seconds after it was issued, any number of
  times;
* a ticket that opened a stream goes on *resuming* it, with ``Last-Event-ID``
  (which an ``EventSource`` sends by itself on every reconnect), for as long as
  the stream is followed: each resumption extends that life by ``resume_s``
  (a day by default), so only a client away for longer than that needs a new
  ticket. Without ``Last-Event-ID`` an expired ticket opens nothing.

So a page that does nothing but ``new EventSource(url)`` follows its game to
the end, across the server's own closes (``SSE_MAX_SECONDS``) and network
drops, and a ticket copied out of a log once its minutes are over reads only
a stream its owner already followed, and only one seat's view of one game: what
the game's record shows everyone once it ends.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from domain.canonical import sha256_hex
from domain.record import rfc3339
from service.errors import InvalidRequest, Unauthorized
from service.games import GameService
from service.ports import EventLog, TicketStore
from service.reader import GameReader

TICKET_BYTES = 32
DEFAULT_TICKET_TTL_S = 120
DEFAULT_TICKET_RESUME_S = 24 * 3600
MAX_WATCHED_SEATS = 100


@dataclass
class Streams:
    """Issues and redeems stream tickets; reports a seat's turn in a game."""

    games: GameService  # who a token is (identify)
    reader: GameReader  # a seat's turn (seat_status)
    store: EventLog  # the games' logs, waited on (/v1/stream)
    tickets: TicketStore
    ttl_s: int = DEFAULT_TICKET_TTL_S
    resume_s: int = DEFAULT_TICKET_RESUME_S

    def game_ticket(self, game_id: str, seat: int | None) -> dict[str, Any]:
        """A ticket to read ``game_id``'s live events as ``seat``."""
        if seat is None:
            raise Unauthorized("a stream ticket is for a seat: send its token (spectators need no ticket)")
        ticket, expires = self._issue({"game": game_id, "seat": seat})
        return {
            "ticket": ticket,
            "expires_at": expires,
            "game": game_id,
            "seat": seat,
            "stream": f"/v1/games/{game_id}/events/stream?ticket={ticket}",
        }

    def seat_of(self, game_id: str, ticket: str, resuming: bool = False) -> int:
        """The seat a game ticket reads as (``resuming``: the request carries ``Last-Event-ID``), or
        ``Unauthorized``."""
        grants = self._redeem(ticket, resuming, lambda g: g.get("game") == game_id, "for another game")
        return int(grants["seat"])

    def player_ticket(self, seats: Sequence[tuple[str, str]]) -> dict[str, Any]:
        """A ticket for the turn notifications of several seats: ``[(game id, seat token), ...]``."""
        if not 1 <= len(seats) <= MAX_WATCHED_SEATS:
            raise InvalidRequest(f"watch 1 to {MAX_WATCHED_SEATS} seats", ("seats",))
        watched = []
        for i, (game_id, token) in enumerate(seats):
            try:
                caller = self.games.identify(game_id, token)
            except Unauthorized:
                raise Unauthorized(f"seats[{i}]: this token is not a seat of game {game_id!r}") from None
            if [game_id, caller.seat] not in watched:
                watched.append([game_id, caller.seat])
        ticket, expires = self._issue({"seats": watched})
        return {
            "ticket": ticket,
            "expires_at": expires,
            "seats": [{"game": g, "seat": s} for g, s in watched],
            "stream": f"/v1/stream?ticket={ticket}",
        }

    def watched(self, ticket: str, resuming: bool = False) -> list[tuple[str, int]]:
        """The seats a player ticket watches (``resuming``: the request carries ``Last-Event-ID``), or
        ``Unauthorized``."""
        grants = self._redeem(ticket, resuming, lambda g: "seats" in g, "not a player ticket")
        return [(str(g), int(s)) for g, s in grants["seats"]]

    def seat_status(self, game_id: str, seat: int) -> dict[str, Any]:
        """Where ``seat`` stands in ``game_id``: is it its turn (``turn``: the version the turn began),
        until when, and the result once over."""
        table, _head = self.reader.load(game_id)
        return {
            "game": game_id,
            "seat": seat,
            "version": table.version,
            "turn": table.turn_version,
            "status": "finished" if table.finished else "active",
            "your_turn": seat in table.to_act,
            "deadline": self.games.deadlines(table)[seat],
            "result": table.result,
            "open_seats": [s.seat for s in table.seats if s.open],
        }

    def notices(self, before: Seen | None, now: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """What a player stream says of one seat whose stream has delivered ``before`` (None: nothing yet)
        and which now stands at ``now`` (``seat_status``): ``[(event, data)]``, empty when nothing changed.

        ``status`` when anything moved; ``seat_taken`` for each seat of the game someone joined since;
        ``your_turn`` when the seat's turn began after what was delivered (a turn is only ever
        narrowed by secret commitments, which do not move ``turn``); ``game_over`` once."""
        seen = Seen.of(now)
        if before == seen:
            return []
        out: list[tuple[str, dict[str, Any]]] = [("status", dict(now))]
        if before is not None:
            for taken in sorted(before.open_seats - seen.open_seats):
                name = self.reader.load(now["game"])[0].seats[taken].name
                out.append(("seat_taken", {**now, "taken": {"seat": taken, "name": name}}))
        if now["your_turn"] and (before is None or now["turn"] > before.version):
            out.append(("your_turn", dict(now)))
        if seen.over and not (before is not None and before.over):
            out.append(("game_over", dict(now)))
        return out

    def changed(self, versions: Mapping[str, int], block_ms: int) -> set[str]:
        """The games among ``versions`` that moved past their version, waiting up to ``block_ms``."""
        return self.store.wait_many(versions, block_ms)

    def _issue(self, grants: Mapping[str, Any]) -> tuple[str, str]:
        ticket = secrets.token_urlsafe(TICKET_BYTES)
        expires = self.games.clock() + timedelta(seconds=self.ttl_s)
        self.tickets.put(sha256_hex(ticket.encode()), {**grants, "opens_until": expires.timestamp()}, self.ttl_s)
        return ticket, rfc3339(expires)

    def _redeem(
        self, ticket: str, resuming: bool, fits: Callable[[Mapping[str, Any]], bool], unfit: str
    ) -> dict[str, Any]:
        """What ``ticket`` grants, if it may open a stream now, or resume the one it opened (module doc);
        its resumable life is extended by ``resume_s``."""
        digest = sha256_hex(ticket.encode())
        grants = self.tickets.get(digest)
        if grants is None or not fits(grants):
            raise Unauthorized(f"this stream ticket is unknown, expired, or {unfit}; ask for a new one")
        if self.games.clock().timestamp() > float(grants.get("opens_until", "inf")):
            if not grants.get("opened"):
                raise Unauthorized("this stream ticket expired before it opened a stream; ask for a new one")
            if not resuming:
                raise Unauthorized(
                    "this stream ticket expired: it only resumes the stream it opened (send Last-Event-ID); "
                    "ask for a new one to open another"
                )
        grants["opened"] = True
        self.tickets.put(digest, grants, max(self.resume_s, self.ttl_s))
        return grants


@dataclass(frozen=True)
class Seen:
    """What a player stream has delivered of one watched seat: enough to resume without repeating."""

    version: int
    open_seats: frozenset[int]
    over: bool

    @classmethod
    def of(cls, status: Mapping[str, Any]) -> Seen:
        return cls(int(status["version"]), frozenset(status["open_seats"]), status["status"] == "finished")


# A player stream's event id is what it has delivered of every watched seat, in the ticket's order,
# joined by "." : "-" for a seat not delivered yet, else its version, "o<hex mask>" of its game's open
# seats when there are any, and "x" once its game_over was sent. Clients treat it as opaque.
_SEEN = re.compile(r"(?P<version>[0-9]{1,19})(?:o(?P<open>[0-9a-f]{1,16}))?(?P<over>x?)")


def encode_seen(seen: Sequence[Seen | None]) -> str:
    """The event id of a player stream that has delivered ``seen``."""
    return ".".join("-" if s is None else _seen_text(s) for s in seen)


def _seen_text(seen: Seen) -> str:
    mask = sum(1 << seat for seat in seen.open_seats)
    return f"{seen.version}" + (f"o{mask:x}" if mask else "") + ("x" if seen.over else "")


def decode_seen(text: str, watched: int) -> list[Seen | None] | None:
    """What a player stream's ``Last-Event-ID`` says was delivered of ``watched`` seats; None for an id
    this server did not send (the stream then starts afresh, as a game stream does with a bad id)."""
    parts = text.split(".")
    if len(parts) != watched:
        return None
    out: list[Seen | None] = []
    for part in parts:
        found = _SEEN.fullmatch(part)
        if part == "-":
            out.append(None)
        elif found is None:
            return None
        else:
            mask = int(found["open"] or "0", 16)
            seats = frozenset(seat for seat in range(mask.bit_length()) if mask >> seat & 1)
            out.append(Seen(int(found["version"]), seats, found["over"] == "x"))
    return out
