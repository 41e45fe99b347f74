"""Liveness, readiness and Prometheus metrics.

Request counters live in one Redis hash so that every gunicorn worker adds
to the same numbers. Each process counts in memory and adds its counts to
Redis at most once a second (and before answering ``/metrics``), so counting
costs no Redis round trip per request; a process killed hard loses at most
its last second of counts.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import redis
from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue

from service.api import service

FLUSH_EVERY_S = 1.0
_counts: Counter[str] = Counter()
_lock = threading.Lock()
_last_flush = [time.monotonic()]

bp = Blueprint("ops", __name__)
METRICS_KEY = "kifu:metrics:http"


@bp.get("/healthz")
def healthz() -> ResponseReturnValue:
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz() -> ResponseReturnValue:
    pool = service().store.redis.connection_pool.connection_kwargs
    probe = redis.Redis(host=pool.get("host", "127.0.0.1"), port=pool.get("port", 6379), db=pool.get("db", 0),
                        password=pool.get("password"), socket_timeout=1, socket_connect_timeout=1,
                        retry=None)
    try:
        probe.ping()  # a one-shot probe: no retries, so a dead Redis answers 503 within a second
    except redis.RedisError as exc:
        return jsonify({"status": "unavailable", "redis": str(exc)}), 503
    return jsonify({"status": "ready"})


@bp.get("/metrics")
def metrics() -> ResponseReturnValue:
    client = service().store.redis
    flush(client)
    lines = ["# HELP kifu_http_requests_total HTTP requests by method, route and status.",
             "# TYPE kifu_http_requests_total counter"]
    for field, value in sorted(client.hgetall(METRICS_KEY).items()):
        lines.append(f"kifu_http_requests_total{{{field.decode()}}} {int(value)}")
    return Response("\n".join(lines) + "\n", mimetype="text/plain; version=0.0.4")


def count_request(response: Response) -> Response:
    """after_request hook: count the request by method, route rule and status."""
    rule = request.url_rule.rule if request.url_rule else "unmatched"
    labels = f'method="{request.method}",route="{rule}",status="{response.status_code}"'
    if rule in ("/readyz", "/healthz"):
        return response  # probes must not depend on (or wait for) Redis
    with _lock:
        _counts[labels] += 1
        due = time.monotonic() - _last_flush[0] >= FLUSH_EVERY_S
    if due:
        flush(service().store.redis)
    return response


def flush(client: redis.Redis) -> None:
    """Add this process's counts to the shared hash (kept for later if Redis is down)."""
    with _lock:
        counts = dict(_counts)
        _counts.clear()
        _last_flush[0] = time.monotonic()
    if not counts:
        return
    try:
        pipe = client.pipeline(transaction=False)
        for labels, n in counts.items():
            pipe.hincrby(METRICS_KEY, labels, n)
        pipe.execute()
    except redis.RedisError:
        with _lock:
            _counts.update(counts)
