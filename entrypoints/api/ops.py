"""Liveness, readiness and Prometheus metrics (``adapters.metrics``)."""

from __future__ import annotations

import time

from flask import Blueprint, Response, g, jsonify, request
from flask.typing import ResponseReturnValue

from adapters.metrics import CONTENT_TYPE, HTTP_REQUESTS, HTTP_SECONDS, render
from adapters.redis_client import probe
from entrypoints.api.context import kifu

bp = Blueprint("ops", __name__)
PROBES = ("/readyz", "/healthz")


@bp.get("/healthz")
def healthz() -> ResponseReturnValue:
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz() -> ResponseReturnValue:
    problem = probe(kifu().client) or kifu().store.ping()  # the app's Redis, then the game logs' (every master)
    if problem:
        return jsonify({"status": "unavailable", "redis": problem}), 503
    return jsonify({"status": "ready"})


@bp.get("/metrics")
def metrics() -> ResponseReturnValue:
    return Response(render(kifu().queue_depths), content_type=CONTENT_TYPE)


def start_timer() -> None:
    """before_request hook: when the request's handling began (``count_request``)."""
    g.kifu_started = time.perf_counter()


def count_request(response: Response) -> Response:
    """after_request hook: count the request by method, route rule and status, and time it."""
    rule = request.url_rule.rule if request.url_rule else "unmatched"
    if rule not in PROBES:  # probes measure nothing
        HTTP_REQUESTS.labels(request.method, rule, str(response.status_code)).inc()
        started = g.get("kifu_started")
        if started is not None:
            HTTP_SECONDS.labels(request.method, rule).observe(time.perf_counter() - started)
    return response
