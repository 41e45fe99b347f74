"""Stream tickets, and each seat's turn across games: what a browser's ``EventSource`` needs.

A browser cannot send ``Authorization`` with an ``EventSource``, and a seat
token must never appear in a URL (logs, history, referrers keep URLs). So a
seat trades its token (in a header or a body) for a *ticket*: random, valid
for ``ttl_s`` seconds (any number of times, so that the browser's automatic
reconnects work), good for reading one game as one seat, or for the turn
notifications of a list of seats. Only the ticket's SHA-256 is stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from domain.canonical import sha256_hex
from service.errors import InvalidRequest, Unauthorized
from service.games import GameService, rfc3339
from service.ports import TicketStore

TICKET_BYTES = 32
DEFAULT_TICKET_TTL_S = 120
MAX_WATCHED_SEATS = 100


@dataclass
class Streams:
    """Issues and redeems stream tickets; reports a seat's turn in a game."""

    games: GameService
    tickets: TicketStore
    ttl_s: int = DEFAULT_TICKET_TTL_S

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

    def seat_of(self, game_id: str, ticket: str) -> int:
        """The seat a game ticket reads as, or ``Unauthorized``."""
        grants = self.tickets.get(sha256_hex(ticket.encode()))
        if grants is None or grants.get("game") != game_id:
            raise Unauthorized("this stream ticket is unknown, expired, or for another game; ask for a new one")
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

    def watched(self, ticket: str) -> list[tuple[str, int]]:
        """The seats a player ticket watches, or ``Unauthorized``."""
        grants = self.tickets.get(sha256_hex(ticket.encode()))
        if grants is None or "seats" not in grants:
            raise Unauthorized("this stream ticket is unknown, expired, or not a player ticket; ask for a new one")
        return [(str(g), int(s)) for g, s in grants["seats"]]

    def seat_status(self, game_id: str, seat: int) -> dict[str, Any]:
        """Where ``seat`` stands in ``game_id``: is it its turn (``turn``: the version the turn began),
        until when, and the result once over."""
        table, _head = self.games.tables.load(game_id)
        return {
            "game": game_id,
            "seat": seat,
            "version": table.version,
            "turn": table.turn_version,
            "status": "finished" if table.finished else "active",
            "your_turn": seat in table.to_act,
            "deadline": self.games.deadlines(table)[seat],
            "result": table.result,
        }

    def changed(self, versions: Mapping[str, int], block_ms: int) -> set[str]:
        """The games among ``versions`` that moved past their version, waiting up to ``block_ms``."""
        return self.games.store.wait_many(versions, block_ms)

    def _issue(self, grants: Mapping[str, Any]) -> tuple[str, str]:
        ticket = secrets.token_urlsafe(TICKET_BYTES)
        self.tickets.put(sha256_hex(ticket.encode()), grants, self.ttl_s)
        return ticket, rfc3339(self.games.clock() + timedelta(seconds=self.ttl_s))
