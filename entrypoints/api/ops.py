"""Liveness, readiness and Prometheus metrics (counters: ``adapters.metrics``)."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue

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
    lines = [
        "# HELP kifu_http_requests_total HTTP requests by method, route and status.",
        "# TYPE kifu_http_requests_total counter",
    ]
    lines += [f"kifu_http_requests_total{{{labels}}} {n}" for labels, n in kifu().metrics.totals().items()]
    return Response("\n".join(lines) + "\n", mimetype="text/plain; version=0.0.4")


def count_request(response: Response) -> Response:
    """after_request hook: count the request by method, route rule and status."""
    rule = request.url_rule.rule if request.url_rule else "unmatched"
    if rule not in PROBES:  # probes must not depend on (or wait for) Redis
        kifu().metrics.count(f'method="{request.method}",route="{rule}",status="{response.status_code}"')
    return response
