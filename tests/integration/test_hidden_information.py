"""The attacker of ``tests.support.attacker`` against every game and mode, through the API.

Each game is played at random by its seats through the API; before every
action, the spectator and every seat read what they may (view, legal actions,
new events, a replay of the latest step, the record and the audit while the
game runs, and the answers to their own actions). The attacker then tries
every candidate of every hidden part of the stored log against all of it and
must learn nothing. As a control, the same attacker is run on the same game
written in the old format 1 (private parts hashed in the clear), where it must
find the hidden cards: so a blind attacker cannot pass this test.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import redis
from flask import Flask

from adapters.redis_store import EventStore
from domain.engine import GAME_SEALED
from domain.record import chain_hash, public_envelope, to_event
from domain.registry import all_games
from tests.support.api import Seat, create
from tests.support.attacker import Attacker, Reading

MAX_ACTIONS = 45
DECK_7 = [f"sb-{i:03d}" for i in range(20, 27)]
EXTRA_CONFIGS = [
    *[("san-ban", {"mode": mode, "deck": DECK_7}, 2, None) for mode in ("standard", "gamer", "advanced", "hardcore")],
    ("san-ban", {"mode": "gamer"}, 2, {"first": 0, "decks": [DECK_7, [f"sb-{i:03d}" for i in range(30, 37)]]}),
    ("kiri-ai", {}, 2, {"specials": ["kesa", "counterattack"]}),
]


def catalogue_configs() -> list[tuple[str, dict[str, Any], int, Any]]:
    """Every game at its smallest and largest table, and each allowed value of each option once."""
    configs: list[tuple[str, dict[str, Any], int, Any]] = []
    for game in all_games():
        if game.id == "toy":
            continue
        configs += [(game.id, {}, n, None) for n in sorted({game.min_players, game.max_players})]
        for name, option in game.options.items():
            for value in option.choices or ():
                if value != option.default:
                    counts = next((c for v, c in (option.players or {}).items() if v == value), None)
                    configs.append((game.id, {name: value}, min(counts or [game.min_players]), None))
    return configs + EXTRA_CONFIGS


CONFIGS = catalogue_configs()


def read_everything(seat: Seat, reading: Reading, version: int) -> None:
    """What ``seat`` can read now, added to its reading."""
    for path in ("", "/actions", "/record", "/audit", f"/replay?step={version}"):
        reading.add(seat.get(path).json)
    after = max(reading.events, default=0)
    page = seat.get(f"/events?after={after}&limit=1000").json
    reading.add(page)
    reading.events.update({e["seq"]: e for e in page["items"]})


def play_and_read(
    client: Any, game_id: str, options: Mapping[str, Any], players: int, deal: Any, seed: int
) -> tuple[str, list[Reading]]:
    body: dict[str, Any] = {"options": dict(options)}
    if deal is not None:
        body["deal"] = deal
    gid, seats = create(client, game_id, [{"name": f"p{i}"} for i in range(players)], **body)
    viewers = [*seats[:-1], seats[-1]]  # every seat, then the spectator
    readings = [Reading(s) for s in range(players)] + [Reading(None)]
    rnd = random.Random(seed)
    for _ in range(MAX_ACTIONS):
        view = seats[-1].get().json
        if view["status"] != "active":
            break
        for seat, reading in zip(viewers, readings):
            read_everything(seat, reading, view["version"])
        actor = rnd.choice(view["to_act"])
        actions = seats[actor].get("/actions").json["actions"]
        answer = seats[actor].act(rnd.choice(actions))
        assert answer.status_code == 201, answer.json
        if answer.json["status"] == "active":  # the answer that ends the game shows everything, rightly
            readings[actor].add(answer.json)
    return gid, readings


def format_1_readings(game_id: str, truth: Sequence[Mapping[str, Any]], readings: Sequence[Reading]) -> list[Reading]:
    """What each viewer would have read of the same game from a format-1 server (the control)."""
    old, prev = [], "0" * 64
    for env in truth:
        ev = to_event(env)
        body = {
            "seq": env["seq"],
            "type": ev.type,
            "data": dict(ev.data),
            "private": {k: dict(v) for k, v in ev.private.items()},
            "at": env["at"],
        }
        digest = chain_hash(prev, body)
        old.append({**body, "prev": prev, "hash": digest})
        prev = digest
    out = []
    for reading in readings:
        control = Reading(reading.viewer)
        for env in old:
            if env["seq"] in reading.events:
                shown = public_envelope(env, reading.viewer, False)
                control.events[env["seq"]] = shown
                control.add(shown)
        out.append(control)
    return out


@pytest.mark.parametrize(
    "game_id, options, players, deal",
    CONFIGS,
    ids=[f"{g}-{n}p-{o or ''}{'-dealt' if d else ''}" for g, o, n, d in CONFIGS],
)
@pytest.mark.slow
def test_no_guess_about_a_hidden_part_can_be_checked_while_the_game_runs(
    quiet_app: Flask, redis_client: redis.Redis, game_id: str, options: dict[str, Any], players: int, deal: Any
) -> None:
    gid, readings = play_and_read(quiet_app.test_client(), game_id, options, players, deal, seed=len(str(options)))
    truth = [e for e in EventStore(redis_client).read_all(gid) if e["type"] != GAME_SEALED]
    attacked = [e for e in truth if any(e["seq"] in r.events for r in readings)]
    assert any(e["private"] for e in attacked), "the game never dealt anything hidden"
    for reading in readings:
        assert Attacker(gid, attacked, reading).leaks() == []
    for control in format_1_readings(gid, attacked, readings):
        leaks = Attacker(gid, attacked, control).leaks()
        assert leaks, f"control: the attacker found nothing in format 1 as viewer {control.viewer}"


def test_the_kiri_ai_specials_cannot_be_told_by_a_spectator(quiet_app: Flask, redis_client: redis.Redis) -> None:
    """The issue's own attack: hash the 6 arrangements of the three specials against the deal's hashes."""
    from itertools import permutations

    from domain.canonical import sha256_hex
    from domain.games.kiri_ai import SPECIALS
    from domain.record import part_commitment

    client = quiet_app.test_client()
    gid, (_red, _blue, spectator) = create(client, "kiri-ai", [{"name": "r"}, {"name": "b"}])
    dealt = spectator.get("/events").json["items"][1]
    public = {dealt["hash"], *dealt["private_commitments"].values()}
    body = {k: dealt[k] for k in ("seq", "type", "at")} | {"data": dealt["data"]}
    for red, blue, third in permutations(SPECIALS):
        private = {"0": {"special": red}, "1": {"special": blue}, "hidden": {"set_aside": third}}
        guesses = {chain_hash(dealt["prev"], {**body, "private": private})}
        guesses |= {part_commitment(a, p, "") for a, p in private.items()}
        guesses |= {sha256_hex(str(p).encode()) for p in private.values()}
        assert not guesses & public
    truth = EventStore(redis_client).read(gid, 1, 1)[0]
    assert set(truth["private"]) == {"0", "1", "hidden"}  # the parts were there to be found
