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

A job that has moved then plays its game's next bot turns itself, within a
short budget, rather than enqueueing a job for each (``workers.batch``): each of
those turns is played exactly as its own job would play it (same checks, same
key), and what is left when the budget ends is enqueued as usual.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Any, Literal

import redis
from rq import Queue, get_current_job
from rq.job import Job

from adapters.metrics import BOT_TURN_LAG_SECONDS
from adapters.rq_scheduler import QUEUE_NAME, RQScheduler
from bootstrap import Kifu, build, events_from_environment
from domain.bots import choose_action, random_action
from service.errors import Conflict
from service.games import GameService
from workers.batch import Budget, KeepingScheduler

Why = Literal["bot", "timeout"]
IN_JOB_RETRIES = 4
_WIRED: dict[int, tuple[Kifu, KeepingScheduler]] = {}
log = logging.getLogger(__name__)


def _wired() -> tuple[Kifu, KeepingScheduler]:
    """The wiring for the current job's Redis connection (built once per process), and its scheduler."""
    job = get_current_job()
    connection: redis.Redis = job.connection if job is not None else redis.Redis.from_url(os.environ["REDIS_URL"])
    key = id(connection)
    if key not in _WIRED:
        keeper = KeepingScheduler(RQScheduler(Queue(QUEUE_NAME, connection=connection)))
        _WIRED[key] = (build(connection, scheduler=keeper, events=events_from_environment()), keeper)
    return _WIRED[key]


def _kifu() -> Kifu:
    return _wired()[0]


def advance_tournament(tournament_id: str) -> dict[str, Any]:
    """Record finished games and do what the tournament needs next (pair, start games, close, finish)."""
    return {"events": _kifu().tournaments.advance(tournament_id)}


def analyse_game(game_id: str) -> dict[str, Any]:
    """Analyse a finished game (``service.analysis``; its own queue, ``kifu-analysis``)."""
    return {"decisions": _kifu().analysis.run(game_id)}


def play_turn(game_id: str, seat: int, version: int, why: Why) -> dict[str, Any]:
    """Play ``seat``'s turn that became due at ``version``: its bot's move, or a random one on a timeout;
    then, within ``workers.batch``'s budget, the bot turns of the same game that this move made due.

    The answer is this turn's; ``played`` counts the moves made, this one included.
    """
    kifu, keeper = _wired()
    budget = Budget()
    with keeper.keeping(game_id) as kept:
        answer = _play(kifu.games, game_id, seat, version, why)
        if not answer["done"]:
            return answer
        if why == "bot":
            _observe_lag(get_current_job())
        played = 1
        while kept and budget.spend():
            turn = kept[0]
            try:
                done = _play(kifu.games, game_id, turn.seat, turn.version, "bot")["done"]
            except Exception:  # that turn stays kept: enqueued below as its own job, with RQ's retries
                log.warning("play_turn: %s's next bot turn is left to its own job", game_id, exc_info=True)
                break
            kept.popleft()
            played += done
    return answer | {"played": played}


def _observe_lag(job: Job | None) -> None:
    """``kifu_bot_turn_lag_seconds``: from this job being asked for to the bot's move just made."""
    enqueued = job.enqueued_at if job is not None else None
    if enqueued is not None:
        asked = enqueued if enqueued.tzinfo is not None else enqueued.replace(tzinfo=UTC)
        BOT_TURN_LAG_SECONDS.observe(max(0.0, (datetime.now(UTC) - asked).total_seconds()))


def _play(service: GameService, game_id: str, seat: int, version: int, why: Why) -> dict[str, Any]:
    """One turn, as its own job would play it.

    Another seat's secret choice landing between the load and the append is an ordinary race in
    a simultaneous step: the turn is judged again on the new state (a few times, here, rather than
    failing the job into RQ's retry with a traceback in the log).
    """
    for _attempt in range(IN_JOB_RETRIES):
        due = service.turn_still_due(game_id, seat, version)
        if due is None:
            return {"done": False, "reason": "stale"}
        table, head = due
        rnd = service.bot_random(game_id, table, seat, why)
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
        except Conflict as conflict:
            refused = conflict
            continue
        return {"done": True, "version": answer.body["version"]}
    raise refused  # every try refused: RQ retries it later (declared where enqueued)
