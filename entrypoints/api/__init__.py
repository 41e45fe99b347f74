"""The Flask app factory (Flask tutorial style: nothing connects at import time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Flask

from entrypoints.api import cors, problems

DEFAULTS = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "SSE_MAX_SECONDS": 300,
    "SSE_HEARTBEAT_SECONDS": 15,
    "SSE_WAIT_SLICE_SECONDS": 2,  # one blocking read; below the Redis socket timeout (redis-py: 5 s)
    "STREAM_TICKET_SECONDS": 120,  # how long a stream ticket opens streams (KIFU_STREAM_TICKET_SECONDS)
    "CORS_ORIGINS": "",  # KIFU_CORS_ORIGINS: comma-separated origins allowed to call from a browser, or *
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
    cors.init_app(app)
    from entrypoints.api import audits, catalog, games, ops, streams, tournaments

    for module in (catalog, games, streams, tournaments, audits, ops):
        app.register_blueprint(module.bp)
    app.after_request(ops.count_request)
    return app
