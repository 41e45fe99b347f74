"""San, Ni, Ichi! rules (the rulebook and the service's rulings), driven through the generic engine."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from domain.engine import Seat, create, legal_actions, replay, step, view
from domain.errors import IllegalAction, InvalidOptions, NotYourTurn
from domain.events import Event
from domain.games.san_ni_ichi import RULES, moves
from domain.games.san_ni_ichi.cards import DECKS, WEAPONS, attack_cards, letter_of, points, sort_key
from domain.games.san_ni_ichi.state import Played, State
from tests.support.values import strings

GAME = "san-ni-ichi"
NO_SMOKE = [w for w in WEAPONS if not w.startswith("torinoko")]  # the 10 weapons of a 4-player test deck


# ---------------------------------------------------------------- helpers


def make_deal(
    n: int, prefixes: Sequence[Sequence[str]], weapons: Sequence[str], deck: str = "standard"
) -> dict[str, Any]:
    """A fixed deal: the given hand prefixes, topped up to 7 from the rest of the deck in order."""
    top, count = DECKS[deck][n]
    assert len(weapons) == count
    used = {c for prefix in prefixes for c in prefix}
    spare = [c for c in [*attack_cards(top), *weapons] if c not in used]
    hands = []
    for seat in range(n):
        prefix = list(prefixes[seat]) if seat < len(prefixes) else []
        extra = 7 - len(prefix)
        hands.append([*prefix, *spare[:extra]])
        spare = spare[extra:]
    return {"weapons": list(weapons), "hands": hands}


class Play:
    """A table plus its full log, advanced one decision at a time."""

    def __init__(
        self,
        n: int,
        deal: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        seed: bytes = b"seed",
    ) -> None:
        seats = [Seat(i, f"p{i}") for i in range(n)]
        self.events = create(GAME, "g1", seats, seed=seed, options=options, deal=deal)
        self.table = replay(self.events)

    def act(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        new, self.table = step(self.table, seat, action, salts=["salt"])
        self.events += new
        return new

    def select(self, cards: Mapping[int, str | Mapping[str, Any]]) -> list[Event]:
        out: list[Event] = []
        for seat, c in cards.items():
            out += self.act(seat, {"type": "select", "card": c} if isinstance(c, str) else c)
        return out

    def smoke(self, uses: Mapping[int, bool | Mapping[str, Any]]) -> list[Event]:
        """The seats named decide as given; every other seat asked answers no (it holds no smoke bomb)."""
        out: list[Event] = []
        for seat in [s for s in self.to_act if s not in uses] + list(uses):
            use = uses.get(seat, False)
            out += self.act(seat, {"type": "smoke", "use": use} if isinstance(use, bool) else use)
        return out

    def play(self, seat: int, target: int, **more: Any) -> list[Event]:
        return self.act(seat, {"type": "play", "target": target, **more})

    def discard(self, seat: int) -> list[Event]:
        return self.act(seat, {"type": "discard"})

    @property
    def state(self) -> State:
        return self.table.state

    @property
    def to_act(self) -> list[int]:
        return self.table.to_act

    def legal(self, seat: int) -> list[dict[str, Any]]:
        return legal_actions(self.table, seat)

    def view(self, seat: int | None) -> dict[str, Any]:
        return view(self.table, seat)["state"]


def types(events: Sequence[Event]) -> list[str]:
    return [e.type for e in events]


def only(events: Sequence[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.type == kind]


def combat(play: Play) -> list[list[str]]:
    return play.view(None)["combat"]


# A 4-player deal without smoke bombs. Round 1 (``base4``): fire-1 starts seat 0's pile,
# water-2 seat 1's, wood-3 seat 2's, fire-4 seat 3's; seat 3 has the highest top and takes it.
BASE4 = make_deal(
    4,
    [
        ["fire-4", "block-11", "yoso-kogeki-18", "fire-5"],
        ["fire-1", "tonfa-13", "yoso-kogeki-17", "water-5"],
        ["water-2", "sai-15", "wood-5", "fire-6"],
        ["wood-3", "shuriken-21", "sai-16", "water-6"],
    ],
    NO_SMOKE,
)


def base4(options: Mapping[str, Any] | None = None) -> Play:
    play = Play(4, deal=BASE4, options=options)
    play.select({0: "fire-4", 1: "fire-1", 2: "water-2", 3: "wood-3"})
    play.play(1, 0)
    play.play(2, 1)
    play.play(3, 2)
    events = play.play(0, 3)
    assert only(events, "damage_taken") == [{"seat": 3, "cards": ["fire-4"], "top": "fire-4"}]
    assert combat(play) == [["fire-1"], ["water-2"], ["wood-3"], []]
    assert play.state.round == 2 and play.to_act == [0, 1, 2, 3]
    return play


# ---------------------------------------------------------------- cards, decks, setup


def test_catalogue_ids_and_weapons() -> None:
    assert WEAPONS == (
        "block-11",
        "block-12",
        "tonfa-13",
        "tonfa-14",
        "sai-15",
        "sai-16",
        "yoso-kogeki-17",
        "yoso-kogeki-18",
        "torinoko-19",
        "torinoko-20",
        "shuriken-21",
        "shuriken-22",
    )
    assert attack_cards(2) == ["fire-1", "fire-2", "water-1", "water-2", "wood-1", "wood-2"]


@pytest.mark.parametrize("n, damage", [(3, 2), (4, 3), (5, 4), (6, 5)])
def test_rulebook_weapon_damage_number(n: int, damage: int) -> None:
    # The rulebook: a Shuriken adds 2, 3, 4, 5 points in a 3, 4, 5, 6 player game.
    assert points("shuriken-22", n) == damage
    assert points("yoso-kogeki-17", n) == damage
    assert points("fire-7", n) == 7


@pytest.mark.parametrize("deck, n", [(d, n) for d in DECKS for n in DECKS[d]])
def test_random_setup_follows_the_deck_table(deck: str, n: int) -> None:
    top, count = DECKS[deck][n]
    play = Play(n, options={"deck": deck})
    state = play.state
    assert state.strengths == top and len(state.weapons) == count
    assert [len(h) for h in state.hands] == [7] * n
    dealt = sorted(c for h in state.hands for c in h)
    assert dealt == sorted([*attack_cards(top), *state.weapons])
    shown = play.view(None)
    assert shown["weapons_in_play"] == list(state.weapons)
    assert sorted(shown["weapons_out"] + shown["weapons_in_play"]) == sorted(WEAPONS)
    assert play.to_act == list(range(n)) and state.round == 1


def test_four_players_deal_strengths_1_to_6_not_the_rulebook_example_1_to_7() -> None:
    state = Play(4).state
    assert state.strengths == 6
    assert not any(c.endswith("-7") for h in state.hands for c in h)


def test_same_seed_same_deal_other_seed_other_deal() -> None:
    assert Play(5).state == Play(5).state
    assert Play(5).state != Play(5, seed=b"other").state


@pytest.mark.parametrize(
    "options, name", [({"deck": "alt-1"}, "deck"), ({"deck": "alt-2"}, "deck"), ({"teams": True}, "teams")]
)
def test_options_refused_for_six_or_five_players(options: dict[str, Any], name: str) -> None:
    n = 5 if name == "teams" else 6
    with pytest.raises(InvalidOptions, match=f"option '{name}'") as refused:
        Play(n, options=options)
    assert refused.value.field == ("options", name)


@pytest.mark.parametrize(
    "options", [{"deck": "alt-3"}, {"teams": "yes"}, {"teams": 1}, {"scoring": "points"}, {"colour": "red"}]
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        Play(4, options=options)


def test_player_counts() -> None:
    for n in (2, 7):
        with pytest.raises(InvalidOptions):
            Play(n)


def test_teams_are_allowed_for_four_and_six() -> None:
    assert Play(4, options={"teams": True}).view(0)["teams"] == [[0, 2], [1, 3]]
    assert Play(6, options={"teams": True}).view(0)["teams"] == [[0, 3], [1, 4], [2, 5]]


def test_fixed_deal_is_used() -> None:
    play = Play(4, deal=BASE4)
    assert play.view(1)["hand"] == sorted(BASE4["hands"][1], key=sort_key)  # by strength, then letter
    assert play.view(1)["hand"][:3] == ["fire-1", "wood-1", "water-3"]
    assert sorted(play.state.hands[1]) == sorted(BASE4["hands"][1])
    assert play.view(0)["weapons_in_play"] == NO_SMOKE


GOOD_3 = make_deal(3, [], ["block-11", "tonfa-13", "sai-15", "yoso-kogeki-17", "torinoko-19", "shuriken-21"])


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(extra=1), "unknown: extra"),
        (lambda d: d.update(weapons=d["weapons"][:5]), "list of the 6 weapon ids"),
        (lambda d: d["weapons"].__setitem__(0, "fire-1"), "not a weapon"),
        (lambda d: d["weapons"].__setitem__(0, "tonfa-13"), "lists a weapon twice"),
        (lambda d: d.update(hands=d["hands"][:2]), "list of 3 hands"),
        (lambda d: d["hands"][0].pop(), "list of 7 card ids"),
        (lambda d: d["hands"][0].__setitem__(0, 7), "list of 7 card ids"),
        (lambda d: d["hands"][0].__setitem__(0, "fire-11"), "unknown card id 'fire-11'"),
        (
            lambda d: d["hands"][0].__setitem__(0, "fire-6"),
            r"fire-6 is not in the 3-player standard deck \(attack cards 1-5\)",
        ),
        (lambda d: d["hands"][0].__setitem__(0, "block-12"), "block-12 is dealt but is not among the deal's weapons"),
        (lambda d: d["hands"][1].__setitem__(0, d["hands"][0][0]), "dealt twice: fire-1"),
    ],
)
def test_bad_fixed_deals_are_refused(mutate: Any, message: str) -> None:
    deal = {"weapons": list(GOOD_3["weapons"]), "hands": [list(h) for h in GOOD_3["hands"]]}
    Play(3, deal=deal)  # the unmutated deal is fine
    mutate(deal)
    with pytest.raises(InvalidOptions, match=message) as refused:
        Play(3, deal=deal)
    assert refused.value.field == ("deal",)


def test_fixed_deal_checks_the_deck_option() -> None:
    with pytest.raises(InvalidOptions, match="list of the 0 weapon ids"):
        Play(3, deal=GOOD_3, options={"deck": "alt-2"})


# ---------------------------------------------------------------- selection and resolution order


@pytest.mark.parametrize("s", range(1, 11))
def test_letters_break_ties_at_every_strength(s: int) -> None:
    deal = make_deal(6, [[f"fire-{s}"], [f"water-{s}"], [f"wood-{s}"]], WEAPONS)
    play = Play(6, deal=deal)
    picks: dict[int, str | Mapping[str, Any]] = {0: f"fire-{s}", 1: f"water-{s}", 2: f"wood-{s}"}
    picks.update({seat: play.legal(seat)[0] for seat in (3, 4, 5)})
    revealed = only(play.select(picks), "selections_revealed")[0]["order"]
    same = [r for r in revealed if r["card"].endswith(f"-{s}") and r["seat"] < 3]
    shift = (s - 1) % 3
    expected = (["fire", "water", "wood"] * 2)[shift : shift + 3]
    assert [r["card"].split("-")[0] for r in same] == expected
    assert [r["letter"] for r in same] == ["a", "b", "c"]
    assert [letter_of(e, s) for e in expected] == ["a", "b", "c"]
    keys = [(int(r["card"].rsplit("-", 1)[1]), r.get("letter", "")) for r in revealed]
    assert keys == sorted(keys)


def test_rulings_letter_examples() -> None:
    assert [letter_of(e, 1) for e in ("fire", "water", "wood")] == ["a", "b", "c"]
    assert [letter_of(e, 2) for e in ("water", "wood", "fire")] == ["a", "b", "c"]
    assert [letter_of(e, 3) for e in ("wood", "fire", "water")] == ["a", "b", "c"]


def test_smoke_bombs_cannot_be_selected() -> None:
    deal = make_deal(3, [["torinoko-19", "fire-1"]], GOOD_3["weapons"])
    play = Play(3, deal=deal)
    assert {"type": "select", "card": "torinoko-19"} not in play.legal(0)
    with pytest.raises(IllegalAction, match="torinoko-19 cannot be selected: a Torinoko"):
        play.act(0, {"type": "select", "card": "torinoko-19"})


@pytest.mark.parametrize(
    "action, message",
    [
        ({"type": "select", "card": "fire-6"}, "fire-6 is not in your hand"),
        ({"type": "select", "card": "fire-0"}, "there is no card 'fire-0'"),
        ({"type": "select", "card": 3}, "there is no card 3"),
        ({"type": "select"}, "needs field"),
        ({"type": "select", "card": "fire-4", "target": 1}, "does not take field"),
        ({"type": "select", "card": "block-11", "protect": 0}, "'protect' is given only in team play"),
        ({"type": "play", "target": 1}, "the action is 'select'"),
    ],
)
def test_bad_selects_are_refused(action: dict[str, Any], message: str) -> None:
    play = Play(4, deal=BASE4)
    with pytest.raises(IllegalAction, match=message):
        play.act(0, action)


def test_a_seat_selects_once_per_round_and_others_do_not_see_it() -> None:
    play = Play(4, deal=BASE4)
    play.act(0, {"type": "select", "card": "fire-4"})
    with pytest.raises(NotYourTurn):
        play.act(0, {"type": "select", "card": "fire-5"})
    assert view(play.table, 0)["my_choice"] == {"type": "select", "card": "fire-4"}
    for seat in (1, None):
        assert "fire-4" not in set(strings(view(play.table, seat)))
        assert "fire-4" not in set(strings([e.visible_data(seat, False) for e in play.events]))


# ---------------------------------------------------------------- attack cards


def test_attack_cards_start_piles_and_beat_by_element() -> None:
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "water-6"})
    # water-5 (letter a at 5) first: water beats fire (seat 0), any seat without a pile (3).
    assert play.to_act == [1]
    assert play.legal(1) == [{"type": "play", "target": 0}, {"type": "play", "target": 3}, {"type": "discard"}]
    with pytest.raises(
        IllegalAction,
        match=r"water-5 cannot be played on seat 2: its top wood-3 "
        r"\(wood\) is not beaten by water",
    ):
        play.play(1, 2)
    with pytest.raises(IllegalAction, match="water-5 cannot be played on seat 1: its top water-2"):
        play.play(1, 1)
    play.play(1, 0)
    assert combat(play)[0] == ["fire-1", "water-5"]


def test_rulebook_winning_elements_fire_beats_wood_wood_water_water_fire() -> None:
    # Tops after round 1: fire-1 (seat 0), water-2 (seat 1), wood-3 (seat 2); seat 3 has no pile.
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "water-6"})
    for seat, beaten in ((1, 0), (2, 1), (0, 2)):  # water-5, wood-5, fire-5 (letters a, b, c at 5)
        assert play.to_act == [seat]
        assert play.legal(seat) == [
            {"type": "play", "target": beaten},
            {"type": "play", "target": 3},
            {"type": "discard"},
        ]
        play.discard(seat)


def test_counter_moves_the_own_pile_to_a_player_without_one() -> None:
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "fire-6", 3: "water-6"})
    play.discard(1)
    play.discard(0)
    # fire-6 (seat 2) beats its own wood-3: play on self, counter to seat 3 (no pile).
    assert {"type": "play", "target": 2, "counter_to": 3} in play.legal(2)
    assert {"type": "play", "target": 2, "counter_to": 0} not in play.legal(2)
    with pytest.raises(IllegalAction, match="seat 0 already has a combat pile"):
        play.play(2, 2, counter_to=0)
    with pytest.raises(IllegalAction, match="a counter moves your pile to another player"):
        play.play(2, 2, counter_to=2)
    events = play.play(2, 2, counter_to=3)
    assert only(events, "card_played")[0] == {
        "seat": 2,
        "card": "fire-6",
        "target": 2,
        "element": "fire",
        "counter_to": 3,
    }
    assert combat(play)[2] == [] and combat(play)[3] == ["wood-3", "fire-6"]


def test_counter_is_only_for_the_own_pile_never_anothers() -> None:
    # Rulebook: "You may not swap other players' Combat Piles in this manner."
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "fire-6", 3: "water-6"})
    with pytest.raises(IllegalAction, match="only a card played on your own pile counters"):
        play.play(1, 0, counter_to=3)


def test_starting_an_own_pile_is_not_a_counter() -> None:
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "fire-6", 3: "water-6"})
    play.discard(1)
    play.discard(0)
    play.discard(2)
    assert play.legal(3) == [{"type": "play", "target": 0}, {"type": "play", "target": 3}, {"type": "discard"}]
    with pytest.raises(IllegalAction, match="you have no combat pile"):
        play.play(3, 3, counter_to=2)


def test_a_card_with_no_legal_play_is_discarded_automatically() -> None:
    deal = make_deal(
        3,
        [["fire-1", "fire-4"], ["fire-2", "water-5"], ["fire-3", "water-1"]],
        ["block-11", "block-12", "tonfa-13", "tonfa-14", "sai-15", "sai-16"],
    )
    play = Play(3, deal=deal)
    play.select({0: "fire-1", 1: "fire-2", 2: "fire-3"})
    play.play(0, 0)
    play.play(1, 1)
    play.play(2, 2)  # tops fire-1, fire-2, fire-3: seat 2 takes its pile
    assert combat(play) == [["fire-1"], ["fire-2"], []]
    play.select({0: "fire-4", 1: "water-5", 2: "water-1"})
    events = play.play(2, 2)  # water-1 starts seat 2's pile again
    # fire-4 beats none of the tops fire-1, fire-2, water-1 and every seat has a pile.
    assert only(events, "card_discarded") == [{"seat": 0, "card": "fire-4", "reason": "no_legal_play"}]
    assert play.to_act == [1]


# ---------------------------------------------------------------- Block


def block_round(options: Mapping[str, Any] | None = None, block: str | Mapping[str, Any] = "block-11") -> Play:
    play = base4(options)
    play.select({0: block, 1: "tonfa-13", 2: "fire-6", 3: "shuriken-21"})
    return play


def test_block_protects_from_a_play_and_a_counter_for_the_whole_round() -> None:
    play = block_round()
    assert play.view(None)["protected"] == [0]
    assert play.to_act == [2]  # fire-6 resolves before the Block, which protects already
    assert play.legal(2) == [
        {"type": "play", "target": 2},
        {"type": "play", "target": 2, "counter_to": 3},
        {"type": "play", "target": 3},
        {"type": "discard"},
    ]
    with pytest.raises(
        IllegalAction, match="fire-6 cannot be played on seat 0: it is protected by block-11 of seat 0 this round"
    ):
        play.play(2, 0)
    with pytest.raises(
        IllegalAction,
        match="seat 0 is protected by block-11 of seat 0 this round: a countered pile cannot be moved to it",
    ):
        play.play(2, 2, counter_to=0)


def test_block_does_not_stop_tonfa_or_shuriken_and_resolves_by_itself() -> None:
    play = block_round()
    events = play.play(2, 3)
    assert only(events, "block_resolved") == [{"seat": 0, "card": "block-11", "protects": 0}]
    assert play.to_act == [1]
    assert {"type": "tonfa", "pile": 0, "discard": "fire-1"} in play.legal(1)
    play.act(1, {"type": "tonfa", "pile": 0, "discard": "fire-1"})
    assert combat(play)[0] == []
    assert {"type": "shuriken", "target": 0} in play.legal(3)
    events = play.act(3, {"type": "shuriken", "target": 0})
    assert only(events, "shuriken_thrown") == [{"seat": 3, "card": "shuriken-21", "target": 0}]
    assert play.view(None)["damage"][0] == ["shuriken-21"]
    assert play.view(None)["totals"][0] == 3  # players - 1
    ended = only(events, "round_ended")[0]
    assert ended["discarded"] == ["block-11", "tonfa-13"]
    assert play.view(None)["protected"] == []


def test_block_stops_a_sai_swap() -> None:
    play = base4()
    play.select({0: "block-11", 1: "water-5", 2: "fire-6", 3: "sai-16"})
    play.discard(1)
    play.discard(2)
    assert play.to_act == [3]
    assert play.legal(3) == [{"type": "sai", "piles": [1, 2]}]  # a Sai that can swap is not discarded
    with pytest.raises(IllegalAction, match="sai-16: seat 0 is protected by block-11 of seat 0"):
        play.act(3, {"type": "sai", "piles": [0, 1]})
    with pytest.raises(IllegalAction, match=r"ascending order: \[1, 2\]"):
        play.act(3, {"type": "sai", "piles": [2, 1]})
    with pytest.raises(IllegalAction, match="sai-16: seat 3 has no combat pile"):
        play.act(3, {"type": "sai", "piles": [1, 3]})
    events = play.act(3, {"type": "sai", "piles": [1, 2]})
    assert only(events, "piles_swapped") == [{"seat": 3, "card": "sai-16", "piles": [1, 2]}]
    assert only(events, "damage_taken")[0]["seat"] == 1  # wood-3 now tops seat 1's pile
    assert play.view(None)["damage"][1] == ["wood-3"]
    assert only(events, "round_ended")[0]["discarded"] == ["block-11", "sai-16"]


def test_block_stops_a_yoso_kogeki() -> None:
    play = base4()
    play.select({0: "block-11", 1: "yoso-kogeki-17", 2: "fire-6", 3: "water-6"})
    play.discard(2)
    play.discard(3)
    assert play.to_act == [1]
    assert play.legal(1) == [{"type": "play", "target": 2}, {"type": "play", "target": 3}, {"type": "discard"}]
    with pytest.raises(IllegalAction, match="yoso-kogeki-17 cannot be played on seat 0: it is protected"):
        play.play(1, 0)


def test_sai_with_fewer_than_two_piles_is_discarded_automatically() -> None:
    play = Play(4, deal=BASE4)
    play.select({0: "fire-4", 1: "fire-1", 2: "sai-15", 3: "wood-3"})
    play.play(1, 0)
    play.discard(3)
    events = play.discard(0)  # one pile only: nothing to swap
    assert only(events, "card_discarded")[-1] == {"seat": 2, "card": "sai-15", "reason": "no_legal_play"}
    assert play.view(None)["discards"] == ["wood-3", "fire-4", "sai-15"]


def test_shuriken_may_hit_any_seat_its_thrower_included() -> None:
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "shuriken-21"})
    for seat in (1, 2, 0):
        play.discard(seat)
    assert play.legal(3) == [{"type": "shuriken", "target": t} for t in range(4)]  # and never discarded
    events = play.act(3, {"type": "shuriken", "target": 3})
    assert only(events, "shuriken_thrown") == [{"seat": 3, "card": "shuriken-21", "target": 3}]
    assert play.view(None)["damage"][3] == ["fire-4", "shuriken-21"]
    assert play.view(None)["totals"][3] == 4 + 3


# ---------------------------------------------------------------- Yoso Kogeki


def yoso_round() -> tuple[Play, list[Event]]:
    play = base4()
    play.select({0: "yoso-kogeki-18", 1: "yoso-kogeki-17", 2: "fire-6", 3: "water-6"})
    play.discard(2)
    play.discard(3)
    return play, play.events


def test_yoso_kogeki_on_fire_is_water_and_only_wood_beats_it() -> None:
    play, _ = yoso_round()
    assert play.to_act == [1]
    assert play.legal(1) == [{"type": "play", "target": t} for t in (0, 2, 3)] + [{"type": "discard"}]
    events = play.play(1, 0)
    assert only(events, "card_played") == [{"seat": 1, "card": "yoso-kogeki-17", "target": 0, "element": "water"}]
    assert play.view(None)["tops"][0] == {"card": "yoso-kogeki-17", "element": "water", "strength": 17}
    events = play.play(0, 2)  # yoso-kogeki-18 on wood-3 becomes fire; it is the highest top
    assert only(events, "card_played")[0]["element"] == "fire"
    assert only(events, "damage_taken") == [{"seat": 2, "cards": ["wood-3", "yoso-kogeki-18"], "top": "yoso-kogeki-18"}]
    assert combat(play)[0] == ["fire-1", "yoso-kogeki-17"]
    # Next round: wood beats the water Yoso Kogeki, fire and water do not.
    assert 0 in moves.play_targets(play.state, Played(3, "wood-4"))
    assert 0 not in moves.play_targets(play.state, Played(3, "fire-3"))
    assert 0 not in moves.play_targets(play.state, Played(3, "water-3"))
    assert play.view(None)["totals"][2] == 3 + 3  # wood-3 + a weapon's damage number


def test_yoso_kogeki_cannot_counter_nor_go_on_its_owner() -> None:
    play, _ = yoso_round()
    play.play(1, 0)
    with pytest.raises(IllegalAction, match="yoso-kogeki-18 is played on another player's pile"):
        play.play(0, 0)
    with pytest.raises(IllegalAction, match="yoso-kogeki-18 cannot be used to counter"):
        play.play(0, 2, counter_to=3)
    assert all("counter_to" not in a for a in play.legal(0))


def test_yoso_kogeki_starting_a_pile_has_no_element_and_takes_any_card() -> None:
    play, _ = yoso_round()
    events = play.play(1, 3)
    assert only(events, "card_played")[0]["element"] is None
    play.play(0, 1)  # yoso-kogeki-18 tops seat 1 and is taken
    assert combat(play)[3] == ["yoso-kogeki-17"]
    for c in ("fire-2", "water-3", "wood-4"):
        assert 3 in moves.play_targets(play.state, Played(0, c))


# ---------------------------------------------------------------- Tonfa


def test_tonfa_with_no_piles_does_nothing() -> None:
    play = Play(4, deal=BASE4)
    play.select({0: "fire-4", 1: "tonfa-13", 2: "water-2", 3: "wood-3"})
    play.discard(2)
    play.discard(3)
    events = play.discard(0)
    assert only(events, "card_discarded")[-1] == {"seat": 1, "card": "tonfa-13", "reason": "no_legal_play"}
    assert play.state.round == 2


def test_tonfa_takes_a_top_card_into_hand_then_discards_one() -> None:
    play = block_round()
    play.play(2, 3)
    hand = set(play.state.hands[1])
    options = [a for a in play.legal(1) if a["type"] == "tonfa"]
    assert {a["pile"] for a in options} == {0, 1, 2, 3}
    assert {a["discard"] for a in options if a["pile"] == 1} == hand | {"water-2"}
    with pytest.raises(IllegalAction, match="tonfa-13: 'wood-3' is not in your hand after taking water-2"):
        play.act(1, {"type": "tonfa", "pile": 1, "discard": "wood-3"})
    keep = min(hand)
    events = play.act(1, {"type": "tonfa", "pile": 1, "discard": keep})
    assert only(events, "tonfa_used") == [
        {"seat": 1, "card": "tonfa-13", "pile": 1, "took": "water-2", "discarded": keep}
    ]
    assert "water-2" in play.state.hands[1] and keep not in play.state.hands[1]
    assert combat(play)[1] == []


# ---------------------------------------------------------------- what may be discarded by choice

# Rulebook (000_256ad7c54340be29.txt): "5) You may choose to discard your card." is one of "The rules
# for playing Attack Cards on Combat piles"; weapons have "special effects that dictate how they are
# played", and Yoso Kogeki is played "as an Attack card".


def weapon_refuses_discard(play: Play, seat: int, weapon: str, action: str) -> None:
    assert play.to_act == [seat] and play.state.current is not None and play.state.current.card == weapon
    assert play.legal(seat) and {"type": "discard"} not in play.legal(seat)
    assert {a["type"] for a in play.legal(seat)} == {action}
    with pytest.raises(IllegalAction, match=f"{weapon} cannot be discarded: only an attack card or a Yoso Kogeki"):
        play.discard(seat)


def test_a_sai_a_shuriken_and_a_tonfa_do_what_they_say_and_are_never_discarded_by_choice() -> None:
    sai = base4()
    sai.select({0: "block-11", 1: "water-5", 2: "fire-6", 3: "sai-16"})
    sai.discard(1)  # attack cards may be discarded ...
    sai.discard(2)
    weapon_refuses_discard(sai, 3, "sai-16", "sai")  # ... a Sai with two piles to swap swaps them
    shuriken = base4()
    shuriken.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "shuriken-21"})
    for seat in (1, 2, 0):
        shuriken.discard(seat)
    weapon_refuses_discard(shuriken, 3, "shuriken-21", "shuriken")  # someone's damage pile, maybe its own
    tonfa = block_round()
    tonfa.play(2, 3)
    weapon_refuses_discard(tonfa, 1, "tonfa-13", "tonfa")
    assert tonfa.state.current is not None
    # The one choice left to a Tonfa: it may discard the very card it took (the top of its own pile here).
    tonfa.act(1, {"type": "tonfa", "pile": 1, "discard": "water-2"})
    assert combat(tonfa)[1] == [] and "water-2" in tonfa.view(None)["discards"]


def test_an_attack_card_and_a_yoso_kogeki_may_be_discarded_by_choice() -> None:
    play, _ = yoso_round()
    assert {"type": "discard"} in play.legal(1)
    events = play.discard(1)
    assert only(events, "card_discarded") == [{"seat": 1, "card": "yoso-kogeki-17", "reason": "chosen"}]
    attack = base4()
    attack.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "water-6"})
    events = attack.discard(1)
    assert only(events, "card_discarded") == [{"seat": 1, "card": "water-5", "reason": "chosen"}]


# ---------------------------------------------------------------- damage and smoke bombs


def test_a_tie_for_the_highest_top_takes_every_tied_pile() -> None:
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "water-6"})
    play.play(1, 0)  # water-5 on fire-1
    play.play(2, 1)  # wood-5 on water-2
    play.play(0, 2)  # fire-5 on wood-3
    events = play.discard(3)
    assert [(d["seat"], d["top"]) for d in only(events, "damage_taken")] == [
        (0, "water-5"),
        (1, "wood-5"),
        (2, "fire-5"),
    ]
    assert combat(play) == [[], [], [], []]
    assert play.view(None)["totals"] == [6, 7, 8, 4]


SMOKE_WEAPONS = ["block-11", "block-12", "tonfa-13", "tonfa-14", "sai-15", "torinoko-19"]


def test_smoke_skips_damage_and_draws_the_lowest_card_letters_breaking_ties() -> None:
    deal = make_deal(
        3,
        [
            ["water-3", "wood-3", "torinoko-19", "fire-1", "fire-2", "water-1", "water-2"],
            ["fire-5", "wood-1"],
            ["fire-4", "wood-2"],
        ],
        SMOKE_WEAPONS,
    )
    play = Play(3, deal=deal)
    play.select({0: "water-3", 1: "fire-5", 2: "wood-2"})
    play.discard(2)
    play.play(0, 0)
    events = play.play(1, 2)
    # every seat with two cards or more is asked (asking only seat 0 would tell the table it holds a bomb)
    assert only(events, "smoke_requested") == [{"round": 1, "seats": [0, 1, 2]}]
    assert play.to_act == [0, 1, 2] and play.view(0)["phase"] == "smoke"
    assert play.legal(0) == [{"type": "smoke", "use": True}, {"type": "smoke", "use": False}]
    assert play.legal(1) == [{"type": "smoke", "use": False}]  # no bomb: the only answer is no
    with pytest.raises(IllegalAction, match="no smoke bomb"):
        play.act(1, {"type": "smoke", "use": True})
    events = play.smoke({0: False})
    assert only(events, "damage_taken") == [{"seat": 2, "cards": ["fire-5"], "top": "fire-5"}]
    play.select({0: "wood-3", 1: "wood-1", 2: "fire-4"})
    play.discard(1)
    play.play(0, 0)  # wood-3 on water-3: seat 0 now holds the highest top
    play.discard(2)
    events = play.smoke({0: True})
    assert only(events, "smoke_bombs_revealed") == [
        {"round": 2, "used": [{"seat": 0, "card": "torinoko-19", "covers": 0}], "declined": [1, 2]}
    ]
    assert only(events, "damage_taken") == []
    assert only(events, "card_drawn") == [{"seat": 0, "card": "wood-3", "by": 0}]  # a before c
    assert combat(play)[0] == ["water-3"]
    assert "wood-3" in play.state.hands[0] and "torinoko-19" in play.view(None)["discards"]
    assert play.view(None)["last_damage"]["smoked"] == [{"seat": 0, "card": "torinoko-19", "covers": 0}]


def test_a_smoker_with_the_highest_top_passes_the_damage_to_the_next_highest() -> None:
    # Rulebook: "The remaining player(s) with the highest strength top card takes damage."
    deal = make_deal(3, [["fire-5", "torinoko-19"], ["water-3"], ["wood-1"]], SMOKE_WEAPONS)
    play = Play(3, deal=deal)
    play.select({0: "fire-5", 1: "water-3", 2: "wood-1"})
    play.play(2, 2)
    play.play(1, 1)
    play.play(0, 0)  # tops: fire-5 (seat 0, smokes), water-3 (seat 1), wood-1 (seat 2)
    events = play.smoke({0: True})
    assert only(events, "damage_taken") == [{"seat": 1, "cards": ["water-3"], "top": "water-3"}]
    assert only(events, "card_drawn") == [{"seat": 0, "card": "fire-5", "by": 0}]
    assert combat(play) == [[], [], ["wood-1"]]
    assert play.view(None)["totals"] == [0, 3, 0]


def discard_everything(play: Play) -> None:
    """Play to the end: select the lowest card, discard it, never smoke."""
    while not play.table.finished:
        seat = play.to_act[0]
        actions = play.legal(seat)
        passive = [a for a in actions if a in ({"type": "discard"}, {"type": "smoke", "use": False})]
        play.act(seat, (passive or actions)[0])


def test_a_smoke_bomb_as_the_last_card_is_discarded_never_played() -> None:
    hand0 = ["fire-1", "fire-2", "fire-3", "fire-4", "fire-5", "water-1", "torinoko-19"]
    play = Play(3, deal=make_deal(3, [hand0], SMOKE_WEAPONS))
    discard_everything(play)
    # Rounds 1-5 end with the bomb and another card in hand: seat 0 decides (and declines).
    asked = [e["round"] for e in only(play.events, "smoke_requested") if 0 in e["seats"]]
    assert asked == [1, 2, 3, 4, 5]
    revealed = only(play.events, "smoke_bombs_revealed")
    assert all(r["used"] == [] for r in revealed) and [r["round"] for r in revealed if 0 in r["declined"]] == asked
    # After round 6 the bomb is the last card: never offered, discarded, seat 0 sits round 7 out.
    assert only(play.events, "cards_discarded") == [{"seat": 0, "cards": ["torinoko-19"], "reason": "only_torinoko"}]
    started = only(play.events, "round_started")
    assert started[-1] == {"round": 7, "selecting": [1, 2], "sitting_out": [0]}
    assert "torinoko-19" in play.view(None)["discards"]


def test_nobody_holding_a_smoke_bomb_skips_the_decision() -> None:
    play = base4()
    assert "smoke_requested" not in types(play.events)


# ---------------------------------------------------------------- teams


def test_team_block_protects_the_teammate_chosen() -> None:
    play = base4({"teams": True})
    assert [a for a in play.legal(0) if a["card"] == "block-11"] == [
        {"type": "select", "card": "block-11", "protect": 0},
        {"type": "select", "card": "block-11", "protect": 2},
    ]
    with pytest.raises(IllegalAction, match="in team play a Block names the seat it covers"):
        play.act(0, {"type": "select", "card": "block-11"})
    with pytest.raises(IllegalAction, match=r"'protect' must be 0 \(you\) or 2 \(your teammate\), not 1"):
        play.act(0, {"type": "select", "card": "block-11", "protect": 1})
    for not_a_seat_number in (2.0, 0.0, True, False, "2"):  # 2.0 == 2 in Python: it stuck a game (a 500)
        with pytest.raises(IllegalAction, match=r"'protect' must be 0 \(you\) or 2"):
            play.act(0, {"type": "select", "card": "block-11", "protect": not_a_seat_number})
    with pytest.raises(IllegalAction, match="'protect' is given only with a Block"):
        play.act(0, {"type": "select", "card": "fire-5", "protect": 0})
    play.select({0: {"type": "select", "card": "block-11", "protect": 2}, 1: "tonfa-13", 2: "fire-6", 3: "shuriken-21"})
    assert play.view(None)["protected"] == [2]
    # seat 2's own fire-6 cannot go on its own (protected) pile; seat 0 is fair game now
    assert play.legal(2) == [{"type": "play", "target": 3}, {"type": "discard"}]
    with pytest.raises(IllegalAction, match="protected by block-11 of seat 0"):
        play.play(2, 2)


def test_team_smoke_covers_the_teammate() -> None:
    weapons = [w for w in WEAPONS if w not in ("shuriken-22", "block-12")]
    deal = make_deal(4, [["fire-4", "torinoko-19", "torinoko-20"], ["fire-1"], ["water-2"], ["wood-3"]], weapons)
    play = Play(4, deal=deal, options={"teams": True})
    play.select({0: "fire-4", 1: "fire-1", 2: "water-2", 3: "wood-3"})
    play.play(1, 0)
    play.play(2, 1)
    play.play(3, 2)
    play.play(0, 2)  # fire-4 on wood-3: seat 2 holds the highest top
    assert play.to_act == [0, 1, 2, 3]
    assert play.legal(0) == [
        {"type": "smoke", "use": True, "protect": 0},
        {"type": "smoke", "use": True, "protect": 2},
        {"type": "smoke", "use": False},
    ]
    with pytest.raises(IllegalAction, match="in team play a smoke bomb used names the seat it covers"):
        play.smoke({0: True})
    with pytest.raises(IllegalAction, match="'protect' is given only with a smoke bomb used"):
        play.smoke({0: {"type": "smoke", "use": False, "protect": 2}})
    events = play.smoke({0: {"type": "smoke", "use": True, "protect": 2}})
    assert only(events, "smoke_bombs_revealed")[0]["used"] == [{"seat": 0, "card": "torinoko-19", "covers": 2}]
    assert only(events, "damage_taken") == [{"seat": 1, "cards": ["water-2"], "top": "water-2"}]
    assert only(events, "card_drawn") == [{"seat": 2, "card": "wood-3", "by": 0}]
    assert combat(play) == [["fire-1"], [], ["fire-4"], []]
    assert "wood-3" in play.state.hands[2]


def test_teammates_do_not_see_each_others_hands() -> None:
    play = Play(4, deal=BASE4, options={"teams": True})
    mate = set(play.state.hands[2]) - set(WEAPONS)  # weapons in play are public, their holder is not
    assert not mate & set(strings(view(play.table, 0)))
    assert not mate & set(strings([e.visible_data(0, False) for e in play.events]))


# ---------------------------------------------------------------- the end and the result


def play_out(play: Play, rnd: random.Random) -> None:
    while not play.table.finished:
        seat = play.to_act[0]
        play.act(seat, rnd.choice(play.legal(seat)))


@pytest.mark.parametrize("options", [{}, {"scoring": "cards"}, {"teams": True}, {"teams": True, "scoring": "cards"}])
def test_a_game_ends_when_nobody_has_a_card_and_ranks_lowest_first(options: dict[str, Any]) -> None:
    play = Play(4, options=options)
    play_out(play, random.Random(5))
    state = play.state
    assert all(h == () for h in state.hands) and all(p == () for p in state.combat)
    finished = only(play.events, "game_finished")[0]
    result = play.table.result
    assert result is not None and play.events[-1].type == "game_ended"
    assert result["totals"] == finished["totals"] == state.totals()
    if options.get("scoring") == "cards":
        assert result["totals"] == [len(d) for d in state.damage]
    else:
        assert result["totals"] == [sum(points(c, 4) for c in d) for d in state.damage]
    if options.get("teams"):
        assert result["teams"] == [[0, 2], [1, 3]]
        assert result["scores"] == [result["totals"][s] + result["totals"][(s + 2) % 4] for s in range(4)]
    else:
        assert result["scores"] == result["totals"]
    best = min(result["scores"])
    assert result["winners"] == [s for s, v in enumerate(result["scores"]) if v == best]
    assert all(result["ranks"][s] == 1 + sum(v < result["scores"][s] for v in result["scores"]) for s in range(4))
    shown = play.view(1)
    assert shown["hands"] == [[], [], [], []] and shown["phase"] == "over"


def test_equal_totals_share_a_rank() -> None:
    state = Play(3).state
    from domain.contract import changed

    done = changed(state, phase="over", damage=(("fire-3",), ("water-1", "wood-2"), ("fire-5",)))
    result = RULES.outcome(done)
    assert result is not None
    assert result["scores"] == [3, 3, 5] and result["ranks"] == [1, 1, 3] and result["winners"] == [0, 1]


# ---------------------------------------------------------------- views and hidden information


def test_views_hide_other_hands_and_show_own() -> None:
    play = Play(4, deal=BASE4)
    others = (set(play.state.hands[1]) | set(play.state.hands[2]) | set(play.state.hands[3])) - set(WEAPONS)
    mine = play.view(0)
    assert mine["hand"] == sorted(play.state.hands[0], key=sort_key)
    assert not others & set(strings(mine)) and "hands" not in mine
    assert play.view(None)["hand"] is None
    assert mine["hand_sizes"] == [7, 7, 7, 7]
    assert not (set(play.state.hands[0]) - set(WEAPONS)) & set(strings(play.view(None)))


def test_view_fields_while_resolving() -> None:
    play = block_round()
    shown = play.view(1)
    assert shown["phase"] == "attack" and shown["round"] == 2
    assert shown["resolving"] == {"seat": 2, "card": "fire-6"}
    assert [s["card"] for s in shown["selections"]] == ["fire-6", "block-11", "tonfa-13", "shuriken-21"]
    assert shown["selections"][0] == {"seat": 2, "card": "fire-6", "resolved": False, "letter": "b"}
    assert shown["combat"] == [["fire-1"], ["water-2"], ["wood-3"], []]
    assert shown["tops"][1] == {"card": "water-2", "element": "water", "strength": 2}
    assert shown["damage"] == [[], [], [], ["fire-4"]] and shown["totals"] == [0, 0, 0, 4]
    assert shown["discards"] == [] and shown["protected"] == [0]
    play.play(2, 3)
    shown = play.view(None)
    assert shown["selections"][0]["result"] == {"event": "card_played", "target": 3, "element": "fire"}
    assert shown["selections"][1]["on_table"] is True


def test_smoke_decisions_stay_secret_until_all_are_in() -> None:
    weapons = [w for w in WEAPONS if w not in ("shuriken-22", "block-12")]
    deal = make_deal(4, [["fire-4", "torinoko-19"], ["fire-1", "torinoko-20"], ["water-2"], ["wood-3"]], weapons)
    play = Play(4, deal=deal)
    play.select({0: "fire-4", 1: "fire-1", 2: "water-2", 3: "wood-3"})
    for seat in (1, 2, 3, 0):
        play.discard(seat)
    assert play.to_act == [0, 1, 2, 3]
    play.act(0, {"type": "smoke", "use": True})
    assert play.to_act == [1, 2, 3]
    viewers: list[int | None] = [1, 2, None]
    for viewer in viewers:
        visible = [e.visible_data(viewer, False) for e in play.events]
        assert "use" not in set(strings(visible))
        assert "use" not in set(strings(view(play.table, viewer)))


# ---------------------------------------------------------------- bots


def test_greedy_always_returns_a_legal_action() -> None:
    for n, options in ((4, {}), (6, {"teams": True}), (3, {"scoring": "cards"})):
        play = Play(n, options=options, seed=b"bots")
        rnd = random.Random(3)
        while not play.table.finished:
            seat = play.to_act[0]
            action = RULES.bots["greedy"](play.state, seat, rnd)
            assert action in play.legal(seat)
            play.act(seat, action)


def test_greedy_reads_only_its_own_hand() -> None:
    """The others' hands emptied: the same action, when selecting and when resolving."""
    from domain.contract import changed

    def blanked(state: State, seat: int) -> State:
        return changed(state, hands=tuple(h if s == seat else () for s, h in enumerate(state.hands)))

    selecting = Play(4, seed=b"mask")
    resolving = base4()
    resolving.select({0: "fire-5", 1: "tonfa-13", 2: "wood-5", 3: "water-6"})
    cases = [(selecting.state, 0), (resolving.state, 2)]  # wood-5 resolves first (letter b at 5)
    for seat in (2, 0, 3):
        resolving.discard(seat)
    assert resolving.to_act == [1]
    cases.append((resolving.state, 1))  # the Tonfa
    for state, seat in cases:
        a = RULES.bots["greedy"](state, seat, random.Random(9))
        b = RULES.bots["greedy"](blanked(state, seat), seat, random.Random(9))
        assert a == b


def test_greedy_smokes_to_dodge_the_highest_pile() -> None:
    weapons = [w for w in WEAPONS if w not in ("shuriken-22", "block-12")]
    deal = make_deal(4, [["fire-4", "torinoko-19", "torinoko-20"], ["fire-1"], ["water-2"], ["wood-3"]], weapons)
    play = Play(4, deal=deal)
    play.select({0: "fire-4", 1: "fire-1", 2: "water-2", 3: "wood-3"})
    play.play(1, 3)
    play.play(2, 0)
    play.play(3, 0)  # wood-3 on water-2
    play.play(0, 0)  # fire-4 on wood-3: seat 0 holds the highest top, 9 points
    assert play.to_act == [0, 1, 2, 3]
    assert RULES.bots["greedy"](play.state, 0, random.Random(1)) == {"type": "smoke", "use": True}


def test_greedy_puts_a_high_card_on_an_opponent() -> None:
    play = base4()
    play.select({0: "fire-5", 1: "water-5", 2: "wood-5", 3: "water-6"})
    play.discard(1)
    play.discard(2)
    play.discard(0)
    action = RULES.bots["greedy"](play.state, 3, random.Random(1))
    assert action == {"type": "play", "target": 0}  # water-6 beats fire-1: seat 0 takes 7


def test_a_resignation_in_team_play_loses_for_the_whole_team() -> None:
    game = Play(4, options={"teams": True})
    game.act(1, {"type": "resign"})
    result = game.table.result
    assert result is not None and result["reason"] == "resignation" and result["resigned"] == 1
    assert result["ranks"] == [1, 3, 1, 3] and result["winners"] == [0, 2] and result["teams"] == [[0, 2], [1, 3]]


@pytest.mark.parametrize("scoring", ["strength", "cards"])
def test_the_table_before_the_deal_shows_no_damage_in_either_scoring(scoring: str) -> None:
    """A replay of step 1 (only ``game_created``): the view scores every seat 0 (with ``cards`` scoring it
    used to fail on the missing damage piles: a 500 from ``GET /replay?step=1``)."""
    seats = [Seat(i, n) for i, n in enumerate("abc")]
    events = create("san-ni-ichi", "g", seats, b"seed", {"scoring": scoring})
    before_the_deal = replay(events[:1])
    assert view(before_the_deal, None)["state"]["scores"] == [0, 0, 0]
