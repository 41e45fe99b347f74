"""HTTP request counters in one Redis hash, shared by every API process.

Each process counts in memory and adds its counts to Redis at most once a
second (and before ``/metrics`` answers), so counting costs no Redis round
trip per request; a process killed hard loses at most its last second of counts.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import redis

from adapters.redis_store import text

METRICS_KEY = "kifu:metrics:http"
FLUSH_EVERY_S = 1.0


class RequestMetrics:
    """Request counts by label set, flushed to Redis."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()

    def count(self, labels: str) -> None:
        """Count one request; flush when a second has passed since the last flush."""
        with self._lock:
            self._counts[labels] += 1
            due = time.monotonic() - self._last_flush >= FLUSH_EVERY_S
        if due:
            self.flush()

    def flush(self) -> None:
        """Add this process's counts to the shared hash (kept for later if Redis is down)."""
        with self._lock:
            counts = dict(self._counts)
            self._counts.clear()
            self._last_flush = time.monotonic()
        if not counts:
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for labels, n in counts.items():
                pipe.hincrby(METRICS_KEY, labels, n)
            pipe.execute()
        except redis.RedisError:
            with self._lock:
                self._counts.update(counts)

    def totals(self) -> dict[str, int]:
        """Every process's counts, after adding this one's."""
        self.flush()
        counts = self.client.hgetall(METRICS_KEY).items()
        return {text(field): int(value) for field, value in sorted(counts)}
