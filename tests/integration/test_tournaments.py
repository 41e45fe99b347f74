"""Tournaments on a real Redis with the real RQ queue (jobs run by ``work``): run, read, publish, audit.

Bots play through the RQ worker; humans through the game API with their entrant
tokens. Every archive is also verified offline, and mutated archives (an attacker
who recomputes every hash he touches) fail, naming what is wrong.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import random
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from rq import Queue, SimpleWorker

from adapters.rq_scheduler import QUEUE_NAME
from bootstrap import build
from domain.record import chain_hash, hashed_body, part_commitment
from domain.tournament.archive import verify_archive
from entrypoints.cli import main as cli

Body = dict[str, Any]


def work(client: redis.Redis) -> None:
    SimpleWorker([Queue(QUEUE_NAME, connection=client)], connection=client).work(burst=True)


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def create(client: FlaskClient, **settings: Any) -> Body:
    r = client.post("/v1/tournaments", json=settings)
    assert r.status_code == 201, r.json
    body: Body = r.json
    return body


def bots(n: int, level: str = "random") -> list[Body]:
    return [{"name": f"bot{i}", "bot": level} for i in range(n)]


def run_to_end(client: FlaskClient, rc: redis.Redis, tid: str, humans: Callable[[Body], None] | None = None) -> Body:
    for _ in range(2000):
        work(rc)
        view: Body = client.get(f"/v1/tournaments/{tid}").json
        if view["status"] == "finished":
            return view
        if humans is not None:
            humans(view)
    raise AssertionError("the tournament did not finish")


def started(client: FlaskClient, settings: Body) -> tuple[str, Body]:
    made = create(client, **settings)
    r = client.post(f"/v1/tournaments/{made['id']}/start", headers=bearer(made["organiser_token"]))
    assert r.status_code == 200 and r.json["status"] == "running", r.json
    return made["id"], made


def rechain(archive: Body) -> None:
    """Recompute every seq and hash of the tournament's log after a change, and its head (what a forger would do)."""
    prev = "0" * 64
    for seq, env in enumerate(archive["tournament"]["events"], start=1):
        env["seq"], env["prev"] = seq, prev
        env["hash"] = prev = chain_hash(prev, hashed_body(env))
    archive["tournament"]["head"] = prev


@pytest.fixture
def swiss(client: FlaskClient, redis_client: redis.Redis) -> tuple[str, Body]:
    """A finished bot swiss of 7 San Ban entrants (a bye each round), 3 rounds, and its archive."""
    tid, _made = started(client, {"game": "san-ban", "entrants": bots(7), "format": "swiss", "rounds": 3})
    run_to_end(client, redis_client, tid)
    return tid, client.get(f"/v1/tournaments/{tid}/record").json


def test_a_bot_swiss_runs_to_the_end_and_everything_it_publishes_agrees(
    app: Flask, client: FlaskClient, redis_client: redis.Redis, swiss: tuple[str, Body]
) -> None:
    tid, archive = swiss
    view = client.get(f"/v1/tournaments/{tid}").json
    assert view["round"] == 3 and len(archive["games"]) == 9  # 3 tables a round, one bye
    report = verify_archive(archive)
    assert report["verified"], report
    assert client.get(f"/v1/tournaments/{tid}/audit").json["verified"]
    build(redis_client).projector().run_until_idle()
    projected = client.get(f"/v1/tournaments/{tid}/standings").json
    assert projected["standings"] == view["standings"] and projected["status"] == "finished"
    listed = client.get(f"/v1/games?tournament={tid}&limit=50").json["items"]
    assert sorted(g["id"] for g in listed) == sorted(r["events"][0]["data"]["game_id"] for r in archive["games"])
    byes = [e["data"]["byes"] for e in archive["tournament"]["events"] if e["type"] == "round_paired"]
    assert all(len(b) == 1 for b in byes) and len({b[0] for b in byes}) == 3  # a different entrant each round
    pages, cursor = [], None
    while True:
        page = client.get(f"/v1/tournaments/{tid}/games?limit=4" + (f"&cursor={cursor}" if cursor else "")).json
        pages += page["items"]
        if (cursor := page["next"]) is None:
            break
    assert [(g["round"], g["table"]) for g in pages] == [(r, t) for r in (1, 2, 3) for t in range(3)]


def test_standings_rebuilt_from_the_log_equal_the_live_projection(
    client: FlaskClient, redis_client: redis.Redis, swiss: tuple[str, Body]
) -> None:
    tid, _archive = swiss
    kifu = build(redis_client)
    kifu.projector().run_until_idle()
    live = client.get(f"/v1/tournaments/{tid}/standings").json
    kifu.rebuild_projections()
    assert client.get(f"/v1/tournaments/{tid}/standings").json == live


def mutate_game_event(archive: Body) -> str:
    record = archive["games"][1]
    record["events"][3]["data"]["cell"] = 8 if record["events"][3]["data"].get("cell") != 8 else 7
    return "game " + record["events"][0]["data"]["game_id"]


def mutate_result(archive: Body) -> str:
    finished = next(e for e in archive["tournament"]["events"] if e["type"] == "game_finished")
    finished["data"]["ranks"] = [2, 1] if finished["data"]["ranks"] == [1, 2] else [1, 2]  # a draw too
    rechain(archive)
    return "differs from the game's own record"


def mutate_pairing(archive: Body) -> str:
    paired = [e for e in archive["tournament"]["events"] if e["type"] == "round_paired"][1]
    tables = paired["data"]["tables"]
    tables[0]["entrants"][1], tables[1]["entrants"][1] = tables[1]["entrants"][1], tables[0]["entrants"][1]
    rechain(archive)
    return "round 2: tables"


def mutate_standing(archive: Body) -> str:
    final = archive["tournament"]["events"][-1]
    final["data"]["standings"][0]["points"] = str(Fraction(final["data"]["standings"][0]["points"]) + 1)
    rechain(archive)
    return "standings: place 1"


def mutate_rounds(archive: Body) -> str:
    archive["tournament"]["events"][0]["data"]["rounds"] = 2  # three were played
    rechain(archive)
    return "round 3 was paired while the rules do not pair a round"


def cut_the_end(archive: Body) -> str:
    archive["tournament"]["events"].pop()  # tournament_finished
    rechain(archive)  # the archive still says complete: true, which its log no longer commits to
    return "'complete' is True, but the log does not end with tournament_finished"


def drop_a_round_close(archive: Body) -> str:
    events = archive["tournament"]["events"]
    events.remove(next(e for e in events if e["type"] == "round_closed"))
    rechain(archive)
    return "round 2 was paired while the rules do not pair a round"


def rename_the_archive(archive: Body) -> str:
    archive["tournament"]["id"] = "tother"
    return "not the creation of tournament 'tother'"


def duplicate_a_game(archive: Body) -> str:
    archive["games"].append(copy.deepcopy(archive["games"][0]))
    return "more than once"


def mutate_log_without_rechaining(archive: Body) -> str:
    archive["tournament"]["events"][2]["data"]["round"] = 9
    return "event 3: hash does not match"


def drop_a_game(archive: Body) -> str:
    archive["games"].pop()
    return "games started but not in the archive"


@pytest.mark.parametrize(
    ("mutate", "failing"),
    [
        (mutate_game_event, "games"),
        (mutate_result, "rules"),
        (mutate_pairing, "rules"),
        (mutate_standing, "standings"),
        (mutate_log_without_rechaining, "tournament_chain"),
        (drop_a_game, "membership"),
        (mutate_rounds, "rules"),
        (cut_the_end, "header"),
        (drop_a_round_close, "rules"),
        (rename_the_archive, "tournament_chain"),
        (duplicate_a_game, "membership"),
    ],
)
def test_a_changed_archive_fails_and_names_what_is_wrong(
    swiss: tuple[str, Body], mutate: Callable[[Body], str], failing: str, tmp_path: Path
) -> None:
    archive = copy.deepcopy(swiss[1])
    named = mutate(archive)
    report = verify_archive(archive)
    bad = {c["name"]: c["detail"] for c in report["checks"] if not c["ok"]}
    assert not report["verified"] and failing in bad and named in bad[failing], report
    path = tmp_path / "archive.json"
    path.write_text(json.dumps(archive))
    result = CliRunner().invoke(cli, ["verify-tournament", "--quiet", str(path)])
    assert result.exit_code == 1 and "NOT VERIFIED" in result.output


def test_kifu_verify_tournament_verifies_a_published_archive(swiss: tuple[str, Body], tmp_path: Path) -> None:
    path = tmp_path / "archive.json"
    path.write_text(json.dumps(swiss[1]))
    result = CliRunner().invoke(cli, ["verify-tournament", str(path)])
    assert result.exit_code == 0, result.output
    assert "ok   standings" in result.output and "9/9" in result.output  # every game, and the bar saw each
    assert result.output.strip().splitlines()[-1].startswith("VERIFIED")


def play_human_turns(client: FlaskClient, tokens: dict[int, str], rnd: random.Random) -> Callable[[Body], None]:
    """Each human entrant plays a random legal action in every game of the round where it is to act."""

    def play(view: Body) -> None:
        for table in view["tables"]:
            if table["game"] is None or table["status"] != "playing":
                continue
            for seat, entrant in enumerate(table["entrants"]):
                if entrant not in tokens:
                    continue
                headers = bearer(tokens[entrant])
                actions = client.get(f"/v1/games/{table['game']}/actions", headers=headers).json["actions"]
                if actions:
                    r = client.post(
                        f"/v1/games/{table['game']}/actions", json={"action": rnd.choice(actions)}, headers=headers
                    )
                    assert r.status_code == 201, r.json
                    assert client.get(f"/v1/games/{table['game']}", headers=headers).json["you"] == seat

    return play


def test_duplicate_tables_play_the_committed_deal_which_stays_hidden_until_the_round_closes(
    quiet_app: Flask, redis_client: redis.Redis
) -> None:
    """Four humans, San Ban gamer mode (hidden hands), two tables a round on one deal. While a table
    still plays the round's deal, nobody but a game's own seats reads a game of that round: its
    public plays would show the deal (403 for spectators and the other table's entrants)."""
    client = quiet_app.test_client()
    kifu = build(redis_client)
    entrants = [{"name": n} for n in ("ann", "bob", "cid", "dee")]
    settings = {"game": "san-ban", "options": {"mode": "gamer"}, "entrants": entrants, "format": "duplicate"}
    tid, made = started(client, {**settings, "rounds": 2})
    tokens = {e["entrant"]: e["token"] for e in made["entrants"]}
    kifu.tournaments.advance(tid)
    view = client.get(f"/v1/tournaments/{tid}").json
    first, second = (t["game"] for t in view["tables"])
    players = {t["game"]: t["entrants"] for t in view["tables"]}
    own = {g: bearer(tokens[players[g][0]]) for g in (first, second)}  # a seat of each game
    seed_hash = view["deal"]["seed_hash"]
    created = [client.get(f"/v1/games/{g}/events?limit=1", headers=own[g]).json["items"][0]["data"] for g in own]
    assert {c["seed_hash"] for c in created} == {seed_hash}  # both tables dealt from the committed seed
    assert [c["tournament"]["table"] for c in created] == [0, 1]
    rnd = random.Random(3)
    while client.get(f"/v1/games/{first}", headers=own[first]).json["status"] == "active":
        play_human_turns(client, {e: tokens[e] for e in players[first]}, rnd)(view)
    for path in ("", "/events", "/record", "/replay?step=1", "/audit", "/events/stream"):
        for reader in ({}, own[second]):  # a spectator; an entrant of the other table
            refused = client.get(f"/v1/games/{first}{path}", headers=reader)
            assert refused.status_code == 403 and refused.json["type"] == "/problems/forbidden", (path, reader)
    record = client.get(f"/v1/games/{first}/record", headers=own[first]).json
    assert record["complete"] is False and record["seed"] is None  # over, but the other table plays its deal
    assert all(not e["private_salts"] or set(e["private_salts"]) <= {"0", "1"} for e in record["events"])
    running = client.get(f"/v1/tournaments/{tid}/record").json
    assert running["complete"] is False and running["games"] == []  # the round's games are held back
    while client.get(f"/v1/games/{second}", headers=own[second]).json["status"] == "active":
        play_human_turns(client, {e: tokens[e] for e in players[second]}, rnd)(view)
    kifu.tournaments.advance(tid)
    events = client.get(f"/v1/tournaments/{tid}/events").json["items"]
    closed = next(e for e in events if e["type"] == "round_closed")
    revealed = bytes.fromhex(closed["data"]["deal"]["seed"])
    assert hashlib.sha256(revealed).hexdigest() == seed_hash
    record = client.get(f"/v1/games/{first}/record").json  # public now, to anyone
    assert record["complete"] is True and record["seed"] == closed["data"]["deal"]["seed"]
    assert client.get(f"/v1/tournaments/{tid}").json["round"] == 2


def test_a_fixed_deal_duplicate_plays_the_deals_given_at_creation(quiet_app: Flask, redis_client: redis.Redis) -> None:
    client = quiet_app.test_client()
    deal = {"first": 0, "decks": [[f"sb-{i:03d}" for i in range(1, 6)], [f"sb-{i:03d}" for i in range(6, 11)]]}
    settings = {"game": "san-ban", "entrants": bots(4), "format": "duplicate", "rounds": 1, "deals": [deal]}
    tid, _made = started(client, settings)
    kifu = build(redis_client)
    for _ in range(200):
        kifu.tournaments.advance(tid)
        work(redis_client)
        if client.get(f"/v1/tournaments/{tid}").json["status"] == "finished":
            break
    archive = client.get(f"/v1/tournaments/{tid}/record").json
    assert verify_archive(archive)["verified"]
    closed = next(e for e in archive["tournament"]["events"] if e["type"] == "round_closed")
    assert closed["data"]["deal"]["deal"] == deal
    forged = copy.deepcopy(archive)
    created = forged["tournament"]["events"][0]
    created["private"]["hidden"]["deals"][0]["first"] = 1  # another deal "committed at creation" ...
    created["private_commitments"]["hidden"] = part_commitment(
        "hidden", created["private"]["hidden"], created["private_salts"]["hidden"]
    )
    rechain(forged)  # ... with its commitment and the chain recomputed
    bad = {c["name"]: c["detail"] for c in verify_archive(forged)["checks"] if not c["ok"]}
    assert "not the one fixed at the tournament's creation" in bad["deals"], bad


def test_organiser_actions_need_the_organiser_token(quiet_app: Flask) -> None:
    client = quiet_app.test_client()
    made = create(client, game="san-ban", entrants=[{"name": "ann"}, {"name": "bob"}], format="round-robin")
    tid, org, ann = made["id"], made["organiser_token"], made["entrants"][0]["token"]
    assert client.post(f"/v1/tournaments/{tid}/start").status_code == 401
    assert client.post(f"/v1/tournaments/{tid}/start", headers=bearer("nonsense")).status_code == 401
    refused = client.post(f"/v1/tournaments/{tid}/start", headers=bearer(ann))
    assert refused.status_code == 403 and refused.json["type"] == "/problems/forbidden"
    assert client.post(f"/v1/tournaments/{tid}/start", headers=bearer(org)).status_code == 200
    again = client.post(f"/v1/tournaments/{tid}/start", headers=bearer(org))
    assert again.status_code == 409 and again.json["type"] == "/problems/tournament-state"
    assert client.post(f"/v1/tournaments/{tid}/pause", headers=bearer(ann)).status_code == 403
    paused = client.post(f"/v1/tournaments/{tid}/pause", headers=bearer(org), json={"reason": "lunch"})
    assert paused.status_code == 200 and paused.json["status"] == "paused"
    assert client.post(f"/v1/tournaments/{tid}/resume", headers=bearer(org)).json["status"] == "running"
    assert client.get("/v1/tournaments/tnothere").status_code == 404
    assert client.get(f"/v1/games/{tid}").status_code == 404  # a tournament is not a game


def test_a_stalled_game_is_forfeited_with_its_reason_on_both_records(
    quiet_app: Flask, redis_client: redis.Redis
) -> None:
    client = quiet_app.test_client()
    kifu = build(redis_client)
    tid, made = started(client, {"game": "san-ban", "entrants": [{"name": "ann"}, {"name": "bob"}], "format": "swiss"})
    org = made["organiser_token"]
    kifu.tournaments.advance(tid)
    game = client.get(f"/v1/tournaments/{tid}").json["tables"][0]["game"]
    seat = client.get(f"/v1/games/{game}").json["to_act"][0]
    body = {"seat": seat, "reason": "no move for an hour"}
    assert client.post(f"/v1/tournaments/{tid}/games/{game}/forfeit", json=body).status_code == 401
    r = client.post(f"/v1/tournaments/{tid}/games/{game}/forfeit", json=body, headers=bearer(org))
    assert r.status_code == 200, r.json
    view = client.get(f"/v1/games/{game}").json
    assert view["status"] == "finished" and view["result"]["resigned"] == seat
    kifu.tournaments.advance(tid)
    events = client.get(f"/v1/tournaments/{tid}/events").json["items"]
    forfeit = next(e for e in events if e["type"] == "game_forfeited")
    assert forfeit["data"]["reason"] == "no move for an hour" and forfeit["data"]["seat"] == seat
    taken = [e for e in client.get(f"/v1/games/{game}/events").json["items"] if e["type"] == "action_taken"]
    assert taken[-1]["data"] == {"seat": seat, "action": {"type": "resign"}, "by": "forfeit"}
    again = client.post(f"/v1/tournaments/{tid}/games/{game}/forfeit", json=body, headers=bearer(org))
    assert again.status_code == 409
    assert client.get(f"/v1/tournaments/{tid}/audit").json["verified"]


def test_a_withdrawn_entrant_is_paired_no_more(quiet_app: Flask, redis_client: redis.Redis) -> None:
    client = quiet_app.test_client()
    kifu = build(redis_client)
    tid, made = started(client, {"game": "san-ban", "entrants": bots(4), "format": "round-robin"})
    org = made["organiser_token"]
    r = client.post(f"/v1/tournaments/{tid}/entrants/3/withdraw", json={"reason": "left"}, headers=bearer(org))
    assert r.status_code == 200 and r.json["entrants"][3]["withdrawn"] is True
    assert client.post(f"/v1/tournaments/{tid}/entrants/3/withdraw", headers=bearer(org)).status_code == 409
    kifu.tournaments.advance(tid)
    view = client.get(f"/v1/tournaments/{tid}").json
    assert all(3 not in t["entrants"] for t in view["tables"]) and len(view["byes"]) == 1


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"game": "chess"}, "game"),
        ({"format": "knockout"}, "format"),
        ({"entrants": [{"name": "solo"}]}, "entrants"),
        ({"entrants": [{"name": "a"}, {"name": "b", "bot": "genius"}]}, "entrants[1].bot"),
        ({"table_size": 5}, "table_size"),
        ({"options": {"mode": "chaos"}}, "options.mode"),
        ({"scoring": [0, 1]}, "scoring"),
        ({"scoring": [1.5, 0]}, "scoring[0]"),  # whole numbers: the log holds no floats
        ({"rounds": 0}, "rounds"),
    ],
)
def test_bad_settings_are_422_naming_the_field(client: FlaskClient, settings: Body, field: str) -> None:
    body = {"game": "san-ban", "entrants": [{"name": "a"}, {"name": "b"}], "format": "swiss", **settings}
    r = client.post("/v1/tournaments", json=body)
    assert r.status_code == 422 and field in r.json["errors"], r.json


def test_a_creation_retried_with_its_key_shows_no_token_again(client: FlaskClient) -> None:
    body = {"game": "san-ban", "entrants": [{"name": "a"}, {"name": "b"}], "format": "swiss"}
    first = client.post("/v1/tournaments", json=body, headers={"Idempotency-Key": "t-1"})
    again = client.post("/v1/tournaments", json=body, headers={"Idempotency-Key": "t-1"})
    assert first.json["organiser_token"] and first.json["entrants"][0]["token"]
    assert again.json["id"] == first.json["id"] and again.headers["Idempotent-Replayed"] == "true"
    assert again.json["organiser_token"] is None and all(e["token"] is None for e in again.json["entrants"])


def test_the_process_keeps_at_most_cache_size_tournaments_and_still_reads_every_one(
    quiet_app: Flask, redis_client: redis.Redis
) -> None:
    """The per-process memory of tournaments is bounded (least recently used dropped first); a tournament
    dropped from it is read again from its log, whole."""
    client = quiet_app.test_client()
    made = [create(client, game="san-ban", entrants=bots(2), format="round-robin")["id"] for _ in range(3)]
    service = dataclasses.replace(build(redis_client).tournaments, cache_size=2)
    for tid in [*made, made[0]]:
        state, head = service.load(tid)
        assert state.id == tid and state.version == head.version
        assert len(service._cache) <= 2
    assert list(service._cache) == [made[2], made[0]]  # made[1] was the least recently used
