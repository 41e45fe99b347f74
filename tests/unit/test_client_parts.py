"""kifu.client's parts that need no server: the event-stream parser (as the HTML standard reads a stream),
the player-stream judge, and how an error answer becomes an exception."""

from __future__ import annotations

import json

import pytest
import requests

from kifu.client.errors import IllegalAction, NotYourTurn, RateLimited, Unavailable, VersionConflict, error_for
from kifu.client.sse import RawEvent, SseParser
from kifu.client.streams import PlayerStreamJudge, ServerEvent

STREAM = (
    b"retry: 1000\n\n"
    b'id: 1\nevent: game_created\ndata: {"seq": 1}\n\n'
    b": heartbeat\n\n"
    b'id: 2\r\nevent: toy_dealt\r\ndata: {"seq":\r\ndata: 2}\r\n\r\n'
    b"data: no type, no id\r\r"
)


def events_of(chunks: list[bytes], parser: SseParser | None = None) -> list[RawEvent]:
    parser = parser or SseParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


def test_a_stream_parses_whole_and_byte_by_byte_alike() -> None:
    whole = events_of([STREAM])
    assert whole == [
        RawEvent("game_created", '{"seq": 1}', "1"),
        RawEvent("toy_dealt", '{"seq":\n2}', "2"),
        RawEvent("message", "no type, no id", "2"),  # the last id holds until the stream sets another
    ]
    assert events_of([STREAM[i : i + 1] for i in range(len(STREAM))]) == whole  # CRLF split across chunks too
    assert events_of([b"data: a\r", b"\n", b"\n"]) == [RawEvent("message", "a", None)]  # CRLF, then LF


def test_retry_and_ids_are_kept_for_the_reconnection() -> None:
    parser = SseParser(last_id="7")
    assert events_of([b"retry: 250\n\nevent: x\ndata: {}\n\n"], parser) == [RawEvent("x", "{}", "7")]
    assert parser.retry_ms == 250 and parser.last_id == "7"
    events_of([b"retry: soon\nid: abc-\xc3\xa9\n\n"], parser)  # a retry that is not digits is ignored
    assert parser.retry_ms == 250 and parser.last_id == "abc-é"  # ids are opaque strings
    events_of([b"id\n\n"], parser)  # an empty id resets it: no Last-Event-ID is sent
    assert parser.last_id is None


def test_comments_fields_without_space_and_events_without_data() -> None:
    chunks = [b'\xef\xbb\xbf: hello\nevent:turn\ndata:{"a":1}\n\nevent: empty\n\nid: 9\n\n', b"data: half"]
    parser = SseParser()
    assert events_of(chunks, parser) == [RawEvent("turn", '{"a":1}', None)]  # the BOM is dropped; no empty event
    assert parser.last_id == "9"  # an id counts without data; an unfinished event is never dispatched


def status(game: str, version: int, turn: int, your_turn: bool, over: bool = False) -> dict[str, object]:
    state = "finished" if over else "active"
    return {"game": game, "seat": 1, "version": version, "turn": turn, "status": state, "your_turn": your_turn}


def test_the_player_judge_hands_each_news_on_once_and_ends_at_the_last_game_over() -> None:
    judge = PlayerStreamJudge([("g1", 1), ("g2", 1)])
    seen = [
        ("status", status("g1", 3, 3, True)),
        ("your_turn", status("g1", 3, 3, True)),
        ("status", status("g2", 3, 3, False)),
        # a reconnection of a stream without ids starts again from the top
        ("status", status("g1", 3, 3, True)),
        ("your_turn", status("g1", 3, 3, True)),
        ("status", status("g1", 5, 5, True)),
        ("your_turn", status("g1", 5, 5, True)),
        ("status", status("g1", 6, 5, False, over=True)),
        ("game_over", status("g1", 6, 5, False, over=True)),
        ("game_over", status("g1", 7, 5, False, over=True)),  # again after a reconnection, sealed since
        ("status", status("g2", 4, 3, False, over=True)),
        ("game_over", status("g2", 4, 3, False, over=True)),
    ]
    verdicts = [judge(ServerEvent(kind, data, None)) for kind, data in seen]
    assert [emit for emit, _last in verdicts] == [
        True,
        True,
        True,
        False,
        False,
        True,
        True,
        True,
        True,
        False,
        True,
        True,
    ]
    assert [last for _emit, last in verdicts] == [False] * 11 + [True]


def answer(
    status_code: int, body: object, content_type: str = "application/problem+json", **headers: str
) -> requests.Response:
    response = requests.Response()
    response.status_code, response.reason = status_code, "Reason"
    response._content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response.headers.update({"Content-Type": content_type, **headers})
    return response


def problem(slug: str, status_code: int, **extra: object) -> dict[str, object]:
    return {"type": f"/problems/{slug}", "title": slug, "status": status_code, "detail": "why", **extra}


@pytest.mark.parametrize(
    ("status_code", "slug", "cls"),
    [
        (409, "version-conflict", VersionConflict),
        (422, "illegal-action", IllegalAction),
        (403, "not-your-turn", NotYourTurn),
        (429, "rate-limited", RateLimited),
        (503, "audits-busy", Unavailable),
    ],
)
def test_problems_map_to_their_exceptions(status_code: int, slug: str, cls: type[Exception]) -> None:
    error = error_for(answer(status_code, problem(slug, status_code, current_version=4), **{"Retry-After": "3"}))
    assert type(error) is cls and error.kind == slug and error.status == status_code and error.retry_after == 3.0


def test_an_answer_that_is_no_problem_is_described_as_one() -> None:
    error = error_for(answer(502, b"<html>Bad gateway</html>", "text/html"))
    assert error.kind is None and error.type == "about:blank" and error.status == 502
    assert error.detail == "<html>Bad gateway</html>" and error.retry_after is None
