"""gunicorn settings module for ``kifu serve`` (``-c python:entrypoints.gunicorn_conf``).

gunicorn answers requests it cannot parse (a request line over 4094 bytes,
malformed headers) itself, with an HTML page. The API promises problem+json
and no HTML error pages (docs/api.md), so its error writer is replaced here,
before the workers fork. ``gunicorn.util.write_error`` is looked up at call time by the workers.

Slow and idle clients (README, "Limits"). Each connection of a gevent worker
is a greenlet of its pool of ``worker_connections``; a full pool stops
accepting, and everybody else waits in the listen backlog. So every way a
client can hold a connection without working is cut short:

* the request's head (request line and headers), and the wait for the next
  request on a kept-alive connection: ``keepalive`` seconds in all. gunicorn's
  gevent worker reads every head, the first one included, inside a
  ``gevent.Timeout(keepalive)`` and closes the connection when it fires (with
  ``keepalive = 0`` it would wait for ever). Here each head's timeout is drawn
  between 1 and 1.5 times ``keepalive`` (``post_fork``): thousands of idle
  connections opened at once then time out, and come back, spread over a
  second rather than all in the same instant, which stalled the worker for
  everyone else (``bench/slow_clients.py``);
* the request's body: ``KIFU_BODY_READ_SECONDS`` (the app reads it whole
  before anything else, under a ``gevent.Timeout``, spread the same way:
  ``entrypoints/api/body.py``);
* a body the app refused unread (413 too large, 408 too slow) is not drained
  afterwards: ``post_request`` closes the connection (gunicorn drops the
  ``Connection: close`` the app sets, and would otherwise read and discard the
  rest of the body before the next request, for up to ``keepalive`` seconds);
* one client address may hold at most ``KIFU_MAX_CONNECTIONS_PER_CLIENT``
  connections (256) per worker at once: a connection past that is answered
  429 and closed before anything of it is read, which costs the worker a
  small fraction of what serving its request's head would. Behind a reverse
  proxy (``KIFU_TRUSTED_PROXIES`` set) every connection comes from the proxy,
  so there is no cap here: the proxy's own per-client limits apply (README,
  "Deployment behind a proxy"). ``0`` turns it off;
* the pool is large, ``worker_connections`` per worker: an idle greenlet costs
  a few kB, so thousands of slow clients take slots that are then still free
  for the others, until their deadline frees theirs. The soft limit on open
  files is raised to fit (up to the hard limit).

Garbage collection (``post_worker_init``). Once the app is loaded, the worker
freezes what exists (modules, routes, schemas: never garbage) and collects the
youngest generation less often (``GC_THRESHOLDS``): with Python's defaults, full
collections under load held every request in flight, and made the longest
answers. Figures: docs/performance.md, section "Garbage collection in the API
workers".

Uploaded records (``POST /v1/audits``) are verified in processes of each
worker's own (``entrypoints/audit_pool.py``), which ``worker_exit`` ends.

Server-sent event streams hold their connection on purpose, for up to
``SSE_MAX_SECONDS``; they count against ``worker_connections`` too.
"""

from __future__ import annotations

import gc
import json
import os
import random
import resource
import socket
from collections import Counter
from collections.abc import Callable
from typing import Any

import gevent  # type: ignore[import-untyped]
from gunicorn import util
from gunicorn.http.wsgi import Response

from adapters.metrics import process_dead
from entrypoints.api.problems import CLOSE_AFTER, kind_for_status, problem_body
from entrypoints.audit_pool import close_all as close_audit_pools


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's ``write_error``, as an RFC 9457 problem."""
    body = json.dumps(problem_body(kind_for_status(status_int), mesg or reason, status_int)).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


util.write_error = write_problem


def _one_send(write: Callable[[Any, bytes], None]) -> Callable[[Any, bytes], None]:
    """gunicorn's ``Response.write``, sending a whole answer (head and body, its ``Content-Length``
    known) in one ``send`` instead of two.

    gunicorn writes the head and then the body, two system calls and two TCP
    segments for every JSON answer, and under the San Ban load that second send
    was a large share of a no-op request's CPU (figures: docs/performance.md,
    section "One send per answer").
    Anything else (a streamed or chunked body, SSE, a body-less answer to HEAD,
    a body in several pieces) goes through gunicorn's own ``write`` unchanged.
    """

    def write_whole(resp: Any, data: bytes) -> None:
        if (
            resp.headers_sent
            or resp.chunked
            or getattr(resp, "_omits_body", True)
            or not isinstance(data, bytes)
            or resp.response_length != len(data)
        ):
            write(resp, data)
            return
        lines = [*resp.default_headers(), *(f"{k}: {v}\r\n" for k, v in resp.headers), "\r\n"]
        resp.headers_sent = True
        resp.sent += len(data)
        util.write(resp.sock, "".join(lines).encode("latin-1") + data)

    return write_whole


Response.write = _one_send(Response.write)  # a gunicorn whose responses lack ``_omits_body`` keeps its own

# A connection may take this long to send its request's head, or stay idle between two requests.
keepalive = 2
# Greenlets (connections) per worker (`kifu serve` leaves it to this file).
worker_connections = 10_000
# Descriptors a worker may need beyond its connections: Redis pools, logs, the listening socket.
SPARE_FILES = 256
# A request head's timeout: keepalive times a random factor in [1, this].
DEADLINE_SPREAD = 1.5
GC_THRESHOLDS = (3_000, 10, 10)  # the young generation collected after 3,000 net allocations (Python: 700)
# Connections one client address may hold at once in a worker (0: any number); none behind a proxy.
MAX_CONNECTIONS_PER_CLIENT = (
    0
    if int(os.environ.get("KIFU_TRUSTED_PROXIES") or 0)
    else int(os.environ.get("KIFU_MAX_CONNECTIONS_PER_CLIENT") or 256)
)


def raise_open_files_limit(wanted: int) -> int:
    """Raise the soft ``RLIMIT_NOFILE`` towards ``wanted`` (never past the hard limit); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def post_fork(server: object, worker: Any) -> None:
    """In each new worker: room for its ``worker_connections`` (whatever the command line set) in open files,
    and, in a gevent worker, request heads' timeouts spread between 1 and 1.5 times ``keepalive``."""
    raise_open_files_limit(int(getattr(worker, "worker_connections", worker_connections)) + SPARE_FILES)
    if hasattr(worker, "timeout_ctx") and worker.cfg.keepalive:
        base = float(worker.cfg.keepalive)

        def timeout_ctx() -> Any:  # gunicorn's gevent worker: ``gevent.Timeout(keepalive, False)``
            return gevent.Timeout(base * random.uniform(1.0, DEADLINE_SPREAD), False)

        worker.timeout_ctx = timeout_ctx
    if hasattr(worker, "handle") and MAX_CONNECTIONS_PER_CLIENT > 0:
        worker.handle = capped(worker.handle, MAX_CONNECTIONS_PER_CLIENT)


def too_many_connections(cap: int) -> bytes:
    """The whole answer to a connection over the cap: a 429 problem, sent before its request is read."""
    detail = f"too many connections from this address: at most {cap} at once"
    body = json.dumps(problem_body(kind_for_status(429), detail)).encode()
    head = (
        "HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: 1\r\n"
        f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def capped(handle: Callable[..., Any], cap: int) -> Callable[..., Any]:
    """A worker's ``handle(listener, client, addr)`` that serves at most ``cap`` connections per address."""
    open_now: Counter[str] = Counter()
    refusal = too_many_connections(cap)

    def handle_capped(listener: Any, client: socket.socket, addr: Any) -> None:
        address = str(addr[0]) if isinstance(addr, tuple) else str(addr)
        if open_now[address] >= cap:
            try:
                client.sendall(refusal)
            except OSError:
                pass
            finally:
                util.close(client)
            return
        open_now[address] += 1
        try:
            handle(listener, client, addr)
        finally:
            open_now[address] -= 1
            if not open_now[address]:
                del open_now[address]

    return handle_capped


def post_worker_init(worker: object) -> None:
    """Once the app is loaded in a worker: what exists now is never garbage, so collect once, freeze it
    out of every later collection, and collect the young generation less often (module docstring)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def worker_exit(server: object, worker: object) -> None:
    """A worker's audit verifiers end with it (``entrypoints/audit_pool.py``; they would also see their
    input close when the worker dies, and exit)."""
    close_audit_pools()


def child_exit(server: object, worker: Any) -> None:
    """A worker has ended: its live gauges leave the metrics (``adapters.metrics``, multiprocess mode)."""
    process_dead(worker.pid)


def post_request(worker: object, req: Any, environ: dict[str, Any], resp: Any) -> None:
    """After a 408 or 413 the rest of the body is unread: close the connection rather than drain it."""
    if resp is not None and getattr(resp, "status_code", None) in CLOSE_AFTER:
        req.must_close = True  # the parser stops before the next request instead of reading on
