"""Front Line rules (docs/rules/front-line.md: the rulebook and the service's rulings), driven through the engine."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from domain.audit import verify_record
from domain.bots import choose_action
from domain.engine import Seat, Table, create, decide, legal_actions, replay, step, view
from domain.engine import action_space as engine_action_space
from domain.errors import IllegalAction, InvalidOptions, NotYourTurn
from domain.events import Event
from domain.games.front_line import RULES
from domain.games.front_line import state as st
from domain.games.front_line.cards import deck
from tests.support.records import sealed_record
from tests.support.values import strings

GAME = "front-line"


# ---------------------------------------------------------------- helpers


def fixed_deal(*piles: Sequence[str], jokers: bool = False, size: int = 0) -> dict[str, Any]:
    """Piles starting with the given cards, each topped up to ``size`` from the unused shared deck."""
    used = {c for p in piles for c in p}
    spare = [c for c in deck("shared", jokers) if c not in used]
    out = []
    for pile in piles:
        extra = max(0, size - len(pile))
        out.append([*pile, *spare[:extra]])
        spare = spare[extra:]
    return {"piles": out}


class Play:
    """A table plus its full log, advanced one action at a time."""

    def __init__(
        self, n: int = 2, seed: bytes = b"seed", deal: Mapping[str, Any] | None = None, **options: Any
    ) -> None:
        seats = [Seat(i, f"p{i}") for i in range(n)]
        self.events = create(GAME, "g1", seats, seed=seed, options=options, deal=deal)
        self.table = replay(self.events)

    def act(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        new, self.table = step(self.table, seat, action)
        self.events += new
        return new

    def attack(self, seat: int, *attacks: tuple[str, list[str]]) -> list[Event]:
        return self.act(seat, declare(*attacks))

    def refused(self, seat: int, action: Mapping[str, Any], message: str) -> None:
        with pytest.raises(IllegalAction, match=message):
            decide(self.table, seat, action)

    @property
    def state(self) -> st.State:
        return self.table.state

    def view(self, seat: int | None = None) -> dict[str, Any]:
        return view(self.table, seat)["state"]


def declare(*attacks: tuple[str, list[str]]) -> dict[str, Any]:
    return {"type": "attack", "attacks": [{"target": t, "cards": list(cards)} for t, cards in attacks]}


PASS = {"type": "pass"}


def every_card(state: st.State) -> list[str]:
    """Every card the state holds, wherever it is."""
    return [c for piles in (state.front, state.reserve, state.draw, state.captured) for p in piles for c in p] + list(
        state.set_aside
    )


# ---------------------------------------------------------------- the rulebook's sample game

BOTTOM = ["lizard-q", "rock-2", "water-6", "scissors-8", "lizard-7", "water-3"]
TOP = ["paper-7", "lizard-5", "rock-9", "scissors-2", "paper-10", "lizard-k", "joker-water", "scissors-3"]
SAMPLE = fixed_deal(BOTTOM, TOP, jokers=True, size=35)


def sample_after_first_turn() -> Play:
    play = Play(2, deal=SAMPLE, jokers=True)
    play.attack(0, ("paper-7", ["lizard-q"]), ("lizard-5", ["rock-2", "scissors-8"]))
    play.act(1, {"type": "refill", "cards": ["scissors-2", "paper-10"]})
    return play


def test_sample_game_first_turn() -> None:
    play = Play(2, deal=SAMPLE, jokers=True)
    assert play.view()["front"] == [BOTTOM[:3], TOP[:3]]
    assert play.view()["reinforcements"] == [BOTTOM[3:], TOP[3:6]]
    play.refused(
        0,
        declare(("rock-9", ["water-6", "water-3"])),
        r"water-6 \(6\) \+ water-3 \(3\) = 9 does not exceed rock-9, which defends at 9",
    )
    play.refused(
        0, declare(("rock-9", ["water-6", "lizard-7"])), "lizard-7 cannot attack rock-9: lizard does not beat rock"
    )
    play.refused(0, declare(("lizard-5", ["rock-2"])), r"rock-2 \(2\) does not exceed lizard-5")
    new = play.attack(0, ("paper-7", ["lizard-q"]), ("lizard-5", ["rock-2", "scissors-8"]))
    attacked = next(e for e in new if e.type == st.ATTACKED)
    assert [a["target"] for a in attacked.data["attacks"]] == ["paper-7", "lizard-5"]
    state = play.view()
    assert state["captured"] == [["paper-7", "lizard-5"], []]
    assert state["front"] == [BOTTOM[:3], ["rock-9"]]  # attackers stay in place
    assert state["refill"] == {"seat": 1, "count": 2, "from": ["scissors-2", "paper-10", "lizard-k"]}
    assert play.table.to_act == [1]
    assert legal_actions(play.table, 1) == [
        {"type": "refill", "cards": c}
        for c in (["scissors-2", "paper-10"], ["scissors-2", "lizard-k"], ["paper-10", "lizard-k"])
    ]


def test_sample_game_refill_and_the_top_players_options() -> None:
    play = Play(2, deal=SAMPLE, jokers=True)
    play.attack(0, ("paper-7", ["lizard-q"]), ("lizard-5", ["rock-2", "scissors-8"]))
    play.refused(1, {"type": "refill", "cards": ["scissors-2"]}, "move up exactly 2 reinforcement")
    new = play.act(1, {"type": "refill", "cards": ["scissors-2", "paper-10"]})
    refilled = next(e for e in new if e.type == st.FRONT_REFILLED)
    assert refilled.data["drawn"] == ["joker-water", "scissors-3"]
    state = play.view()
    assert state["front"][1] == ["rock-9", "scissors-2", "paper-10"]
    assert state["reinforcements"][1] == ["lizard-k", "joker-water", "scissors-3"]
    assert state["draw_sizes"] == [29, 27] and state["turn"] == 1
    ok = [
        declare(("rock-2", ["paper-10"])),
        declare(("water-6", ["paper-10"])),
        declare(("lizard-q", ["rock-9", "scissors-2", "scissors-3"])),
        declare(("rock-2", ["scissors-2", "joker-water", "lizard-k"])),
        declare(("rock-2", ["scissors-2", "joker-water", "scissors-3"])),
    ]
    for action in ok:
        decide(play.table, 1, action)  # no error
    play.refused(
        1,
        declare(("rock-2", ["paper-10"]), ("water-6", ["paper-10"])),
        "paper-10 is in two attacks: each card joins at most one attack per turn",
    )
    play.refused(
        1,
        declare(("lizard-q", ["rock-9", "scissors-2"])),
        r"rock-9 \(9\) \+ scissors-2 \(2\) = 11 does not exceed lizard-q, which defends at 12",
    )
    play.refused(1, declare(("rock-2", ["scissors-2"])), "scissors does not beat rock")
    play.refused(1, declare(("rock-2", ["scissors-2", "joker-water"])), r"= 2 does not exceed rock-2")
    play.refused(
        1,
        declare(("rock-2", ["scissors-2", "joker-water", "paper-10"])),
        "paper-10 cannot join the joker attack on rock-2: with joker-water the rules reverse",
    )


def test_sample_game_rock_scissors_and_scissors_take_the_queen() -> None:
    play = sample_after_first_turn()
    play.attack(1, ("lizard-q", ["rock-9", "scissors-2", "scissors-3"]))  # 9 + 2 + 3 = 14 > 12
    state = play.view()
    assert state["captured"][1] == ["lizard-q"]
    assert state["front"][0] == ["rock-2", "water-6"]
    assert state["refill"] == {"seat": 0, "count": 1, "from": ["scissors-8", "lizard-7", "water-3"]}


def test_sample_game_joker_attack_captures() -> None:
    play = sample_after_first_turn()
    play.attack(1, ("rock-2", ["scissors-2", "joker-water", "lizard-k"]), ("water-6", ["paper-10"]))
    state = play.view()
    assert state["captured"] == [["paper-7", "lizard-5"], ["rock-2", "water-6"]]
    assert state["last_turn"]["attacks"][0] == {
        "target": "rock-2",
        "owner": 0,
        "joker": True,
        "cards": ["scissors-2", "joker-water", "lizard-k"],
    }
    # seat 0 has 1 front card and 3 reinforcements: it chooses 2 of them
    assert state["refill"] == {"seat": 0, "count": 2, "from": ["scissors-8", "lizard-7", "water-3"]}


# ---------------------------------------------------------------- attack rules


def duel(mine: Sequence[str], theirs: Sequence[str], jokers: bool = True) -> Play:
    """Seat 0 with ``mine`` (3 front, then reinforcements) against seat 1's ``theirs``."""
    return Play(2, deal=fixed_deal(mine, theirs, jokers=jokers), jokers=jokers)


def test_ace_attacks_at_14_and_defends_at_1() -> None:
    play = duel(["rock-a", "scissors-2", "rock-5"], ["scissors-k", "paper-a", "lizard-4"])
    decide(play.table, 0, declare(("scissors-k", ["rock-a"])))  # 14 > 13
    decide(play.table, 0, declare(("paper-a", ["scissors-2"])))  # 2 > 1
    play.refused(
        0,
        declare(("scissors-k", ["scissors-2"])),
        "scissors-2 cannot attack scissors-k: scissors does not beat scissors",
    )
    play.attack(0, ("scissors-k", ["rock-a"]), ("paper-a", ["scissors-2"]), ("lizard-4", ["rock-5"]))
    assert play.view()["captured"][0] == ["scissors-k", "paper-a", "lizard-4"]
    assert play.table.result is not None and play.table.result["reason"] == "elimination"


def test_an_ace_adds_14_to_a_sum() -> None:
    play = duel(["paper-3", "lizard-4", "water-2"], ["rock-k", "rock-q", "water-5"])
    play.refused(0, declare(("rock-k", ["paper-3"])), r"paper-3 \(3\) does not exceed rock-k, which defends at 13")
    play = duel(["paper-3", "lizard-4", "water-2", "paper-a"], ["rock-k", "rock-q", "water-5"])
    decide(play.table, 0, declare(("rock-k", ["paper-3", "paper-a"])))  # 3 + 14 > 13


@pytest.mark.parametrize(
    "attacks, message",
    [
        ([("lizard-5", ["rock-2", "scissors-8"]), ("paper-7", ["scissors-8"])], "scissors-8 is in two attacks"),
        ([("lizard-5", ["scissors-8", "rock-2"])], "scissors-8 is a reinforcement: an attack's first card"),
        ([("lizard-5", ["rock-2", "rock-2"])], "rock-2 is listed twice in the attack on lizard-5"),
        ([("lizard-5", ["rock-2", "scissors-8"]), ("lizard-5", ["lizard-q"])], "lizard-5 is the target of two attacks"),
        ([("water-6", ["lizard-q"])], "water-6 is your own card"),
        ([("scissors-2", ["rock-2"])], "scissors-2 is a reinforcement of seat 1: only front-line cards"),
        ([("paper-a", ["lizard-q"])], "paper-a is not in an opponent's front line"),
        ([("paper-7", ["paper-10"])], "paper-10 is not one of your front-line or reinforcement cards"),
        ([("paper-7", [])], "needs 'cards'"),
        ([("paper-7", ["lizard-q"]), ("lizard-5", ["water-6"])], "water-6 cannot attack lizard-5"),
    ],
)
def test_refused_declarations_name_the_rule_and_the_card(attacks: list[tuple[str, list[str]]], message: str) -> None:
    Play(2, deal=SAMPLE, jokers=True).refused(0, declare(*attacks), message)


@pytest.mark.parametrize(
    "action, message",
    [
        ({"type": "attack"}, "needs field"),
        ({"type": "attack", "attacks": []}, "non-empty list of attacks; to attack nothing, pass"),
        ({"type": "attack", "attacks": "paper-7"}, "non-empty list"),
        ({"type": "attack", "attacks": [{"target": "paper-7"}]}, "each attack is"),
        ({"type": "attack", "attacks": [{"target": 7, "cards": ["lizard-q"]}]}, "a card id, not 7"),
        ({"type": "attack", "attacks": [{"target": "paper-7", "cards": "lizard-q"}]}, "needs 'cards'"),
        ({"type": "pass", "attacks": []}, "does not take field"),
        ({"type": "refill", "cards": []}, "nothing to refill"),
        ({"type": "select"}, "unknown action type 'select'"),
    ],
)
def test_malformed_actions_are_refused(action: dict[str, Any], message: str) -> None:
    Play(2, deal=SAMPLE, jokers=True).refused(0, action, message)


def test_jokers_as_attackers() -> None:
    play = duel(["joker-rock", "scissors-4", "paper-9", "joker-paper", "rock-6"], ["rock-3", "water-2", "paper-5"])
    decide(play.table, 0, declare(("rock-3", ["joker-rock", "scissors-4"])))  # a joker may initiate
    decide(play.table, 0, declare(("rock-3", ["scissors-4", "joker-paper"])))  # the joker's suit never matters
    # two jokers serve two attacks of one turn
    decide(
        play.table,
        0,
        declare(
            ("rock-3", ["scissors-4", "joker-paper"]), ("paper-5", ["joker-rock", "rock-6"]), ("water-2", ["paper-9"])
        ),
    )
    play.refused(0, declare(("rock-3", ["joker-rock"])), r"joker-rock \(0\) does not exceed rock-3")
    play.refused(
        0,
        declare(("rock-3", ["scissors-4", "joker-rock", "joker-paper"])),
        "joker-rock and joker-paper are both in the attack on rock-3: at most one joker per attack",
    )
    play.refused(0, declare(("rock-3", ["paper-9", "joker-rock"])), "paper-9 cannot join the joker attack on rock-3")
    play.refused(
        0,
        declare(("paper-5", ["scissors-4", "joker-rock"])),  # a joker reverses: paper must beat it
        "scissors-4 cannot join the joker attack on paper-5",
    )


def test_each_joker_serves_one_attack_per_turn() -> None:
    """The rulebook's "A Joker can only be used in 1 attack per round" is read per joker card, as its "A card
    can only be used in one attack per round" (a round is the attacker's turn there: the 10 of Paper "can
    not attack both in the same round"); docs/rules/front-line.md, "Rulings and decisions"."""
    # The sample's one Joker gives "the Joker rules for one attack": not for the attack on water-6 as well.
    play = sample_after_first_turn()
    play.refused(
        1,
        declare(("rock-2", ["scissors-2", "joker-water", "lizard-k"]), ("water-6", ["rock-9", "joker-water"])),
        "joker-water is in two attacks: each card joins at most one attack per turn",
    )
    # Two jokers: two joker attacks in one turn, beside an ordinary one; the action space offers them too.
    play = duel(["scissors-4", "rock-6", "paper-9", "joker-rock", "joker-paper"], ["rock-3", "paper-5", "water-2"])
    targets = {t["target"]: t for t in engine_action_space(play.table, 0)["attack"]["targets"]}
    assert targets["rock-3"]["jokers"] == targets["paper-5"]["jokers"] == ["joker-rock", "joker-paper"]
    play.attack(
        0, ("rock-3", ["scissors-4", "joker-rock"]), ("paper-5", ["rock-6", "joker-paper"]), ("water-2", ["paper-9"])
    )
    assert [(a["target"], a["joker"]) for a in play.view()["last_turn"]["attacks"]] == [
        ("rock-3", True),
        ("paper-5", True),
        ("water-2", False),
    ]
    assert play.view()["captured"][0] == ["rock-3", "paper-5", "water-2"]


def test_jokers_as_targets_defend_at_zero_against_weaker_suits_only() -> None:
    play = duel(["rock-2", "paper-9", "joker-lizard", "scissors-3"], ["joker-water", "rock-4", "lizard-5"])
    decide(play.table, 0, declare(("joker-water", ["rock-2"])))  # water beats rock; 2 > 0
    decide(play.table, 0, declare(("joker-water", ["rock-2", "scissors-3"])))
    play.refused(
        0,
        declare(("joker-water", ["paper-9"])),
        "paper-9 cannot attack joker-water: a joker can only be attacked by suits its suit beats",
    )
    # a joker in the attack does not reverse the rule back
    decide(play.table, 0, declare(("joker-water", ["joker-lizard", "rock-2"])))
    play.refused(0, declare(("joker-water", ["joker-lizard", "paper-9"])), "paper-9 cannot attack joker-water")


def three_players() -> Play:
    return Play(
        3,
        deal=fixed_deal(
            ["rock-k", "paper-k", "water-2"],
            ["scissors-5", "paper-2", "water-3", "lizard-a", "rock-3"],
            ["scissors-2", "lizard-2", "paper-3", "rock-4", "water-a"],
            size=12,
        ),
    )


def test_attacks_on_two_opponents_in_one_turn_and_refills_from_the_attackers_left() -> None:
    play = three_players()
    play.attack(0, ("lizard-2", ["rock-k"]), ("water-3", ["paper-k"]))
    assert play.view()["captured"] == [["lizard-2", "water-3"], [], []]
    assert play.view()["refills_pending"] == [1, 2]
    assert play.table.to_act == [1]
    with pytest.raises(NotYourTurn):
        decide(play.table, 2, {"type": "refill", "cards": ["rock-4"]})
    play.refused(1, PASS, "seat 1 lost cards and must first choose which reinforcements move up")
    play.refused(1, {"type": "refill", "cards": ["rock-4"]}, "rock-4 is not one of your reinforcements")
    play.refused(1, {"type": "refill", "cards": ["lizard-a", "rock-3"]}, "move up exactly 1 reinforcement")
    play.refused(1, {"type": "refill", "cards": ["rock-3", "rock-3"]}, "rock-3 is listed twice")
    play.act(1, {"type": "refill", "cards": ["rock-3"]})
    assert play.table.to_act == [2]
    play.act(2, {"type": "refill", "cards": ["water-a"]})
    state = play.view()
    assert state["front"][1:] == [["scissors-5", "paper-2", "rock-3"], ["scissors-2", "paper-3", "water-a"]]
    assert [len(r) for r in state["reinforcements"]] == [3, 3, 3]
    assert state["draw_sizes"] == [6, 5, 5]
    assert state["turn"] == 1 and play.table.to_act == [1]


def test_refills_go_in_turn_order_from_the_attackers_left() -> None:
    play = Play(
        4,
        deal=fixed_deal(
            ["rock-2", "paper-3", "paper-4", "paper-5", "paper-6", "paper-7"],
            ["lizard-2", "lizard-3", "lizard-4", "lizard-5", "lizard-6", "lizard-7"],
            ["rock-k", "paper-k", "water-k", "water-2", "water-3", "water-4"],
            ["scissors-2", "scissors-3", "scissors-4", "scissors-5", "scissors-6", "scissors-7"],
            size=8,
        ),
    )
    play.act(0, PASS)
    play.act(1, PASS)
    play.attack(2, ("rock-2", ["paper-k"]), ("lizard-2", ["rock-k"]), ("scissors-2", ["water-k"]))
    assert play.view()["refills_pending"] == [3, 0, 1]  # seat 2 attacked: seat 3 first, then 0, then 1
    for seat, up in ((3, "scissors-5"), (0, "paper-5"), (1, "lizard-5")):
        assert play.table.to_act == [seat] and play.view()["refill"]["seat"] == seat
        play.act(seat, {"type": "refill", "cards": [up]})
    assert play.view()["turn"] == 3 and play.table.to_act == [3]


def test_refills_are_automatic_without_a_choice_and_gaps_stay_when_the_draw_pile_is_empty() -> None:
    # seat 1: 3 front, 2 reinforcements, no draw pile; it loses 2 cards: both reinforcements move up
    play = duel(["rock-k", "paper-k", "water-2"], ["scissors-5", "water-3", "lizard-4", "paper-2", "rock-3"])
    new = play.attack(0, ("scissors-5", ["rock-k"]), ("water-3", ["paper-k"]))
    refilled = [e.data for e in new if e.type == st.FRONT_REFILLED]
    assert refilled == [
        {"seat": 1, "moved": ["paper-2", "rock-3"], "drawn": [], "chosen": False, "draw_size": 0, "out": False}
    ]
    assert play.table.to_act == [1]  # the turn passed on at once
    play.act(1, PASS)
    play.attack(0, ("lizard-4", ["rock-k"]))
    assert play.view()["front"][1] == ["paper-2", "rock-3"]  # a gap stays
    assert play.view()["reinforcements"][1] == []


def test_the_end_by_elimination_skips_seats_that_are_out() -> None:
    play = Play(3, deal=fixed_deal(["rock-k", "paper-k", "water-k"], ["scissors-5"], ["lizard-2", "water-3"]))
    new = play.attack(0, ("scissors-5", ["rock-k"]))
    assert [e.data["out"] for e in new if e.type == st.FRONT_REFILLED] == [True]
    assert play.view()["out"] == [1]
    assert play.table.to_act == [2]  # seat 1 is skipped
    play.act(2, PASS)
    play.refused(0, declare(("scissors-5", ["rock-k"])), "scissors-5 is not in an opponent's front line")
    new = play.attack(0, ("lizard-2", ["rock-k"]), ("water-3", ["paper-k"]))
    assert new[-1].type == "game_ended"
    assert play.table.result == {
        "scores": [3, 0, 0],
        "ranks": [1, 2, 2],
        "winners": [0],
        "reason": "elimination",
        "turns": 3,
    }
    assert play.view()["out"] == [1, 2] and play.view()["turn"] is None


def test_the_end_by_a_full_cycle_of_passes() -> None:
    play = Play(2)
    play.act(0, PASS)
    assert play.view()["passes"] == 1 and play.table.result is None
    play.act(1, PASS)
    assert play.table.result == {"scores": [0, 0], "ranks": [1, 1], "winners": [0, 1], "reason": "passes", "turns": 2}


def test_an_attack_restarts_the_cycle_of_passes() -> None:
    play = Play(
        3,
        deal=fixed_deal(
            ["rock-k", "paper-k", "water-2"],
            ["scissors-5", "paper-2", "water-3"],
            ["scissors-2", "lizard-2", "paper-3"],
        ),
    )
    play.act(0, PASS)
    play.act(1, PASS)
    play.attack(2, ("water-2", ["paper-3"]))
    assert play.view()["passes"] == 0
    assert play.view()["last_turn"] == {
        "seat": 2,
        "passed": False,
        "attacks": [{"target": "water-2", "owner": 0, "cards": ["paper-3"], "joker": False}],
    }
    play.act(0, PASS)
    play.act(1, PASS)
    assert play.table.result is None
    play.act(2, PASS)
    assert play.table.result is not None
    assert play.table.result["reason"] == "passes" and play.table.result["winners"] == [2]
    assert play.table.result["ranks"] == [2, 2, 1]


# ---------------------------------------------------------------- setup, options and fixed deals


@pytest.mark.parametrize(
    "n, jokers, each, aside",
    [
        (2, False, 32, 1),
        (3, False, 21, 2),
        (4, False, 16, 1),
        (2, True, 35, 0),
        (3, True, 23, 1),
        (4, True, 17, 2),
    ],
)
def test_a_shared_deck_is_dealt_evenly_and_the_rest_set_aside(n: int, jokers: bool, each: int, aside: int) -> None:
    play = Play(n, jokers=jokers)
    state = play.view()
    assert [len(f) for f in state["front"]] == [3] * n
    assert [len(r) for r in state["reinforcements"]] == [3] * n
    assert state["draw_sizes"] == [each - 6] * n
    assert state["set_aside"] == aside
    assert sorted(every_card(play.state)) == sorted(deck("shared", jokers))
    assert Play(n, jokers=jokers).state == play.state  # same seed, same deal
    assert Play(n, seed=b"other", jokers=jokers).state != play.state


def test_per_player_decks_carry_the_owner_in_their_ids() -> None:
    play = Play(3, deck="per-player", jokers=True)
    state = play.view()
    assert state["draw_sizes"] == [64, 64, 64] and state["set_aside"] == 0
    for seat in range(3):
        mine = [*state["front"][seat], *state["reinforcements"][seat], *play.state.draw[seat]]
        assert sorted(mine) == sorted(deck("per-player", True, seat))
        assert all(c.startswith(f"s{seat}:") for c in mine)
    target, foreign = state["front"][1][:2]
    play.refused(0, declare((target, [foreign])), f"{foreign} is not one of your front-line or reinforcement cards")
    play.refused(0, declare((target, [target[3:]])), f"{target[3:]} is not one of your front-line")


def test_a_fixed_deal_sets_aside_what_it_does_not_deal() -> None:
    play = Play(2, deal={"piles": [["rock-a", "paper-2"], ["lizard-3"]]})
    state = play.view()
    assert state["front"] == [["rock-a", "paper-2"], ["lizard-3"]]
    assert state["reinforcements"] == [[], []] and state["draw_sizes"] == [0, 0]
    assert state["set_aside"] == 62
    per = Play(2, deal={"piles": [["s0:rock-a"], ["s1:rock-a"]]}, deck="per-player")
    assert len(per.state.set_aside) == 2 * 64


@pytest.mark.parametrize(
    "deal, options, message",
    [
        ({"piles": [["rock-a"]]}, {}, "list of 2 piles"),
        ({"piles": [["rock-a"], []]}, {}, "pile of seat 1 must be a non-empty list"),
        ({"piles": [["rock-a"], "paper-2"]}, {}, "pile of seat 1 must be a non-empty list"),
        ({"piles": [["rock-a"], [2]]}, {}, "pile of seat 1 must be a non-empty list"),
        ({"piles": [["rock-a"], ["rock-a"]]}, {}, "rock-a is dealt twice"),
        ({"piles": [["rock-a", "rock-a"], ["paper-2"]]}, {}, "rock-a is dealt twice"),
        ({"piles": [["rock-1"], ["paper-2"]]}, {}, "rock-1 is not a card of the shared deck"),
        ({"piles": [["joker-water"], ["paper-2"]]}, {}, "joker-water is a joker: jokers need option jokers=true"),
        ({"piles": [["s0:rock-a"], ["paper-2"]]}, {}, "s0:rock-a is not a card of the shared deck"),
        ({"piles": [["s1:rock-a"], ["s1:paper-2"]]}, {"deck": "per-player"}, "s1:rock-a is not a card of seat 0's"),
        ({"piles": [["rock-a"], ["paper-2"]]}, {"deck": "per-player"}, "rock-a is not a card of seat 0's own deck"),
        ({"piles": [["rock-a"], ["paper-2"]], "hands": []}, {}, "unknown: hands"),
    ],
)
def test_bad_fixed_deals_are_refused(deal: dict[str, Any], options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOptions, match=message):
        Play(2, deal=deal, **options)


@pytest.mark.parametrize("options", [{"jokers": "yes"}, {"jokers": 1}, {"deck": "double"}, {"decks": "shared"}])
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        Play(2, **options)


def test_player_counts() -> None:
    for n in (1, 5):
        with pytest.raises(InvalidOptions):
            Play(n)


# ---------------------------------------------------------------- views and hidden information


def hidden_cards(state: st.State) -> set[str]:
    return {c for d in state.draw for c in d} | set(state.set_aside)


def test_draw_piles_and_set_aside_cards_are_hidden_from_everyone_while_the_game_runs() -> None:
    play = Play(4, jokers=True)
    hidden = hidden_cards(play.state)
    assert len(hidden) == 4 * 11 + 2
    rnd = random.Random(3)
    for _ in range(12):
        seat = play.table.to_act[0]
        play.act(seat, RULES.sample_action(play.state, seat, rnd))
    hidden = hidden_cards(play.state)
    for viewer in (None, 0, 1, 2, 3):
        assert not set(strings(view(play.table, viewer))) & hidden
        assert not set(strings([e.visible_data(viewer, False) for e in play.events])) & hidden
        assert not set(strings(RULES.action_space(play.state, 0 if viewer is None else viewer))) & hidden
    shown = play.view(1)
    assert shown == play.view(None)  # nothing on the table is private
    assert "draw_piles" not in shown and "set_aside_cards" not in shown
    assert set(shown) >= {
        "front",
        "reinforcements",
        "captured",
        "draw_sizes",
        "turn",
        "out",
        "refill",
        "last_turn",
        "set_aside",
        "scores",
        "passes",
    }


def test_everything_is_shown_once_the_game_is_over() -> None:
    play = Play(4, jokers=True)
    for seat in range(4):
        play.act(seat, PASS)
    assert play.table.finished
    state = play.view(0)
    assert state["draw_piles"] == [list(d) for d in play.state.draw]
    assert len(state["set_aside_cards"]) == 2
    assert state["turn"] is None


# ---------------------------------------------------------------- listed actions, sampler, bots


def test_legal_actions_is_a_short_list_of_legal_actions() -> None:
    play = sample_after_first_turn()
    listed = legal_actions(play.table, 1)
    assert listed[0] == PASS and len(listed) == 7
    assert declare(("lizard-q", ["rock-9", "scissors-2", "scissors-3"]), ("rock-2", ["paper-10"])) in listed
    for action in listed:
        decide(play.table, 1, action)
    assert legal_actions(play.table, 0) == []
    assert engine_action_space(play.table, 0) == {"actions": []}  # the engine answers for seats not to act


def test_greedy_captures_the_most_cards() -> None:
    play = sample_after_first_turn()
    action = RULES.bots["greedy"](play.state, 1, random.Random(1))
    assert action["type"] == "attack" and len(action["attacks"]) == 2
    decide(play.table, 1, action)


def test_greedy_prefers_the_capture_that_leaves_its_front_line_least_exposed() -> None:
    # rock-k can take one card; only scissors-5 threatens lizard-2 (scissors beats lizard, 5 > 2)
    play = duel(["rock-k", "lizard-2"], ["lizard-5", "scissors-5", "lizard-3"], jokers=False)
    for seed in range(8):
        assert RULES.bots["greedy"](play.state, 0, random.Random(seed)) == declare(("scissors-5", ["rock-k"]))


def test_greedy_passes_only_when_nothing_can_be_captured() -> None:
    play = duel(["rock-2", "paper-2", "water-2"], ["paper-k", "scissors-k", "lizard-k"], jokers=False)
    assert RULES.bots["greedy"](play.state, 0, random.Random(1)) == PASS


def test_bots_always_return_a_legal_action() -> None:
    rnd = random.Random(5)
    play = Play(3, seed=b"bots", jokers=True)
    levels = ["greedy", "random", "greedy"]
    while not play.table.finished:
        seat = play.table.to_act[0]
        play.act(seat, choose_action(play.table, seat, levels[seat], rnd))  # step() raises on an illegal action


# ---------------------------------------------------------------- properties over random games


def check_piles(state: st.State) -> None:
    """At most 3 front and 3 reinforcements; between turns a gap only where nothing is left to fill it."""
    assert all(len(f) <= 3 for f in state.front) and all(len(r) <= 3 for r in state.reserve)
    if st.phase(state) != st.ATTACK:
        return
    for seat in range(state.n_seats):
        assert len(state.front[seat]) == 3 or not state.reserve[seat]
        assert len(state.reserve[seat]) == 3 or not state.draw[seat]
        assert (seat in state.out) == (not state.front[seat])


def pick(state: st.State, seat: int, rnd: random.Random, eager: bool) -> dict[str, Any]:
    """A sampled action; an ``eager`` player resamples a pass up to 20 times (games run to the end)."""
    action = RULES.sample_action(state, seat, rnd)
    for _ in range(20 if eager else 0):
        if action != PASS:
            break
        action = RULES.sample_action(state, seat, rnd)
    return action


def random_game(
    n: int, seed: bytes, rnd: random.Random, options: Mapping[str, Any], check: bool = True, eager: bool = False
) -> tuple[Table, list[Event]]:
    seats = [Seat(i, f"p{i}") for i in range(n)]
    events = create(GAME, "rg", seats, seed=seed, options=dict(options))
    table = replay(events)
    cards = sorted(every_card(table.state))
    for _ in range(3000):
        if table.finished:
            return table, events
        seat = table.to_act[0]
        new, table = step(table, seat, pick(table.state, seat, rnd, eager))
        events += new
        if check:
            assert sorted(every_card(table.state)) == cards
            check_piles(table.state)
    raise AssertionError("a random game did not finish")


OPTIONS = [{}, {"jokers": True}, {"deck": "per-player"}, {"deck": "per-player", "jokers": True}]


@settings(max_examples=80, deadline=None)
@given(
    n=st_.integers(2, 4),
    options=st_.sampled_from(OPTIONS),
    seed=st_.binary(min_size=1, max_size=8),
    moves=st_.integers(0, 2**32),
    eager=st_.booleans(),
)
def test_random_games_end_conserve_cards_and_replay(
    n: int, options: dict[str, Any], seed: bytes, moves: int, eager: bool
) -> None:
    table, events = random_game(n, seed, random.Random(moves), options, eager=eager)
    result = table.result
    assert result is not None and result["scores"] == [len(c) for c in table.state.captured]
    assert events[-1].type == "game_ended"
    assert replay(events) == table
    stored = [Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in events]
    assert replay(stored) == table
    assert all(not table.state.front[s] and not table.state.reserve[s] for s in table.state.out)
    if result["reason"] == "passes":
        assert table.state.passes == n - len(table.state.out)
    else:
        assert len(table.state.out) >= n - 1


# ---------------------------------------------------------------- audit


@pytest.mark.parametrize("options", OPTIONS)
def test_a_finished_game_record_verifies(options: dict[str, Any]) -> None:
    seed = b"audit-seed"
    _table, events = random_game(3, seed, random.Random(2), options, check=False)
    report = verify_record(sealed_record(events, seed))
    assert report["verified"], report["checks"]


def test_a_fixed_deal_record_verifies() -> None:
    play = sample_after_first_turn()
    play.act(1, PASS)
    play.act(0, PASS)
    report = verify_record(sealed_record(play.events, b"seed"))
    assert report["verified"], report["checks"]
