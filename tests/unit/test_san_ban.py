"""San Ban rules by example, driven through the generic engine (docs/rules/san-ban.md)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from domain.engine import Seat, Table, create, decide, legal_actions, replay, view
from domain.errors import IllegalAction, InvalidOptions, NotYourTurn
from domain.events import HIDDEN
from domain.games.san_ban import RULES
from domain.games.san_ban.board import element_beats
from domain.games.san_ban.bots import best_place, greedy
from domain.games.san_ban.cards import CATALOGUE, ELEMENTS, TIERS
from domain.rng import SeededRandom

SEATS = [Seat(0, "ann"), Seat(1, "bob")]
WEAK = [{"id": f"w{i}", "top": 1, "right": 1, "bottom": 1, "left": 1} for i in range(5)]
WEAK[4] = {**WEAK[4], "left": 3}  # the loser's strongest card, for the claim
STRONG = [{"id": f"s{i}", "top": 9, "right": 10, "bottom": 11, "left": 12} for i in range(5)]  # no repeated sum
FIVES = [[{"id": f"{p}{i}", "top": 5, "right": 5, "bottom": 5, "left": 5} for i in range(5)] for p in "ab"]


def card(cid: str, top: int, right: int, bottom: int, left: int, element: str | None = None) -> dict:
    return {"id": cid, "top": top, "right": right, "bottom": bottom, "left": left, "element": element}


def filler(prefix: str, n: int = 4, power: int = 5) -> list[dict]:
    """Cards with equal edges, ids ``prefix0``...: decks, or fill-ups to five."""
    return [card(f"{prefix}{i}", power, power, power, power) for i in range(n)]


def game(
    mode: str = "standard", decks: list | None = None, first: Any = 0, seed: bytes = b"seed", **options: Any
) -> Table:
    """A table from a fixed deal (when ``decks``) or from the seed."""
    deal = {"decks": decks, "first": first} if decks is not None else None
    opts = {"mode": mode, **options} if deal else {"mode": mode, "first": first, **options}
    return replay(create("san-ban", "g1", SEATS, seed, opts, deal))


def act(table: Table, seat: int, action: dict) -> tuple[Table, list]:
    events = decide(table, seat, action, salts=[f"salt-{seat}"])
    return replay(events, table), events


def play(table: Table, *moves: tuple[int, dict]) -> Table:
    for seat, action in moves:
        table, _ = act(table, seat, action)
    return table


def place(cell: int, cid: str | None = None) -> dict:
    return {"type": "place", "cell": cell} | ({"card": cid} if cid else {})


def owners(table: Table) -> list[int | None]:
    return [None if slot is None else slot["owner"] for slot in view(table, None)["state"]["board"]]


def flipped(events: list) -> list[tuple[list[int], str]]:
    return [(e.data["cells"], e.data["rule"]) for e in events if e.type == "cards_flipped"]


# -- catalogue and options ------------------------------------------------------


def test_catalogue_has_five_tiers_of_distinct_cards_a_third_elemental() -> None:
    assert len(CATALOGUE) >= 60 and sorted(TIERS) == [1, 2, 3, 4, 5]
    assert all(len(ids) >= 12 for ids in TIERS.values())
    edges = [(c.top, c.right, c.bottom, c.left, c.element) for c in CATALOGUE.values()]
    assert len(set(edges)) == len(edges)
    assert all(1 <= p <= 13 for e in edges for p in e[:4])
    assert 15 <= sum(c.element is not None for c in CATALOGUE.values()) <= 25
    mean = [sum(CATALOGUE[i].total for i in ids) / len(ids) for _, ids in sorted(TIERS.items())]
    assert mean == sorted(mean) and len(set(mean)) == 5


def test_registered_with_its_options() -> None:
    assert (RULES.id, RULES.name, RULES.rules_version, RULES.min_players, RULES.max_players) == (
        "san-ban",
        "San Ban",
        "1",
        2,
        2,
    )
    assert {k: o.default for k, o in RULES.options.items()} == {
        "mode": "standard",
        "first": "coin",
        "tier": 2,
        "deck": None,
        "decks": None,
    }


@pytest.mark.parametrize(
    "options, reason",
    [
        ({"mode": "expert"}, "must be one of"),
        ({"first": 2}, "must be one of"),
        ({"first": True}, "got true"),
        ({"tier": 6}, "must be one of"),
        ({"tier": 2.0}, "got 2.0"),
        ({"decks": [["sb-001"] * 5]}, "list of 2 decks"),
        ({"decks": [TIERS[1][:4], TIERS[1][5:10]]}, "deck 0 must be a list of 5-12 cards"),
        ({"decks": [TIERS[1][:5], list(TIERS[1][:5]) + list(TIERS[2])]}, "deck 1 must be a list of 5-12 cards"),
        ({"decks": [["sb-001", "sb-001", "sb-002", "sb-003", "sb-004"], TIERS[1][:5]]}, "'sb-001' twice"),
        ({"decks": [["sb-999", *TIERS[1][:4]], TIERS[1][:5]]}, "unknown card 'sb-999'"),
        ({"decks": [[card("x", 0, 1, 1, 1), *filler("f")], filler("g", 5)]}, "top must be a whole number 1-13"),
        ({"decks": [[card("x", 1, 14, 1, 1), *filler("f")], filler("g", 5)]}, "right must be a whole number"),
        ({"decks": [[card("x", 1, 1, 1, 1, "air"), *filler("f")], filler("g", 5)]}, "element must be one of"),
        ({"decks": [[card("", 1, 1, 1, 1), *filler("f")], filler("g", 5)]}, "needs an 'id'"),
        ({"decks": [[card("sb-001", 1, 1, 1, 1), *filler("f")], filler("g", 5)]}, "clashes with the catalogue"),
        (
            {"decks": [[card("x", 1, 1, 1, 1), *filler("f")], [card("x", 2, 1, 1, 1), *filler("g")]]},
            "two different definitions",
        ),
        ({"decks": [[{"id": "x", "top": 1}, *filler("f")], filler("g", 5)]}, "missing right, bottom, left"),
        ({"decks": [[{**card("x", 1, 1, 1, 1), "colour": "red"}, *filler("f")], filler("g", 5)]}, "unknown field"),
        ({"decks": [[42, *filler("f")], filler("g", 5)]}, "catalogue id or an inline card"),
        ({"deck": TIERS[1][:4]}, "option 'deck': deck 0 must be a list of 5-12 cards"),
        ({"deck": [TIERS[1][:5], ["sb-999", *TIERS[1][:4]]]}, "option 'deck': unknown card 'sb-999'"),
        ({"deck": "sb-001"}, "option 'deck'"),
        ({"deck": TIERS[1][:5], "decks": [TIERS[1][:5], TIERS[2][:5]]}, "'deck' or 'decks', not both"),
    ],
)
def test_bad_options_are_refused_with_a_reason(options: dict, reason: str) -> None:
    with pytest.raises(InvalidOptions, match=reason):
        create("san-ban", "g1", SEATS, b"seed", options)


def test_option_deck_gives_each_seat_a_deck_or_one_each() -> None:
    """The deck option: "each seat may be given a `deck`" (6 cards: each seat chooses 5)."""
    six = list(TIERS[3][:6])
    shared = replay(create("san-ban", "g1", SEATS, b"s", {"first": 0, "deck": six}))
    assert [view(shared, s)["state"]["deck"] for s in (0, 1)] == [six, six]
    own = replay(create("san-ban", "g1", SEATS, b"s", {"first": 0, "deck": [six, list(TIERS[4][:5])]}))
    assert [view(own, s)["state"]["deck"] for s in (0, 1)] == [six, list(TIERS[4][:5])]
    assert own.to_act == [0]  # only the seat with more than five cards chooses


@pytest.mark.parametrize(
    "deal, reason",
    [
        ({"first": 0}, "fixed deal is"),
        ({"decks": [FIVES[0], FIVES[1]], "hands": []}, "fixed deal is"),
        ({"decks": [FIVES[0], FIVES[1]], "first": 2}, "'first' must be 0, 1"),
        ({"decks": [FIVES[0], FIVES[1]], "first": False}, "'first' must be 0, 1"),
        ({"decks": [FIVES[0], FIVES[1]], "first": 1.0}, "'first' must be 0, 1"),
        ({"decks": [FIVES[0][:4], FIVES[1]]}, "deck 0 must be a list of 5-12"),
    ],
)
def test_bad_fixed_deals_are_refused(deal: dict, reason: str) -> None:
    with pytest.raises(InvalidOptions, match=reason):
        create("san-ban", "g1", SEATS, b"seed", {}, deal)


def test_a_catalogue_id_may_be_given_inline_with_its_own_definition_and_shared_by_both_decks() -> None:
    sb1 = {"id": "sb-001", **CATALOGUE["sb-001"].to_dict()}
    table = game(decks=[[sb1, *TIERS[1][1:5]], list(TIERS[1][:5])])
    assert view(table, 0)["state"]["hands"] == [list(TIERS[1][:5])] * 2


# -- setup, choice and the coin ---------------------------------------------------


def test_random_decks_come_from_the_tier_and_the_seed() -> None:
    table = game("standard", seed=b"abc", tier=4)
    rng = SeededRandom(b"abc")
    ids = rng.sample(TIERS[4], 10)
    state = view(table, 0)["state"]
    assert state["deck"] == ids[:5] and state["hands"] == [ids[:5], ids[5:]]
    assert game("standard", seed=b"abc", tier=4) == table
    assert view(game("standard", seed=b"abd", tier=4), 0)["state"]["deck"] != ids[:5]


def test_a_deck_of_exactly_five_skips_the_choice_of_hand() -> None:
    table = game(decks=FIVES)
    assert view(table, 0)["phase"] == "play" and table.to_act == [0]
    assert view(table, 1)["state"]["hands"] == [[c["id"] for c in d] for d in FIVES]


def test_only_the_seat_with_a_larger_deck_chooses_and_hands_are_revealed_together() -> None:
    table = game(decks=[filler("a", 7), filler("b", 5)])
    assert view(table, 0)["phase"] == "choose" and table.to_act == [0]
    assert len(legal_actions(table, 0)) == 21 and legal_actions(table, 1) == []
    with pytest.raises(NotYourTurn):
        decide(table, 1, {"type": "choose_hand", "cards": [f"b{i}" for i in range(5)]})
    hidden = view(table, 0)["state"]
    assert hidden["hands"] == [None, None] and hidden["deck"] == [f"a{i}" for i in range(7)]
    assert set(hidden["cards"]) == {f"a{i}" for i in range(7)}
    assert hidden["cards"]["a6"] == {"top": 5, "right": 5, "bottom": 5, "left": 5, "element": None}
    assert view(table, 1)["state"]["cards"].keys() == {f"b{i}" for i in range(5)}
    table, events = act(table, 0, {"type": "choose_hand", "cards": ["a6", "a0", "a2", "a3", "a4"]})
    shown = next(e for e in events if e.type == "hands_chosen")
    assert shown.data["hands"] == [["a0", "a2", "a3", "a4", "a6"], [f"b{i}" for i in range(5)]]
    assert view(table, None)["state"]["hands"] == shown.data["hands"]


def test_standard_choices_are_secret_until_both_are_in() -> None:
    table = game(decks=[filler("a", 6), filler("b", 6)])
    table, events = act(table, 1, {"type": "choose_hand", "cards": [f"b{i}" for i in range(5)]})
    assert [e.type for e in events] == ["choice_committed"]
    assert view(table, 0)["state"]["hands"] == [None, None] and table.to_act == [0]
    table, events = act(table, 0, {"type": "choose_hand", "cards": [f"a{i}" for i in range(1, 6)]})
    assert [e.type for e in events] == ["choice_committed", "choices_revealed", "hands_chosen"]
    assert view(table, None)["state"]["hands"][0] == [f"a{i}" for i in range(1, 6)]


def test_coin_flip_after_the_choice_then_the_winner_chooses_to_go_second() -> None:
    table = game(decks=[filler("a", 6), filler("b", 6)], first="coin", seed=b"coin")
    winner = SeededRandom(b"coin").below(2)
    assert view(table, 0)["state"]["coin_winner"] is None
    table = play(table, (0, {"type": "choose_hand", "cards": [f"a{i}" for i in range(5)]}))
    table, events = act(table, 1, {"type": "choose_hand", "cards": [f"b{i}" for i in range(5)]})
    assert [e.type for e in events][-2:] == ["hands_chosen", "coin_flipped"]
    assert events[-1].data == {"winner": winner}
    assert view(table, None)["phase"] == "coin" and table.to_act == [winner]
    assert legal_actions(table, winner) == [
        {"type": "choose_first", "first": True},
        {"type": "choose_first", "first": False},
    ]
    with pytest.raises(NotYourTurn):
        decide(table, 1 - winner, {"type": "choose_first", "first": True})
    with pytest.raises(IllegalAction, match="'first' must be true"):
        decide(table, winner, {"type": "choose_first", "first": "yes"})
    table, _ = act(table, winner, {"type": "choose_first", "first": False})
    assert table.to_act == [1 - winner] and view(table, None)["state"]["first"] == 1 - winner


def test_coin_winner_is_hidden_in_the_setup_event_and_the_deal_first_overrides_options() -> None:
    events = create(
        "san-ban", "g1", SEATS, b"s", {"first": 1}, {"decks": [filler("a", 6), filler("b", 6)], "first": "coin"}
    )
    dealt = events[1]
    assert dealt.data == {"deck_sizes": [6, 6], "first": "coin"}
    assert dealt.hidden == {"coin_winner": SeededRandom(b"s").below(2)}
    assert "private" not in dealt.visible_data(None, False)
    assert dealt.visible_data(0, False)["private"].keys() == {"0"}
    assert replay(create("san-ban", "g", SEATS, b"s", {"first": "coin"}, {"decks": FIVES, "first": 1})).to_act == [1]


# -- capture, flip-back, scoring --------------------------------------------------


def test_capture_needs_a_greater_facing_edge_and_cards_flip_back() -> None:
    a = [card("a0", 1, 2, 1, 1), card("a1", 9, 1, 1, 1), *filler("x", 3)]
    b = [card("b0", 1, 1, 1, 5), card("b1", 1, 1, 1, 1), *filler("y", 3)]
    table = play(game(decks=[a, b]), (0, place(0, "a0")))
    table, events = act(table, 1, place(1, "b0"))
    assert flipped(events) == [([0], "capture")] and owners(table)[:2] == [1, 1]
    placed = events[1]
    assert placed.type == "card_placed"
    assert placed.data == {
        "seat": 1,
        "cell": 1,
        "card": "b0",
        "card_def": {"top": 1, "right": 1, "bottom": 1, "left": 5, "element": None},
    }
    table, events = act(table, 0, place(3, "a1"))
    assert flipped(events) == [([0], "capture")] and owners(table)[:4] == [0, 1, None, 0]
    table, events = act(table, 1, place(4, "b1"))  # 1 vs a1's right 1 and b0's bottom: equal, no flip
    assert flipped(events) == [] and view(table, None)["state"]["scores"] == [5, 5]


def test_several_cards_flip_at_once() -> None:
    a = [card("a0", 1, 1, 1, 1), card("a1", 1, 1, 1, 1), *filler("x", 3)]
    b = [card("b0", 9, 9, 9, 9), *filler("y", 4)]
    table = play(game(decks=[a, b]), (0, place(1, "a0")), (1, place(8, "y0")), (0, place(3, "a1")))
    table, events = act(table, 1, place(4, "b0"))
    assert flipped(events) == [([1, 3], "capture")]


def test_equal_edges_tie_five_all_and_the_second_players_hand_card_counts() -> None:
    table = game(decks=FIVES)
    for turn in range(9):
        seat = turn % 2
        table, _ = act(table, seat, place(turn, f"{'ab'[seat]}{turn // 2}"))
    assert owners(table).count(1) == 4 and view(table, None)["state"]["hands"][1] == ["b4"]
    assert table.result == {"scores": [5, 5], "ranks": [1, 1], "winners": [0, 1]}
    assert view(table, None)["phase"] == "over"


def test_a_win_counts_flips_and_the_card_in_hand() -> None:
    table = game(decks=[WEAK, STRONG])
    for turn in range(9):
        seat = turn % 2
        table, _ = act(table, seat, place(turn, f"{'ws'[seat]}{turn // 2}"))
    assert table.result == {"scores": [1, 9], "ranks": [2, 1], "winners": [1]}


# -- elemental --------------------------------------------------------------------

CYCLE = [("water", "fire"), ("fire", "metal"), ("metal", "wood"), ("wood", "earth"), ("earth", "water")]


def elemental_duel(mode: str, mine: str | None, theirs: str | None, edge: int = 5) -> list:
    """Seat 0 lays a card with ``theirs`` on cell 0; seat 1 lays ``mine`` on cell 1, equal facing edges."""
    a = [card("a0", 1, edge, 1, 1, theirs), *filler("x")]
    b = [card("b0", 1, 1, 1, edge, mine), *filler("y")]
    table = play(game(mode, decks=[a, b]), (0, place(0, None if mode == "advanced" else "a0")))
    return act(table, 1, place(1, None if mode == "advanced" else "b0"))[1]


@pytest.mark.parametrize("mode", ["advanced", "hardcore"])
@pytest.mark.parametrize("mine, theirs", CYCLE)
def test_elemental_each_element_beats_the_next_on_equal_edges(mode: str, mine: str, theirs: str) -> None:
    assert flipped(elemental_duel(mode, mine, theirs)) == [([0], "elemental")]
    assert flipped(elemental_duel(mode, theirs, mine)) == []


@pytest.mark.parametrize(
    "mine, theirs, flips",
    [
        ("fire", None, True),
        (None, "fire", False),
        (None, None, False),
        ("fire", "fire", False),
        ("water", "metal", False),
        ("water", "wood", False),
        ("fire", "earth", False),
        ("metal", "water", False),
    ],
)
def test_elemental_with_and_without_elements(mine: str | None, theirs: str | None, flips: bool) -> None:
    assert flipped(elemental_duel("advanced", mine, theirs)) == ([([0], "elemental")] if flips else [])
    assert element_beats(mine, theirs) is flips


def test_elemental_never_helps_a_lower_edge_and_is_off_in_standard() -> None:
    assert flipped(elemental_duel("advanced", "water", "fire", edge=5)) == [([0], "elemental")]
    a = [card("a0", 1, 6, 1, 1, "fire"), *filler("x")]
    b = [card("b0", 1, 1, 1, 5, "water"), *filler("y")]
    table = play(game("advanced", decks=[a, b]), (0, place(0)))
    assert flipped(act(table, 1, place(1))[1]) == []
    assert flipped(elemental_duel("standard", "water", "fire")) == []


def test_every_ordered_pair_of_elements_follows_the_cycle() -> None:
    wins = {(m, t) for m in ELEMENTS for t in ELEMENTS if element_beats(m, t)}
    assert wins == set(CYCLE)


# -- add (hardcore) ---------------------------------------------------------------


def add_setup(mode: str) -> Table:
    """Seat 0: a0 on cell 1 (bottom 6, left 9), a1 on cell 0 (right 1); seat 1: b0 on cell 3 (right 3)."""
    a = [card("a0", 1, 1, 6, 9), card("a1", 1, 1, 1, 1), *filler("x", 3)]
    b = [card("b0", 5, 3, 1, 1), card("b1", 2, 1, 1, 5), *filler("y", 3)]
    return play(game(mode, decks=[a, b]), (0, place(1, "a0")), (1, place(3, "b0")), (0, place(0, "a1")))


def test_add_counts_own_neighbours_but_flips_only_opponents_and_does_not_chain() -> None:
    # b1 on the centre: top 2 + a0's bottom 6 = 8 = left 5 + own b0's right 3
    table, events = act(add_setup("hardcore"), 1, place(4, "b1"))
    assert flipped(events) == [([1], "add")]
    assert owners(table)[:5] == [0, 1, None, 1, 1]  # a1 on cell 0 stays: a0 does not chain-flip it


def test_add_is_off_outside_hardcore() -> None:
    table, events = act(add_setup("standard"), 1, place(4, "b1"))
    assert flipped(events) == [] and owners(table)[1] == 0


def add_and_capture(left_of_a2: int) -> list:
    """Seat 0 holds cells 1 (bottom 4), 3 (right 6) and 5 (left ``left_of_a2``); seat 1 lays
    b0 (top 5, right 2, bottom 9, left 4) on the centre: sums 9, 10 and 2 + ``left_of_a2``."""
    a = [card("a0", 1, 1, 4, 1), card("a1", 1, 6, 9, 1), card("a2", 1, 1, 1, left_of_a2), *filler("x", 2)]
    b = [card("b0", 5, 2, 9, 4), *filler("y", 4)]
    table = play(
        game("hardcore", decks=[a, b]),
        (0, place(1, "a0")),
        (1, place(8, "y0")),
        (0, place(3, "a1")),
        (1, place(6, "y1")),
        (0, place(5, "a2")),
    )
    table, events = act(table, 1, place(4, "b0"))
    return flipped(events)


def test_add_flips_every_opponent_on_a_repeated_sum_alongside_a_capture() -> None:
    assert add_and_capture(1) == [([1, 5], "capture")]  # sums 9, 10, 3: no add
    assert add_and_capture(8) == [([1], "capture"), ([3, 5], "add")]  # 4 + 6 = 10 = 2 + 8


# -- hardcore claim ---------------------------------------------------------------


def finish(table: Table, free: bool = True) -> Table:
    """Fill the board in cell order with the first card in hand."""
    while view(table, None)["phase"] == "play":
        seat = table.to_act[0]
        hand = view(table, seat)["state"]["hands"][seat]
        cell = owners(table).index(None)
        table, _ = act(table, seat, place(cell, hand[0] if free else None))
    return table


def test_hardcore_winner_claims_one_of_the_losers_five() -> None:
    table = finish(game("hardcore", decks=[WEAK, STRONG]))
    assert view(table, None)["phase"] == "claim" and table.result is None and table.to_act == [1]
    assert legal_actions(table, 1) == [
        *({"type": "claim", "card": f"w{i}"} for i in range(5)),
        {"type": "claim", "card": None},
    ]
    with pytest.raises(IllegalAction, match="s0 is not one of the loser's five cards"):
        decide(table, 1, {"type": "claim", "card": "s0"})
    with pytest.raises(NotYourTurn):
        decide(table, 0, {"type": "claim", "card": "s0"})
    table, _ = act(table, 1, {"type": "claim", "card": "w3"})
    assert table.result == {
        "scores": [1, 9],
        "ranks": [2, 1],
        "winners": [1],
        "claimed": {"seat": 1, "card": "w3", "from": 0},
    }


def test_hardcore_winner_may_take_no_card() -> None:
    # rulebook: "the winner may choose to take and keep 1 opponent card" (the service reads it so too)
    table = finish(game("hardcore", decks=[WEAK, STRONG]))
    with pytest.raises(IllegalAction, match="card null takes none"):
        decide(table, 1, {"type": "claim", "card": ["w0"]})
    table, events = act(table, 1, {"type": "claim", "card": None})
    assert [e.type for e in events] == ["action_taken", "claim_declined", "game_ended"]
    assert table.result == {"scores": [1, 9], "ranks": [2, 1], "winners": [1], "claimed": None}
    assert view(table, None)["state"]["claimed"] is None


def test_hardcore_tie_has_no_claim() -> None:
    table = game("hardcore", decks=FIVES)
    for turn, cell in enumerate([0, 1, 2, 3, 4, 5, 7, 6, 8]):  # add flips along the way, ending 5-5
        table, _ = act(table, turn % 2, place(cell, f"{'ab'[turn % 2]}{turn // 2}"))
    assert table.result == {"scores": [5, 5], "ranks": [1, 1], "winners": [0, 1]}


# -- gamer and advanced: forced, hidden order ----------------------------------------


def test_gamer_order_is_set_secretly_then_forced() -> None:
    table = game("gamer", decks=FIVES)
    assert view(table, None)["phase"] == "choose" and set(table.to_act) == {0, 1}
    assert len(legal_actions(table, 0)) == 120
    with pytest.raises(IllegalAction, match="chosen with 'set_order'"):
        decide(table, 0, {"type": "choose_hand", "cards": [f"a{i}" for i in range(5)]})
    order_a, order_b = ["a3", "a1", "a4", "a0", "a2"], ["b4", "b3", "b2", "b1", "b0"]
    table = play(table, (0, {"type": "set_order", "cards": order_a}))
    table, events = act(table, 1, {"type": "set_order", "cards": order_b})
    revealed, chosen = events[1], events[2]
    assert "choices" not in revealed.data and revealed.visible_data(0, False)["private"].keys() == {"0"}
    assert chosen.visible_data(1, False) == {"hand_sizes": [5, 5], "private": {"1": {"order": order_b}}}
    mine = view(table, 0)["state"]
    assert mine["hands"] == [order_a, None] and set(mine["cards"]) == {c["id"] for c in FIVES[0]}
    assert legal_actions(table, 0) == [{"type": "place", "cell": c} for c in range(9)]
    with pytest.raises(IllegalAction, match="in gamer mode the next card is forced: omit 'card'"):
        decide(table, 0, place(4, "a3"))
    table, events = act(table, 0, place(4))
    assert events[1].data["card"] == "a3"
    table, events = act(table, 1, place(0))
    assert events[1].data["card"] == "b4" and view(table, 0)["state"]["hands"] == [order_a[1:], None]
    table = finish(table, free=False)
    assert view(table, 0)["state"]["hands"] == [[], ["b0"]]


def test_advanced_order_comes_from_the_seed_and_is_hidden_even_from_its_owner() -> None:
    table = game("advanced", seed=b"adv")
    rng = SeededRandom(b"adv")
    ids = rng.sample(TIERS[2], 10)
    perms = [rng.shuffled(range(5)) for _ in range(2)]
    orders = [[ids[5 * s + i] for i in perms[s]] for s in range(2)]
    assert view(table, None)["phase"] == "play"
    mine = view(table, 0)["state"]
    assert mine["hands"] == [sorted(ids[:5]), None] and mine["chosen"] == [sorted(ids[:5]), None]
    assert set(mine["cards"]) == set(ids[:5])
    assert view(table, None)["state"]["hands"] == [None, None]
    played = []
    while view(table, None)["phase"] == "play":
        seat = table.to_act[0]
        table, events = act(table, seat, place(owners(table).index(None)))
        played.append(events[1].data["card"])
    assert played[0::2] == orders[0] and played[1::2] == orders[1][:4]
    assert view(table, 0)["state"]["hands"] == [[], [orders[1][4]]]  # game over: everything shown


def test_advanced_choose_hand_then_the_generator_shuffles_the_five() -> None:
    decks = [list(TIERS[3][:7]), list(TIERS[4][:5])]
    events = create("san-ban", "g1", SEATS, b"x", {"mode": "advanced", "first": 0, "decks": decks})
    table = replay(events)
    perms = events[1].hidden["shuffles"]
    rng = SeededRandom(b"x")
    assert perms == [rng.shuffled(range(5)), rng.shuffled(range(5))] and table.to_act == [0]
    pick = [decks[0][i] for i in (6, 5, 1, 2, 3)]
    table, new = act(table, 0, {"type": "choose_hand", "cards": pick})
    chosen = new[-1]
    hand = [decks[0][i] for i in (1, 2, 3, 5, 6)]
    assert chosen.visible_data(0, False) == {"hand_sizes": [5, 5], "private": {"0": {"hand": hand}}}
    assert chosen.hidden["orders"] == [[hand[i] for i in perms[0]], [decks[1][i] for i in perms[1]]]
    assert table.state.orders[0] == tuple(hand[i] for i in perms[0])


def test_advanced_fixed_deal_keeps_deck_order_without_a_shuffle() -> None:
    events = create("san-ban", "g1", SEATS, b"x", {"mode": "advanced"}, {"decks": FIVES, "first": 1})
    assert HIDDEN not in events[1].private
    table = replay(events)
    table, new = act(table, 1, place(0))
    assert new[1].data["card"] == "b0"


def test_spectators_and_opponents_see_only_public_things() -> None:
    table = game("gamer", decks=[filler("a", 6), filler("b", 6)])
    for viewer in (None, 1):
        assert "a0" not in str(view(table, viewer)["state"])
    assert view(table, None)["state"]["deck"] is None
    table = play(
        table,
        (0, {"type": "set_order", "cards": [f"a{i}" for i in range(5)]}),
        (1, {"type": "set_order", "cards": [f"b{i}" for i in range(5)]}),
        (0, place(0)),
    )
    assert view(table, None)["state"]["cards"].keys() == {"a0"}
    assert view(table, 1)["state"]["hands"][0] is None


# -- refused actions ------------------------------------------------------------------


def standard_play() -> Table:
    return play(game(decks=[filler("a", 5), filler("b", 5)]), (0, place(4, "a0")))


@pytest.mark.parametrize(
    "seat, action, error, reason",
    [
        (1, place(4, "b0"), IllegalAction, "cell 4 is already occupied"),
        (1, place(9, "b0"), IllegalAction, "'cell' must be a whole number 0-8"),
        (1, place(-1, "b0"), IllegalAction, "'cell' must be a whole number 0-8"),
        (1, {"type": "place", "cell": "3", "card": "b0"}, IllegalAction, "'cell' must be a whole number"),
        (1, {"type": "place", "cell": True, "card": "b0"}, IllegalAction, "'cell' must be a whole number"),
        (1, place(3, "a1"), IllegalAction, "a1 is not in your hand"),
        (1, place(3, "sb-017"), IllegalAction, "sb-017 is not in your hand"),
        (1, place(3), IllegalAction, "needs field\\(s\\): card"),
        (1, {"type": "place", "card": "b0"}, IllegalAction, "needs field\\(s\\): cell"),
        (1, place(3, "b0") | {"why": 1}, IllegalAction, "does not take field\\(s\\): why"),
        (1, {"type": "flip_table"}, IllegalAction, "unknown action type 'flip_table'"),
        (1, {"type": "claim", "card": "a0"}, IllegalAction, "not possible in the play phase"),
        (1, {"type": "choose_first", "first": True}, IllegalAction, "not possible in the play phase"),
        (0, place(3, "a1"), NotYourTurn, "not to act"),
    ],
)
def test_bad_actions_are_refused_with_a_reason(seat: int, action: dict, error: type, reason: str) -> None:
    with pytest.raises(error, match=reason):
        decide(standard_play(), seat, action)


def test_a_played_card_is_named_as_already_played() -> None:
    table = play(standard_play(), (1, place(0, "b0")))
    with pytest.raises(IllegalAction, match="a0 is not in your hand \\(already played\\)"):
        decide(table, 0, place(1, "a0"))


@pytest.mark.parametrize(
    "cards, reason",
    [
        (["a0", "a1", "a2", "a3"], "exactly 5 cards"),
        (["a0", "a1", "a2", "a3", "a3"], "a3 is listed twice"),
        (["a0", "a1", "a2", "a3", "b0"], "b0 is not in your deck"),
        ("a0 a1 a2 a3 a4", "must be a list of 5 card ids"),
    ],
)
def test_bad_hand_choices_are_refused(cards: Any, reason: str) -> None:
    table = game(decks=[filler("a", 6), filler("b", 6)])
    with pytest.raises(IllegalAction, match=reason):
        decide(table, 0, {"type": "choose_hand", "cards": cards}, salts=["s"])
    with pytest.raises(IllegalAction, match="not possible in the choose phase"):
        decide(table, 0, place(0, "a0"))


# -- legal actions and the greedy bot ---------------------------------------------------


def test_legal_actions_list_every_place() -> None:
    table = standard_play()
    actions = legal_actions(table, 1)
    assert len(actions) == 8 * 5 and {"type": "place", "cell": 0, "card": "b4"} in actions
    assert legal_actions(table, 0) == []


def test_greedy_takes_the_biggest_flip_then_the_safest() -> None:
    # only the centre flips both a0 and a1; b0 and the y cards flip two there, but seat 0's
    # remaining cards (all 6) could beat the y cards' exposed 5s, not b0's 9s
    a = [card("a0", 1, 13, 1, 13), card("a1", 13, 1, 13, 1), *filler("x", 3, power=6)]
    b = [card("b0", 9, 9, 9, 9), *filler("y", 4)]
    table = play(game(decks=[a, b]), (0, place(1, "a0")), (1, place(8, "y0")), (0, place(3, "a1")))
    for salt in range(5):
        assert greedy(table.state, 1, random.Random(salt)) == place(4, "b0")


def test_greedy_prefers_a_corner_when_nothing_flips() -> None:
    # a corner exposes two edges to the opponent's 5s, a side three, the centre four
    table = game(decks=[filler("a", 5, power=2), FIVES[1]])
    for salt in range(5):
        assert greedy(table.state, 0, random.Random(salt))["cell"] in (0, 2, 6, 8)


def test_greedy_does_not_peek_at_the_hidden_advanced_order() -> None:
    table = game("advanced", seed=b"peek")
    state = table.state
    swapped = replace(state, orders=(tuple(reversed(state.orders[0])), state.orders[1]))
    assert best_place(state, 0, random.Random(5)) == best_place(swapped, 0, random.Random(5))


def test_greedy_chooses_sensibly_outside_play() -> None:
    deck = [card("a0", 1, 1, 1, 1), *[card(f"a{i}", 9, 9, 9, i) for i in range(1, 7)]]
    table = game("gamer", decks=[deck, filler("b", 5)])
    assert greedy(table.state, 0, random.Random(0)) == {"type": "set_order", "cards": ["a6", "a5", "a4", "a3", "a2"]}
    table = game("standard", decks=[deck, filler("b", 5)], first="coin")
    assert greedy(table.state, 0, random.Random(0))["cards"] == ["a2", "a3", "a4", "a5", "a6"]
    assert greedy(finish(game("hardcore", decks=[WEAK, STRONG])).state, 1, random.Random(0)) == {
        "type": "claim",
        "card": "w4",
    }
