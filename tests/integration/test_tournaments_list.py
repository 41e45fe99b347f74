"""GET /v1/tournaments: the tournaments list read model (newest first, filters, pages), kept by the
projector and rebuilt by ``kifu rebuild-projections``, on a real Redis with the real RQ queue.

Tournaments are created at frozen times a second apart (the list orders by creation time in
milliseconds); the projector is run by hand, so what the list shows is what it last applied.
"""

from __future__ import annotations

from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from freezegun import freeze_time

from bootstrap import build
from projections import tournaments_list
from tests.integration.test_tournaments import bearer, bots, create, run_to_end, started, work

Body = dict[str, Any]
TWO = [{"name": "ann"}, {"name": "bob"}]
SUMMARY_KEYS = {"id", "game", "format", "rounds", "table_size", "status", "round", "entrants", "created_at", "version"}


def project(redis_client: redis.Redis) -> None:
    build(redis_client).projector().run_until_idle()


def ids_of(client: FlaskClient, query: str = "") -> list[str]:
    answer = client.get(f"/v1/tournaments{query}")
    assert answer.status_code == 200, answer.json
    return [t["id"] for t in answer.json["items"]]


def make_tournaments(client: FlaskClient, redis_client: redis.Redis) -> dict[str, Body]:
    """Four tournaments, one in each status, created a second apart (oldest first): a San Ban round-robin
    of bots played to its end, and toy swiss events of two humans not started, running and paused."""
    with freeze_time("2026-01-01T00:00:01Z"):
        finished, _made = started(client, {"game": "san-ban", "entrants": bots(2), "format": "round-robin"})
    run_to_end(client, redis_client, finished)
    with freeze_time("2026-01-01T00:00:02Z"):
        waiting = create(client, game="toy", entrants=TWO, format="swiss")
    with freeze_time("2026-01-01T00:00:03Z"):
        running, _ = started(client, {"game": "toy", "entrants": TWO, "format": "swiss", "rounds": 1})
    with freeze_time("2026-01-01T00:00:04Z"):
        paused, paused_made = started(client, {"game": "toy", "entrants": [*TWO, {"name": "cy"}], "format": "swiss"})
    work(redis_client)  # the running events' first games
    project(redis_client)  # the paused one is listed as running first ...
    r = client.post(f"/v1/tournaments/{paused}/pause", headers=bearer(paused_made["organiser_token"]))
    assert r.status_code == 200 and r.json["status"] == "paused", r.json
    project(redis_client)  # ... then moves
    ids = {"finished": finished, "created": waiting["id"], "running": running, "paused": paused}
    return {role: client.get(f"/v1/tournaments/{tid}").json for role, tid in ids.items()}


def test_the_list_is_newest_first_filtered_and_paged(client: FlaskClient, redis_client: redis.Redis) -> None:
    views = make_tournaments(client, redis_client)
    ids = {role: view["id"] for role, view in views.items()}
    newest_first = [ids["paused"], ids["running"], ids["created"], ids["finished"]]
    assert ids_of(client) == newest_first
    for status in ("created", "running", "paused", "finished"):
        assert ids_of(client, f"?status={status}") == [ids[status]]
    assert ids_of(client, "?game=toy") == newest_first[:3]
    assert ids_of(client, "?game=san-ban") == [ids["finished"]]
    assert ids_of(client, "?game=san-ban&status=finished") == [ids["finished"]]
    assert ids_of(client, "?game=toy&status=finished") == ids_of(client, "?game=nin-nal") == []
    first = client.get("/v1/tournaments?limit=3").json
    second = client.get(f"/v1/tournaments?limit=3&cursor={first['next']}").json
    assert [t["id"] for t in first["items"] + second["items"]] == newest_first and second["next"] is None
    one = client.get("/v1/tournaments?game=toy&limit=1").json
    two = client.get(f"/v1/tournaments?game=toy&limit=1&cursor={one['next']}").json
    assert [t["id"] for t in one["items"] + two["items"]] == newest_first[:2]  # a filter's pages too


def test_each_item_is_the_tournaments_summary_and_nothing_hidden(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    views = make_tournaments(client, redis_client)
    items = {t["id"]: t for t in client.get("/v1/tournaments").json["items"]}
    assert len(items) == 4
    for view in views.values():
        item = items[view["id"]]
        assert set(item) == SUMMARY_KEYS  # no token, seed or deal: nothing but the summary
        fields = ("id", "game", "format", "rounds", "table_size", "status", "round", "version")
        assert {k: item[k] for k in fields} == {k: view[k] for k in fields}
        assert item["entrants"] == len(view["entrants"])
        created = client.get(f"/v1/tournaments/{view['id']}/events?limit=1").json["items"][0]
        assert created["type"] == "tournament_created" and item["created_at"] == created["at"]
    finished = items[views["finished"]["id"]]
    assert finished["created_at"].startswith("2026-01-01T00:00:01") and finished["round"] == 1
    assert (finished["game"], finished["format"], finished["entrants"]) == ("san-ban", "round-robin", 2)


def test_a_rebuild_makes_the_same_list(client: FlaskClient, redis_client: redis.Redis) -> None:
    make_tournaments(client, redis_client)
    live = dump(redis_client)
    pages = [client.get(f"/v1/tournaments{q}").json for q in ("", "?status=paused", "?game=toy&limit=2")]
    assert any(k.startswith(tournaments_list.index_key("status", "")) for k in live)
    build(redis_client).rebuild_projections()
    assert dump(redis_client) == live
    assert [client.get(f"/v1/tournaments{q}").json for q in ("", "?status=paused", "?game=toy&limit=2")] == pages
    assert redis_client.zcard(tournaments_list.index_key("status", "running")) == 1  # the paused one moved out


def dump(redis_client: redis.Redis) -> dict[str, Any]:
    """Every key of the tournaments list with its content."""
    out: dict[str, Any] = {}
    for key in redis_client.scan_iter(match=f"{tournaments_list.LIST_PREFIX}:*"):
        if redis_client.type(key) == b"hash":
            out[key.decode()] = redis_client.hgetall(key)
        else:
            out[key.decode()] = redis_client.zrange(key, 0, -1)
    return out


@pytest.mark.parametrize("query", ["?status=won", "?cursor=bogus", "?limit=0", "?limit=201", "?limit=x", "?colour=red"])
def test_a_bad_filter_or_cursor_is_answered_as_the_games_list_answers_it(client: FlaskClient, query: str) -> None:
    games, tournaments = client.get(f"/v1/games{query}"), client.get(f"/v1/tournaments{query}")
    assert tournaments.status_code == games.status_code == 422
    assert tournaments.mimetype == games.mimetype == "application/problem+json"
    refused, as_games = tournaments.json, games.json
    field = query[1:].split("=", maxsplit=1)[0]
    assert list(refused["errors"]) == list(as_games["errors"]) == [field]
    if field == "status":  # the same problem, naming the statuses a tournament has
        assert refused["errors"]["status"] == ["Must be one of: created, running, paused, finished."]
        as_games["errors"] = refused["errors"]
    assert refused == as_games


def test_a_status_of_games_is_no_status_of_tournaments(client: FlaskClient) -> None:
    assert client.get("/v1/games?status=active").status_code == 200
    assert client.get("/v1/tournaments?status=active").status_code == 422
