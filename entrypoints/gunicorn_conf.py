"""gunicorn settings module for ``kifu serve`` (``-c python:entrypoints.gunicorn_conf``).

gunicorn answers requests it cannot parse (a request line over 4094 bytes,
malformed headers) itself, with an HTML page. API.md promises problem+json and
no HTML error pages, so its error writer is replaced here, before the workers
fork. ``gunicorn.util.write_error`` is looked up at call time by the workers.
"""

from __future__ import annotations

import json
import socket

from gunicorn import util

from entrypoints.api.problems import kind_for_status, problem_body


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's ``write_error``, as an RFC 9457 problem."""
    body = json.dumps(problem_body(kind_for_status(status_int), mesg or reason, status_int)).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


util.write_error = write_problem
