"""Strict JSON request bodies (RFC 8259): no NaN, no Infinity, no overflowing numbers.

Python's json module accepts ``NaN``/``Infinity`` and turns ``1e999`` into
``inf``; none of them is JSON, and none could be hashed canonically, so they
are refused here as malformed (400). So are integers outside the signed 64-bit
range (the log's JSON encoder cannot store them), also when written as ``1e30``
(the same number to any JSON reader), and bodies nested deeper than
``MAX_DEPTH`` (no request needs it; Python's parser and encoder would hit
their recursion limits).

Every request's body is read whole before its view runs (``read_body``, a
``before_request`` hook), within two limits (README "Limits"):

* its size: at most ``MAX_BODY_BYTES`` (2 MiB; ``MAX_RECORD_BYTES``, 16 MiB, for
  a view marked ``takes_record``). A ``Content-Length`` above it is refused with
  413 before a byte of the body is read; a chunked body is cut off with 413 as
  soon as it passes it;
* its time: all of it within ``BODY_READ_SECONDS`` (10 s) of the request's
  head, else 408. A slow client otherwise holds a connection (a greenlet of the
  worker's ``worker_connections``) for as long as it likes. Each request's
  deadline is drawn between 1 and 2 times the setting: clients that started
  together (an attack's thousands of connections) then time out spread over
  seconds, not in one burst of 408s that stalls the worker for everyone else
  (measured: ``bench/slow_clients.py``). The deadline is a ``gevent.Timeout``,
  so it holds under the gevent workers of ``kifu serve`` (sockets patched);
  under another server (werkzeug's, in tests) the body is read without one.

After either refusal the server closes the connection: the rest of the body
is never read (``CLOSE_AFTER`` in ``problems.py``).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
from collections.abc import Callable
from typing import Any, TypeVar

import gevent  # type: ignore[import-untyped]
from flask import current_app, request
from gevent import monkey
from marshmallow import ValidationError
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge, RequestTimeout

from entrypoints.api.schemas import MAX_SEQ

INT64 = 2**63
MAX_DEPTH = 64
MAX_IDEMPOTENCY_KEY = 200
DEADLINE_SPREAD = 2.0  # a body's deadline: BODY_READ_SECONDS times a random factor in [1, this]
View = TypeVar("View", bound=Callable[..., Any])


def takes_record(view: View) -> View:
    """Mark a view whose body is a whole game record: its limit is ``MAX_RECORD_BYTES``."""
    view.takes_record = True  # type: ignore[attr-defined]
    return view


def read_body() -> None:
    """``before_request``: refuse a body over the limit (413) or too slow to arrive (408); read the rest whole."""
    config = current_app.config
    view = current_app.view_functions.get(request.endpoint or "")
    limit = int(config["MAX_RECORD_BYTES"] if getattr(view, "takes_record", False) else config["MAX_BODY_BYTES"])
    request.max_content_length = limit  # werkzeug cuts a chunked body off past it
    length = request.content_length
    if length is not None and length > limit:
        raise RequestEntityTooLarge(f"the body is {length} bytes; this request takes at most {limit}")
    if not length and "chunked" not in request.headers.get("Transfer-Encoding", "").lower():
        return
    seconds = float(config["BODY_READ_SECONDS"]) * random.uniform(1.0, DEADLINE_SPREAD)
    with _deadline(seconds):
        data = request.get_data()  # cached: json_body() parses it
        # werkzeug stops a chunked body at the limit without a word: one byte more from the server's
        # own (dechunked, so finite) stream tells a body of exactly the limit from a longer one
        if length is None and len(data) >= limit and request.environ["wsgi.input"].read(1):
            raise RequestEntityTooLarge(f"the body is over {limit} bytes, the most this request takes")


def _deadline(seconds: float) -> contextlib.AbstractContextManager[Any]:
    """A deadline for the body's read: a ``gevent.Timeout`` raising 408 (none when sockets are not gevent's)."""
    if not monkey.is_module_patched("socket"):
        return contextlib.nullcontext()
    timeout: contextlib.AbstractContextManager[Any] = gevent.Timeout(
        seconds, RequestTimeout(f"the body did not arrive within {seconds:.1f} s")
    )
    return timeout


def _finite_float(text: str) -> float:
    value = float(text)
    # a float this large is a whole number: a huge integer is refused however it is written (1e30)
    if not math.isfinite(value) or not -INT64 <= value < INT64:
        raise ValueError(f"number out of range: {text}")
    return value


def _int64(text: str) -> int:
    value = int(text)
    if not -INT64 <= value < INT64:
        raise ValueError(f"integer out of range: {text}")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """Nesting depth of arrays and objects (iterative: a deep body cannot recurse us out)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def json_body() -> Any:
    """The request body parsed as strict JSON, or a 400."""
    try:
        body = json.loads(request.get_data(), parse_float=_finite_float, parse_int=_int64, parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the body is not valid JSON (numbers must be finite, integers 64-bit)") from None
    except RecursionError:
        body = None
    else:
        if _depth(body) <= MAX_DEPTH:
            return body
    raise BadRequest(f"the body is nested deeper than {MAX_DEPTH} levels")


def json_object() -> dict[str, Any]:
    """The request body as a JSON object (a 400 when it is not JSON, a 422 when it is not an object)."""
    body = json_body()
    if not isinstance(body, dict):
        raise ValidationError({"_schema": ["the body must be a JSON object"]})
    return body


def idempotency_key() -> str | None:
    """The ``Idempotency-Key`` header: absent, or 1-200 printable ASCII characters."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (1 <= len(key) <= MAX_IDEMPOTENCY_KEY and key.isascii() and key.isprintable()):
        raise ValidationError({"Idempotency-Key": [f"must be 1-{MAX_IDEMPOTENCY_KEY} printable ASCII characters"]})
    return key


def whole_number(text: str) -> int | None:
    """``text`` as a whole number (ASCII digits: ``isdigit`` alone takes "²"), any beyond ``MAX_SEQ`` as
    ``MAX_SEQ + 1`` (so a header of 5000 digits is not converted); None if it is not one."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= len(str(MAX_SEQ)) else MAX_SEQ + 1
