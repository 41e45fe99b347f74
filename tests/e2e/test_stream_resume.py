"""Streams that survive (issue 20): a ticket that opened a stream resumes it after its opening minutes, and
the player stream carries ids, resumes without repeating itself and ends with 204.

The tickets here open streams for one real second (``STREAM_TICKET_SECONDS``) and each stream lasts a
second (``SSE_MAX_SECONDS``): the tests wait for the states those settings lead to (a ticket that no
longer opens a new stream), never for a time.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.e2e.test_http import TIMEOUT, act, create_toy, sse_events
from tests.support.kifu_run import wait_until


def game_ticket(base: str, game_id: str, headers: dict[str, str]) -> dict[str, Any]:
    r = requests.post(f"{base}/v1/games/{game_id}/stream-tickets", headers=headers, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return dict(r.json())


def opens(url: str, last_event_id: str | None = None) -> int:
    """The status a stream request answers (the stream itself is closed at once)."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else {}
    with requests.get(url, headers=headers, stream=True, timeout=TIMEOUT) as r:
        return r.status_code


def expired(url: str) -> bool:
    """True once the ticket of ``url`` no longer opens a new stream (no ``Last-Event-ID``)."""
    return opens(url) == 401


def frames_of(url: str, last_event_id: str | None = None) -> list[dict[str, Any]]:
    """Every event a stream sends before it ends (the server ends it after ``SSE_MAX_SECONDS``)."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else {}
    with requests.get(url, headers=headers, stream=True, timeout=TIMEOUT) as r:
        assert r.status_code == 200, r.text
        return list(sse_events(r))


def test_a_ticket_that_opened_a_stream_resumes_it_after_its_minutes(short_streams_url: str) -> None:
    game_id, (ann, bob) = create_toy(short_streams_url)
    url = short_streams_url + game_ticket(short_streams_url, game_id, ann)["stream"]
    first = frames_of(url)
    assert [f["id"] for f in first] == ["1", "2"]
    wait_until(lambda: expired(url), "the ticket to stop opening new streams")
    assert act(short_streams_url, game_id, ann, {"type": "pick", "n": 3}).status_code == 201
    resumed = frames_of(url, last_event_id=first[-1]["id"])  # what an EventSource's reconnect sends
    assert [f["id"] for f in resumed] == ["3"]
    assert resumed[0]["data"]["data"]["private"]["0"]["action"] == {"type": "pick", "n": 3}  # still ann's view
    assert opens(url) == 401  # the ticket opens no new stream
    assert act(short_streams_url, game_id, bob, {"type": "resign"}).status_code == 201
    to_the_end = frames_of(url, last_event_id="3")
    assert to_the_end[-1]["event"] == "game_sealed"
    assert opens(url, last_event_id=to_the_end[-1]["id"]) == 204  # over, and all delivered: stop


def test_an_expired_ticket_that_never_opened_a_stream_opens_nothing(short_streams_url: str) -> None:
    game_id, (ann, _bob) = create_toy(short_streams_url)
    used = short_streams_url + game_ticket(short_streams_url, game_id, ann)["stream"]
    unused = short_streams_url + game_ticket(short_streams_url, game_id, ann)["stream"]
    frames_of(used)
    wait_until(lambda: expired(used), "the tickets to stop opening new streams")
    for last_event_id in (None, "0", "2"):
        r = requests.get(unused, headers={"Last-Event-ID": last_event_id} if last_event_id else {}, timeout=TIMEOUT)
        assert r.status_code == 401 and "ask for a new one" in r.json()["detail"]
    r = requests.get(used, timeout=TIMEOUT)
    assert r.status_code == 401 and "Last-Event-ID" in r.json()["detail"]


def test_a_stream_opened_at_the_head_tells_its_position_at_once(base_url: str) -> None:
    """With no event to send, the stream still sends ``id: <after>``, so that the client's reconnect carries a
    ``Last-Event-ID`` (an EventSource keeps the last id it was sent, event or not)."""
    game_id, (ann, _bob) = create_toy(base_url)
    url = base_url + game_ticket(base_url, game_id, ann)["stream"] + "&after=2"
    with requests.get(url, stream=True, timeout=TIMEOUT) as r:
        lines = r.iter_lines(decode_unicode=True)
        assert [next(lines) for _ in range(4)] == ["retry: 1000", "", "id: 2", ""]


def player_ticket(base: str, seats: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    body = {"seats": [{"game": g, "token": h["Authorization"].split()[1]} for g, h in seats]}
    r = requests.post(f"{base}/v1/stream-tickets", json=body, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_the_player_stream_resumes_without_repeating_and_ends_with_204(short_streams_url: str) -> None:
    first, (ann_1, bob_1) = create_toy(short_streams_url)
    second, (ann_2, bob_2) = create_toy(short_streams_url)
    url = short_streams_url + player_ticket(short_streams_url, [(first, bob_1), (second, bob_2)])["stream"]
    opening = frames_of(url)
    assert [(f["event"], f["data"]["game"]) for f in opening] == [
        ("status", first),
        ("your_turn", first),
        ("status", second),
        ("your_turn", second),
    ]
    assert "id" not in opening[0] and "id" not in opening[2]  # a seat's last notice carries the id
    position = opening[-1]["id"]
    assert frames_of(url, last_event_id=position) == []  # nothing moved: nothing repeated
    wait_until(lambda: expired(url), "the ticket to stop opening new streams")
    assert act(short_streams_url, first, ann_1, {"type": "pick", "n": 3}).status_code == 201  # bob's turn goes on
    moved = frames_of(url, last_event_id=position)
    assert [(f["event"], f["data"]["game"]) for f in moved] == [("status", first)]
    assert moved[0]["data"]["your_turn"] and moved[0]["id"] != position
    for game_id, ann in ((first, ann_1), (second, ann_2)):
        assert act(short_streams_url, game_id, ann, {"type": "resign"}).status_code == 201
    over = frames_of(url, last_event_id=moved[0]["id"])
    assert sorted((f["event"], f["data"]["game"]) for f in over) == sorted(
        [("status", first), ("game_over", first), ("status", second), ("game_over", second)]
    )
    last = over[-1]["id"]
    with requests.get(url, headers={"Last-Event-ID": last}, timeout=TIMEOUT) as done:
        assert done.status_code == 204 and done.text == ""


def test_the_player_stream_announces_a_seat_taken(base_url: str) -> None:
    r = requests.post(
        f"{base_url}/v1/games", json={"game": "toy", "players": [{"name": "ann"}, {"open": True}]}, timeout=TIMEOUT
    )
    assert r.status_code == 201, r.text
    game_id, ann = r.json()["id"], {"Authorization": f"Bearer {r.json()['seats'][0]['token']}"}
    url = base_url + player_ticket(base_url, [(game_id, ann)])["stream"]
    with requests.get(url, stream=True, timeout=TIMEOUT) as stream:
        frames = sse_events(stream)
        opening = [next(frames) for _ in range(2)]
        assert [f["event"] for f in opening] == ["status", "your_turn"] and opening[0]["data"]["open_seats"] == [1]
        joined = requests.post(f"{base_url}/v1/games/{game_id}/seats/1/join", json={"name": "bob"}, timeout=TIMEOUT)
        assert joined.status_code == 201, joined.text
        moved, taken = next(frames), next(frames)
    assert moved["event"] == "status" and moved["data"]["open_seats"] == []
    assert taken["event"] == "seat_taken" and taken["data"]["taken"] == {"seat": 1, "name": "bob"}
    assert taken["data"]["game"] == game_id and taken["data"]["seat"] == 0


@pytest.mark.parametrize("last_event_id", ["junk", "1.2", "1o", "x", "99999999999999999999", ""])
def test_a_player_stream_starts_afresh_on_an_id_it_never_sent(base_url: str, last_event_id: str) -> None:
    """As a game stream ignores a ``Last-Event-ID`` that is no event number: nothing is assumed delivered."""
    game_id, (ann, _bob) = create_toy(base_url)
    url = base_url + player_ticket(base_url, [(game_id, ann)])["stream"]
    with requests.get(url, headers={"Last-Event-ID": last_event_id}, stream=True, timeout=TIMEOUT) as r:
        assert r.status_code == 200
        frames = sse_events(r)
        assert [next(frames)["event"] for _ in range(2)] == ["status", "your_turn"]
