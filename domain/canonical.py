"""Canonical JSON: the one byte encoding used for hashes and commitments.

Keys sorted, no whitespace, UTF-8, no NaN/Infinity. Any implementation in any
language that produces the same bytes verifies the same records.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def same(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same value, type included: ``0``, ``0.0`` and ``false`` differ.

    Python's ``==`` says ``0 == False == 0.0``; the verifiers compare what a record
    claims with what they derive through this instead, so a record can never carry
    a value that only a lenient comparison takes for the right one.
    """
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):  # not JSON at all (a lone surrogate, a NaN): the same as nothing
        return False
