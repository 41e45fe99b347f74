"""Issue 19's holes in the tournament verifier, each as the forgery (or the genuine archive) it got wrong.

* an archive whose games are not all sealed does not verify (removing every seal was missed 28 of 28);
* a seeded duplicate round rewritten as a fixed deal committed to ``null`` skipped every seed check;
* a forfeit the runner repaired (its reason unknown, ``null``) made the genuine archive unverifiable;
* an archive's own fields (``complete``, ``note``, unknown keys) are bound to its log.
"""

from __future__ import annotations

import copy
import hashlib
import json
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from bootstrap import build
from domain.record import IN_PROGRESS_NOTE
from domain.tournament import commands
from domain.tournament.archive import verify_archive
from entrypoints.cli import main as cli
from service.commands import utc_now
from service.tournaments import FORFEIT_REPAIR_S
from tests.integration.test_tournaments import bearer, bots, rechain, run_to_end, started

Body = dict[str, Any]


@pytest.fixture
def seeded_duplicate(client: FlaskClient, redis_client: redis.Redis) -> Body:
    """A finished bot duplicate of 6 San Ban entrants (three tables a round on one seed), 2 rounds."""
    tid, _made = started(client, {"game": "san-ban", "entrants": bots(6), "format": "duplicate", "rounds": 2})
    run_to_end(client, redis_client, tid)
    archive: Body = client.get(f"/v1/tournaments/{tid}/record").json
    assert verify_archive(archive)["verified"]
    return archive


def failed(archive: Body) -> dict[str, str]:
    report = verify_archive(archive)
    assert not report["verified"] and report["verdict"] == "failed", report
    return {c["name"]: c["detail"] for c in report["checks"] if not c["ok"]}


def unseal(record: Body) -> None:
    """A game record as if its seal were never appended: the seal gone, the header a running game's."""
    record["events"].pop()
    record.pop("signature", None)  # only a sealed head is signed, and logged
    record.pop("inclusion", None)
    for env in record["events"]:
        env["private"], env["private_salts"] = {}, {}
    record.update(seed=None, complete=False, head=record["events"][-1]["hash"], note=IN_PROGRESS_NOTE)


def test_an_archive_whose_games_are_unsealed_does_not_verify(seeded_duplicate: Body, tmp_path: Path) -> None:
    every = copy.deepcopy(seeded_duplicate)
    for record in every["games"]:
        unseal(record)
    assert "is not sealed: its result is not proven" in failed(every)["games"]
    one = copy.deepcopy(seeded_duplicate)
    unseal(one["games"][1])
    assert "is not sealed" in failed(one)["games"]
    path = tmp_path / "archive.json"
    path.write_text(json.dumps(every))
    result = CliRunner().invoke(cli, ["verify-tournament", "--quiet", str(path)])
    assert result.exit_code == 1 and result.output.splitlines()[-1].startswith("NOT VERIFIED")


def rewrite_round_as_fixed_null(archive: Body, rnd: int) -> None:
    """The reported forgery: round ``rnd``'s seed commitment rewritten as a fixed deal committed to ``null``
    (and its reveal to match), the chain recomputed. The old verifier then compared each game's hidden
    deal (none: ``null``) with the revealed ``null`` and checked no seed at all."""
    salt = secrets.token_hex(16)
    for env in archive["tournament"]["events"]:
        if env["type"] == "round_paired" and env["data"]["round"] == rnd:
            env["data"]["deal"] = {"commitment": commands.deal_commitment(None, salt)}  # type: ignore[arg-type]
        if env["type"] == "round_closed" and env["data"]["round"] == rnd:
            env["data"]["deal"] = {"deal": None, "salt": salt}
    rechain(archive)


def test_a_seeded_round_rewritten_as_a_fixed_deal_to_null_is_refused(seeded_duplicate: Body) -> None:
    forged = copy.deepcopy(seeded_duplicate)
    rewrite_round_as_fixed_null(forged, 1)
    bad = failed(forged)
    assert "the deal commitment must be a seed's" in bad["rules"], bad
    assert "deals" in bad


@pytest.mark.parametrize("rewritten", [False, True])
def test_a_table_dealt_from_another_seed_is_refused_whatever_form_the_commitment_takes(
    seeded_duplicate: Body, rewritten: bool
) -> None:
    """Table 1 of round 1 claims another seed than tables 0 and 2; with the round's commitment kept as
    a seed's, or rewritten as a fixed deal committed to ``null``: the round's one deal is re-derived
    for every table from the kind ``tournament_created`` fixes, whatever the commitment claims."""
    forged = copy.deepcopy(seeded_duplicate)
    link = {"id": forged["tournament"]["id"], "round": 1, "table": 1}
    table_1 = next(r for r in forged["games"] if r["events"][0]["data"]["tournament"] == link)
    table_1["events"][0]["data"]["seed_hash"] = hashlib.sha256(secrets.token_bytes(32)).hexdigest()
    if rewritten:
        rewrite_round_as_fixed_null(forged, 1)
    bad = failed(forged)
    assert "round 1" in bad["deals"], bad


def test_a_game_with_a_fixed_deal_in_an_event_without_fixed_deals_is_refused(seeded_duplicate: Body) -> None:
    """A forger's own deal (chosen, not drawn) at one table: the event's settings say whose deals are fixed."""
    forged = copy.deepcopy(seeded_duplicate)
    forged["games"][0]["events"][0]["data"]["fixed_deal"] = True
    assert "fixed_deal is True" in failed(forged)["membership"]


def test_a_duplicates_fixed_deal_must_leave_nothing_to_chance(client: FlaskClient) -> None:
    """Each table of a fixed-deal round is created with a seed of its own: a deal whose coin decides who
    starts would start a different seat at each table, so it is refused at creation."""
    decks = [[f"sb-{i:03d}" for i in range(1, 6)], [f"sb-{i:03d}" for i in range(6, 11)]]
    settings = {"game": "san-ban", "entrants": bots(4), "format": "duplicate", "rounds": 1}
    refused = client.post("/v1/tournaments", json={**settings, "deals": [{"first": "coin", "decks": decks}]})
    assert refused.status_code == 422 and "to chance" in refused.json["errors"]["deals[0]"][0], refused.json
    assert client.post("/v1/tournaments", json={**settings, "deals": [{"first": 1, "decks": decks}]}).status_code == 201


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda a: a.update(complete=False), "'complete' is False"),
        (lambda a: a.update(complete=1), "'complete' is 1"),
        (lambda a: a.update(note="all good"), "'note'"),
        (lambda a: a.update(signed_by="mallory"), "unknown archive field"),
        (lambda a: a["tournament"].update(head="0" * 64), "head"),
    ],
)
def test_the_archives_own_fields_are_bound_to_its_log(seeded_duplicate: Body, change: Any, field: str) -> None:
    forged = copy.deepcopy(seeded_duplicate)
    change(forged)
    assert field in failed(forged)["header"]


def test_an_archive_of_a_running_tournament_is_in_progress(
    client: FlaskClient, redis_client: redis.Redis, tmp_path: Path
) -> None:
    tid, _made = started(client, {"game": "san-ban", "entrants": bots(4), "format": "swiss", "rounds": 2})
    kifu = build(redis_client)
    kifu.tournaments.advance(tid)
    archive = client.get(f"/v1/tournaments/{tid}/record").json
    report = verify_archive(archive)
    assert report["verdict"] == "in_progress" and not report["verified"], report
    path = tmp_path / "archive.json"
    path.write_text(json.dumps(archive))
    result = CliRunner().invoke(cli, ["verify-tournament", "--quiet", str(path)])
    assert result.exit_code == 3 and result.output.splitlines()[-1].startswith("IN PROGRESS")
    assert client.get(f"/v1/tournaments/{tid}/audit").json["verdict"] == "in_progress"


def test_a_forfeit_the_runner_repaired_without_its_reason_leaves_a_verifiable_archive(
    quiet_app: Flask, redis_client: redis.Redis
) -> None:
    """The forfeit command resigned the game, then its ``game_forfeited`` never came (a crash in between):
    after ``FORFEIT_REPAIR_S`` the runner records it, its reason unknown (``null``). The model used to
    read a null reason as "not forfeited", and the auditor then refused the genuine archive for good."""
    client = quiet_app.test_client()
    kifu = build(redis_client)
    humans = [{"name": "ann"}, {"name": "bob"}]
    tid, made = started(client, {"game": "san-ban", "entrants": humans, "format": "swiss", "rounds": 1})
    kifu.tournaments.advance(tid)
    game = client.get(f"/v1/tournaments/{tid}").json["tables"][0]["game"]
    seat = client.get(f"/v1/games/{game}").json["to_act"][0]
    kifu.games.act(game, seat, {"type": "resign"}, by="forfeit")  # the command's first half, and no second
    later = utc_now() + timedelta(seconds=FORFEIT_REPAIR_S + 1)
    kifu.tournaments.clock = lambda: later  # to this runner the resignation is stale: it repairs the log
    kifu.tournaments.advance(tid)
    view = run_to_end(client, redis_client, tid)
    logged = client.get(f"/v1/tournaments/{tid}/events").json["items"]
    forfeit = next(e for e in logged if e["type"] == "game_forfeited")
    assert forfeit["data"] == {"round": 1, "table": 0, "game": game, "seat": seat, "reason": None}
    table = next(t for t in client.get(f"/v1/tournaments/{tid}").json.get("tables", []) if t["game"] == game)
    assert table["forfeit_seat"] == seat and table["forfeit"] is None
    archive = client.get(f"/v1/tournaments/{tid}/record").json
    assert verify_archive(archive)["verified"], verify_archive(archive)
    late = copy.deepcopy(archive)  # the forfeit logged after its game's result: neither writer does that
    log = late["tournament"]["events"]
    at = next(i for i, e in enumerate(log) if e["type"] == "game_forfeited")
    log[at], log[at + 1] = log[at + 1], log[at]
    rechain(late)
    assert "not a running game" in failed(late)["rules"]
    assert client.get(f"/v1/tournaments/{tid}/audit", headers=bearer(made["organiser_token"])).json["verified"]
    assert view["status"] == "finished"
