"""Serve a Flask app over real HTTP (werkzeug, threaded) on a free port."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from werkzeug.serving import make_server

from adapters.embedded_redis import free_port


@contextmanager
def serving(app: Flask) -> Iterator[str]:
    """Yield the base URL while ``app`` is served; shut down after."""
    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        thread.join()
