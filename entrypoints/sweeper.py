"""The sweeper: the safety net under every job the service asks for.

Each append writes, in the same Lua script, when its game (or tournament)
next needs a job: a bot's turn, a move timeout, a tournament's runner (the
outbox, ``kifu:{pN}:due``; see ``adapters.redis_store``). The service also
enqueues that job at once; when the job is lost (a worker killed mid-job, a
crash between the append and the enqueue, Redis restarted with the queue in
flight), nothing moves the game any more. Once a second the sweeper takes the
entries that are overdue and asks for their jobs again (``GameService.recover``,
``TournamentService.recover``); every job is idempotent, so asking twice
changes nothing. A lost bot turn is asked for again within
``JOB_GRACE_MS`` + one sweep.
"""

from __future__ import annotations

import logging
import threading
import time

from adapters.redis_client import UNAVAILABLE
from bootstrap import Kifu
from service.tournaments import TOURNAMENT_ID_PREFIX

INTERVAL_S = 1.0
log = logging.getLogger(__name__)


def sweep_once(kifu: Kifu, now_ms: int | None = None) -> int:
    """Ask again for the jobs of every overdue game and tournament; how many were looked at."""
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    overdue = kifu.store.overdue(now)
    for stream_id in overdue:
        if stream_id.startswith(TOURNAMENT_ID_PREFIX):
            kifu.tournaments.recover(stream_id)
        else:
            kifu.games.recover(stream_id)
    return len(overdue)


def run(kifu: Kifu, stop: threading.Event, interval_s: float = INTERVAL_S) -> None:
    """Sweep until ``stop`` is set, riding out a Redis that does not answer (it is retried next time)."""
    while not stop.wait(interval_s):
        try:
            if found := sweep_once(kifu):
                log.info("sweeper: asked again for the jobs of %d games or tournaments", found)
        except UNAVAILABLE as exc:  # a Redis that does not answer, a cluster failing over
            log.warning("sweeper: Redis did not answer (%s: %s); retrying", type(exc).__name__, exc)
