"""The Flask app factory (Flask tutorial style: nothing connects at import time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import redis
from flask import Flask, current_app, request

from service.api import problems

DEFAULTS = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "SSE_MAX_SECONDS": 300,
    "SSE_HEARTBEAT_SECONDS": 15,
    "SSE_WAIT_SLICE_SECONDS": 2,  # one blocking read; below the Redis socket timeout (redis-py: 5 s)
}


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the API app: defaults, then ``KIFU_*`` environment, then ``test_config``."""
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    if os.environ.get("REDIS_URL"):
        app.config["REDIS_URL"] = os.environ["REDIS_URL"]
    app.config.from_prefixed_env("KIFU")
    if test_config:
        app.config.update(test_config)
    problems.register(app)
    from service.api import audits, catalog, games, ops

    for module in (catalog, games, audits, ops):
        app.register_blueprint(module.bp)
    app.after_request(ops.count_request)
    return app


def service() -> Any:
    """The app's ``GameService``, built on first use."""
    ext = current_app.extensions
    if "kifu" not in ext:
        from service.bootstrap import build_service

        client = current_app.config.get("REDIS_CLIENT") or redis.Redis.from_url(current_app.config["REDIS_URL"])
        ext["kifu"] = build_service(client, scheduler=current_app.config.get("SCHEDULER"))
    return ext["kifu"]


def bearer_token() -> str | None:
    """The bearer token of the request, if any (a malformed header is refused)."""
    from service.errors import Unauthorized

    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("use 'Authorization: Bearer <seat token>'")
    return token.strip()
