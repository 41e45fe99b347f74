"""The Flask app factory (Flask tutorial style: nothing connects at import time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from entrypoints.api import body, compression, cors, limits, problems
from entrypoints.api.fast_json import FastJSONProvider
from entrypoints.api.schemas import AsciiIntegerConverter

MIB = 1024 * 1024

DEFAULTS = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "SSE_MAX_SECONDS": 300,
    "SSE_HEARTBEAT_SECONDS": 15,
    "SSE_WAIT_SLICE_SECONDS": 2,  # one blocking read; below the Redis socket timeout (redis-py: 5 s)
    "STREAM_TICKET_SECONDS": 120,  # how long a stream ticket opens streams (KIFU_STREAM_TICKET_SECONDS)
    # KIFU_STREAM_TICKET_RESUME_SECONDS: how long after its last (re)connection a ticket that opened a stream
    # may still resume it with Last-Event-ID (docs/api.md, "Stream tickets")
    "STREAM_TICKET_RESUME_SECONDS": 24 * 3600,
    "CORS_ORIGINS": "",  # KIFU_CORS_ORIGINS: comma-separated origins allowed to call from a browser, or *
    # Limits (README, "Limits"). Bodies: the largest other than a record, a duplicate tournament of 1,024
    # entrants with 200 Front Line deals, is 0.9 MB (1.5 MB indented); the largest record, a 1,000-round
    # Kiri-ai game, 5.4 MB (8.4 MB indented; `python -m bench.record_sizes`).
    "MAX_BODY_BYTES": 2 * MIB,  # KIFU_MAX_BODY_BYTES: any request's body but an uploaded record's (else 413)
    "MAX_RECORD_BYTES": 16 * MIB,  # KIFU_MAX_RECORD_BYTES: POST /v1/audits's body (else 413)
    "BODY_READ_SECONDS": 10,  # KIFU_BODY_READ_SECONDS: a body must be in within this (else 408)
    # Uploaded records are verified in processes of their own, per API process (entrypoints/audit_pool.py):
    "AUDIT_PROCESSES": 1,  # KIFU_AUDIT_PROCESSES: verifications at once (each a process, started at first use)
    "AUDIT_QUEUE": 4,  # KIFU_AUDIT_QUEUE: more waiting for a verifier (past that 503 audits-busy)
    "AUDIT_SECONDS": 30,  # KIFU_AUDIT_SECONDS: one verification's limit (past it killed, 422 audit-too-long)
    "RATE_LIMITS": None,  # KIFU_RATE_LIMITS: true/false; unset: on, but off in a TESTING app (limits.py)
    "RATE_LIMIT_CREATE": "60/minute",  # KIFU_RATE_LIMIT_CREATE: games + tournaments created per client address
    "RATE_LIMIT_AUDITS": "20/minute",  # KIFU_RATE_LIMIT_AUDITS: uploaded records audited per client address
    "RATE_LIMIT_ANALYSES": "10/minute",  # KIFU_RATE_LIMIT_ANALYSES: analyses asked for per client address
    "RATE_LIMIT_ACTIONS": "600/minute",  # KIFU_RATE_LIMIT_ACTIONS: actions per seat
    "RATE_LIMIT_BAD_TOKENS": "60/minute",  # KIFU_RATE_LIMIT_BAD_TOKENS: refused tokens/tickets per client address
    "TRUSTED_PROXIES": 0,
    # KIFU_EVENTS_URL: where the game logs live when not on REDIS_URL's Redis: redis+cluster://HOST:PORT
    # (a Redis Cluster; docs/deployment.md). Unset: one Redis for everything. KIFU_EVENTS_WAIT_REPLICAS:
    # replicas that must confirm an append before it is acknowledged (on a cluster 1 unless set), within
    # KIFU_EVENTS_WAIT_MS (1000; else 503 write-unconfirmed).
    "EVENTS_URL": None,
    "EVENTS_WAIT_REPLICAS": None,
    "EVENTS_WAIT_MS": None,
    # KIFU_FOLLOW_APPENDS: true/false; unset: on, but off in a TESTING app (its tests make many apps). On:
    # the process keeps its cached tables current with other processes' appends (README, "The log").
    "FOLLOW_APPENDS": None,  # KIFU_TRUSTED_PROXIES: proxies in front whose X-Forwarded-For is believed
}


class KifuApp(Flask):
    """The API's Flask: JSON answers encoded by orjson (``fast_json``)."""

    json_provider_class = FastJSONProvider


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the API app: defaults, then ``KIFU_*`` environment, then ``test_config``."""
    app = KifuApp(__name__)
    app.url_map.merge_slashes = False  # `//` is a 404 problem, not an HTML redirect
    app.url_map.converters["int"] = AsciiIntegerConverter  # /seats/١/join is no seat 1: a 404
    app.config.from_mapping(DEFAULTS)
    if os.environ.get("REDIS_URL"):
        app.config["REDIS_URL"] = os.environ["REDIS_URL"]
    app.config.from_prefixed_env("KIFU")
    if test_config:
        app.config.update(test_config)
    app.config["MAX_CONTENT_LENGTH"] = max(app.config["MAX_BODY_BYTES"], app.config["MAX_RECORD_BYTES"])
    proxies = int(app.config["TRUSTED_PROXIES"])
    if proxies:  # the client's address is the one the outermost trusted proxy saw
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies)  # type: ignore[method-assign]
    problems.register(app)
    compression.init_app(app)  # the first after_request hook, so the last to run: gzip the final body
    cors.init_app(app)
    app.before_request(body.read_body)  # first: a body is in (or refused) before anything else runs
    from entrypoints import web
    from entrypoints.api import analysis, audits, catalog, games, ops, spec, streams, tournaments, transparency

    app.before_request(ops.start_timer)  # then the clock of kifu_http_request_duration_seconds starts

    for module in (catalog, games, streams, tournaments, audits, analysis, transparency, ops, spec):
        app.register_blueprint(module.bp)
    app.register_blueprint(web.bp)  # the web app's pages and modules (/, /games/<id>, /app/...)
    app.after_request(ops.count_request)
    limits.init_app(app)  # last: it wraps the views the blueprints mark; its 429s are what the metrics count
    return app
