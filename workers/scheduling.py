"""The RQ side of ``service.games.Scheduler``: enqueue bot turns, schedule timeouts."""

from __future__ import annotations

from datetime import timedelta

from rq import Queue, Retry

QUEUE_NAME = "kifu"
RETRY = Retry(max=5)


class RQScheduler:
    """Enqueues job functions of ``workers.jobs`` with deterministic job ids."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def bot_turn(self, game_id: str, seat: int, version: int) -> None:
        self.queue.enqueue("workers.jobs.play_bot_turn", game_id, seat, version,
                           job_id=f"bot-{game_id}-{seat}-{version}", retry=RETRY)

    def move_timeout(self, game_id: str, seat: int, version: int, delay_s: int) -> None:
        self.queue.enqueue_in(timedelta(seconds=delay_s), "workers.jobs.play_timeout", game_id, seat, version,
                              job_id=f"timeout-{game_id}-{seat}-{version}", retry=RETRY)
