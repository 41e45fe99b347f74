"""Strict JSON request bodies (RFC 8259): no NaN, no Infinity, no overflowing numbers.

Python's json module accepts ``NaN``/``Infinity`` and turns ``1e999`` into
``inf``; none of them is JSON, and none could be hashed canonically, so they
are refused here as malformed (400). So are integers outside the signed 64-bit
range (the log's JSON encoder cannot store them), also when written as ``1e30``
(the same number to any JSON reader), and bodies nested deeper than
``MAX_DEPTH`` (no request needs it; Python's parser and encoder would hit
their recursion limits).
"""

from __future__ import annotations

import json
import math
from typing import Any

from flask import request
from marshmallow import ValidationError
from werkzeug.exceptions import BadRequest

from entrypoints.api.schemas import MAX_SEQ

INT64 = 2**63
MAX_DEPTH = 64
MAX_IDEMPOTENCY_KEY = 200


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
