"""Tournament calls of ``Client`` (``docs/tournaments.md``): create, list, read, the organiser's commands,
standings, games, the tournament's own log (paged and live), its archive and its audit (of a stored
tournament, or of an archive uploaded to ``POST /v1/audits``).

The organiser's commands take the ``organiser_token`` of the creation's answer; an entrant
plays its games with its entrant token, which is its seat token in each of them.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from kifu.client.calls import Calls
from kifu.client.streams import ServerEvent, Stream, until
from kifu.client.types import (
    CreatedTournament,
    Entrant,
    Event,
    EventPage,
    Standings,
    TournamentArchive,
    TournamentAuditReport,
    TournamentGamesPage,
    TournamentList,
    TournamentStatus,
    TournamentSummary,
    TournamentTable,
    TournamentView,
)

TOURNAMENT_FINISHED = "tournament_finished"  # a tournament's log ends with it
Format = Literal["round-robin", "swiss", "duplicate"]


class TournamentCalls(Calls):
    """The ``/v1/tournaments`` part of ``Client``."""

    def create_tournament(
        self,
        game: str,
        entrants: Sequence[Entrant],
        format: Format,  # the body's field name
        *,
        options: Mapping[str, Any] | None = None,
        rounds: int | None = None,
        table_size: int | None = None,
        scoring: Sequence[int] | None = None,
        deals: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> CreatedTournament:
        """A new tournament, waiting for its organiser's ``start``; ``organiser_token`` and each human
        entrant's ``token`` are in the answer, and only there."""
        body: dict[str, Any] = {"game": game, "entrants": list(entrants), "format": format}
        given = {"options": options, "rounds": rounds, "table_size": table_size, "scoring": scoring, "deals": deals}
        body |= {k: list(v) if isinstance(v, Sequence) else v for k, v in given.items() if v is not None}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return cast(CreatedTournament, self.http.json("POST", "/v1/tournaments", body=body, headers=headers))

    def list_tournaments(
        self,
        *,
        game: str | None = None,
        status: TournamentStatus | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> TournamentList:
        """One page of tournaments, newest first (a read model: a few milliseconds behind the logs)."""
        params = {"game": game, "status": status, "limit": limit, "cursor": cursor}
        return cast(TournamentList, self.http.json("GET", "/v1/tournaments", params=params, idempotent=True))

    def iter_tournaments(self, *, page_size: int = 100, **filters: Any) -> Iterator[TournamentSummary]:
        """Every tournament ``list_tournaments(**filters)`` finds, page after page."""
        cursor = None
        while True:
            page = self.list_tournaments(limit=page_size, cursor=cursor, **filters)
            yield from page["items"]
            if (cursor := page["next"]) is None:
                return

    def tournament(self, tid: str, token: str | None = None) -> TournamentView:
        """The tournament now: its round's tables (with their games), byes, final standings."""
        return cast(TournamentView, self.http.json("GET", f"/v1/tournaments/{tid}", token=token, idempotent=True))

    def start_tournament(self, tid: str, organiser_token: str) -> TournamentView:
        return self._command(tid, "start", organiser_token)

    def pause_tournament(self, tid: str, organiser_token: str, reason: str | None = None) -> TournamentView:
        return self._command(tid, "pause", organiser_token, {"reason": reason})

    def resume_tournament(self, tid: str, organiser_token: str) -> TournamentView:
        return self._command(tid, "resume", organiser_token)

    def withdraw(self, tid: str, entrant: int, organiser_token: str, reason: str | None = None) -> TournamentView:
        """Pair ``entrant`` no more (its running games go on)."""
        return self._command(tid, f"entrants/{entrant}/withdraw", organiser_token, {"reason": reason})

    def forfeit(self, tid: str, game_id: str, seat: int, reason: str, organiser_token: str) -> TournamentView:
        """End a stalled game of the tournament: ``seat`` resigns it, for ``reason``."""
        body = {"seat": seat, "reason": reason}
        return self._command(tid, f"games/{game_id}/forfeit", organiser_token, body)

    def _command(self, tid: str, what: str, token: str, body: Mapping[str, Any] | None = None) -> TournamentView:
        path = f"/v1/tournaments/{tid}/{what}"
        return cast(TournamentView, self.http.json("POST", path, token=token, body=body))

    def standings(self, tid: str, token: str | None = None) -> Standings:
        """The standings read model (``version``: the last tournament event it has applied)."""
        path = f"/v1/tournaments/{tid}/standings"
        return cast(Standings, self.http.json("GET", path, token=token, idempotent=True))

    def tournament_games(
        self, tid: str, token: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> TournamentGamesPage:
        """One page of the tournament's tables that have a game, by round and table."""
        path, params = f"/v1/tournaments/{tid}/games", {"limit": limit, "cursor": cursor}
        return cast(TournamentGamesPage, self.http.json("GET", path, token=token, params=params, idempotent=True))

    def iter_tournament_games(
        self, tid: str, token: str | None = None, *, page_size: int = 50
    ) -> Iterator[TournamentTable]:
        """Every table of the tournament that has a game, page after page."""
        cursor = None
        while True:
            page = self.tournament_games(tid, token, limit=page_size, cursor=cursor)
            yield from page["items"]
            if (cursor := page["next"]) is None:
                return

    def tournament_events(
        self, tid: str, token: str | None = None, *, after: int = 0, limit: int | None = None
    ) -> EventPage:
        """One page of the tournament's own log after event ``after``."""
        path, params = f"/v1/tournaments/{tid}/events", {"after": after, "limit": limit}
        return cast(EventPage, self.http.json("GET", path, token=token, params=params, idempotent=True))

    def tournament_stream(
        self, tid: str, *, after: int = 0, last_event_id: str | None = None
    ) -> Generator[ServerEvent[Event], None, None]:
        """The tournament's log as it happens, to ``tournament_finished``, across reconnections."""
        opened = Stream(f"/v1/tournaments/{tid}/events/stream", {"after": after}, None, last_event_id)
        return self._follow(opened, until(TOURNAMENT_FINISHED))

    def tournament_record(self, tid: str, token: str | None = None) -> TournamentArchive:
        """The archive: the tournament's log and every game's record (``kifu verify-tournament``)."""
        path = f"/v1/tournaments/{tid}/record"
        return cast(TournamentArchive, self.http.json("GET", path, token=token, idempotent=True))

    def tournament_audit(self, tid: str, token: str | None = None) -> TournamentAuditReport:
        """The server's verification of the tournament and every game of it."""
        path = f"/v1/tournaments/{tid}/audit"
        return cast(TournamentAuditReport, self.http.json("GET", path, token=token, idempotent=True))

    def audit_archive(self, archive: Mapping[str, Any] | bytes) -> TournamentAuditReport:
        """Verify an archive (a parsed one, or its bytes as they are) on the server, as ``tournament_audit``
        and ``kifu verify-tournament`` do: ``POST /v1/audits``, which stores nothing. A document whose
        top-level ``format`` is not ``kifu-tournament/1`` is checked as a game record instead (its report
        is then ``Client.audit_record``'s)."""
        data = archive if isinstance(archive, bytes) else json.dumps(archive).encode()
        return cast(TournamentAuditReport, self.http.json("POST", "/v1/audits", data=data, idempotent=True))
