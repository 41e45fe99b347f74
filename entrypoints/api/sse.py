"""Server-Sent Events: a game's or a tournament's log (resumable with ``Last-Event-ID``), and a player's
turns across games.

Log streams: each event is ``id: <seq>``, ``event: <type>``, ``data: <event JSON>``
(redacted for the caller like ``GET /events``); a game's stream ends after its
``game_sealed`` event, a tournament's after ``tournament_finished``.

Player stream: on connect, ``event: status`` for every watched seat
(``{"game", "seat", "version", "turn", "status", "your_turn", "deadline", "result"}``),
then ``status`` again whenever one of those games moves, with
``event: your_turn`` when a new turn of the seat begins and ``event: game_over``
when its game ends (same data). It ends when every watched game is over.

Both end after ``SSE_MAX_SECONDS`` (the client reconnects: ``EventSource``
does so by itself) and send a comment as a heartbeat when quiet.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from flask import Response, stream_with_context

from domain.engine import GAME_SEALED
from service.games import GameService
from service.streams import Streams

log = logging.getLogger(__name__)
Poll = Callable[[int], tuple[list[str], bool]]  # wait up to ms -> (frames, the stream is done)
Wait = Callable[[int, int], list[dict[str, Any]]]  # (after, wait up to ms) -> envelopes


@dataclass(frozen=True)
class Timing:
    """How long a stream lasts, how often it beats when quiet, how long one blocking read waits."""

    max_s: float
    heartbeat_ms: int
    slice_ms: int  # below the Redis client's socket timeout (redis-py's default is 5 s)

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Timing:
        return cls(
            float(config["SSE_MAX_SECONDS"]),
            int(float(config["SSE_HEARTBEAT_SECONDS"]) * 1000),
            int(float(config["SSE_WAIT_SLICE_SECONDS"]) * 1000),
        )


def event_stream(svc: GameService, game_id: str, viewer: int | None, after: int, timing: Timing) -> Response:
    """A game's events after ``after`` as ``viewer`` may see them (the caller was identified before)."""
    return log_stream(lambda a, ms: svc.wait_events(game_id, viewer, a, ms), after, GAME_SEALED, timing, game_id)


def log_stream(wait: Wait, after: int, last_type: str, timing: Timing, what: str) -> Response:
    """The events ``wait(after, block_ms)`` finds, as they come, until one of type ``last_type``."""
    cursor = [after]

    def poll(block_ms: int) -> tuple[list[str], bool]:
        frames = []
        for env in wait(cursor[0], block_ms):
            frames.append(_frame(env["type"], env, env["seq"]))
            cursor[0] = env["seq"]
            if env["type"] == last_type:
                return frames, True
        return frames, False

    return _response(_pumped([], poll, timing, what))


def player_stream(streams: Streams, seats: Sequence[tuple[str, int]], timing: Timing) -> Response:
    """Turn notifications for ``seats`` (``[(game id, seat)]``), each game read as its own seat."""
    known: dict[tuple[str, int], dict[str, Any]] = {}

    def update(game_id: str, seat: int) -> list[str]:
        now, before = streams.seat_status(game_id, seat), known.get((game_id, seat))
        known[(game_id, seat)] = now
        frames = [_frame("status", now)]
        if now["your_turn"] and not (before and before["your_turn"] and before["turn"] == now["turn"]):
            frames.append(_frame("your_turn", now))
        if now["status"] == "finished" and not (before and before["status"] == "finished"):
            frames.append(_frame("game_over", now))
        return frames

    first = [frame for game_id, seat in seats for frame in update(game_id, seat)]

    def poll(block_ms: int) -> tuple[list[str], bool]:
        running = {g: st["version"] for (g, _s), st in known.items() if st["status"] == "active"}
        if not running:
            return [], True
        moved = streams.changed(running, block_ms)
        return [frame for game_id, seat in seats if game_id in moved for frame in update(game_id, seat)], False

    return _response(_pumped(first, poll, timing, "a player stream"))


def _frame(kind: str, data: Mapping[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data)}\n\n"


def _response(frames: Iterator[str]) -> Response:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(frames), mimetype="text/event-stream", headers=headers)


def _pumped(first: list[str], poll: Poll, timing: Timing, what: str) -> Iterator[str]:
    """``first``, then what ``poll`` finds, until it is done or time is up; a heartbeat when quiet."""
    deadline = time.monotonic() + timing.max_s
    quiet_since = time.monotonic()
    yield "retry: 1000\n\n"
    yield from first
    while time.monotonic() < deadline:
        try:
            frames, done = poll(min(timing.heartbeat_ms, timing.slice_ms))
        except redis.RedisError:
            log.warning("SSE for %s ended: the event store did not answer", what)
            return  # the client reconnects
        if frames:
            quiet_since = time.monotonic()
            yield from frames
        elif (time.monotonic() - quiet_since) * 1000 >= timing.heartbeat_ms:
            quiet_since = time.monotonic()
            yield ": heartbeat\n\n"
        if done:
            return
