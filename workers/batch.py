"""Batched bot turns: a job that has just moved for a bot keeps playing that game's next bot turns itself,
within a budget (``BATCH_MOVES`` moves, ``BATCH_MS`` ms, its own move included), instead of enqueueing
an RQ job per move.

Why: an RQ job costs more than the move it plays. ``SimpleWorker`` (what ``kifu worker`` runs) spends
7.7 ms a job against 15.5 ms for RQ's forking ``Worker`` (``python -m bench.bot_throughput --fork``),
most of it in about 16 Redis writes a move, each fsynced under ``appendfsync always`` (the dequeue,
the started and finished registries, the execution, heartbeats, the result, the next enqueue; one
is the move's own append). Redis blocked in fsync, more than CPU, bounded one job per move to ~130
moves/s with one worker and ~180 with two, on 2 cores.

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

Measured: ``python -m bench.bot_throughput --games 1,10,100,500 --workers 1,2 --batch 1,2/5,8/10,16/20
--repeat 3`` (batch ``1``: one job per move, as before; ``M/T``: M moves or T ms a job). N bot-only games
(San Ban and Kiri-ai, greedy vs random) started at once; 2 cores shared by the workers and Redis
(``appendfsync always``); medians of 3 runs (5 for N = 1 and 10). Other processes shared the machine
at times: the bench prints each run and the ranges. "wait": from the event that made the bot's seat to
act to its move. CPU: the workers' and Redis's, per move.

| N   | W | batch | moves/s | a game's moves/s | wait p50 | wait p99 | jobs/move | CPU ms/move |
|-----|---|-------|---------|------------------|----------|----------|-----------|-------------|
| 1   | 1 | 1     | 156     | 156              | 7 ms     | 7 ms     | 1         | 3 + 2       |
| 1   | 1 | 16/20 | 909     | 909              | 1 ms     | 4 ms     | 0.1       | 1 + 0       |
| 10  | 1 | 1     | 106     | 13.3             | 85 ms    | 166 ms   | 1         | 3.7 + 2.0   |
| 10  | 1 | 16/20 | 324     | 46.6             | 2 ms     | 250 ms   | 0.18      | 1.7 + 0.5   |
| 100 | 1 | 1     | 125     | 1.5              | 816 ms   | 1.4 s    | 1         | 3.3 + 1.9   |
| 100 | 1 | 2/5   | 192     | 2.2              | 417 ms   | 1.6 s    | 0.55      | 2.2 + 1.2   |
| 100 | 1 | 8/10  | 321     | 4.2              | 2 ms     | 2.0 s    | 0.26      | 1.5 + 0.7   |
| 100 | 1 | 16/20 | 404     | 7.6              | 2 ms     | 2.1 s    | 0.17      | 1.3 + 0.5   |
| 500 | 1 | 1     | 131     | 0.3              | 4.0 s    | 6.4 s    | 1         | 3.2 + 2.0   |
| 500 | 1 | 2/5   | 201     | 0.5              | 2.1 s    | 7.7 s    | 0.55      | 2.1 + 1.2   |
| 500 | 1 | 8/10  | 348     | 0.9              | 2 ms     | 9.4 s    | 0.25      | 1.4 + 0.6   |
| 500 | 1 | 16/20 | 420     | 1.6              | 1 ms     | 10.4 s   | 0.17      | 1.2 + 0.5   |
| 100 | 2 | 1     | 179     | 2.2              | 553 ms   | 1.05 s   | 1         | 3.9 + 1.7   |
| 100 | 2 | 16/20 | 560     | 9.8              | 3 ms     | 1.4 s    | 0.19      | 1.5 + 0.5   |
| 500 | 2 | 1     | 183     | 0.4              | 2.9 s    | 5.2 s    | 1         | 3.8 + 1.6   |
| 500 | 2 | 16/20 | 567     | 2.0              | 2 ms     | 7.2 s    | 0.18      | 1.5 + 0.5   |

Decision: 16 moves or 20 ms a job. It plays 3.2x the moves per second of one job per move with 500
games in flight (420 against 131; the 500 games end in 11 s instead of 35 s), 5x a game's own pace,
and 6x a lone game's (1.1 ms a move against 6.4). Larger budgets (32/50, 64/100, whole games) gained
nothing more (~440 moves/s: the append's fsync and the bots' CPU are the bound now) and let a long
game hold a worker; smaller ones (2/5, 8/10) kept the p99 closer to before but gave up most of the
gain. The price: a game's turn in the queue takes ~14 ms (about 6 moves) instead of ~8 (one), so with
one worker the p99 wait (the first move of a game at the back of a full queue) grows from 6.4 s to
10.4 s at 500 games, while the p50 falls from 4 s to 1-2 ms. A second worker process takes most of
it back: 567 moves/s, p99 7.2 s. Under ``kifu run`` (API, projector and sweeper on the same 2 cores;
``python -m bench.faults --bot-games 1000 --human-games 50 --rounds 0``, bot games created over HTTP,
two runs each): one job per move, one worker: the longest wait between two events of a game
11.6-13.4 s, 116-121 s in all; batched, one worker: 17.4-18.6 s, 32-34 s; batched, two workers
(``KIFU_WORKERS=2``): 11.6-12.4 s, 31 s. With faults (``--rounds 3``) every run found 0 problems. ``kifu run`` starts
``KIFU_WORKERS`` worker processes, 2 unless set (one per core: measured best, above).
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
