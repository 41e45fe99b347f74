"""Records for tests: deterministic strong salts and the sealed record of a finished game."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

from domain.canonical import sha256_hex
from domain.engine import seal
from domain.events import Event
from domain.record import GENESIS, SALT_BYTES, build_record, envelopes

AT = "2026-01-01T00:00:00.000Z"


def salt_source(tag: str = "") -> Callable[[], str]:
    """Distinct 128-bit hex salts, the same sequence for the same tag (tests must be repeatable)."""
    counter = itertools.count()
    return lambda: sha256_hex(f"{tag}:{next(counter)}".encode())[: 2 * SALT_BYTES]


SALTS = salt_source("tests")


def sealed_record(events: Sequence[Event], seed: bytes, at: str = AT) -> dict[str, Any]:
    """The portable record of a finished game, through JSON as an auditor reads it."""
    salts = salt_source("record")
    envs = envelopes(events, 1, GENESIS, at, salts)
    envs += envelopes([seal(seed, envs[-1]["hash"])], len(envs) + 1, envs[-1]["hash"], at, salts)
    return json.loads(json.dumps(build_record(envs)))
