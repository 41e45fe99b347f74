"""Browser-style streams over real HTTP: stream tickets instead of tokens in URLs, and a player's turns."""

from __future__ import annotations

import redis
import requests

from bootstrap import build
from tests.e2e.test_http import TIMEOUT, act, create_toy, sse_events


def ticket_for(base: str, game_id: str, headers: dict[str, str]) -> dict:
    r = requests.post(f"{base}/v1/games/{game_id}/stream-tickets", headers=headers, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return r.json()


def test_a_ticket_opens_the_seat_stream_with_its_private_parts_and_nothing_more(base_url: str) -> None:
    game_id, (ann, bob) = create_toy(base_url)
    ticket = ticket_for(base_url, game_id, ann)
    token = ann["Authorization"].split()[1]
    assert token not in ticket["stream"] and ticket["seat"] == 0 and ticket["expires_at"].endswith("Z")
    assert act(base_url, game_id, ann, {"type": "pick", "n": 3}).status_code == 201
    with requests.get(base_url + ticket["stream"], stream=True, timeout=TIMEOUT) as stream:
        frames = sse_events(stream)
        _created, dealt, committed = next(frames), next(frames), next(frames)
        assert dealt["data"]["data"]["private"]["0"]["cards"]  # ann's own hand, through the ticket alone
        assert "hidden" not in dealt["data"]["data"]["private"]  # the server's hidden part is not shown
        assert committed["data"]["data"]["private"]["0"]["action"] == {"type": "pick", "n": 3}
    bob_ticket = ticket_for(base_url, game_id, bob)["stream"]
    with requests.get(base_url + bob_ticket, stream=True, timeout=TIMEOUT) as stream:
        frames = sse_events(stream)
        _created, dealt, committed = next(frames), next(frames), next(frames)
        assert "private" not in dealt["data"]["data"] and "private" not in committed["data"]["data"]


def test_a_ticket_is_for_one_game_and_a_seat(base_url: str) -> None:
    game_id, (ann, _bob) = create_toy(base_url)
    other, _ = create_toy(base_url)
    ticket = ticket_for(base_url, game_id, ann)["ticket"]
    wrong = requests.get(f"{base_url}/v1/games/{other}/events/stream?ticket={ticket}", timeout=TIMEOUT)
    assert wrong.status_code == 401 and wrong.json()["type"] == "/problems/unauthorized"
    forged = requests.get(f"{base_url}/v1/games/{game_id}/events/stream?ticket=forged", timeout=TIMEOUT)
    assert forged.status_code == 401
    spectator = requests.post(f"{base_url}/v1/games/{game_id}/stream-tickets", timeout=TIMEOUT)
    assert spectator.status_code == 401  # spectators need no ticket


def test_an_expired_ticket_opens_nothing(base_url: str, redis_client: object) -> None:
    game_id, (ann, _bob) = create_toy(base_url)
    ticket = ticket_for(base_url, game_id, ann)["ticket"]
    for key in redis_client.scan_iter(match="kifu:ticket:*"):  # type: ignore[attr-defined]
        redis_client.delete(key)  # type: ignore[attr-defined]  # what its expiry does
    r = requests.get(f"{base_url}/v1/games/{game_id}/events/stream?ticket={ticket}", timeout=TIMEOUT)
    assert r.status_code == 401 and "expired" in r.json()["detail"]


def test_a_player_stream_says_whose_turn_it_is_across_games(base_url: str) -> None:
    first, (ann_1, bob_1) = create_toy(base_url)
    second, (_ann_2, bob_2) = create_toy(base_url)
    seats = [{"game": g, "token": h["Authorization"].split()[1]} for g, h in ((first, bob_1), (second, bob_2))]
    r = requests.post(f"{base_url}/v1/stream-tickets", json={"seats": seats}, timeout=TIMEOUT)
    assert r.status_code == 201 and r.json()["seats"] == [{"game": first, "seat": 1}, {"game": second, "seat": 1}]
    assert all(s["token"] not in r.json()["stream"] for s in seats)
    with requests.get(base_url + r.json()["stream"], stream=True, timeout=TIMEOUT) as stream:
        frames = sse_events(stream)
        opening = [next(frames) for _ in range(4)]  # status + your_turn for each game (both pick at once)
        assert [(f["event"], f["data"]["game"]) for f in opening] == [
            ("status", first),
            ("your_turn", first),
            ("status", second),
            ("your_turn", second),
        ]
        act(base_url, first, ann_1, {"type": "pick", "n": 3})
        moved = next(frames)
        assert moved["event"] == "status" and moved["data"]["game"] == first and moved["data"]["your_turn"]
        act(base_url, first, bob_1, {"type": "pick", "n": 1})  # bob lost the round: he must ack
        assert next(frames)["event"] == "status"
        turn = next(frames)
        assert turn["event"] == "your_turn" and turn["data"]["game"] == first and turn["data"]["turn"] > 3
        act(base_url, second, bob_2, {"type": "resign"})
        assert [next(frames)["event"] for _ in range(2)] == ["status", "game_over"]


def test_a_player_ticket_needs_real_seats(base_url: str) -> None:
    game_id, _seats = create_toy(base_url)
    bad = [{"game": game_id, "token": "nope"}]
    r = requests.post(f"{base_url}/v1/stream-tickets", json={"seats": bad}, timeout=TIMEOUT)
    assert r.status_code == 401 and "seats[0]" in r.json()["detail"]
    r = requests.post(f"{base_url}/v1/stream-tickets", json={"seats": []}, timeout=TIMEOUT)
    assert r.status_code == 422 and "seats" in r.json()["errors"]
    assert requests.get(f"{base_url}/v1/stream?ticket=forged", timeout=TIMEOUT).status_code == 401


def test_a_ticket_follows_its_own_seat_in_a_held_duplicate_game(base_url: str, redis_client: redis.Redis) -> None:
    """A duplicate round's game is held (unsealed, closed to all but its seats) while the round's deal is
    still in play; its seats' tickets open their own streams exactly as their tokens do (issue 19)."""
    entrants = [{"name": n} for n in ("ann", "bob", "cid", "dee")]
    settings = {"game": "san-ban", "options": {"mode": "gamer"}, "entrants": entrants, "format": "duplicate"}
    made = requests.post(f"{base_url}/v1/tournaments", json={**settings, "rounds": 1}, timeout=TIMEOUT).json()
    tid, tokens = made["id"], {e["entrant"]: e["token"] for e in made["entrants"]}
    organiser = {"Authorization": f"Bearer {made['organiser_token']}"}
    assert requests.post(f"{base_url}/v1/tournaments/{tid}/start", headers=organiser, timeout=TIMEOUT).ok
    build(redis_client).tournaments.advance(tid)
    first, other = requests.get(f"{base_url}/v1/tournaments/{tid}", timeout=TIMEOUT).json()["tables"]
    game_id = first["game"]
    seats = [{"Authorization": f"Bearer {tokens[e]}"} for e in first["entrants"]]
    url = f"{base_url}/v1/games/{game_id}/events/stream"
    assert requests.get(url, timeout=TIMEOUT).status_code == 403  # held: spectators may not read it
    outsider = {"Authorization": f"Bearer {tokens[other['entrants'][0]]}"}  # an entrant of the other table
    tickets = f"{base_url}/v1/games/{game_id}/stream-tickets"
    assert requests.post(tickets, headers=outsider, timeout=TIMEOUT).status_code == 403
    version = requests.get(f"{base_url}/v1/games/{game_id}", headers=seats[0], timeout=TIMEOUT).json()["version"]
    for seat, headers in enumerate(seats):
        with requests.get(url, headers=headers, stream=True, timeout=TIMEOUT) as stream:
            assert stream.status_code == 200, stream.text
            frames = sse_events(stream)
            by_token = [next(frames) for _ in range(version)]
        ticket = ticket_for(base_url, game_id, headers)
        assert ticket["seat"] == seat
        with requests.get(base_url + ticket["stream"], stream=True, timeout=TIMEOUT) as stream:
            assert stream.status_code == 200, stream.text
            frames = sse_events(stream)
            by_ticket = [next(frames) for _ in range(version)]
        assert by_ticket == by_token  # the same events, the same private parts
        private = [f["data"]["data"].get("private", {}) for f in by_ticket]
        assert any(str(seat) in p for p in private)  # its own hand ...
        assert all(set(p) == {str(seat)} for p in private if p)  # ... and nobody else's, nor the hidden part
