"""A whole swiss over real HTTP, through kifu.client: two humans with their entrant tokens, six bots
through the RQ worker.

The humans play every game of theirs through the ordinary game API; the
organiser only creates and starts. At the end the archive verifies, the audit
agrees, the standings are re-derived, and the live SSE stream of the
tournament carried every event of its log.
"""

from __future__ import annotations

import random

import pytest
import redis

from bootstrap import build
from domain.tournament.archive import verify_archive
from kifu.client import Client, Forbidden, VersionConflict
from kifu.client.types import TournamentTable
from tests.e2e.conftest import work


def test_a_swiss_of_two_humans_and_six_bots_over_http(bot_server: str, redis_client: redis.Redis) -> None:
    kifu = Client(bot_server)
    entrants = [{"name": "ann"}, {"name": "bob"}, *({"name": f"bot{i}", "bot": "greedy"} for i in range(6))]
    made = kifu.create_tournament("san-ban", entrants, "swiss", rounds=3)
    tid, org = made["id"], made["organiser_token"]
    humans = {e["entrant"]: e["token"] for e in made["entrants"] if e.get("token")}
    assert sorted(humans) == [0, 1] and all(e.get("token") is None for e in made["entrants"][2:])
    assert org is not None
    with pytest.raises(Forbidden):
        kifu.start_tournament(tid, humans[0] or "")
    assert kifu.start_tournament(tid, org)["status"] == "running"
    rnd, moves = random.Random(11), 0
    for _ in range(3000):
        work(redis_client)
        view = kifu.tournament(tid)
        if view["status"] == "finished":
            break
        moves += sum(_play(kifu, table, humans, rnd) for table in view["tables"])
    assert view["status"] == "finished" and moves > 0
    games = list(kifu.iter_tournament_games(tid, page_size=5))
    played_by = {e: sum(e in g["entrants"] for g in games) for e in humans}
    assert len(games) == 12 and played_by == {0: 3, 1: 3}  # four tables a round, no byes
    archive = kifu.tournament_record(tid)
    assert verify_archive(archive)["verified"] and kifu.tournament_audit(tid)["verified"]
    build(redis_client).projector().run_until_idle()
    assert kifu.standings(tid)["standings"] == view["standings"]
    streamed = [event.event for event in kifu.tournament_stream(tid)]  # it ends after tournament_finished
    assert streamed == [e["type"] for e in archive["tournament"]["events"]] and streamed[-1] == "tournament_finished"
    at_the_end = {"Last-Event-ID": str(len(streamed))}  # nothing will ever come: 204, an EventSource stops
    stream_url = kifu.http.url(f"/v1/tournaments/{tid}/events/stream")
    assert kifu.http.session.get(stream_url, headers=at_the_end, timeout=10).status_code == 204
    assert list(kifu.tournament_stream(tid, last_event_id=str(len(streamed)))) == []  # and so does the client


def _play(kifu: Client, table: TournamentTable, humans: dict[int, str | None], rnd: random.Random) -> int:
    """One random legal action for each human seated at ``table`` whose turn it is; how many were played."""
    played = 0
    for entrant in table["entrants"]:
        token = humans.get(entrant)
        if token is not None and table["status"] == "playing" and table["game"] is not None:
            actions = kifu.legal_actions(table["game"], token)
            if actions["actions"]:
                try:
                    kifu.act(table["game"], rnd.choice(actions["actions"]), token, expected_version=actions["version"])
                    played += 1
                except VersionConflict:
                    pass  # a bot moved in between
    return played
