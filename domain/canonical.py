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
