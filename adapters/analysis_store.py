"""Analyses of finished games in Redis, and their jobs on RQ's ``kifu-analysis`` queue.

One hash per game, ``kifu:analysis:{game_id}``: ``status``, ``progress``, ``level``,
``requested_at``, ``finished_at``, ``error`` and ``decisions`` (JSON). It is a read model, not part
of the game's log: the analysis is a pure function of the sealed record (``domain.analysis``), so a
lost or deleted hash is rebuilt by asking again, with the same answer.

The job (``workers.jobs.analyse_game``, job id ``analysis-<game id>``) runs on its own queue, served
by its own worker process in ``kifu run`` (``analyst``), so that an analysis of several seconds never
holds up a bot's turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import redis
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from adapters.redis_store import text

ANALYSIS_QUEUE = "kifu-analysis"
JOB = "workers.jobs.analyse_game"
JOB_TIMEOUT_S = 900
KEY = "kifu:analysis:{}"
LIVE = (JobStatus.QUEUED, JobStatus.STARTED, JobStatus.DEFERRED, JobStatus.SCHEDULED)

# Queue it unless it is queued, running or done: answers 1 when it set ``queued`` now.
_REQUEST = """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' or status == 'running' or status == 'done' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'status', 'queued', 'progress', '0', 'level', ARGV[1], 'requested_at', ARGV[2])
return 1
"""


class RedisAnalyses:
    """``service.ports.Analyses`` on Redis and RQ."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.queue = Queue(ANALYSIS_QUEUE, connection=client)
        self._request = client.register_script(_REQUEST)

    def get(self, game_id: str) -> dict[str, Any] | None:
        raw = self.client.hgetall(KEY.format(game_id))
        if not raw:
            return None
        fields = {text(k): text(v) for k, v in raw.items()}
        return {
            "status": fields["status"],
            "progress": float(fields.get("progress", "0")),
            "decisions_done": int(fields.get("done", "0")),
            "decisions_total": int(fields["total"]) if "total" in fields else None,
            "level": fields.get("level"),
            "requested_at": fields.get("requested_at"),
            "finished_at": fields.get("finished_at"),
            "error": fields.get("error"),
            "decisions": json.loads(fields["decisions"]) if "decisions" in fields else [],
        }

    def request(self, game_id: str, level: str, at: str) -> bool:
        if self._request(keys=[KEY.format(game_id)], args=[level, at]) == 1 or not self._job_alive(game_id):
            self.queue.enqueue(JOB, game_id, job_id=f"analysis-{game_id}", job_timeout=JOB_TIMEOUT_S)
            return True
        return False

    def _job_alive(self, game_id: str) -> bool:
        """Whether the game's analysis job is waiting or running (or its analysis is done)."""
        status = self.client.hget(KEY.format(game_id), "status")
        if status is not None and text(status) == "done":
            return True
        try:
            job = Job.fetch(f"analysis-{game_id}", connection=self.client)
        except NoSuchJobError:
            return False
        return job.get_status(refresh=False) in LIVE

    def started(self, game_id: str) -> None:
        self.client.hset(KEY.format(game_id), "status", "running")

    def progress(self, game_id: str, done: int, total: int) -> None:
        progress = f"{done / total if total else 1:.4f}"
        self.client.hset(KEY.format(game_id), mapping={"progress": progress, "done": str(done), "total": str(total)})

    def finish(self, game_id: str, decisions: Sequence[Mapping[str, Any]], at: str) -> None:
        body = json.dumps(list(decisions), separators=(",", ":"))
        n = str(len(decisions))
        self.client.hset(
            KEY.format(game_id),
            mapping={"status": "done", "progress": "1", "done": n, "total": n, "decisions": body, "finished_at": at},
        )

    def fail(self, game_id: str, error: str, at: str) -> None:
        self.client.hset(KEY.format(game_id), mapping={"status": "failed", "error": error, "finished_at": at})
