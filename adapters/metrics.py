"""Prometheus metrics, through ``prometheus_client``.

Every process counts in its own memory. Under ``kifu run`` (and ``kifu serve``) the processes share a
directory, ``PROMETHEUS_MULTIPROC_DIR``, where ``prometheus_client``'s multiprocess mode keeps each
process's values in a file of its own; ``/metrics`` adds them up (``render``), so one scrape of one API
process sees the API workers, the RQ workers, the projector and the sweeper of that machine. The
variable must be set before this module is first imported (the library chooses its storage then): the
CLI sets it before it starts anything. Without it (a test's app), the metrics are this process's.

What is measured (docs/deployment.md, "What to watch"):

* ``kifu_http_requests_total{method,route,status}``, ``kifu_http_request_duration_seconds{method,route}``;
* ``kifu_append_seconds{wait}``: an append's round trip, ``wait`` the replicas it waited for (``WAIT``:
  the difference between the two is WAIT's cost);
* ``kifu_bot_turn_lag_seconds``: from a bot turn's job being asked for to the bot's move;
* ``kifu_open_streams``: server-sent event streams open now (summed over live processes);
* ``kifu_queue_jobs{queue}``: jobs waiting in the RQ queue, read when scraped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)  # seconds: requests, appends

HTTP_REQUESTS = Counter(
    "kifu_http_requests", "HTTP requests by method, route and status.", ["method", "route", "status"]
)
HTTP_SECONDS = Histogram(
    "kifu_http_request_duration_seconds", "HTTP request handling time by method and route.", ["method", "route"]
)
APPEND_SECONDS = Histogram(
    "kifu_append_seconds",
    "One append's round trip to the event store, by the replicas it waited for (WAIT).",
    ["wait"],
    buckets=FAST,
)
BOT_TURN_LAG_SECONDS = Histogram(
    "kifu_bot_turn_lag_seconds",
    "From a bot turn's job being asked for to the bot's move.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
OPEN_STREAMS = Gauge("kifu_open_streams", "Server-sent event streams open now.", multiprocess_mode="livesum")


class QueueDepth(Collector):
    """``kifu_queue_jobs``: the jobs waiting in each queue, asked of RQ when scraped."""

    def __init__(self, depths: Callable[[], dict[str, int]]) -> None:
        self.depths = depths

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily("kifu_queue_jobs", "Jobs waiting in the RQ queue.", labels=["queue"])
        for queue, depth in self.depths().items():
            family.add_metric([queue], depth)
        yield family


def render(depths: Callable[[], dict[str, int]]) -> bytes:
    """The exposition text: every process's values (in multiprocess mode) or this one's, and the queues."""
    if os.environ.get(MULTIPROCESS_DIR):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry = CollectorRegistry()
        registry.register(_Everything())
    registry.register(QueueDepth(depths))
    return generate_latest(registry)


class _Everything(Collector):
    """This process's metrics (the default registry), in a registry that also holds the queue depths."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def process_dead(pid: int) -> None:
    """A process that wrote metrics has ended (gunicorn's ``child_exit``): its live gauges go."""
    if os.environ.get(MULTIPROCESS_DIR):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
