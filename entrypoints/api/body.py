"""Strict JSON request bodies (RFC 8259, parsed by ``domain.strict_json``): refused as malformed (400).

Python's json module accepts ``NaN``/``Infinity``, turns ``1e999`` into
``inf``, keeps the last of two equal keys, reads UTF-16 and a byte-order mark,
and takes ``"\\ud800"`` (a lone surrogate: valid JSON text, but no Unicode
string, so nothing can hash or store it). None of them could be hashed
canonically, so ``json_body`` parses every request body with
``domain.strict_json``, which refuses them all (400) before the view does
anything. It also refuses integers outside the signed 64-bit range (the log's
JSON encoder cannot store them), also when written as ``1e30`` (the same
number to any JSON reader), and bodies nested deeper than ``MAX_DEPTH`` (no
request needs it; Python's parser and encoder would hit their recursion
limits).

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

A body, once read, must have been sent as JSON: ``Content-Type: application/json``
(``; charset=utf-8`` allowed, no other charset), else 415 before any view, rate
limit or Redis call runs (``require_json_type``). ``text/plain``, forms
(``application/x-www-form-urlencoded``, ``multipart/form-data``) and no type at
all are what a page of any site may send without a CORS preflight; refusing them
means no other site can create a game, take an action or upload a record in a
visitor's browser unless this server's CORS settings allow that origin. Types
with a ``+json`` suffix are refused too: no endpoint takes another JSON-based
type (none uses merge patch), and the spec declares ``application/json`` alone.
The body is read (within the limits above) before it is judged, so the 415
reaches the client whole and the connection stays usable. A request without a
body (``Content-Length: 0`` or none) needs no type: ``POST .../stream-tickets``,
``start``, ``resume``.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any, TypeVar

import gevent  # type: ignore[import-untyped]
from flask import current_app, request
from gevent import monkey
from marshmallow import ValidationError
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge, RequestTimeout, UnsupportedMediaType

from domain import strict_json
from entrypoints.api.schemas import MAX_SEQ

MAX_DEPTH = strict_json.MAX_DEPTH
MAX_IDEMPOTENCY_KEY = 200
MAX_REASON = 200  # characters of the parser's reason in a 400's detail
DEADLINE_SPREAD = 2.0  # a body's deadline: BODY_READ_SECONDS times a random factor in [1, this]
JSON_TYPE = "application/json"  # the one media type a request body may have (else 415)
JSON_CHARSET = "utf-8"  # the only charset parameter it may carry
MAX_QUOTED_TYPE = 100  # characters of a refused Content-Type quoted in the 415's detail
View = TypeVar("View", bound=Callable[..., Any])


def takes_record(view: View) -> View:
    """Mark a view whose body is a whole game record: its limit is ``MAX_RECORD_BYTES``."""
    view.takes_record = True  # type: ignore[attr-defined]
    return view


def read_body() -> None:
    """``before_request``: refuse a body over the limit (413) or too slow to arrive (408); read the rest whole,
    then refuse it unless it was sent as JSON (415)."""
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
    if data:
        require_json_type()


def require_json_type() -> None:
    """Refuse (415) a request body not sent as ``application/json`` (module docstring: no cross-site bodies)."""
    sent = request.headers.get("Content-Type", "").strip()
    if not sent:
        raise UnsupportedMediaType(f"the body has no Content-Type; send it as Content-Type: {JSON_TYPE}")
    if request.mimetype != JSON_TYPE:
        quoted = sent[:MAX_QUOTED_TYPE]
        raise UnsupportedMediaType(f"the body is sent as {quoted!r}; this API takes only Content-Type: {JSON_TYPE}")
    charset = request.mimetype_params.get("charset")
    if charset is not None and charset.lower() != JSON_CHARSET:
        quoted = charset[:MAX_QUOTED_TYPE]
        raise UnsupportedMediaType(
            f"the body's charset is {quoted!r}; JSON bodies are UTF-8: send Content-Type: {JSON_TYPE} "
            f"(or {JSON_TYPE}; charset={JSON_CHARSET})"
        )


def _deadline(seconds: float) -> contextlib.AbstractContextManager[Any]:
    """A deadline for the body's read: a ``gevent.Timeout`` raising 408 (none when sockets are not gevent's)."""
    if not monkey.is_module_patched("socket"):
        return contextlib.nullcontext()
    timeout: contextlib.AbstractContextManager[Any] = gevent.Timeout(
        seconds, RequestTimeout(f"the body did not arrive within {seconds:.1f} s")
    )
    return timeout


def json_body() -> Any:
    """The request body parsed as strict JSON, or a 400."""
    try:
        return strict_json.loads(request.get_data(), max_depth=MAX_DEPTH)
    except strict_json.StrictJSONError as exc:
        raise malformed(exc) from None


def malformed(error: strict_json.StrictJSONError) -> BadRequest:
    """The 400 of a body that is not strict JSON (also an uploaded record's, parsed by its verifier)."""
    if isinstance(error, strict_json.NestedTooDeep):
        return BadRequest(f"the body is nested deeper than {MAX_DEPTH} levels")
    why = str(error)[:MAX_REASON]  # it may quote the body (a number, a key)
    return BadRequest(f"the body is not valid JSON (numbers must be finite, integers 64-bit): {why}")


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
