"""Strict JSON request bodies (RFC 8259): no NaN, no Infinity, no overflowing floats.

Python's json module accepts ``NaN``/``Infinity`` and turns ``1e999`` into
``inf``; none of them is JSON, and none could be hashed canonically, so they
are refused here as malformed (400).
"""

from __future__ import annotations

import json
import math
from typing import Any

from flask import request
from werkzeug.exceptions import BadRequest


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text}")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_body() -> Any:
    """The request body parsed as strict JSON, or a 400."""
    try:
        return json.loads(request.get_data(), parse_float=_finite_float, parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the body is not valid JSON") from None
