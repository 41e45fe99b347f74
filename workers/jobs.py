"""Job functions run by RQ workers.

A job acts through ``GameService.act`` with the version it loaded as the
expected version and a deterministic idempotency key, so:

* a duplicated job (same key) returns the first answer and appends nothing;
* a late job (the seat is no longer to act, or anything other than other seats'
  secret commitments happened since it was scheduled) does nothing;
* a job that loses a race raises ``Conflict`` and is retried by RQ
  (``Retry`` declared where it is enqueued), and the retry re-checks the above.
"""

from __future__ import annotations

import os
import random
from typing import Any

import redis
from rq import get_current_job

from domain import engine
from domain.bots import choose_action, random_action
from domain.engine import Table
from service.games import GameService

_SERVICES: dict[int, GameService] = {}


def _service() -> GameService:
    """The service for the current job's Redis connection (built once per process)."""
    job = get_current_job()
    connection: redis.Redis = job.connection if job is not None else redis.Redis.from_url(os.environ["REDIS_URL"])
    key = id(connection)
    if key not in _SERVICES:
        from service.bootstrap import build_service

        _SERVICES[key] = build_service(connection)
    return _SERVICES[key]


def still_due(service: GameService, table: Table, seat: int, version: int) -> bool:
    """True when ``seat`` must still act on the turn that was current at ``version``."""
    if seat not in table.to_act or table.version < version:
        return False
    since = service.store.read(table.game_id, version, table.version - version)
    return all(e["type"] == engine.CHOICE_COMMITTED and e["data"]["seat"] != seat for e in since)


def play_bot_turn(game_id: str, seat: int, version: int) -> dict[str, Any]:
    """Play the bot seat's turn that became due at ``version``."""
    service = _service()
    table, head = service.tables.load(game_id)
    if not still_due(service, table, seat, version):
        return {"done": False, "reason": "stale"}
    level = table.seats[seat].bot or "random"
    action = choose_action(table, seat, level, random.Random(f"{game_id}:{seat}:{version}"))
    answer = service.act(game_id, seat, action, expected_version=head.version,
                         idempotency_key=f"bot:{version}")
    return {"done": True, "version": answer.body["version"]}


def play_timeout(game_id: str, seat: int, version: int) -> dict[str, Any]:
    """A human seat ran out of time: play a random legal action for it."""
    service = _service()
    table, head = service.tables.load(game_id)
    if not still_due(service, table, seat, version):
        return {"done": False, "reason": "stale"}
    action = random_action(table, seat, random.Random(f"timeout:{game_id}:{seat}:{version}"))
    answer = service.act(game_id, seat, action, expected_version=head.version,
                         idempotency_key=f"timeout:{version}", by="timeout")
    return {"done": True, "version": answer.body["version"]}
