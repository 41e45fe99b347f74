"""Serve a Flask app over real HTTP (werkzeug, threaded) on a free port."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.serving import WSGIRequestHandler, make_server

from adapters.embedded_redis import free_port


class KeepAlive(WSGIRequestHandler):
    protocol_version = "HTTP/1.1"  # werkzeug's default (1.0) closes every connection after one answer


@contextmanager
def serving(app: Callable[..., Any], keep_alive: bool = False) -> Iterator[str]:
    """Yield the base URL while the WSGI ``app`` is served (HTTP/1.1 keep-alive if asked); shut down after."""
    port = free_port()
    handler = KeepAlive if keep_alive else WSGIRequestHandler
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        thread.join()
