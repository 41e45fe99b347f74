"""San Ban properties over random legal games in every mode (hypothesis)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.audit import verify_record
from domain.engine import Seat, Table, create, decide, legal_actions, replay, view
from domain.errors import IllegalAction, NotYourTurn
from domain.events import Event
from domain.games.san_ban.bots import greedy
from domain.games.san_ban.cards import CATALOGUE, TIERS
from tests.support.records import SALTS, sealed_record

SEATS = [Seat(0, "ann"), Seat(1, "bob")]
MODES = ("standard", "gamer", "advanced", "hardcore")
ALL_IDS = sorted(CATALOGUE)

games = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(MODES),
        "first": st.sampled_from([0, 1, "coin"]),
        "tier": st.sampled_from(sorted(TIERS)),
        "deck_sizes": st.one_of(st.none(), st.tuples(st.integers(5, 7), st.integers(5, 7))),
        "seed": st.binary(min_size=1, max_size=8),
        "moves": st.randoms(use_true_random=False),
    }
)


def new_game(spec: dict[str, Any]) -> tuple[Table, list]:
    options = {k: spec[k] for k in ("mode", "first", "tier")}
    if spec["deck_sizes"] is not None:
        rnd = random.Random(spec["seed"])
        options["decks"] = [rnd.sample(ALL_IDS, n) for n in spec["deck_sizes"]]
    events = create("san-ban", "g1", SEATS, spec["seed"], options)
    return replay(events), events


def step(table: Table, log: list, rnd: random.Random, bot: bool = False) -> Table:
    seat = rnd.choice(table.to_act)
    action = greedy(table.state, seat, rnd) if bot else rnd.choice(legal_actions(table, seat))
    assert bot or action in legal_actions(table, seat)
    new = decide(table, seat, action, salts=SALTS)
    log += new
    return replay(new, table)


@settings(max_examples=100, deadline=None)
@given(games, st.booleans())
def test_random_games_end_with_all_ten_cards_counted_and_replay(spec: dict, bot: bool) -> None:
    table, log = new_game(spec)
    rnd = spec["moves"]
    while not table.finished:
        table = step(table, log, rnd, bot)
        state = view(table, None)["state"]
        assert sum(state["hand_sizes"]) + sum(cell is not None for cell in state["board"]) == 10
    final = view(table, None)["state"]
    assert all(cell is not None for cell in final["board"])
    assert sorted(final["hand_sizes"]) == [0, 1] and sum(table.result["scores"]) == 10
    assert replay(log) == table
    assert replay([Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in log]) == table
    if spec["mode"] == "hardcore" and len(table.result["winners"]) == 1:
        claimed = table.result["claimed"]  # a card, or None when the winner took none
        assert claimed is None or claimed["seat"] == table.result["winners"][0]


def mutations(table: Table, seat: int, rnd: random.Random) -> list[tuple[int, dict]]:
    """Actions that break one rule each, for the current position."""
    legal = legal_actions(table, seat)
    base = dict(rnd.choice(legal))
    bad: list[tuple[int, dict]] = [
        (seat, {**base, "type": "shuffle_board"}),
        (seat, {**base, "extra": 1}),
        (seat, {k: v for k, v in base.items() if k == "type"}),
    ]
    others = [s for s in range(2) if s not in table.to_act]
    bad += [(s, base) for s in others]
    if base["type"] == "place":
        state = view(table, seat)["state"]
        occupied = [i for i, cell in enumerate(state["board"]) if cell is not None]
        bad += [(seat, {**base, "cell": c}) for c in (9, -1, "4", None, True)]
        bad += [(seat, {**base, "cell": c}) for c in occupied]
        foreign = [c for c in [*ALL_IDS, "nope"] if c not in (state["hands"][seat] or [])]
        if "card" in base:
            bad.append((seat, {**base, "card": rnd.choice(foreign)}))
        else:
            bad.append((seat, {**base, "card": rnd.choice(ALL_IDS)}))
    if base["type"] in ("choose_hand", "set_order"):
        bad.append((seat, {**base, "cards": base["cards"][:4]}))
        bad.append((seat, {**base, "cards": [*base["cards"][:4], "nope"]}))
        bad.append((seat, {**base, "cards": [*base["cards"][:4], base["cards"][0]]}))
    if base["type"] == "choose_first":
        bad.append((seat, {**base, "first": 1}))
    if base["type"] == "claim":
        bad.append((seat, {**base, "card": "nope"}))
    return bad


@settings(max_examples=60, deadline=None)
@given(games)
def test_every_legal_action_is_accepted_and_broken_ones_are_refused(spec: dict) -> None:
    table, log = new_game(spec)
    rnd = spec["moves"]
    while not table.finished:
        seat = rnd.choice(table.to_act)
        for who, action in mutations(table, seat, rnd):
            with pytest.raises((IllegalAction, NotYourTurn)):
                decide(table, who, action, salts=["s"])
        legal = legal_actions(table, seat)
        for action in legal if len(legal) <= 60 else rnd.sample(legal, 10):
            decide(table, seat, action, salts=["s"])  # accepted (nothing applied)
        table = step(table, log, rnd)


@settings(max_examples=50, deadline=None)
@given(games)
def test_views_never_show_hidden_cards(spec: dict) -> None:
    table, log = new_game(spec)
    rnd = spec["moves"]
    while not table.finished:
        state = table.state
        for viewer in (None, 0, 1):
            shown = view(table, viewer)["state"]
            visible = set(shown["cards"])
            on_board = {cell["card"] for cell in shown["board"] if cell}
            for seat in range(2):
                if state.hands is not None and state.mode in ("gamer", "advanced") and viewer != seat:
                    assert shown["hands"][seat] is None
                    unseen = set(state.hands[seat]) - on_board - set(state.decks[viewer] if viewer is not None else ())
                    assert not unseen & visible
            if viewer is not None and state.mode == "advanced" and shown["hands"][viewer] is not None:
                assert shown["hands"][viewer] == sorted(shown["hands"][viewer])
        table = step(table, log, rnd)


@settings(max_examples=20, deadline=None)
@given(games)
def test_a_finished_record_verifies_offline(spec: dict) -> None:
    table, log = new_game(spec)
    while not table.finished:
        table = step(table, log, spec["moves"], bot=True)
    report = verify_record(sealed_record(log, spec["seed"]))
    assert report["verified"], report["checks"]
