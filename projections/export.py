"""Finished games for analysts (``GET /v1/games/export``, ``kifu export``): their records, one at a time.

The games list (``projections.games_list``) says which games are finished and matches the filters (a
game, a player's name, a tournament); ``since`` and ``until`` bound the games' creation times (RFC 3339,
``since`` included, ``until`` not). Games come newest first, as the list gives them, so the scan stops
at the first game created before ``since``. Each record is the one ``GET /v1/games/{id}/record``
answers: complete, signed and with its inclusion proof, so every line of an export verifies alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from projections.games_list import GamesList
from service.games import GameService

PAGE = 200


@dataclass(frozen=True)
class ExportFilter:
    """Which finished games to export (every field optional), and at most how many."""

    game: str | None = None
    player: str | None = None
    tournament: str | None = None
    since: str | None = None  # RFC 3339, as the games' created_at
    until: str | None = None
    limit: int = 100


def finished_records(games_list: GamesList, games: GameService, wanted: ExportFilter) -> Iterator[dict[str, Any]]:
    """The records of the finished games ``wanted`` picks, newest first, at most ``wanted.limit``."""
    sent, cursor = 0, None
    while sent < wanted.limit:
        page = games_list.query(
            game=wanted.game,
            status="finished",
            player=wanted.player,
            tournament=wanted.tournament,
            limit=PAGE,
            cursor=cursor,
        )
        for item in page["items"]:
            created = _instant(item["created_at"])
            if wanted.since is not None and created < _instant(wanted.since):
                return  # newest first: every game after it is older still
            if wanted.until is not None and created >= _instant(wanted.until):
                continue
            record = games.record(item["id"])
            if not record.get("complete"):
                continue  # finished but still held unsealed by its tournament: its record proves nothing yet
            yield record
            sent += 1
            if sent == wanted.limit:
                return
        cursor = page["next"]
        if cursor is None:
            return


def _instant(moment: str) -> str:
    """An RFC 3339 time (or a date: its midnight, UTC) as a string that sorts as the time does."""
    parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
