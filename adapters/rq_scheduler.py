"""The RQ side of ``service.ports.Scheduler``: enqueue bot turns, schedule move timeouts, run tournaments.

Jobs are named by path (``workers.jobs.play_turn``), so this adapter does not
import the workers (which import the wiring, which imports this).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rq import Queue, Retry
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

QUEUE_NAME = "kifu"
JOB = "workers.jobs.play_turn"
TOURNAMENT_JOB = "workers.jobs.advance_tournament"
RETRY = Retry(max=5)
RUNNING_AT_MOST_S = 5  # a job "started" longer ago than this died with its worker (a turn takes milliseconds)


class RQScheduler:
    """Enqueues ``workers.jobs.play_turn`` with deterministic job ids."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def job_pending(self, kind: str, game_id: str, seat: int, version: int) -> bool:
        """Whether that turn's job (``kind`` ``bot`` or ``timeout``) is waiting in the queue or running now.

        A job whose status says queued but that is not in the queue any more was taken by a worker
        that died before it started (RQ only finds such a job again in a later clean-up): lost.
        """
        job_id = f"{kind}-{game_id}-{seat}-{version}"
        try:
            job = Job.fetch(job_id, connection=self.queue.connection)
        except NoSuchJobError:
            return False
        status = job.get_status(refresh=False)
        if status == JobStatus.QUEUED:
            return self.queue.connection.lpos(self.queue.key, job_id) is not None
        if status == JobStatus.DEFERRED:
            return True
        started = job.started_at.replace(tzinfo=UTC) if job.started_at is not None else None
        return (
            status == JobStatus.STARTED
            and started is not None
            and (datetime.now(UTC) - started).total_seconds() < RUNNING_AT_MOST_S
        )

    def bot_turn(self, game_id: str, seat: int, version: int, urgent: bool = False) -> None:
        """Enqueue a bot's turn; ``urgent`` (a lost job asked for again) at the front of the queue, so that
        its game does not wait behind every other game's turn a second time."""
        job_id = f"bot-{game_id}-{seat}-{version}"
        self.queue.enqueue(JOB, game_id, seat, version, "bot", job_id=job_id, retry=RETRY, at_front=urgent)

    def move_timeout(self, game_id: str, seat: int, version: int, delay_s: int) -> None:
        args = (JOB, game_id, seat, version, "timeout")
        job_id = f"timeout-{game_id}-{seat}-{version}"
        if delay_s <= 0:  # overdue (the sweeper asks again): now, at the front, not through the scheduler
            self.queue.enqueue(*args, job_id=job_id, retry=RETRY, at_front=True)
        else:
            self.queue.enqueue_in(timedelta(seconds=delay_s), *args, job_id=job_id, retry=RETRY)

    def tournament_step(self, tournament_id: str) -> None:
        """Run the tournament's runner (idempotent: any number of these jobs may run, in any order)."""
        self.queue.enqueue(TOURNAMENT_JOB, tournament_id, retry=RETRY)
