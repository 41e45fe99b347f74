"""The tournaments list read model and its query (newest first, cursor paginated), for the lobby.

Per tournament: a hash ``kifu:proj:tournaments:summary:<id>`` (the summary: only public settings and
counts, never a token, a seed or a deal). Indexes are sorted sets laid out as the games list's
(``projections.games_list``): members of score 0 that sort lexically as ``<10^13 - created_ms>:<id>``,
so "newest first" is plain lexical order and a cursor is the last member seen. One index of every
tournament, one per game and one per status; a tournament moves between the status indexes as its
log moves. The projector writes it whenever it folds a tournament's log again (with the standings),
and ``kifu rebuild-projections`` drops and rebuilds it with every other ``kifu:proj:*`` key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis

from adapters.redis_store import text
from domain.tournament.model import CREATED, FINISHED, PAUSED, RUNNING, Tournament
from projections.games_list import PREFIX, sort_member

LIST_PREFIX = f"{PREFIX}:tournaments"
ALL_INDEX = f"{LIST_PREFIX}:idx:all"
STATUSES = (CREATED, RUNNING, PAUSED, FINISHED)
PAGE_READ = 50  # index members read per round trip when filters skip some


def summary_key(tournament_id: str) -> str:
    return f"{LIST_PREFIX}:summary:{tournament_id}"


def index_key(field: str, value: str) -> str:
    return f"{LIST_PREFIX}:idx:{field}:{value}"


def apply(pipe: redis.client.Pipeline, state: Tournament, created_at: str) -> None:
    """Queue the summary and indexes of ``state`` (the tournament after its whole log so far) on ``pipe``.

    Idempotent: the same state written twice leaves the same keys.
    """
    member = sort_member(created_at, state.id)
    s = state.settings
    for key in (ALL_INDEX, index_key("game", s.game), index_key("status", state.status)):
        pipe.zadd(key, {member: 0})
    for other in STATUSES:
        if other != state.status:
            pipe.zrem(index_key("status", other), member)
    summary = {
        "id": state.id,
        "game": s.game,
        "format": s.format,
        "rounds": s.rounds,
        "table_size": s.table_size,
        "status": state.status,
        "round": state.round,
        "entrants": len(s.entrants),
        "created_at": created_at,
        "version": state.version,
    }
    pipe.hset(summary_key(state.id), mapping=summary)  # type: ignore[arg-type]  # the stubs' value type is narrower


class TournamentsList:
    """Queries on the tournaments list read model."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def query(
        self, game: str | None = None, status: str | None = None, limit: int = 20, cursor: str | None = None
    ) -> dict[str, Any]:
        """Tournaments matching every given filter, newest first: ``{"items", "next"}``."""
        return query(self.client, game, status, limit, cursor)


def query(
    client: redis.Redis, game: str | None = None, status: str | None = None, limit: int = 20, cursor: str | None = None
) -> dict[str, Any]:
    """Tournaments matching every given filter, newest first: ``{"items", "next"}`` (``next``: the cursor of
    the next page, the last member returned; null on the last page)."""
    filters = {k: v for k, v in (("status", status), ("game", game)) if v}
    index = index_key(*next(iter(filters.items()))) if filters else ALL_INDEX
    items: list[dict[str, Any]] = []
    start = f"({cursor}" if cursor else "-"
    while True:
        members = [text(m) for m in client.zrangebylex(index, start, "+", start=0, num=max(limit, PAGE_READ))]
        if not members:
            return {"items": items, "next": None}
        pipe = client.pipeline(transaction=False)
        for member in members:
            pipe.hgetall(summary_key(member.split(":", 1)[1]))
        for member, raw in zip(members, pipe.execute()):
            start = f"({member}"
            item = _summary(raw)
            if item is not None and all(item[k] == v for k, v in filters.items()):
                items.append(item)
                if len(items) == limit:
                    return {"items": items, "next": member}


def _summary(raw: Mapping[bytes, bytes]) -> dict[str, Any] | None:
    fields = {text(k): text(v) for k, v in raw.items()}
    if not fields:
        return None
    return {
        "id": fields["id"],
        "game": fields["game"],
        "format": fields["format"],
        "rounds": int(fields["rounds"]),
        "table_size": int(fields["table_size"]),
        "status": fields["status"],
        "round": int(fields["round"]),
        "entrants": int(fields["entrants"]),
        "created_at": fields["created_at"],
        "version": int(fields["version"]),
    }
