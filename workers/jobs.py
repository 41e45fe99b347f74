"""The jobs RQ workers run: play a seat's turn (a bot's move, or a random move when time ran out), and
move a tournament along (``advance_tournament``: idempotent, any number may run at once).

A job acts through ``GameService.act`` with the version it loaded as the
expected version and a deterministic idempotency key, so:

* a duplicated job (same key) returns the first answer and appends nothing;
* a late job (the seat is no longer to act, or anything other than other seats'
  secret commitments happened since it was scheduled) does nothing;
* a job that loses a race re-checks the above and tries again (``IN_JOB_RETRIES``
  times), then raises ``Conflict`` and is retried by RQ (``Retry`` declared where
  it is enqueued).
"""

from __future__ import annotations

import os
import random
from typing import Any, Literal

import redis
from rq import get_current_job

from bootstrap import Kifu, build
from domain.bots import choose_action, random_action
from service.errors import Conflict
from service.games import GameService

Why = Literal["bot", "timeout"]
IN_JOB_RETRIES = 4
_WIRED: dict[int, Kifu] = {}


def _kifu() -> Kifu:
    """The wiring for the current job's Redis connection (built once per process)."""
    job = get_current_job()
    connection: redis.Redis = job.connection if job is not None else redis.Redis.from_url(os.environ["REDIS_URL"])
    key = id(connection)
    if key not in _WIRED:
        _WIRED[key] = build(connection)
    return _WIRED[key]


def _service() -> GameService:
    return _kifu().games


def advance_tournament(tournament_id: str) -> dict[str, Any]:
    """Record finished games and do what the tournament needs next (pair, start games, close, finish)."""
    return {"events": _kifu().tournaments.advance(tournament_id)}


def play_turn(game_id: str, seat: int, version: int, why: Why) -> dict[str, Any]:
    """Play ``seat``'s turn that became due at ``version``: its bot's move, or a random one on a timeout.

    Another seat's secret choice landing between the load and the append is an ordinary race in
    a simultaneous step: the turn is judged again on the new state (a few times, here, rather than
    failing the job into RQ's retry with a traceback in the log).
    """
    service = _service()
    for _attempt in range(IN_JOB_RETRIES):
        due = service.turn_still_due(game_id, seat, version)
        if due is None:
            return {"done": False, "reason": "stale"}
        table, head = due
        rnd = random.Random(f"{why}:{game_id}:{seat}:{version}")
        if why == "bot":
            action = choose_action(table, seat, table.seats[seat].bot or "random", rnd)
        else:
            action = random_action(table, seat, rnd)
        try:
            answer = service.act(
                game_id,
                seat,
                action,
                expected_version=head.version,
                idempotency_key=f"{why}:{version}",
                by="timeout" if why == "timeout" else None,
                head=head,
            )
        except Conflict:
            continue
        return {"done": True, "version": answer.body["version"]}
    raise Conflict(service.tables.load(game_id)[1].version)  # RQ retries it later (declared where enqueued)
