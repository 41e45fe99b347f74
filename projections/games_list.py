"""The games list read model and its queries (newest first, cursor paginated).

Per game: a hash ``kifu:proj:game:<id>`` (the summary). Indexes are sorted sets
whose members all have score 0 and sort lexicographically as
``<10^13 - created_ms, 13 digits>:<id>``, so "newest first" is plain lexical
order and a cursor is just the last member seen (``ZRANGEBYLEX (cursor``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import redis

from adapters.redis_store import text

PREFIX = "kifu:proj"
ALL_INDEX = f"{PREFIX}:idx:all"
OPEN_INDEX = f"{PREFIX}:idx:open:true"  # the lobby: running games with a free seat (``?open=true``)


def summary_key(game_id: str) -> str:
    return f"{PREFIX}:game:{game_id}"


def index_key(field: str, value: str) -> str:
    return f"{PREFIX}:idx:{field}:{value}"


def sort_member(created_at: str, game_id: str) -> str:
    millis = int(datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp() * 1000)
    return f"{10**13 - millis:013d}:{game_id}"


def apply_events(
    pipe: redis.client.Pipeline, summary: Mapping[str, str], game_id: str, envs: Sequence[Mapping[str, Any]]
) -> dict[str, str]:
    """Queue the read-model writes for ``envs`` on ``pipe``; return the new summary."""
    summary = dict(summary)
    for env in envs:
        if env["type"] == "game_created":
            summary = _created(pipe, game_id, env)
        elif env["type"] == "game_ended":
            member = summary["member"]
            pipe.zrem(index_key("status", "active"), member)
            pipe.zrem(OPEN_INDEX, member)
            pipe.zadd(index_key("status", "finished"), {member: 0})
            summary["status"] = "finished"
            summary["result"] = json.dumps(env["data"]["result"])
        elif env["type"] == "seat_joined":
            summary["seats"] = _joined(pipe, summary, env["data"])
        summary["version"] = str(env["seq"])
        summary["updated_at"] = env["at"]
    pipe.hset(summary_key(game_id), mapping=cast(Any, summary))  # the stubs' key type is a wider union
    return summary


def _created(pipe: redis.client.Pipeline, game_id: str, env: Mapping[str, Any]) -> dict[str, str]:
    data = env["data"]
    member = sort_member(env["at"], game_id)
    names = [s["name"] for s in data["seats"] if s["name"] is not None]  # an open seat has no name yet
    tournament = data.get("tournament", {}).get("id", "")
    for key in (
        ALL_INDEX,
        index_key("game", data["game"]),
        index_key("status", "active"),
        *(index_key("player", n) for n in set(names)),
        *([index_key("tournament", tournament)] if tournament else []),
        *([OPEN_INDEX] if any(s.get("open") for s in data["seats"]) else []),
    ):
        pipe.zadd(key, {member: 0})
    return {
        "tournament": tournament,
        "id": game_id,
        "game": data["game"],
        "status": "active",
        "member": member,
        "seats": json.dumps(data["seats"]),
        "created_at": env["at"],
        "result": "null",
    }


def _joined(pipe: redis.client.Pipeline, summary: Mapping[str, str], data: Mapping[str, Any]) -> str:
    """A seat was joined: index the game under the player's name; the summary's new seats."""
    pipe.zadd(index_key("player", data["name"]), {summary["member"]: 0})
    seats = [
        {"seat": s["seat"], "name": data["name"], "bot": None} if s["seat"] == data["seat"] else s
        for s in json.loads(summary["seats"])
    ]
    if not any(s.get("open") for s in seats):
        pipe.zrem(OPEN_INDEX, summary["member"])  # the last free seat was taken: out of the lobby
    return json.dumps(seats)


class GamesList:
    """Queries on the games list read model."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def query(
        self,
        game: str | None = None,
        status: str | None = None,
        player: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        tournament: str | None = None,
        open: bool | None = None,
    ) -> dict[str, Any]:
        """Games matching every given filter, newest first: ``{"items", "next"}``."""
        return query(self.client, game, status, player, limit, cursor, tournament, open)

    def dump(self) -> dict[str, Any]:
        """Every key of the model with its content (to compare live and rebuilt models)."""
        return dump(self.client)


def query(
    client: redis.Redis,
    game: str | None = None,
    status: str | None = None,
    player: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
    tournament: str | None = None,
    open: bool | None = None,
) -> dict[str, Any]:
    """Games matching every given filter, newest first: ``{"items", "next"}``. ``open``: True for the
    lobby's games (running, with a free seat), False for the others."""
    given = (("open", "true" if open else None), ("tournament", tournament), ("player", player), ("game", game))
    filters: dict[str, Any] = {k: v for k, v in (*given, ("status", status)) if v}
    index = index_key(*next(iter(filters.items()))) if filters else ALL_INDEX
    if open is False:
        filters["open"] = False  # no index of the games without a free seat: filtered one by one
    items: list[dict[str, Any]] = []
    start = f"({cursor}" if cursor else "-"
    while len(items) < limit:
        members = client.zrangebylex(index, start, "+", start=0, num=max(limit, 50))
        if not members:
            return {"items": items, "next": None}
        for raw in members:
            member = text(raw)
            start = f"({member}"
            item = _summary(client, member.split(":", 1)[1])
            if item and all(_matches(item, k, v) for k, v in filters.items()):
                items.append(item)
                if len(items) == limit:
                    return {"items": items, "next": member}
    return {"items": items, "next": None}


def _matches(item: Mapping[str, Any], field: str, value: Any) -> bool:
    if field == "player":
        return any(s["name"] == value for s in item["seats"])
    if field == "open":
        has_a_free_seat = item["status"] == "active" and any(s.get("open") for s in item["seats"])
        return bool(has_a_free_seat == (value == "true"))
    return bool(item[field] == value)


def _summary(client: redis.Redis, game_id: str) -> dict[str, Any] | None:
    raw = {text(k): text(v) for k, v in client.hgetall(summary_key(game_id)).items()}
    if not raw:
        return None
    return {
        "id": raw["id"],
        "game": raw["game"],
        "status": raw["status"],
        "seats": json.loads(raw["seats"]),
        "version": int(raw["version"]),
        "created_at": raw["created_at"],
        "updated_at": raw["updated_at"],
        "result": json.loads(raw["result"]),
        "tournament": raw.get("tournament") or None,
    }


def dump(client: redis.Redis) -> dict[str, Any]:
    """Every key of the model with its content (to compare live and rebuilt models)."""
    out: dict[str, Any] = {}
    for key in client.scan_iter(match=f"{PREFIX}:*"):
        name, kind = text(key), text(client.type(key))
        if kind == "hash":
            out[name] = {text(k): text(v) for k, v in client.hgetall(key).items()}
        elif kind == "zset":
            out[name] = [text(m) for m in cast(list[bytes], client.zrange(key, 0, -1))]
    return out
