"""San, Ni, Ichi! properties over random games (Hypothesis), driven through the generic engine.

Every card is accounted for after every event; the log (also through JSON) rebuilds the live
table; random games end; every listed action is accepted and mutations of them are refused;
nothing hidden reaches another seat (events, views, who is asked to smoke); the record of a
finished game verifies offline.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from itertools import chain
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.audit import verify_record
from domain.engine import Seat, Table, create, decide, legal_actions, replay, step, view
from domain.engine import evolve as table_evolve
from domain.errors import IllegalAction, NotYourTurn
from domain.events import Event
from domain.games.san_ni_ichi.cards import CARDS, DECKS, attack_cards, points
from domain.games.san_ni_ichi.state import ATTACK_PHASE, EVOLVERS, OVER, SELECT, SMOKE, State
from tests.support.records import SALTS, sealed_record

GAME = "san-ni-ichi"
MAX_ACTIONS = 2000
SETUPS = [
    (n, deck, teams, scoring)
    for deck in DECKS
    for n in DECKS[deck]
    for teams in ((False, True) if n in (4, 6) else (False,))
    for scoring in ("strength", "cards")
]
CARD_IDS = sorted(CARDS)
WEAPON_LISTS = ("weapons_in_play", "weapons_out")


def new_game(n: int, seed: bytes, options: Mapping[str, Any]) -> tuple[Table, list[Event]]:
    events = create(GAME, "prop", [Seat(i, f"p{i}") for i in range(n)], seed=seed, options=options)
    return replay(events), events


def accounted(state: State) -> list[str]:
    """Hands, combat piles, damage piles, discards, and the round's cards still on the table."""
    on_table = [p.card for p in state.played if p.how is None or p.kept]
    return [
        *chain(*state.hands),
        *(c for pile in state.combat for c, _ in pile),
        *chain(*state.damage),
        *state.discards,
        *on_table,
    ]


def check_cards(state: State) -> None:
    """Hands + combat piles + damage piles + discards + cards on the table = the deck."""
    assert sorted(accounted(state)) == sorted([*attack_cards(state.strengths), *state.weapons])


def check_invariants(table: Table) -> None:
    state = table.state
    check_cards(state)
    assert state.phase in (SELECT, ATTACK_PHASE, SMOKE, OVER)
    pending = table.game.pending(state)
    assert pending.seats or state.phase == OVER
    if state.phase == SELECT:
        assert all(state.hands[s] for s in state.selecting)
        assert all(not h for s, h in enumerate(state.hands) if s not in state.selecting)
    for pile in state.combat:
        assert all(CARDS[c].kind in ("attack", "yoso-kogeki") for c, _ in pile)
    shown = table.game.view(state, None, False)
    assert shown["totals"] == [
        sum(1 if state.scoring == "cards" else points(c, state.n) for c in d) for d in state.damage
    ]


def mutations(action: Mapping[str, Any], n: int, rnd: random.Random) -> list[dict[str, Any]]:
    """Near misses of a legal action: other values, wrong types, missing or extra fields."""
    out: list[dict[str, Any]] = [{**action, "extra": 1}]
    for key, value in action.items():
        if key == "type":
            out += [
                {**action, "type": t}
                for t in ("select", "play", "discard", "sai", "tonfa", "shuriken", "smoke", "pass")
                if t != value
            ]
            continue
        out.append({k: v for k, v in action.items() if k != key})
        if isinstance(value, bool):
            out += [{**action, key: int(value)}, {**action, key: str(value).lower()}, {**action, key: None}]
        elif isinstance(value, int):
            out += [{**action, key: v} for v in (value - 1, value + 1, -1, n, str(value), float(value), True)]
        elif isinstance(value, str):
            out += [{**action, key: c} for c in rnd.sample(CARD_IDS, 4)] + [{**action, key: value.upper()}]
        elif isinstance(value, list):
            out += [
                {**action, key: value[::-1]},
                {**action, key: value[:1]},
                {**action, key: [value[0]] * 2},
                {**action, key: [*value, 0]},
                {**action, key: tuple(value)},
            ]
    out.append({**action, "counter_to": rnd.randrange(-1, n + 1)})
    out.append({**action, "protect": rnd.randrange(-1, n + 1)})
    return out


def check_actions(table: Table, rnd: random.Random) -> None:
    """Every legal action is accepted; mutations of them are refused with a reason."""
    n = len(table.seats)
    for seat in range(n):
        if seat not in table.to_act:
            assert legal_actions(table, seat) == []
    seat = table.to_act[0]
    legal = legal_actions(table, seat)
    assert legal and all(legal.count(a) == 1 for a in legal)
    for action in legal:
        decide(table, seat, action, salts=["s"])  # no error
    near = [m for a in rnd.sample(legal, min(3, len(legal))) for m in mutations(a, n, rnd)]
    for action in [m for m in near if m not in legal]:
        with pytest.raises(IllegalAction) as refused:
            decide(table, seat, action, salts=["s"])
        assert len(str(refused.value)) > 10


def card_ids(value: Any) -> set[str]:
    """Every card id anywhere inside a JSON-like value, except the lists of weapons in play
    and out (they name every weapon, wherever it lies)."""
    if isinstance(value, str):
        return {value} if value in CARDS else set()
    if isinstance(value, Mapping):
        return set().union(*(card_ids(v) for k, v in value.items() if k not in WEAPON_LISTS))
    if isinstance(value, (list, tuple)):
        return set().union(*(card_ids(v) for v in value))
    return set()


def check_event_secrecy(before: State, ev: Event, after: State) -> None:
    """A game event's public data names a card of a hand only when that card leaves the hand."""
    if ev.type not in EVOLVERS or not before.hands:
        return
    named = card_ids(ev.data)
    for seat, hand in enumerate(before.hands):
        for c in named & set(hand):
            assert c not in after.hands[seat], f"{ev.type} shows {c}, still in the hand of seat {seat}"


def check_view_secrecy(table: Table, public: set[str]) -> None:
    """No view shows a card of another hand unless it was public before (drawn from a pile);
    who is asked to smoke depends on hand sizes only, never on who holds a Torinoko."""
    state = table.state
    if state.phase == OVER:
        return
    for viewer in [None, *range(state.n)]:
        others = {c for s, h in enumerate(state.hands) if s != viewer for c in h}
        assert card_ids(view(table, viewer)) & others <= public
    if state.phase == SMOKE:
        assert table.game.pending(state).seats == tuple(s for s, h in enumerate(state.hands) if len(h) >= 2)


def check_step(table: Table, new: list[Event], public: set[str]) -> Table:
    """Replay ``new`` one event at a time: the cards add up and nothing hidden is shown after each."""
    for ev in new:
        after = table_evolve(table, ev)
        if ev.type in EVOLVERS and after.state.hands:
            check_cards(after.state)
        check_event_secrecy(table.state, ev, after.state)
        public |= card_ids(ev.data)
        table = after
    check_view_secrecy(table, public)
    return table


def random_game(
    setup: tuple[int, str, bool, str], seed: bytes, rnd: random.Random, check_every: int = 1
) -> tuple[Table, list[Event]]:
    n, deck, teams, scoring = setup
    table, events = new_game(n, seed, {"deck": deck, "teams": teams, "scoring": scoring})
    public = set().union(*(card_ids(e.data) for e in events))
    for i in range(MAX_ACTIONS):
        if table.finished:
            return table, events
        checking = i % check_every == 0
        if checking:
            check_invariants(table)
            check_actions(table, rnd)
        seat = rnd.choice(table.to_act)
        before = table
        new, table = step(table, seat, rnd.choice(legal_actions(table, seat)), salts=SALTS)
        if checking:
            assert check_step(before, new, public) == table
        else:
            public |= card_ids([e.data for e in new])
        events += new
    raise AssertionError("a random game did not finish")


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(setup=st.sampled_from(SETUPS), seed=st.binary(min_size=1, max_size=8), moves=st.integers(0, 2**32))
def test_random_games_keep_the_rules(setup: tuple[int, str, bool, str], seed: bytes, moves: int) -> None:
    table, events = random_game(setup, seed, random.Random(moves))
    state = table.state
    check_invariants(table)
    assert state.phase == OVER and all(h == () for h in state.hands) and all(p == () for p in state.combat)
    assert events[-1].type == "game_ended" and events[-2].type == "game_finished"
    result = table.result
    assert result is not None and result["totals"] == state.totals()
    assert replay(events) == table
    best = min(result["scores"])
    assert result["winners"] == [s for s, v in enumerate(result["scores"]) if v == best]


@settings(max_examples=30, deadline=None)
@given(
    setup=st.sampled_from(SETUPS),
    seed=st.binary(min_size=1, max_size=8),
    moves=st.integers(0, 2**32),
    cut=st.floats(0, 1),
)
def test_replay_of_any_prefix_equals_the_live_table(
    setup: tuple[int, str, bool, str], seed: bytes, moves: int, cut: float
) -> None:
    table, events = random_game(setup, seed, random.Random(moves), check_every=10**6)
    stored = [Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in events]
    prefix = max(1, int(cut * len(stored)))
    assert replay(stored[:prefix]) == replay(events[:prefix])
    assert replay(stored) == table


@settings(max_examples=10, deadline=None)
@given(setup=st.sampled_from(SETUPS), moves=st.integers(0, 2**32))
def test_a_finished_game_record_verifies(setup: tuple[int, str, bool, str], moves: int) -> None:
    seed = moves.to_bytes(8, "big")
    _table, events = random_game(setup, seed, random.Random(moves), check_every=10**6)
    report = verify_record(sealed_record(events, seed))
    assert report["verified"], report["checks"]


def test_seats_not_to_act_are_refused() -> None:
    table, _ = new_game(4, b"x", {})
    _, table = step(table, 0, legal_actions(table, 0)[0], salts=["s"])
    with pytest.raises(NotYourTurn):
        decide(table, 0, legal_actions(table, 1)[0], salts=["s"])


@pytest.mark.parametrize("bad", [{"type": "smoke", "use": 1}, {"type": "smoke", "use": "true"}])
def test_booleans_must_be_booleans(bad: dict[str, Any]) -> None:
    weapons = ["block-11", "block-12", "tonfa-13", "tonfa-14", "sai-15", "torinoko-19"]
    hands = [
        ["fire-1", "torinoko-19", "fire-2", "fire-3", "fire-4", "fire-5", "water-1"],
        ["water-2", "water-3", "water-4", "water-5", "wood-1", "wood-2", "wood-3"],
        ["wood-4", "wood-5", "block-11", "block-12", "tonfa-13", "tonfa-14", "sai-15"],
    ]
    events = create(
        GAME, "b", [Seat(i, f"p{i}") for i in range(3)], seed=b"x", deal={"weapons": weapons, "hands": hands}
    )
    table = replay(events)
    for seat, c in ((0, "fire-1"), (1, "water-2"), (2, "wood-4")):
        _, table = step(table, seat, {"type": "select", "card": c}, salts=["s"])
    while table.game.phase(table.state) == "attack":
        seat = table.to_act[0]
        _, table = step(table, seat, {"type": "discard"})
    assert table.to_act == [0, 1, 2]  # every seat with two cards says whether it smokes: holders stay secret
    with pytest.raises(IllegalAction, match="'use' is true or false"):
        decide(table, 0, bad, salts=["s"])


def test_seat_numbers_must_be_integers() -> None:
    table, _ = new_game(3, b"x", {})
    while table.game.phase(table.state) != "attack":
        seat = table.to_act[0]
        _, table = step(table, seat, legal_actions(table, seat)[0], salts=["s"])
    seat = table.to_act[0]
    for bad in (True, 1.0, "1", None, [1]):
        for key in ("target", "pile"):
            with pytest.raises(IllegalAction):
                decide(table, seat, {"type": "play", key: bad})
