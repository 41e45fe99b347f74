"""Nin Nal rules (docs/rules/nin-nal.md), driven through the generic engine."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.audit import verify_record
from domain.engine import Seat, Table, create, decide, legal_actions, replay, view
from domain.errors import IllegalAction, InvalidOptions, NotYourTurn
from domain.events import Event
from domain.games import nin_nal
from domain.games.nin_nal import CARDS, resolution_order, value
from tests.support.records import SALTS, sealed_record
from tests.support.values import strings

GAME = "nin-nal"


# ---------------------------------------------------------------- helpers


def fill_deal(piles: Sequence[str], prefixes: Sequence[Sequence[str]]) -> dict[str, Any]:
    """A fixed deal: the given piles and hand prefixes, hands topped up to 9 in catalogue order."""
    used = set(piles).union(*prefixes)
    spare = [c for c in CARDS if c not in used]
    hands = []
    for prefix in prefixes:
        extra = 9 - len(prefix)
        hands.append([*prefix, *spare[:extra]])
        spare = spare[extra:]
    return {"piles": list(piles), "hands": hands}


def new_game(
    n: int, seed: bytes = b"seed", deal: Mapping[str, Any] | None = None, options: Mapping[str, Any] | None = None
) -> tuple[Table, list[Event]]:
    seats = [Seat(i, f"p{i}") for i in range(n)]
    events = create(GAME, "g1", seats, seed=seed, options=options, deal=deal)
    return replay(events), events


class Play:
    """A table plus its full log, advanced one decision at a time."""

    def __init__(self, n: int, **kwargs: Any) -> None:
        self.table, self.events = new_game(n, **kwargs)

    def act(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        new = decide(self.table, seat, action, salts=SALTS)
        self.table = replay(new, self.table)
        self.events += new
        return new

    def select(self, cards: Mapping[int, str]) -> list[Event]:
        out: list[Event] = []
        for seat, card in cards.items():
            out += self.act(seat, {"type": "select", "card": card})
        return out

    def throw(self, signs: Mapping[int, str]) -> list[Event]:
        out: list[Event] = []
        for seat, sign in signs.items():
            out += self.act(seat, {"type": "throw", "sign": sign})
        return out

    @property
    def state(self) -> nin_nal.State:
        return self.table.state

    def view(self, seat: int | None) -> dict[str, Any]:
        return view(self.table, seat)["state"]


def accounted(state: nin_nal.State) -> list[str]:
    """Every card the state knows: hands, piles, won, unused, revealed but unresolved."""
    unresolved = [r.card for r in state.revealed if r.move is None]
    return [*chain(*state.hands), *chain(*state.piles), *chain(*state.won), *state.unused, *unresolved]


# ---------------------------------------------------------------- the rulebook's example round

# Round 1 builds the rulebook's table: pile 0 a scissors pile, pile 1 two cards
# with a rock on top, pile 2 the 8 Rock alone. Round 2 is the example itself.
EXAMPLE_ROUND_1 = ["rock-8", "rock-6", "scissors-4", "scissors-2", "scissors-1"]
EXAMPLE_ROUND_2 = ["paper-7", "paper-3", "rock-3", "rock--4", "scissors--6"]
EXAMPLE_DEAL = fill_deal(
    ["paper-2", "paper-5", "scissors-9"], [[a, b] for a, b in zip(EXAMPLE_ROUND_1, EXAMPLE_ROUND_2)]
)


TAKE_1, TAKE_2 = {"type": "take", "pile": 1}, {"type": "take", "pile": 2}


def example_after_round_1() -> Play:
    play = Play(5, deal=EXAMPLE_DEAL)
    play.select(dict(enumerate(EXAMPLE_ROUND_1)))
    play.act(0, {"type": "take", "pile": 2})  # rock-8 beats only the 9 Scissors
    play.act(1, {"type": "place", "pile": 1})  # rock-6 beats nothing
    play.act(2, {"type": "take", "pile": 0})  # scissors-4 beats the 2 Paper
    play.act(3, {"type": "place", "pile": 0})
    play.act(4, {"type": "place", "pile": 0})
    return play


def test_rulebook_example_round() -> None:
    play = example_after_round_1()
    assert play.view(None)["piles"] == [["scissors-4", "scissors-2", "scissors-1"], ["paper-5", "rock-6"], ["rock-8"]]
    assert play.view(None)["round"] == 2

    new = play.select(dict(enumerate(EXAMPLE_ROUND_2)))
    revealed = next(e for e in new if e.type == nin_nal.CARDS_REVEALED)
    assert [r["card"] for r in revealed.data["order"]] == EXAMPLE_ROUND_2
    assert [r["seat"] for r in revealed.data["order"]] == [0, 1, 2, 3, 4]

    # 7 Paper beats both Rock piles and chooses the 8 Rock.
    assert legal_actions(play.table, 0) == [TAKE_1, TAKE_2]
    play.act(0, {"type": "take", "pile": 2})
    # 3 Paper (before 3 Rock: paper beats rock) takes the two-card pile.
    assert legal_actions(play.table, 1) == [{"type": "take", "pile": 1}]
    play.act(1, {"type": "take", "pile": 1})
    # 3 Rock takes the Scissors pile.
    assert legal_actions(play.table, 2) == [{"type": "take", "pile": 0}]
    play.act(2, {"type": "take", "pile": 0})
    # -4 Rock beats nothing and is placed.
    assert legal_actions(play.table, 3) == [{"type": "place", "pile": p} for p in range(3)]
    play.act(3, {"type": "place", "pile": 0})
    # -6 Scissors beats a Paper and takes the second pile.
    assert legal_actions(play.table, 4) == [TAKE_1, TAKE_2]
    play.act(4, {"type": "take", "pile": 1})

    state = play.view(None)
    assert state["piles"] == [["rock-3", "rock--4"], ["scissors--6"], ["paper-7"]]
    assert state["won"] == [
        ["scissors-9", "rock-8"],
        ["paper-5", "rock-6"],
        ["paper-2", "scissors-4", "scissors-2", "scissors-1"],
        [],
        ["paper-3"],
    ]
    assert state["scores"] == [17, 11, 9, 0, 3]
    assert state["round"] == 3
    assert [(r["card"], r["move"], r["pile"]) for r in state["previous_round"]] == [
        ("paper-7", "take", 2),
        ("paper-3", "take", 1),
        ("rock-3", "take", 0),
        ("rock--4", "place", 0),
        ("scissors--6", "take", 1),
    ]


def test_view_marks_resolved_cards_and_the_resolving_one() -> None:
    play = example_after_round_1()
    play.select(dict(enumerate(EXAMPLE_ROUND_2)))
    play.act(0, {"type": "take", "pile": 2})
    state = play.view(3)
    assert [r["resolved"] for r in state["revealed"]] == [True, False, False, False, False]
    assert state["revealed"][0]["taken"] == ["rock-8"]
    assert state["resolving"] == {"seat": 1, "card": "paper-3", "can_take": [1]}
    assert view(play.table, 3)["to_act"] == [1]


# ---------------------------------------------------------------- resolution order


@pytest.mark.parametrize(
    "cards, expected",
    [
        (["paper-4", "scissors-4"], ["scissors-4", "paper-4"]),
        (["scissors-4", "rock-4"], ["rock-4", "scissors-4"]),
        (["rock-4", "paper-4"], ["paper-4", "rock-4"]),
        (["paper-5", "scissors-5", "rock-5"], ["rock-5", "scissors-5", "paper-5"]),
        (
            ["paper--6", "paper-5", "rock-10", "scissors-5", "rock-5"],
            ["rock-10", "rock-5", "scissors-5", "paper-5", "paper--6"],
        ),
        (["rock--1", "paper-1", "scissors--6"], ["paper-1", "rock--1", "scissors--6"]),
    ],
)
def test_resolution_order(cards: list[str], expected: list[str]) -> None:
    assert resolution_order(cards) == expected


def revealed_order(n: int, cards: Sequence[str]) -> list[tuple[int, str]]:
    play = Play(n, deal=fill_deal(["rock-1", "rock-2", "rock-3"], [[c] for c in cards]))
    new = play.select(dict(enumerate(cards)))
    revealed = next(e for e in new if e.type == nin_nal.CARDS_REVEALED)
    return [(r["seat"], r["card"]) for r in revealed.data["order"]]


def test_four_paper_and_four_scissors_resolve_scissors_first() -> None:
    assert revealed_order(2, ["paper-4", "scissors-4"]) == [(1, "scissors-4"), (0, "paper-4")]


def test_three_colours_of_one_value_resolve_rock_scissors_paper() -> None:
    assert revealed_order(3, ["paper-6", "scissors-6", "rock-6"]) == [(2, "rock-6"), (1, "scissors-6"), (0, "paper-6")]


# ---------------------------------------------------------------- resolving


def one_takeable() -> Play:
    play = Play(2, deal=fill_deal(["rock-1", "paper-2", "scissors-3"], [["paper-9"], ["rock--2"]]))
    play.select({0: "paper-9", 1: "rock--2"})
    return play


def test_must_take_when_exactly_one_pile_is_beaten() -> None:
    play = one_takeable()
    assert play.table.to_act == [0]
    assert legal_actions(play.table, 0) == [{"type": "take", "pile": 0}]
    must_take = r"paper-9 beats the top of pile 0 \(rock-1\): you must take a pile"
    with pytest.raises(IllegalAction, match=must_take):
        play.act(0, {"type": "place", "pile": 1})
    with pytest.raises(IllegalAction, match=r"paper-9 does not beat the top of pile 2"):
        play.act(0, {"type": "take", "pile": 2})
    play.act(0, {"type": "take", "pile": 0})
    assert play.view(0)["won"][0] == ["rock-1"]
    assert play.view(0)["piles"][0] == ["paper-9"]


def test_a_card_that_beats_nothing_cannot_take() -> None:
    play = one_takeable()
    play.act(0, {"type": "take", "pile": 0})
    # rock--2 against paper-9, paper-2, scissors-3: beats scissors-3.
    assert legal_actions(play.table, 1) == [{"type": "take", "pile": 2}]
    play2 = Play(2, deal=fill_deal(["paper-1", "paper-2", "rock-3"], [["rock-9"], ["rock-8"]]))
    play2.select({0: "rock-9", 1: "rock-8"})
    with pytest.raises(IllegalAction, match="rock-9 beats no pile top: place it"):
        play2.act(0, {"type": "take", "pile": 2})


@pytest.mark.parametrize(
    "action, message",
    [
        ({"type": "take", "pile": 3}, "pile 3 does not exist"),
        ({"type": "take", "pile": -1}, "pile -1 does not exist"),
        ({"type": "take", "pile": "0"}, "'pile' is a pile number 0, 1 or 2, not '0'"),
        ({"type": "take", "pile": True}, "not True"),
        ({"type": "take"}, "needs field"),
        ({"type": "take", "pile": 0, "card": "paper-9"}, "does not take field"),
        ({"type": "select", "card": "paper-9"}, "the action is 'take' or 'place'"),
        ({"type": "throw", "sign": "rock"}, "the action is 'take' or 'place'"),
    ],
)
def test_bad_resolve_actions_are_refused(action: dict[str, Any], message: str) -> None:
    play = one_takeable()
    with pytest.raises(IllegalAction, match=message):
        play.act(0, action)


def test_only_the_resolving_owner_acts() -> None:
    play = one_takeable()
    with pytest.raises(NotYourTurn):
        play.act(1, {"type": "take", "pile": 2})


@pytest.mark.parametrize(
    "action, message",
    [
        ({"type": "select", "card": "rock-7"}, "rock-7 is not in your hand"),
        ({"type": "select", "card": "rock-0"}, "there is no card 'rock-0'"),
        ({"type": "select"}, "needs field"),
        ({"type": "select", "card": "paper-9", "pile": 1}, "does not take field"),
        ({"type": "take", "pile": 0}, "the action is 'select'"),
    ],
)
def test_bad_selects_are_refused(action: dict[str, Any], message: str) -> None:
    play = Play(2, deal=fill_deal(["rock-1", "paper-2", "scissors-3"], [["paper-9"], ["rock-7"]]))
    with pytest.raises(IllegalAction, match=message):
        play.act(0, action)


def test_a_seat_selects_once_per_round() -> None:
    play = Play(2)
    card = play.state.hands[0][0]
    play.act(0, {"type": "select", "card": card})
    with pytest.raises(NotYourTurn):
        play.act(0, {"type": "select", "card": play.state.hands[0][1]})


# ---------------------------------------------------------------- end and tie-break

# Every pile is a rock and everybody plays rocks (placed on rocks) and then
# scissors (placed, beaten by nothing on the table): nobody ever takes a card,
# so all seats tie on 0 points. The rocks come first in each hand.
ROCKS = [c for c in CARDS if c.startswith("rock-")]
SCISSORS = [c for c in CARDS if c.startswith("scissors-")]


def all_zero_deal(n: int) -> dict[str, Any]:
    """Rocks first in every hand; an extra rock is a high one, resolving before the scissors."""
    rocks, scissors = ROCKS[3:], iter(SCISSORS)
    base, extra = divmod(len(rocks), n)
    hands = []
    for seat in range(n):
        mine = rocks[seat * base : (seat + 1) * base]
        if seat < extra:
            mine.append(rocks[n * base + seat])
        hands.append([*mine, *(next(scissors) for _ in range(9 - len(mine)))])
    return {"piles": ROCKS[:3], "hands": hands}


def play_first_choices(play: Play) -> None:
    """Everybody selects their first card and makes their first legal move, until throws are due."""
    while not play.table.finished and play.state.phase != nin_nal.TIE_BREAK:
        seat = play.table.to_act[0]
        play.act(seat, legal_actions(play.table, seat)[0])


def tied_game(n: int, options: Mapping[str, Any] | None = None) -> Play:
    play = Play(n, deal=all_zero_deal(n), options=options)
    play_first_choices(play)
    return play


def test_all_zero_deal_really_ties() -> None:
    play = tied_game(3)
    assert play.state.phase == nin_nal.TIE_BREAK
    assert play.view(None)["scores"] == [0, 0, 0]
    assert play.table.to_act == [0, 1, 2]
    signs = ("rock", "paper", "scissors")
    assert legal_actions(play.table, 1) == [{"type": "throw", "sign": s} for s in signs]
    assert play.table.result is None


def test_tie_break_two_signs_drop_the_losers_and_others_throw_again() -> None:
    play = tied_game(3)
    play.throw({0: "rock", 1: "rock", 2: "rock"})  # one sign: again
    assert play.table.to_act == [0, 1, 2]
    play.throw({0: "rock", 1: "paper", 2: "scissors"})  # three signs: again
    assert play.table.to_act == [0, 1, 2]
    play.throw({0: "rock", 1: "rock", 2: "scissors"})  # scissors loses to rock
    assert play.table.to_act == [0, 1]
    with pytest.raises(NotYourTurn):
        play.act(2, {"type": "throw", "sign": "rock"})
    new = play.throw({0: "paper", 1: "rock"})
    assert new[-1].type == "game_ended"
    result = play.table.result
    assert result is not None
    assert result["winners"] == [0]
    assert result["ranks"] == [1, 2, 3]
    assert result["tie_break"]["shared"] is False
    assert result["tie_break"]["tied_throws"] == 2
    assert len(result["tie_break"]["throws"]) == 4


def test_tie_break_losers_dropping_together_share_a_rank() -> None:
    play = tied_game(3)
    play.throw({0: "scissors", 1: "paper", 2: "paper"})
    assert play.table.result is not None
    assert play.table.result["ranks"] == [1, 2, 2]
    assert play.table.result["winners"] == [0]


def test_tie_break_cap_shares_first_place() -> None:
    play = tied_game(3, options={"tie_break_throws": 2})
    play.throw({0: "rock", 1: "rock", 2: "scissors"})  # seat 2 drops; not a tied throw
    play.throw({0: "paper", 1: "paper"})
    assert play.table.result is None
    play.throw({0: "scissors", 1: "scissors"})
    result = play.table.result
    assert result is not None
    assert result["winners"] == [0, 1]
    assert result["ranks"] == [1, 1, 3]
    assert result["tie_break"]["shared"] is True


def test_tie_break_zero_throws_shares_at_once() -> None:
    play = tied_game(2, options={"tie_break_throws": 0})
    result = play.table.result
    assert result is not None
    assert result["winners"] == [0, 1] and result["ranks"] == [1, 1]


def test_bad_throw_is_refused_and_throws_stay_secret() -> None:
    play = tied_game(2)
    with pytest.raises(IllegalAction, match="sign 'lizard' is not one of"):
        play.act(0, {"type": "throw", "sign": "lizard"})
    with pytest.raises(IllegalAction, match="the action is 'throw'"):
        play.act(0, {"type": "select", "card": "rock-1"})
    play.act(0, {"type": "throw", "sign": "paper"})
    assert "paper" not in set(strings(view(play.table, 1)))
    assert "paper" not in set(strings([e.visible_data(1, False) for e in play.events]))


@pytest.mark.parametrize(
    "options", [{"tie_break_throws": -1}, {"tie_break_throws": "x"}, {"tie_break_throws": True}, {"colours": 4}]
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        new_game(2, options=options)


# ---------------------------------------------------------------- setup and fixed deals


def test_random_setup_deals_three_piles_and_nine_cards_each() -> None:
    play = Play(3)
    state = play.state
    assert [len(p) for p in state.piles] == [1, 1, 1]
    assert [len(h) for h in state.hands] == [9, 9, 9]
    assert len(state.unused) == 48 - 3 - 27
    assert sorted(accounted(state)) == sorted(CARDS)
    assert Play(3).state == state  # same seed, same deal
    assert Play(3, seed=b"other").state != state


def test_fixed_deal_is_used_and_unused_is_the_rest_in_catalogue_order() -> None:
    deal = fill_deal(["rock-1", "paper-2", "scissors-3"], [[], []])
    play = Play(2, deal=deal)
    assert play.view(None)["piles"] == [["rock-1"], ["paper-2"], ["scissors-3"]]
    assert play.view(0)["hand"] == deal["hands"][0]
    used = set(deal["piles"]).union(*deal["hands"])
    assert list(play.state.unused) == [c for c in CARDS if c not in used]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(piles=d["piles"][:2]), "list of 3 card ids"),
        (lambda d: d.update(hands=d["hands"][:1]), "list of 2 hands"),
        (lambda d: d["hands"][0].pop(), "list of 9 card ids"),
        (lambda d: d["hands"][0].__setitem__(0, "rock-11"), "unknown card id"),
        (lambda d: d["hands"][1].__setitem__(0, d["hands"][0][0]), "dealt twice"),
        (lambda d: d.update(unused=[]), "unknown: unused"),
    ],
)
def test_bad_fixed_deals_are_refused(mutate: Any, message: str) -> None:
    deal = fill_deal(["rock-1", "paper-2", "scissors-3"], [[], []])
    mutate(deal)
    with pytest.raises(InvalidOptions, match=message):
        new_game(2, deal=deal)


def test_card_catalogue() -> None:
    assert len(CARDS) == len(set(CARDS)) == 48
    assert "paper--4" in CARDS and "rock-7" in CARDS and "rock-0" not in CARDS
    assert sum(value(c) for c in CARDS) == 3 * (55 - 21)


def test_player_counts() -> None:
    for n in (1, 6):
        with pytest.raises(InvalidOptions):
            new_game(n)


# ---------------------------------------------------------------- hidden information


def test_views_never_show_other_hands_unused_cards_or_unrevealed_selects() -> None:
    play = Play(3)
    secret_1 = set(play.state.hands[1])
    unused = set(play.state.unused)
    play.act(1, {"type": "select", "card": play.state.hands[1][0]})
    secret_0 = set(play.state.hands[0])
    for seat, hidden in ((0, secret_1 | unused), (None, secret_1 | unused | secret_0)):
        shown = set(strings(view(play.table, seat)))
        assert not shown & hidden
        assert not set(strings([e.visible_data(seat, False) for e in play.events])) & hidden
    mine = play.view(0)
    assert mine["hand"] == list(play.state.hands[0])
    assert "hands" not in mine and "unused" not in mine
    assert mine["revealed"] == []
    assert play.view(None)["hand"] is None
    assert play.view(0)["hand_sizes"] == [9, 9, 9]


def test_everything_is_shown_once_the_game_is_over() -> None:
    play = tied_game(2, options={"tie_break_throws": 0})
    state = play.view(0)
    assert state["hands"] == [[], []]
    assert state["unused"] == list(play.state.unused)
    assert len(state["unused"]) == 48 - 3 - 18


# ---------------------------------------------------------------- bots


def test_greedy_bot_always_returns_a_legal_action() -> None:
    rnd = random.Random(7)
    play = Play(4, seed=b"bots")
    while not play.table.finished:
        seat = play.table.to_act[0]
        action = nin_nal.RULES.bots["greedy"](play.state, seat, rnd)
        assert action in legal_actions(play.table, seat)
        play.act(seat, action)


def test_greedy_bot_takes_the_richer_pile() -> None:
    deal = fill_deal(["rock-10", "rock--5", "scissors-1"], [["paper-9"], ["scissors--6"]])
    play = Play(2, deal=deal)
    play.select({0: "paper-9", 1: "scissors--6"})
    action = nin_nal.RULES.bots["greedy"](play.state, 0, random.Random(1))
    assert action == {"type": "take", "pile": 0}


# ---------------------------------------------------------------- properties over random games


def candidate_actions(state: nin_nal.State) -> list[dict[str, Any]]:
    """A universe of well-formed actions for the current phase, legal or not."""
    if state.phase == nin_nal.SELECT:
        return [{"type": "select", "card": c} for c in CARDS]
    if state.phase == nin_nal.TIE_BREAK:
        return [{"type": "throw", "sign": s} for s in ("rock", "paper", "scissors", "lizard")]
    return [{"type": t, "pile": p} for t in ("take", "place") for p in range(-1, 4)]


MALFORMED = [
    {"type": "select"},
    {"type": "take"},
    {"type": "pass"},
    {"type": "place", "pile": None},
    {"type": "throw", "sign": "rock", "extra": 1},
    {"type": "select", "card": 7},
]


def check_invariants(table: Table) -> None:
    state = table.state
    assert sorted(accounted(state)) == sorted(CARDS)
    # 9 cards each, one played per round: a select phase holds 10 - round, later phases 9 - round
    played = 9 - len(state.hands[0])
    assert all(len(h) == len(state.hands[0]) for h in state.hands)
    assert state.round == (played + 1 if state.phase == nin_nal.SELECT else played)
    assert len(state.piles) == 3 and all(state.piles)
    assert view(table, None)["state"]["scores"] == [sum(value(c) for c in w) for w in state.won]


def check_actions(table: Table, rnd: random.Random) -> None:
    """Every legal action is accepted; a sample of other actions is refused with a reason."""
    for seat in range(len(table.seats)):
        if seat not in table.to_act:
            assert legal_actions(table, seat) == []
            with pytest.raises((NotYourTurn, IllegalAction)) as refused:
                decide(table, seat, {"type": "select", "card": CARDS[0]}, salts=["s"])
            assert str(refused.value)
    seat = table.to_act[0]
    legal = legal_actions(table, seat)
    assert legal and all(legal.count(a) == 1 for a in legal)
    for action in legal:
        decide(table, seat, action, salts=["s"])  # no error
    illegal = [a for a in candidate_actions(table.state) if a not in legal]
    for action in rnd.sample(illegal, min(6, len(illegal))) + MALFORMED:
        with pytest.raises(IllegalAction) as refused:
            decide(table, seat, action, salts=["s"])
        assert len(str(refused.value)) > 10


def random_game(
    n: int, seed: bytes, rnd: random.Random, check_every: int = 1, options: Mapping[str, Any] | None = None
) -> tuple[Table, list[Event]]:
    table, events = new_game(n, seed=seed, options=options)
    for step in range(2000):
        if table.finished:
            break
        if step % check_every == 0:
            check_invariants(table)
            check_actions(table, rnd)
        seat = table.to_act[0]
        new = decide(table, seat, rnd.choice(legal_actions(table, seat)), salts=SALTS)
        table = replay(new, table)
        events += new
    assert table.finished, "a random game did not finish"
    return table, events


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 5), seed=st.binary(min_size=1, max_size=8), moves=st.integers(0, 2**32))
def test_random_games_keep_the_rules(n: int, seed: bytes, moves: int) -> None:
    table, events = random_game(n, seed, random.Random(moves))
    state = table.state
    assert state.phase == nin_nal.OVER
    assert sum(e.type == nin_nal.CARDS_REVEALED for e in events) == 9
    assert sum(e.type in (nin_nal.PILE_TAKEN, nin_nal.CARD_PLACED) for e in events) == 9 * n
    assert all(h == () for h in state.hands)
    assert sorted(accounted(state)) == sorted(CARDS)
    result = table.result
    assert result is not None
    assert result["scores"] == [sum(value(c) for c in w) for w in state.won]
    assert events[-1].type == "game_ended"
    assert replay(events) == table
    best = max(result["scores"])
    assert all(result["scores"][s] == best for s in result["winners"])
    assert result["winners"] == [s for s, r in enumerate(result["ranks"]) if r == 1]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 5), seed=st.binary(min_size=1, max_size=8), moves=st.integers(0, 2**32), cut=st.floats(0, 1))
def test_replay_of_any_prefix_equals_the_live_table(n: int, seed: bytes, moves: int, cut: float) -> None:
    table, events = random_game(n, seed, random.Random(moves), check_every=10**6)
    assert replay(events) == table
    _live, _ = new_game(n, seed=seed)
    # Rebuild from JSON as the store would, event by event.
    stored = [Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in events]
    prefix = max(1, int(cut * len(stored)))
    assert replay(stored[:prefix]) == replay(events[:prefix])
    assert replay(stored) == table


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 3), cap=st.sampled_from([1, 3, 20]), moves=st.integers(0, 2**32))
def test_tied_first_places_break_or_share(n: int, cap: int, moves: int) -> None:
    rnd = random.Random(moves)
    play = tied_game(n, options={"tie_break_throws": cap})
    while not play.table.finished:
        seat = play.table.to_act[0]
        play.act(seat, rnd.choice(legal_actions(play.table, seat)))
    result = play.table.result
    assert result is not None
    tie = result["tie_break"]
    assert sorted(result["ranks"])[0] == 1
    assert result["winners"] == tie["remaining"]
    assert tie["shared"] == (len(tie["remaining"]) > 1)
    if tie["shared"]:
        assert tie["tied_throws"] == tie["max_tied_throws"]


# ---------------------------------------------------------------- audit


def test_a_finished_game_record_verifies() -> None:
    seed = b"audit-seed"
    _table, events = random_game(4, seed, random.Random(3), check_every=10**6)
    report = verify_record(sealed_record(events, seed))
    assert report["verified"], report["checks"]


def test_a_fixed_deal_record_verifies() -> None:
    play = tied_game(3)
    play.throw({0: "rock", 1: "paper", 2: "paper"})
    play.throw({1: "rock", 2: "paper"})  # the game must be over: a record is sealed only after its result
    assert play.table.finished
    report = verify_record(sealed_record(play.events, b"seed"))
    assert report["verified"], report["checks"]
