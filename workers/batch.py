"""Batched bot turns: a job that has just moved for a bot keeps playing that game's next bot turns itself,
within a budget (``BATCH_MOVES`` moves, ``BATCH_MS`` ms, its own move included), instead of enqueueing
an RQ job per move.

Why: an RQ job costs more than the move it plays (some 16 Redis writes, each fsynced under
``appendfsync always``), so one job per move bounded bot throughput. 16 moves or 20 ms a job was the
budget measured best, and ``kifu run`` starts ``KIFU_WORKERS`` workers, one per core (2 unless set).
Figures: docs/performance.md, section "Bot turns in batches".

How: the worker's wiring (``workers.jobs``) puts a ``KeepingScheduler`` in front of the RQ scheduler.
While ``play_turn`` plays game G, the bot turns G's appends ask for are kept for the job instead of
enqueued; the job plays them one by one exactly as their own jobs would (``turn_still_due``, the
expected version, the key ``bot:<version>``), and when the budget ends, the game ends, a kept turn
fails or anything raises, whatever is still kept is enqueued as usual, at the back of the queue: each
game gets at most one budget per pass through the queue. Every guarantee holds:

* a duplicated, racing or late job appends nothing (kept turns go through the same checks and key);
* a kept turn that raises is handed to its own job (RQ's retries); a job whose own turn raises is
  retried by RQ, as before;
* a worker killed mid-batch loses only the turns it kept: every append wrote when its game next needs
  a job (the outbox, now + ``JOB_GRACE_MS``), so the sweeper asks for the turn again after the 3 s
  grace; a live batch (20 ms) never looks overdue;
* a Redis outage is ridden out by ``entrypoints.worker`` as before (the hand-back then fails, and the
  outbox covers it).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from service.ports import Scheduler

BATCH_MOVES = int(os.environ.get("KIFU_BOT_BATCH_MOVES", "16"))  # moves a job may play in its game (1: no batching)
BATCH_MS = float(os.environ.get("KIFU_BOT_BATCH_MS", "20"))  # ms it may play for (the move under way completes)


@dataclass(frozen=True)
class Turn:
    """A bot's turn that became due at ``version`` (``urgent``: asked for again by the sweeper)."""

    seat: int
    version: int
    urgent: bool = False


class Budget:
    """How much more one job may play in its game: ``BATCH_MOVES`` moves, ``BATCH_MS`` milliseconds."""

    def __init__(self, moves: int | None = None, ms: float | None = None) -> None:
        self.moves_left = BATCH_MOVES if moves is None else moves
        self.until = time.monotonic() + (BATCH_MS if ms is None else ms) / 1000

    def spend(self) -> bool:
        """Count a move played; whether the job may play another."""
        self.moves_left -= 1
        return self.moves_left > 0 and time.monotonic() < self.until


class KeepingScheduler:
    """A ``Scheduler`` that, while a job plays game G (``keeping(G)``), keeps G's bot turns for that job
    instead of enqueueing them, and enqueues whatever it still keeps when the job ends, however it ends.

    Everything else (other games' bot turns, move timeouts, tournament steps) goes to ``inner`` at once.
    One per worker process; an RQ worker runs one job at a time, in one thread.
    """

    def __init__(self, inner: Scheduler) -> None:
        self.inner = inner
        self._game: str | None = None
        self._kept: deque[Turn] = deque()

    def bot_turn(self, game_id: str, seat: int, version: int, urgent: bool = False) -> None:
        if game_id == self._game:
            self._kept.append(Turn(seat, version, urgent))
        else:
            self.inner.bot_turn(game_id, seat, version, urgent)

    def move_timeout(self, game_id: str, seat: int, version: int, delay_s: int) -> None:
        self.inner.move_timeout(game_id, seat, version, delay_s)

    def tournament_step(self, tournament_id: str) -> None:
        self.inner.tournament_step(tournament_id)

    def job_pending(self, kind: str, game_id: str, seat: int, version: int) -> bool:
        return self.inner.job_pending(kind, game_id, seat, version)

    @contextmanager
    def keeping(self, game_id: str) -> Iterator[deque[Turn]]:
        """Keep ``game_id``'s bot turns in the deque yielded (the job takes them from its left) until the
        block ends; then enqueue those left, in order, each as its own job.

        A crash before that loses nothing for good: each append wrote when its game next needs a job
        (the outbox), and the sweeper asks for it again after the grace.
        """
        if self._game is not None:
            raise RuntimeError(f"already keeping the turns of {self._game}")
        self._game = game_id
        try:
            yield self._kept
        finally:
            self._game = None
            kept, self._kept = self._kept, deque()
            for turn in kept:
                self.inner.bot_turn(game_id, turn.seat, turn.version, turn.urgent)
