"""Walking JSON-like values in tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def strings(value: Any) -> Iterator[str]:
    """Every string anywhere inside a JSON-like value, keys included (to look for a card id anywhere)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)
