"""The no-op baseline of ``bench.compare``: a minimal Flask app, one POST route that does no work.

``POST /noop`` parses the JSON body (Flask's ``request.get_json``) and answers a
small JSON object with 201, the status an accepted San Ban action gets. Served
exactly as Kifu's API is (``kifu serve``: gunicorn, gevent worker class, the
same ``-c python:entrypoints.gunicorn_conf``), it is what a request costs in
that stack before Kifu does anything::

    python -m gunicorn -k gevent -w 2 -b 127.0.0.1:8100 -c python:entrypoints.gunicorn_conf bench.noop_app:app
"""

from __future__ import annotations

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue

app = Flask(__name__)


@app.post("/noop")
def noop() -> ResponseReturnValue:
    """Parse the JSON body, answer a small JSON object (201)."""
    body = request.get_json()
    return jsonify({"ok": True, "keys": len(body) if isinstance(body, dict) else 0}), 201
