"""Debian's Chromium, headless, driven by Playwright (``executable_path``: no browser is ever downloaded), and
the app served over real HTTP in a thread: for the benchmarks that measure pages (and the browser tests,
``tests/support/browser.py``)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.serving import WSGIRequestHandler, make_server

from adapters.embedded_redis import free_port

# A closed network: without these Chromium keeps trying to reach Google's services at every start.
CHROMIUM_ARGS = [
    "--no-sandbox",  # tests may run as root (CI)
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """Debian's Chromium, or an AssertionError saying how to install it."""
    found = shutil.which("chromium")
    assert found, "Chromium is missing: run `sudo apt-get install -y chromium` (or `make test` as root)"
    return found


@contextmanager
def served(app: Callable[..., Any], handler: type[WSGIRequestHandler] = WSGIRequestHandler) -> Iterator[str]:
    """The WSGI ``app`` on a free port of 127.0.0.1 (werkzeug, threaded, ``handler`` per request): its base URL,
    until the block ends (also the tests' server: ``tests/support/http.py``)."""
    server = make_server("127.0.0.1", free_port(), app, threaded=True, request_handler=handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
