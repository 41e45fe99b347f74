"""``Client``: every game, stream and record call of Kifu's REST API, typed (``docs/api.md``).

A seat acts with its token (``token=``, sent as ``Authorization: Bearer``); without one a
call is a spectator's. Error answers raise ``ApiError`` subclasses (``kifu.client.errors``).
Tournaments are in ``TournamentCalls`` (``kifu.client.tournaments``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

import requests

from kifu.client.streams import (
    DEFAULT_MAX_FAILURES,
    DEFAULT_STREAM_TIMEOUT_S,
    PlayerStreamJudge,
    ServerEvent,
    Stream,
    until,
)
from kifu.client.tournaments import TournamentCalls
from kifu.client.transport import DEFAULT_BACKOFF_S, DEFAULT_RETRIES, DEFAULT_TIMEOUT, Timeout, Transport
from kifu.client.types import (
    Action,
    ActionAnswer,
    AuditReport,
    Catalog,
    CreatedGame,
    Event,
    EventPage,
    GameList,
    GameSummary,
    GameView,
    Joined,
    LegalActions,
    Player,
    Record,
    ReplayItem,
    ReplayStep,
    SeatStatus,
    Steps,
    StreamTicket,
)

GAME_SEALED = "game_sealed"  # a game's log ends with it


def human(name: str) -> Player:
    """A seat for a person named ``name``: its token comes in the creation's answer."""
    return {"name": name}


def bot(name: str, level: str = "random") -> Player:
    """A seat the server's workers play, at a bot ``level`` of the catalogue (``random``, ``greedy``...)."""
    return {"name": name, "bot": level}


def open_seat() -> Player:
    """A seat anyone may take later (``Client.join``)."""
    return {"open": True}


def new_key() -> str:
    """A fresh ``Idempotency-Key``."""
    return f"kifu-py-{uuid.uuid4().hex}"


class Client(TournamentCalls):
    """A synchronous client of one Kifu server.

    ``timeout`` bounds every request (seconds, or ``(connect, read)``); ``retries`` is how many
    times a request that is safe to repeat is sent again after a connection failure or a 503
    (``kifu.client.transport``). ``stream_timeout`` is the longest silence a stream may keep
    (the server sends heartbeats) before it is taken for dropped and reopened. Pass a
    ``requests.Session`` to share connections, proxies or certificates with other code.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        timeout: Timeout = DEFAULT_TIMEOUT,
        session: requests.Session | None = None,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        stream_timeout: float = DEFAULT_STREAM_TIMEOUT_S,
        stream_failures: int = DEFAULT_MAX_FAILURES,
    ) -> None:
        super().__init__(Transport(base_url, timeout, session, retries, backoff_s), stream_timeout, stream_failures)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the session (only one this client made itself)."""
        self.http.close()

    # ---- the catalogue and games ----------------------------------------------------------------

    def catalog(self) -> Catalog:
        """The games this server runs: options (JSON Schema fragments), player counts, bot levels."""
        return cast(Catalog, self.http.json("GET", "/v1/catalog", idempotent=True))

    def create_game(
        self,
        game: str,
        players: Sequence[Player],
        *,
        options: Mapping[str, Any] | None = None,
        move_timeout_s: float | None = None,
        deal: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> CreatedGame:
        """A new game; each human seat's ``token`` is in the answer, and only there.

        ``move_timeout_s`` is the option of that name (a human seat that takes longer is played
        for). With ``idempotency_key`` a repeated request answers the same game with every token
        ``None``; the client never repeats a creation by itself unless the server said 503.
        """
        chosen = dict(options or {})
        if move_timeout_s is not None:
            chosen["move_timeout_s"] = move_timeout_s
        body = {"game": game, "players": list(players), "options": chosen or None, "deal": deal}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return cast(CreatedGame, self.http.json("POST", "/v1/games", body=body, headers=headers))

    def list_games(
        self,
        *,
        game: str | None = None,
        status: Literal["active", "finished"] | None = None,
        player: str | None = None,
        tournament: str | None = None,
        open: bool | None = None,  # the query parameter's name
        limit: int | None = None,
        cursor: str | None = None,
    ) -> GameList:
        """One page of games, newest first; ``open=True``: only games with a seat free to join."""
        params: dict[str, Any] = {"game": game, "status": status, "player": player, "tournament": tournament}
        params |= {"open": _flag(open), "limit": limit, "cursor": cursor}
        return cast(GameList, self.http.json("GET", "/v1/games", params=params, idempotent=True))

    def iter_games(self, *, page_size: int = 100, **filters: Any) -> Iterator[GameSummary]:
        """Every game ``list_games(**filters)`` finds, page after page."""
        cursor = None
        while True:
            page = self.list_games(limit=page_size, cursor=cursor, **filters)
            yield from page["items"]
            if (cursor := page["next"]) is None:
                return

    def join(self, game_id: str, seat: int, name: str, *, idempotency_key: str | None = None) -> Joined:
        """Take open seat ``seat`` as ``name``; the answer's ``token`` is the seat's, shown only here."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        path = f"/v1/games/{game_id}/seats/{seat}/join"
        return cast(Joined, self.http.json("POST", path, body={"name": name}, headers=headers))

    def view(self, game_id: str, token: str | None = None) -> GameView:
        """The game as ``token``'s seat sees it (without a token: as a spectator)."""
        return cast(GameView, self.http.json("GET", f"/v1/games/{game_id}", token=token, idempotent=True))

    def legal_actions(self, game_id: str, token: str | None = None) -> LegalActions:
        """Every action the seat may take now, exactly as ``act`` takes them (none when not its turn)."""
        path = f"/v1/games/{game_id}/actions"
        return cast(LegalActions, self.http.json("GET", path, token=token, idempotent=True))

    def act(
        self,
        game_id: str,
        action: Action,
        token: str,
        *,
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> ActionAnswer:
        """Take ``action`` as ``token``'s seat: the new version, status, seats to act and events.

        Each call carries an ``Idempotency-Key`` (a fresh one unless given), so that a retry after a
        lost answer or a 503 is answered with the first answer and acts only once. With
        ``expected_version`` a game that moved on raises ``VersionConflict`` instead of judging
        the action on the new state.
        """
        body: dict[str, Any] = {"action": action}
        if expected_version is not None:
            body["expected_version"] = expected_version
        headers = {"Idempotency-Key": idempotency_key or new_key()}
        path = f"/v1/games/{game_id}/actions"
        answer = self.http.json("POST", path, token=token, body=body, headers=headers, idempotent=True)
        return cast(ActionAnswer, answer)

    def resign(self, game_id: str, token: str) -> ActionAnswer:
        """Resign the seat (any game, any time while it runs): it ranks last."""
        return self.act(game_id, {"type": "resign"}, token)

    # ---- logs, streams and tickets ----------------------------------------------------------------

    def events(self, game_id: str, token: str | None = None, *, after: int = 0, limit: int | None = None) -> EventPage:
        """One page of the log after event ``after``, as the seat (or a spectator) may see it."""
        params = {"after": after, "limit": limit}
        path = f"/v1/games/{game_id}/events"
        return cast(EventPage, self.http.json("GET", path, token=token, params=params, idempotent=True))

    def iter_events(self, game_id: str, token: str | None = None, *, after: int = 0) -> Iterator[Event]:
        """The log after ``after`` as it is now, page after page."""
        while True:
            page = self.events(game_id, token, after=after, limit=1000)
            yield from page["items"]
            if page["next"] is None:
                return
            after = page["next"]

    def stream(
        self,
        game_id: str,
        token: str | None = None,
        *,
        ticket: str | None = None,
        after: int = 0,
        last_event_id: str | None = None,
    ) -> Generator[ServerEvent[Event], None, None]:
        """The game's events as they happen (``event`` the type, ``data`` the event), to its last
        (``game_sealed``), across reconnections: the stream resumes after the last ``id`` seen.

        A seat's token goes in ``Authorization`` on the stream itself; ``ticket`` (from
        ``stream_ticket``) is for code that holds a ticket and not the token. Leave the loop early
        with ``break`` or ``close()``: the connection closes with the generator.
        """
        params: dict[str, Any] = {"after": after}
        if ticket is not None:
            params["ticket"] = ticket
        opened = Stream(f"/v1/games/{game_id}/events/stream", params, token, last_event_id)
        return self._follow(opened, until(GAME_SEALED))

    def stream_ticket(self, game_id: str, token: str) -> StreamTicket:
        """A short-lived ticket that opens this game's stream as the seat (for a URL: an ``EventSource``)."""
        path = f"/v1/games/{game_id}/stream-tickets"
        return cast(StreamTicket, self.http.json("POST", path, token=token, idempotent=True))

    def player_ticket(self, seats: Sequence[tuple[str, str]]) -> StreamTicket:
        """A ticket for the turns of several seats, ``[(game id, token), ...]`` (the tokens in the body)."""
        body = {"seats": [{"game": game, "token": token} for game, token in seats]}
        return cast(StreamTicket, self.http.json("POST", "/v1/stream-tickets", body=body, idempotent=True))

    def player_stream(self, seats: Sequence[tuple[str, str]]) -> Generator[ServerEvent[SeatStatus], None, None]:
        """Each seat's news across its games, ``[(game id, token), ...]``: ``status`` whenever a game
        moves, ``seat_taken`` when someone joins an open seat, ``your_turn`` when a turn of the seat
        begins, ``game_over``; it ends once every game is over (``data`` is the seat's ``SeatStatus``).

        It asks for a ticket itself, and for a new one when a reconnection finds the old one refused.
        Each piece of news comes once, also from a server that starts again from the top on a
        reconnection.
        """
        ticket = self.player_ticket(seats)
        watched = [(s["game"], s["seat"]) for s in ticket.get("seats", [])]
        judge = PlayerStreamJudge(watched)
        return self._follow(Stream(ticket["stream"]), judge, renew=lambda: self.player_ticket(seats)["stream"])

    # ---- replays, records and audits ------------------------------------------------------------

    def replay(self, game_id: str, step: int, *, as_seat: int | None = None, token: str | None = None) -> ReplayStep:
        """The game's view after event ``step`` (as ``as_seat`` knew it, where allowed), with that event."""
        params = {"step": step, "as": as_seat}
        path = f"/v1/games/{game_id}/replay"
        return cast(ReplayStep, self.http.json("GET", path, token=token, params=params, idempotent=True))

    def steps(
        self,
        game_id: str,
        from_: int = 1,
        limit: int = 200,
        *,
        as_seat: int | None = None,
        token: str | None = None,
    ) -> Steps:
        """``replay`` of every step from ``from_``, ``limit`` of them (at most 1000) in one answer."""
        params = {"from": from_, "limit": limit, "as": as_seat}
        path = f"/v1/games/{game_id}/steps"
        return cast(Steps, self.http.json("GET", path, token=token, params=params, idempotent=True))

    def iter_steps(
        self,
        game_id: str,
        *,
        as_seat: int | None = None,
        token: str | None = None,
        from_: int = 1,
        page_size: int = 1000,
    ) -> Iterator[ReplayItem]:
        """Every step of the replay from ``from_`` to the game's last step now, page after page."""
        while True:
            page = self.steps(game_id, from_, page_size, as_seat=as_seat, token=token)
            yield from page["items"]
            if page["next"] is None:
                return
            from_ = page["next"]

    def record(self, game_id: str, token: str | None = None) -> Record:
        """The portable record (complete once the game is over): ``kifu verify`` checks it offline."""
        return cast(Record, self.http.json("GET", f"/v1/games/{game_id}/record", token=token, idempotent=True))

    def audit(self, game_id: str, token: str | None = None) -> AuditReport:
        """The server's verification of the stored log."""
        return cast(AuditReport, self.http.json("GET", f"/v1/games/{game_id}/audit", token=token, idempotent=True))

    def audit_record(self, record: Mapping[str, Any] | bytes) -> AuditReport:
        """Verify a game record (a parsed one, or its bytes as they are): the same report; nothing is stored.
        A tournament archive goes to ``audit_archive``."""
        data = record if isinstance(record, bytes) else json.dumps(record).encode()
        return cast(AuditReport, self.http.json("POST", "/v1/audits", data=data, idempotent=True))

    def ready(self) -> bool:
        """Whether the server answers and reaches its event store (``/readyz``)."""
        try:
            response = self.http.session.get(self.http.url("/readyz"), timeout=self.http.timeout)
        except requests.RequestException:
            return False
        return response.ok


def _flag(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")
