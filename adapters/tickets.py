"""Stream tickets in Redis: short-lived keys, found by the SHA-256 of the ticket (never the ticket itself)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import redis


class RedisTickets:
    """``kifu:ticket:<sha256 of the ticket>`` -> what the ticket opens, expiring by itself."""

    def __init__(self, client: redis.Redis, prefix: str = "kifu") -> None:
        self.client = client
        self.prefix = prefix

    def _key(self, ticket_hash: str) -> str:
        return f"{self.prefix}:ticket:{ticket_hash}"

    def put(self, ticket_hash: str, grants: Mapping[str, Any], ttl_s: int) -> None:
        self.client.set(self._key(ticket_hash), json.dumps(grants), ex=ttl_s)

    def get(self, ticket_hash: str) -> dict[str, Any] | None:
        raw = self.client.get(self._key(ticket_hash))
        return json.loads(raw) if raw else None
