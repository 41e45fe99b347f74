"""Server-Sent Events for a game's log, resumable with ``Last-Event-ID``.

Each event is sent as ``id: <seq>``, ``event: <type>``, ``data: <envelope JSON>``
(redacted for the caller like ``GET /events``). The stream ends after the
game's ``game_sealed`` event, or after ``SSE_MAX_SECONDS`` (the client
reconnects with ``Last-Event-ID``); a comment line is sent as a heartbeat.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import redis
from flask import Response, stream_with_context

from domain.engine import GAME_SEALED
from service.games import GameService

log = logging.getLogger(__name__)


def event_stream(svc: GameService, game_id: str, viewer: int | None, after: int, config: Mapping[str, Any]) -> Response:
    """The streaming response (the caller, and so the game, was identified before)."""
    frames = _frames(
        svc,
        game_id,
        viewer,
        after,
        float(config["SSE_MAX_SECONDS"]),
        int(float(config["SSE_HEARTBEAT_SECONDS"]) * 1000),
        int(float(config["SSE_WAIT_SLICE_SECONDS"]) * 1000),
    )
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(frames), mimetype="text/event-stream", headers=headers)


def _frames(
    svc: GameService, game_id: str, viewer: int | None, after: int, max_s: float, heartbeat_ms: int, slice_ms: int
) -> Iterator[str]:
    """The frames; each blocking read waits at most ``slice_ms``, which must stay
    below the Redis client's socket timeout (redis-py's default is 5 s)."""
    deadline = time.monotonic() + max_s
    quiet_since = time.monotonic()
    yield "retry: 1000\n\n"
    while time.monotonic() < deadline:
        try:
            shown = svc.wait_events(game_id, viewer, after, min(heartbeat_ms, slice_ms))
        except redis.RedisError:
            log.warning("SSE for %s ended: the event store did not answer", game_id)
            return  # the client reconnects with Last-Event-ID
        if not shown:
            if (time.monotonic() - quiet_since) * 1000 >= heartbeat_ms:
                quiet_since = time.monotonic()
                yield ": heartbeat\n\n"
            continue
        quiet_since = time.monotonic()
        for env in shown:
            yield f"id: {env['seq']}\nevent: {env['type']}\ndata: {json.dumps(env)}\n\n"
            after = env["seq"]
            if env["type"] == GAME_SEALED:
                return
