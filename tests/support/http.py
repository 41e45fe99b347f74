"""Serve a Flask app over real HTTP (werkzeug, threaded) on a free port."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from werkzeug.serving import WSGIRequestHandler

from bench.browser import served


class KeepAlive(WSGIRequestHandler):
    protocol_version = "HTTP/1.1"  # werkzeug's default (1.0) closes every connection after one answer


def serving(app: Callable[..., Any], keep_alive: bool = False) -> AbstractContextManager[str]:
    """Yield the base URL while the WSGI ``app`` is served (HTTP/1.1 keep-alive if asked); shut down after."""
    return served(app, KeepAlive if keep_alive else WSGIRequestHandler)
