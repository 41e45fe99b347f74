"""Following a Server-Sent Events stream as an ``EventSource`` does, for as long as it has more to say.

``follow`` opens the stream and yields its events; when the connection ends (the server's
own time limit, a dropped network, a read timeout) it waits the stream's ``retry`` and
reconnects, sending ``Last-Event-ID`` with the last ``id`` it saw (ids are opaque strings).
It stops when ``judge`` says an event was the last, or when the server answers 204 (nothing
more will ever come). A 401 may be answered by ``renew`` (a fresh stream ticket), once per
refusal. Connection failures, 429 and 5xx are retried with a doubling wait; ``max_failures``
of them in a row without an event in between give up (``TransportError`` or the ``ApiError``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import requests

from kifu.client.errors import ApiError, TransportError, error_for
from kifu.client.sse import RawEvent, SseParser
from kifu.client.transport import MAX_WAIT_S, Transport

T = TypeVar("T")
DEFAULT_RETRY_MS = 1000  # until the stream says (Kifu's streams start with ``retry: 1000``)
DEFAULT_STREAM_TIMEOUT_S = 60.0  # the longest silence: Kifu sends a heartbeat every 15 s
DEFAULT_MAX_FAILURES = 5
NO_CONTENT = 204
UNAUTHORIZED = 401
RETRIED = frozenset({408, 429, 500, 502, 503, 504})

Judge = Callable[["ServerEvent[Any]"], tuple[bool, bool]]  # an event -> (hand it on?, was it the last?)
Renew = Callable[[], str]  # a fresh path to open (a new ticket in it) after a 401


@dataclass(frozen=True)
class ServerEvent(Generic[T]):
    """One event of a stream: its type (``event:``), its data parsed from JSON, and the stream's last
    ``id`` so far (an opaque string; None when the stream sends no ids)."""

    event: str
    data: T
    id: str | None


@dataclass
class Stream:
    """Where a stream is and how to open it again."""

    path: str
    params: dict[str, Any] = field(default_factory=dict)
    token: str | None = None
    last_id: str | None = None
    retry_ms: int = DEFAULT_RETRY_MS
    failures: int = 0

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"  # a game stream takes the seat token as is
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
        return headers


def follow(
    transport: Transport,
    stream: Stream,
    judge: Judge,
    renew: Renew | None = None,
    read_timeout_s: float = DEFAULT_STREAM_TIMEOUT_S,
    max_failures: int = DEFAULT_MAX_FAILURES,
) -> Generator[ServerEvent[Any], None, None]:
    """The stream's events, across reconnections, until ``judge`` says one was the last or a 204."""
    renewed = False
    while True:
        try:
            response = transport.session.get(
                transport.url(stream.path),
                params=stream.params,
                headers=stream.headers(),
                stream=True,
                timeout=(connect_timeout(transport), read_timeout_s),
            )
        except requests.RequestException as exc:
            _failed(stream, max_failures, TransportError(f"GET {stream.path}: {exc}"))
            continue
        with response:
            if response.status_code == NO_CONTENT:
                return
            if response.status_code == UNAUTHORIZED and renew is not None and not renewed:
                stream.path, renewed = renew(), True
                continue
            if response.status_code != requests.codes.ok:
                error = error_for(response)
                if response.status_code not in RETRIED:
                    raise error
                _failed(stream, max_failures, error, error.retry_after)
                continue
            renewed = False
            parser = SseParser(stream.last_id)
            try:
                for chunk in response.iter_content(chunk_size=None):
                    for raw in parser.feed(chunk):
                        stream.failures = 0
                        event = ServerEvent(raw.event, _parsed(raw), raw.id)
                        emit, last = judge(event)
                        if emit:
                            yield event
                        if last:
                            return
            except requests.RequestException as exc:  # the connection dropped or went silent
                _note(stream, parser)
                _failed(stream, max_failures, TransportError(f"GET {stream.path}: {exc}"))
                continue
            _note(stream, parser)
        time.sleep(stream.retry_ms / 1000)  # the server closed the stream: reconnect after `retry`


def connect_timeout(transport: Transport) -> float:
    timeout = transport.timeout
    return timeout[0] if isinstance(timeout, tuple) else timeout


def _note(stream: Stream, parser: SseParser) -> None:
    stream.last_id = parser.last_id
    if parser.retry_ms is not None:
        stream.retry_ms = parser.retry_ms


def _failed(stream: Stream, max_failures: int, error: ApiError | TransportError, asked: float | None = None) -> None:
    """Count a failure in a row; give up past ``max_failures``, else wait (longer each time)."""
    stream.failures += 1
    if stream.failures > max_failures or (asked is not None and asked > MAX_WAIT_S):
        raise error
    wait = stream.retry_ms / 1000 * 2 ** (stream.failures - 1)
    time.sleep(min(max(wait, asked or 0.0), MAX_WAIT_S))


def _parsed(raw: RawEvent) -> Any:
    try:
        return json.loads(raw.data)
    except ValueError as exc:
        raise TransportError(f"a {raw.event!r} event whose data is not JSON: {raw.data[:100]!r}") from exc


def until(last_type: str) -> Judge:
    """A log stream (a game's, a tournament's): every event, the last of type ``last_type``."""
    return lambda event: (True, event.event == last_type)


class PlayerStreamJudge:
    """A player stream, across reconnections: each watched seat's news once, done at the last ``game_over``.

    A player stream that sends no ids starts again from the top on a reconnection (every seat's
    ``status``, and ``your_turn`` or ``game_over`` where they hold): what a seat already said is not
    handed on twice (the same status, the same turn, its game over).
    """

    def __init__(self, watched: list[tuple[str, int]]) -> None:
        self.watched = set(watched)
        self.said: dict[tuple[str, str, int], Any] = {}
        self.over: set[tuple[str, int]] = set()

    def __call__(self, event: ServerEvent[Any]) -> tuple[bool, bool]:
        data = event.data if isinstance(event.data, dict) else {}
        seat = (str(data.get("game")), int(data.get("seat", -1)))
        if event.event == "game_over":
            fresh = seat not in self.over
            self.over.add(seat)
        else:
            key = (event.event, *seat)
            news = data.get("turn") if event.event == "your_turn" else data  # a turn is news once
            fresh = key not in self.said or self.said[key] != news
            self.said[key] = news
        return fresh, bool(self.watched) and self.watched <= self.over
