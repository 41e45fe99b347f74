"""Server-Sent Events: a game's or a tournament's log (resumable with ``Last-Event-ID``), and a player's
turns across games.

Log streams: each event is ``id: <seq>``, ``event: <type>``, ``data: <event JSON>``
(redacted for the caller like ``GET /events``); a game's stream ends after its
``game_sealed`` event, a tournament's after ``tournament_finished``.

Player stream: on connect, ``event: status`` for every watched seat
(``{"game", "seat", "version", "turn", "status", "your_turn", "deadline", "result",
"open_seats"}``), then ``status`` again whenever one of those games moves, with
``event: seat_taken`` when someone joins an open seat of the game (with
``taken``), ``event: your_turn`` when a new turn of the seat begins and
``event: game_over`` when its game ends (same data). Its ids say what was
delivered of every seat (``service.streams.encode_seen``): a reconnect with
``Last-Event-ID`` repeats nothing, and once every watched game is over and told
the answer is 204. It ends when every watched game is over.

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

from adapters.metrics import OPEN_STREAMS
from domain.engine import GAME_SEALED
from service.games import GameService
from service.streams import Seen, Streams, encode_seen

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

    # ``id: <after>`` alone (no event): a client that gets no event before this connection ends still
    # reconnects with ``Last-Event-ID`` (an EventSource keeps the last id it was sent), which a ticket
    # past its opening minutes needs to resume (service/streams.py)
    return _response(_pumped([f"id: {after}\n\n"] if after else [], poll, timing, what))


def player_stream(
    streams: Streams, seats: Sequence[tuple[str, int]], delivered: Sequence[Seen | None], timing: Timing
) -> Response:
    """Turn notifications for ``seats`` (``[(game id, seat)]``), each game read as its own seat, after what
    an earlier connection ``delivered`` (its ``Last-Event-ID``); 204 once every game is over and told."""
    seen = list(delivered)
    now = [streams.seat_status(game_id, seat) for game_id, seat in seats]
    if all(s is not None and s == Seen.of(status) and s.over for s, status in zip(seen, now)):
        return Response(status=204)  # nothing will ever come: an EventSource stops reconnecting on 204

    def told(i: int, status: Mapping[str, Any]) -> list[str]:
        """The frames of seat ``i`` standing at ``status``; the last one carries the stream's new id."""
        notices = streams.notices(seen[i], status)
        seen[i] = Seen.of(status)
        position = encode_seen(seen)
        return [
            _frame(kind, data, position if n == len(notices) - 1 else None) for n, (kind, data) in enumerate(notices)
        ]

    first = [frame for i, status in enumerate(now) for frame in told(i, status)]

    def poll(block_ms: int) -> tuple[list[str], bool]:
        running = {seats[i][0]: s.version for i, s in enumerate(seen) if s is not None and not s.over}
        if not running:
            return [], True
        moved = streams.changed(running, block_ms)
        frames = [
            frame
            for i, (game_id, seat) in enumerate(seats)
            if game_id in moved
            for frame in told(i, streams.seat_status(game_id, seat))
        ]
        return frames, False

    return _response(_pumped(first, poll, timing, "a player stream"))


def _frame(kind: str, data: Mapping[str, Any], event_id: int | str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data)}\n\n"


def _response(frames: Iterator[str]) -> Response:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(frames), mimetype="text/event-stream", headers=headers)


def _pumped(first: list[str], poll: Poll, timing: Timing, what: str) -> Iterator[str]:
    """``first``, then what ``poll`` finds, until it is done or time is up; a heartbeat when quiet."""
    OPEN_STREAMS.inc()
    try:
        yield from _pump(first, poll, timing, what)
    finally:  # the stream ended, or its client went away (the generator is closed)
        OPEN_STREAMS.dec()


def _pump(first: list[str], poll: Poll, timing: Timing, what: str) -> Iterator[str]:
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
