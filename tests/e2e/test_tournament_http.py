"""A whole swiss over real HTTP: two humans with their entrant tokens, six bots through the RQ worker.

The humans play every game of theirs through the ordinary game API; the
organiser only creates and starts. At the end the archive verifies, the audit
agrees, the standings are re-derived, and the live SSE stream of the
tournament carried every event of its log.
"""

from __future__ import annotations

import json
import random
from typing import Any

import redis
import requests

from bootstrap import build
from domain.tournament.archive import verify_archive
from tests.e2e.conftest import work

TIMEOUT = 10


def test_a_swiss_of_two_humans_and_six_bots_over_http(bot_server: str, redis_client: redis.Redis) -> None:
    entrants = [{"name": "ann"}, {"name": "bob"}, *({"name": f"bot{i}", "bot": "greedy"} for i in range(6))]
    body = {"game": "san-ban", "entrants": entrants, "format": "swiss", "rounds": 3}
    made = requests.post(f"{bot_server}/v1/tournaments", json=body, timeout=TIMEOUT).json()
    tid, org = made["id"], made["organiser_token"]
    humans = {e["entrant"]: e["token"] for e in made["entrants"] if e["token"]}
    assert sorted(humans) == [0, 1] and all(e["token"] is None for e in made["entrants"][2:])
    url = f"{bot_server}/v1/tournaments/{tid}"
    assert requests.post(f"{url}/start", headers=_bearer(humans[0]), timeout=TIMEOUT).status_code == 403
    assert requests.post(f"{url}/start", headers=_bearer(org), timeout=TIMEOUT).status_code == 200
    rnd, moves = random.Random(11), 0
    for _ in range(3000):
        work(redis_client)
        view = requests.get(url, timeout=TIMEOUT).json()
        if view["status"] == "finished":
            break
        moves += sum(_play(bot_server, table, humans, rnd) for table in view["tables"])
    assert view["status"] == "finished" and moves > 0
    games = [g for page in _pages(url) for g in page]
    played_by = {e: sum(e in g["entrants"] for g in games) for e in humans}
    assert len(games) == 12 and played_by == {0: 3, 1: 3}  # four tables a round, no byes
    archive = requests.get(f"{url}/record", timeout=TIMEOUT).json()
    assert verify_archive(archive)["verified"] and requests.get(f"{url}/audit", timeout=TIMEOUT).json()["verified"]
    build(redis_client).projector().run_until_idle()
    assert requests.get(f"{url}/standings", timeout=TIMEOUT).json()["standings"] == view["standings"]
    streamed = _stream_types(url)
    assert streamed == [e["type"] for e in archive["tournament"]["events"]] and streamed[-1] == "tournament_finished"
    at_the_end = {"Last-Event-ID": str(len(streamed))}  # nothing will ever come: 204, an EventSource stops
    assert requests.get(f"{url}/events/stream", headers=at_the_end, timeout=TIMEOUT).status_code == 204


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _play(base: str, table: dict[str, Any], humans: dict[int, str], rnd: random.Random) -> int:
    """One random legal action for each human seated at ``table`` whose turn it is; how many were played."""
    played = 0
    for entrant in table["entrants"]:
        if entrant in humans and table["status"] == "playing":
            game = f"{base}/v1/games/{table['game']}"
            actions = requests.get(f"{game}/actions", headers=_bearer(humans[entrant]), timeout=TIMEOUT).json()
            if actions["actions"]:
                action = {"action": rnd.choice(actions["actions"]), "expected_version": actions["version"]}
                r = requests.post(f"{game}/actions", json=action, headers=_bearer(humans[entrant]), timeout=TIMEOUT)
                assert r.status_code in (201, 409), r.text  # 409: a bot moved in between
                played += r.status_code == 201
    return played


def _pages(url: str) -> list[list[dict[str, Any]]]:
    pages, cursor = [], None
    while True:
        page = requests.get(f"{url}/games", params={"limit": 5, "cursor": cursor}, timeout=TIMEOUT).json()
        pages.append(page["items"])
        if (cursor := page["next"]) is None:
            return pages


def _stream_types(url: str) -> list[str]:
    """The event types the live stream sends from the start (it ends after ``tournament_finished``)."""
    with requests.get(f"{url}/events/stream", stream=True, timeout=TIMEOUT) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        data = [json.loads(line[6:]) for line in r.iter_lines(decode_unicode=True) if line.startswith("data: ")]
    return [d["type"] for d in data]
