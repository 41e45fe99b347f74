"""The no-op baseline of ``bench.compare``: a minimal Flask app, one POST route that does no work.

``POST /noop`` parses the JSON body (Flask's ``request.get_json``) and answers a
small JSON object with 201, the status an accepted San Ban action gets. Served
exactly as Kifu's API is (``kifu serve``: gunicorn, gevent worker class, the
same ``-c python:entrypoints.gunicorn_conf``), it is what a request costs in
that stack before Kifu does anything::

    python -m gunicorn -k gevent -w 2 -b 127.0.0.1:8100 -c python:entrypoints.gunicorn_conf bench.noop_app:app

``raw`` is the same no-op as a bare WSGI callable; ``python -m bench.noop_app`` measures both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson
from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue

app = Flask(__name__)


@app.post("/noop")
def noop() -> ResponseReturnValue:
    """Parse the JSON body, answer a small JSON object (201)."""
    body = request.get_json()
    return jsonify({"ok": True, "keys": len(body) if isinstance(body, dict) else 0}), 201


def raw(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """The same no-op without Flask: a bare WSGI callable (what a request costs gunicorn and gevent alone)."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = orjson.loads(environ["wsgi.input"].read(length))
    out = orjson.dumps({"ok": True, "keys": len(body) if isinstance(body, dict) else 0})
    start_response("201 CREATED", [("Content-Type", "application/json"), ("Content-Length", str(len(out)))])
    return [out]


def main() -> None:
    """``python -m bench.noop_app``: the Flask no-op against the bare WSGI one, each under one gunicorn gevent
    worker as ``kifu serve`` runs it, twice in turn: requests a second and the worker's CPU per request."""
    import asyncio
    import os
    import signal
    import subprocess
    import sys

    from adapters.embedded_redis import free_port
    from bench import loadgen
    from bench.action_cost import cpu_seconds
    from bench.compare import START_TIMEOUT_S, gunicorn_argv

    for name in ("bench.noop_app:app", "bench.noop_app:raw") * 2:
        port = free_port()
        server = subprocess.Popen(
            gunicorn_argv(name, port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _answers(url) and time.monotonic() < deadline:
                time.sleep(0.1)  # a starting server announces nothing
            pgrep = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True, check=False)
            workers = [int(p) for p in pgrep.stdout.split()]
            before = sum(cpu_seconds(w) for w in workers)
            result = asyncio.run(loadgen.run("noop", [url], 16, 8.0, 1.0))
            cpu = sum(cpu_seconds(w) for w in workers) - before
            print(
                f"{name}: {result.count / result.window_s:,.0f} requests/s; "
                f"worker CPU {1e6 * cpu / result.total_count:.0f} us a request (whole run)",
                flush=True,
            )
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait()
    sys.stdout.flush()


def _answers(url: str) -> bool:
    from bench.compare import answers

    try:
        return answers(url, "/noop", b"{}", 201)
    except OSError:  # not listening yet
        return False


if __name__ == "__main__":
    main()
