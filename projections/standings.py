"""The standings read model: per tournament, its standings as of the last event the projector applied.

One hash per tournament, ``kifu:proj:tournament:<id>`` (``version``, ``status``,
``round``, ``standings`` as JSON). Tournament logs are short (a few events per
game), so the projector folds the whole log again whenever it moves, with the
same domain code the auditor uses to re-derive the standings; like every read
model it is dropped and rebuilt by ``kifu rebuild-projections``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import redis

from adapters.redis_store import EventStore, text
from domain.record import to_event
from domain.tournament.commands import current_standings
from domain.tournament.model import Tournament, replay
from domain.tournament.standings import for_view
from projections.games_list import PREFIX


def key(tournament_id: str) -> str:
    return f"{PREFIX}:tournament:{tournament_id}"


def applied_versions(client: redis.Redis, tournament_ids: Sequence[str]) -> dict[str, int]:
    """The last event applied of each tournament (0: none yet)."""
    pipe = client.pipeline(transaction=False)
    for tid in tournament_ids:
        pipe.hget(key(tid), "version")
    return {tid: int(v or 0) for tid, v in zip(tournament_ids, pipe.execute())}


def apply(pipe: redis.client.Pipeline, tournament_id: str, envs: Iterable[Mapping[str, Any]]) -> Tournament:
    """Queue the standings after ``envs`` (the tournament's whole log so far) on ``pipe``; the tournament
    folded from them (the other read models of tournaments take it from here)."""
    state = replay([to_event(e) for e in envs])
    summary = {
        "version": state.version,
        "status": state.status,
        "round": state.round,
        "standings": json.dumps([for_view(row) for row in current_standings(state)]),
    }
    pipe.hset(key(tournament_id), mapping=summary)  # type: ignore[arg-type]  # the stubs' value type is narrower
    return state


class StandingsModel:
    """Queries on the standings read model."""

    def __init__(self, client: redis.Redis, store: EventStore) -> None:
        self.client = client
        self.store = store

    def get(self, tournament_id: str) -> dict[str, Any]:
        """``{"tournament", "version", "status", "round", "standings"}``; version 0 before the projector has
        applied any of the tournament's events."""
        raw = {text(k): text(v) for k, v in self.client.hgetall(key(tournament_id)).items()}
        return {
            "tournament": tournament_id,
            "version": int(raw.get("version", 0)),
            "status": raw.get("status"),
            "round": int(raw.get("round", 0)),
            "standings": json.loads(raw.get("standings", "[]")),
        }
