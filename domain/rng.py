"""The documented, language-independent random generator of every game.

Byte stream: block ``i`` (i = 0, 1, 2, ...) is
``HMAC-SHA256(key=seed, message=i as 8-byte big-endian)``; the stream is the
blocks concatenated, consumed left to right.

Integers: to draw ``x`` uniformly in ``[0, n)`` take ``k`` bytes, where ``k`` is
the number of bytes needed to hold ``n - 1`` (at least 1), read them as a
big-endian unsigned integer ``r``, and accept when ``r < limit`` where
``limit = (256**k // n) * n``; the result is ``r % n``. Otherwise draw ``k``
fresh bytes and try again (rejection sampling: no modulo bias).

Shuffle: Fisher-Yates from the end: for ``i`` from ``len - 1`` down to ``1``,
``j = below(i + 1)``, swap items ``i`` and ``j``.

Test vectors are in README.md ("Provable fairness") and tests/unit/test_rng.py.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class SeededRandom:
    """Deterministic generator keyed by a game's secret seed."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buffer = b""

    def next_bytes(self, count: int) -> bytes:
        """The next ``count`` bytes of the stream."""
        while len(self._buffer) < count:
            block = hmac.new(self._seed, self._counter.to_bytes(8, "big"), hashlib.sha256)
            self._buffer += block.digest()
            self._counter += 1
        out, self._buffer = self._buffer[:count], self._buffer[count:]
        return out

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n < 1:
            raise ValueError("below() needs n >= 1")
        if n == 1:
            return 0
        width = max(1, ((n - 1).bit_length() + 7) // 8)
        limit = (256**width // n) * n
        while True:
            r = int.from_bytes(self.next_bytes(width), "big")
            if r < limit:
                return r % n

    def choice(self, items: Sequence[T]) -> T:
        """One item, uniformly."""
        return items[self.below(len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffled copy of ``items``."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct items: the first ``k`` of a full shuffle."""
        return self.shuffled(items)[:k]


def seed_hash(seed: bytes) -> str:
    """The published fingerprint of a seed: hex SHA-256 of its bytes."""
    return hashlib.sha256(seed).hexdigest()
