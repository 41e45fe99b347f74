"""Kiri-ai: The Duel (docs/rules/kiri-ai.md), driven through the generic engine."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.audit import verify_record
from domain.engine import (
    CHOICE_COMMITTED,
    CHOICES_REVEALED,
    GAME_ENDED,
    Seat,
    Table,
    create,
    decide,
    legal_actions,
    replay,
    view,
)
from domain.errors import IllegalAction, InvalidOptions
from domain.events import Event
from domain.games.kiri_ai import FACES, RULES, Samurai, resolve_step
from tests.support.records import SALTS, sealed_record

GAME = "kiri-ai"
SEATS = [Seat(0, "red"), Seat(1, "blue")]
DEAL = {"specials": ["kesa", "counterattack"]}

# Independent of the module: attack -> stance -> distances at which it hits.
HITS = {
    "high-strike": {"heaven": {2}, "earth": set()},
    "low-strike": {"heaven": set(), "earth": {1}},
    "balanced-strike": {"heaven": {0}, "earth": {0}},
    "kesa": {"heaven": {0, 1}, "earth": set()},
    "zan-tetsu": {"heaven": set(), "earth": {2, 3}},
}
SPECIAL_NAMES = ("kesa", "zan-tetsu", "counterattack")
REGULAR = ["approach-retreat", "charge-change-stance", "high-strike", "low-strike", "balanced-strike"]


# ---------------------------------------------------------------- helpers


def new_game(
    deal: Mapping[str, Any] | None = DEAL, options: Mapping[str, Any] | None = None, seed: bytes = b"seed"
) -> tuple[Table, list[Event]]:
    events = create(GAME, "g1", SEATS, seed=seed, options=options, deal=deal)
    return replay(events), events


def placed(
    table: Table, red: tuple[int, str], blue: tuple[int, str], injured: tuple[bool, bool] = (False, False)
) -> Table:
    """The table with the samurai put on given spaces and stances (a built state)."""
    samurai = (Samurai(red[0], red[1], injured[0]), Samurai(blue[0], blue[1], injured[1]))
    return replace(table, state=replace(table.state, samurai=samurai))


def program(first: str, second: str) -> dict[str, Any]:
    return {"type": "program", "first": first, "second": second}


def setup(space: int, stance: str) -> dict[str, Any]:
    return {"type": "setup", "space": space, "stance": stance}


def play_round(table: Table, red: Sequence[str], blue: Sequence[str]) -> tuple[Table, list[Event]]:
    """Both seats program (red first); the table after, and the events of both decisions."""
    ev = decide(table, 0, program(*red), salts=["r1", "r2"])
    table = replay(ev, table)
    ev2 = decide(table, 1, program(*blue), salts=["b1", "b2"])
    return replay(ev2, table), ev + ev2


def part_events(events: Sequence[Event], part: int) -> list[Event]:
    """The game events that follow the reveal of ``part``."""
    out: list[Event] = []
    inside = False
    for ev in events:
        if ev.type == CHOICES_REVEALED:
            inside = ev.data["part"] == part
        elif inside and ev.type != GAME_ENDED:
            out.append(ev)
    return out


def of_type(events: Sequence[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.type == kind]


def spaces(table: Table) -> tuple[int | None, int | None]:
    return table.state.samurai[0].space, table.state.samurai[1].space


# ---------------------------------------------------------------- setup and options


def test_standard_setup_positions_and_private_specials() -> None:
    table, events = new_game(deal=None, seed=b"deal-me")
    dealt = events[-1]
    red, blue = dealt.private["0"]["special"], dealt.private["1"]["special"]
    third = dealt.private["hidden"]["set_aside"]
    assert sorted([red, blue, third]) == sorted(SPECIAL_NAMES)
    assert dealt.visible_data(1, False).get("private") == {"1": {"special": blue}}
    assert dealt.visible_data(None, False).get("private") is None
    s = view(table, 0)["state"]
    assert s["samurai"] == [
        {"space": 5, "stance": "heaven", "injured": False, "defeated": False},
        {"space": 0, "stance": "heaven", "injured": False, "defeated": False},
    ]
    assert s["hand"] == [*REGULAR, red]
    assert blue not in json.dumps(view(table, 0)) and third not in json.dumps(view(table, 0))
    assert red not in json.dumps(view(table, 1)) and view(table, None)["state"]["hand"] is None
    assert s["round"] == 1 and s["battlefield"] == "standard" and s["spaces"] == 6
    assert view(table, 0)["phase"] == "program" and table.to_act == [0, 1]


def test_specials_come_from_the_seeded_generator() -> None:
    deals = {new_game(deal=None, seed=bytes([i]))[1][-1].private["0"]["special"] for i in range(30)}
    assert len(deals) == 3
    assert new_game(deal=None, seed=b"x")[1][-1] == new_game(deal=None, seed=b"x")[1][-1]


@pytest.mark.parametrize(
    "deal",
    [
        {"specials": ["kesa", "kesa"]},
        {"specials": ["kesa"]},
        {"specials": ["kesa", "shuriken"]},
        {"hands": []},
        {"specials": "kesa"},
    ],
)
def test_bad_fixed_deals_are_refused(deal: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        new_game(deal=deal)


@pytest.mark.parametrize(
    "options", [{"battlefield": "huge"}, {"max_rounds": 0}, {"max_rounds": True}, {"max_rounds": "5"}, {"rounds": 3}]
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        new_game(options=options)


def test_catalogue() -> None:
    assert (RULES.id, RULES.name, RULES.rules_version) == ("kiri-ai", "Kiri-ai: The Duel", "1")
    assert (RULES.min_players, RULES.max_players) == (2, 2)
    assert RULES.options["battlefield"].default == "standard"
    assert RULES.options["max_rounds"].default == 50
    assert "greedy" in RULES.bots


# ---------------------------------------------------------------- movement


def test_rulebook_example_1_two_heaven_charges_three_apart_end_one_apart() -> None:
    table, _ = new_game()
    table, _ = play_round(table, ("approach", "balanced-strike"), ("approach", "balanced-strike"))
    assert spaces(table) == (4, 1)
    table, events = play_round(table, ("charge", "high-strike"), ("charge", "high-strike"))
    moves = of_type(part_events(events, 0), "moved")
    assert moves == [
        {"seat": 0, "action": "charge", "from": 4, "to": 3},
        {"seat": 1, "action": "charge", "from": 1, "to": 2},
    ]
    assert spaces(table) == (3, 2)


def test_rulebook_example_2_heaven_approach_first_then_earth_charge_stops_without_passing() -> None:
    table, _ = new_game()
    table = placed(table, red=(3, "heaven"), blue=(1, "earth"))
    table, events = play_round(table, ("approach", "low-strike"), ("charge", "low-strike"))
    moves = of_type(part_events(events, 0), "moved")
    assert moves == [
        {"seat": 0, "action": "approach", "from": 3, "to": 2},
        {"seat": 1, "action": "charge", "from": 1, "to": 2},
    ]
    # Had the charge gone first, both would stand on 3: the order matters.
    table, _ = new_game()
    table = placed(table, red=(3, "earth"), blue=(1, "heaven"))
    table, events = play_round(table, ("charge", "low-strike"), ("approach", "low-strike"))
    assert [m["to"] for m in of_type(part_events(events, 0), "moved")] == [2, 2]
    assert of_type(part_events(events, 0), "moved")[0]["seat"] == 1


@pytest.mark.parametrize(
    "red, blue, red_face, blue_face, expected",
    [
        ((1, "heaven"), (0, "heaven"), "approach", "approach", (1, 0)),  # would swap: both stay
        ((2, "heaven"), (0, "heaven"), "charge", "charge", (1, 1)),  # meet in the middle
        ((4, "heaven"), (0, "heaven"), "charge", "charge", (2, 2)),
        ((5, "heaven"), (0, "heaven"), "retreat", "retreat", (5, 0)),  # each edge holds its samurai
        ((5, "heaven"), (1, "heaven"), "retreat", "retreat", (5, 0)),
        ((3, "heaven"), (3, "heaven"), "retreat", "retreat", (4, 2)),  # shared space: back home
        ((3, "heaven"), (3, "heaven"), "approach", "charge", (3, 3)),  # no move without passing
        ((3, "heaven"), (1, "heaven"), "charge", "approach", (1, 1)),  # charge first, approach stays
        ((3, "heaven"), (2, "heaven"), "approach", "retreat", (2, 1)),  # same key, no crossing
        ((1, "earth"), (0, "heaven"), "approach", "retreat", (0, 0)),  # retreat blocked at the edge
        ((4, "earth"), (0, "earth"), "charge", "change-stance", (2, 0)),
    ],
)
def test_movement_cases(
    red: tuple[int, str], blue: tuple[int, str], red_face: str, blue_face: str, expected: tuple[int, int]
) -> None:
    table, _ = new_game()
    table = placed(table, red, blue)
    table, _ = play_round(table, (red_face, "balanced-strike"), (blue_face, "balanced-strike"))
    assert spaces(table) == expected


def test_change_stance_flips_and_keeps_the_space() -> None:
    table, _ = new_game()
    table, events = play_round(table, ("change-stance", "approach"), ("change-stance", "retreat"))
    assert of_type(part_events(events, 0), "stance_changed") == [
        {"seat": 0, "stance": "earth", "by": "change-stance"},
        {"seat": 1, "stance": "earth", "by": "change-stance"},
    ]
    assert [s.stance for s in table.state.samurai] == ["earth", "earth"] and spaces(table) == (4, 0)


def test_movement_events_follow_the_order_of_resolution() -> None:
    table, _ = new_game()
    table = placed(table, red=(5, "heaven"), blue=(0, "earth"))
    table, events = play_round(table, ("change-stance", "low-strike"), ("charge", "low-strike"))
    step = [(e.type, e.data["seat"]) for e in part_events(events, 0) if e.type != "step_started"]
    assert step == [("stance_changed", 0), ("moved", 1)]


# ---------------------------------------------------------------- attacks


@pytest.mark.parametrize("attacker", [0, 1])
@pytest.mark.parametrize("distance", range(5))
@pytest.mark.parametrize("stance", ["heaven", "earth"])
@pytest.mark.parametrize("attack", list(HITS))
def test_hit_table(attack: str, stance: str, distance: int, attacker: int) -> None:
    special = attack in SPECIAL_NAMES
    other_special = next(s for s in SPECIAL_NAMES if s != attack) if special else "counterattack"
    specials = [attack, other_special] if special else ["kesa", "counterattack"]
    table, _ = new_game(deal={"specials": specials if attacker == 0 else specials[::-1]})
    stances = (stance, "heaven") if attacker == 0 else ("heaven", stance)
    table = placed(table, red=(distance, stances[0]), blue=(0, stances[1]))
    face = "special" if special else attack
    plays = {attacker: (face, "approach"), 1 - attacker: ("change-stance", "retreat")}
    table, events = play_round(table, plays[0], plays[1])
    step = part_events(events, 0)
    [attacked] = of_type(step, "attacked")
    hits = distance in HITS[attack][stance]
    assert attacked == {
        "seat": attacker,
        "attack": attack,
        "stance": stance,
        "distance": distance,
        "result": "hit" if hits else "miss",
        "target": 1 - attacker,
    }
    assert of_type(step, "injured") == ([{"seat": 1 - attacker, "by": attacker}] if hits else [])
    switched = {"kesa": "earth", "zan-tetsu": "heaven"}.get(attack)
    after = [e for e in step if e.type == "stance_changed" and e.data["seat"] == attacker]
    if switched and switched != stance:
        assert [e.data for e in after] == [{"seat": attacker, "stance": switched, "by": attack}]
    else:
        assert after == []


@pytest.mark.parametrize(
    "attack, stance, distance",
    [
        ("high-strike", "heaven", 2),
        ("low-strike", "earth", 1),
        ("balanced-strike", "earth", 0),
        ("kesa", "heaven", 1),
        ("zan-tetsu", "earth", 3),
    ],
)
def test_counterattack_turns_a_landing_attack_against_its_author(attack: str, stance: str, distance: int) -> None:
    special = attack in ("kesa", "zan-tetsu")
    table, _ = new_game(deal={"specials": [attack if special else "kesa", "counterattack"]})
    table = placed(table, red=(distance, stance), blue=(0, "earth"))
    face = "special" if special else attack
    table, events = play_round(table, (face, "approach"), ("special", "retreat"))
    step = part_events(events, 0)
    results = {a["seat"]: a["result"] for a in of_type(step, "attacked")}
    assert results == {0: "countered", 1: "hit"}
    assert of_type(step, "injured") == [{"seat": 0, "by": 1}]
    assert table.state.specials_used == (attack if special else None, "counterattack")


def test_counterattack_against_a_miss_or_a_move_does_nothing() -> None:
    table, _ = new_game()
    table = placed(table, red=(3, "heaven"), blue=(0, "heaven"))
    table, events = play_round(table, ("high-strike", "change-stance"), ("special", "retreat"))
    step = part_events(events, 0)
    assert {a["seat"]: a["result"] for a in of_type(step, "attacked")} == {0: "miss", 1: "miss"}
    assert of_type(step, "injured") == []
    assert table.state.set_aside == ("charge-change-stance", "approach-retreat")
    assert view(table, 0)["state"]["specials_used"] == [None, "counterattack"]
    table, _ = new_game()
    table, events = play_round(table, ("approach", "change-stance"), ("special", "retreat"))
    assert of_type(part_events(events, 0), "attacked")[0]["result"] == "miss"
    assert not table.state.samurai[0].injured and not table.state.samurai[1].injured


@pytest.mark.parametrize(
    "red, blue, red_face, blue_face, specials",
    [
        ((2, "heaven"), (0, "earth"), "high-strike", "special", ["kesa", "zan-tetsu"]),
        ((0, "heaven"), (0, "earth"), "balanced-strike", "balanced-strike", ["kesa", "zan-tetsu"]),
        ((1, "heaven"), (0, "earth"), "special", "low-strike", ["kesa", "zan-tetsu"]),  # kesa vs low
    ],
)
def test_two_hits_in_one_step_cancel(
    red: tuple[int, str], blue: tuple[int, str], red_face: str, blue_face: str, specials: list[str]
) -> None:
    table, _ = new_game(deal={"specials": specials})
    table = placed(table, red, blue)
    table, events = play_round(table, (red_face, "retreat"), (blue_face, "retreat"))
    step = part_events(events, 0)
    assert [a["result"] for a in of_type(step, "attacked")] == ["cancelled", "cancelled"]
    assert of_type(step, "injured") == [] and of_type(step, "defeated") == []


def test_kesa_switches_to_earth_even_on_a_miss_and_zan_tetsu_to_heaven() -> None:
    table, _ = new_game(deal={"specials": ["kesa", "zan-tetsu"]})
    table = placed(table, red=(5, "heaven"), blue=(0, "earth"))
    table, events = play_round(table, ("special", "retreat"), ("special", "retreat"))
    assert [a["result"] for a in of_type(events, "attacked")] == ["miss", "miss"]
    assert [s.stance for s in table.state.samurai] == ["earth", "heaven"]


# ---------------------------------------------------------------- damage and the end


def test_defeat_mid_round_ends_the_game_and_leaves_the_second_part_sealed() -> None:
    table, _ = new_game()
    table = placed(table, red=(2, "heaven"), blue=(0, "heaven"), injured=(False, True))
    table, events = play_round(table, ("high-strike", "approach"), ("change-stance", "low-strike"))
    reveals = [e.data["part"] for e in events if e.type == CHOICES_REVEALED]
    assert reveals == [0]
    assert [e.type for e in events][-3:] == ["attacked", "defeated", GAME_ENDED]
    assert "round_ended" not in [e.type for e in events]
    public = json.dumps([e.data for e in events])
    assert "low-strike" not in public and "approach" not in public
    committed = [e for e in events if e.type == CHOICE_COMMITTED]
    assert [len(e.data["commitments"]) for e in committed] == [2, 2]
    assert table.finished and table.result == {
        "scores": [1, 0],
        "ranks": [1, 2],
        "winners": [0],
        "reason": "defeat",
        "rounds": 1,
    }
    state = view(table, 1)["state"]
    assert state["samurai"][1]["defeated"] and state["step"] == 1
    assert state["set_aside_special"] == "zan-tetsu" and state["hands"][0] == [
        "approach-retreat",
        "charge-change-stance",
        "low-strike",
        "balanced-strike",
        "kesa",
    ]


def test_defeat_in_the_second_step() -> None:
    table, _ = new_game()
    table = placed(table, red=(3, "heaven"), blue=(0, "heaven"), injured=(False, True))
    table, events = play_round(table, ("approach", "high-strike"), ("high-strike", "retreat"))
    assert of_type(part_events(events, 0), "injured") == [{"seat": 0, "by": 1}]
    assert of_type(part_events(events, 1), "defeated") == [{"seat": 1, "by": 0}] and table.finished
    assert [e.data["part"] for e in events if e.type == CHOICES_REVEALED] == [0, 1]
    assert [e.type for e in events][-2:] == ["defeated", GAME_ENDED]
    assert table.result["winners"] == [0]
    final = view(table, None)["state"]  # both steps were played: neither card is still in hand
    assert final["hand_sizes"] == [4, 4]
    assert "approach-retreat" not in final["hands"][0] and "high-strike" not in final["hands"][0]
    assert "high-strike" not in final["hands"][1] and "approach-retreat" not in final["hands"][1]


def test_a_hit_injures_and_the_game_goes_on() -> None:
    table, _ = new_game()
    table = placed(table, red=(2, "heaven"), blue=(0, "heaven"))
    table, _events = play_round(table, ("high-strike", "retreat"), ("change-stance", "low-strike"))
    assert not table.finished and table.state.samurai[1].injured
    assert view(table, 0)["state"]["samurai"][1]["injured"]


def test_max_rounds_makes_a_draw() -> None:
    table, _ = new_game(options={"max_rounds": 2})
    table, _ = play_round(table, ("retreat", "change-stance"), ("retreat", "change-stance"))
    assert not table.finished and table.state.round == 2
    table, events = play_round(table, ("approach", "high-strike"), ("retreat", "low-strike"))
    assert table.finished and events[-1].type == GAME_ENDED
    assert table.result == {"scores": [0, 0], "ranks": [1, 1], "winners": [0, 1], "reason": "max_rounds", "rounds": 2}


# ---------------------------------------------------------------- cards


def test_set_aside_cycle_over_three_rounds() -> None:
    table, _ = new_game()
    table, events = play_round(table, ("approach", "high-strike"), ("retreat", "change-stance"))
    [ended] = of_type(events, "round_ended")
    assert ended == {
        "round": 1,
        "returned": [["approach-retreat"], ["approach-retreat"]],
        "set_aside": ["high-strike", "charge-change-stance"],
        "removed": [[], []],
    }
    assert view(table, 1)["state"]["set_aside"] == ["high-strike", "charge-change-stance"]
    assert "high-strike" not in view(table, 0)["state"]["hand"]
    with pytest.raises(IllegalAction, match="high-strike is set aside this round"):
        decide(table, 0, program("high-strike", "approach"), salts=["a", "b"])
    with pytest.raises(IllegalAction, match=r"charge .* is set aside this round"):
        decide(table, 1, program("approach", "charge"), salts=["a", "b"])
    assert all("high-strike" not in a.values() for a in legal_actions(table, 0))
    table, events = play_round(table, ("retreat", "low-strike"), ("approach", "special"))
    [ended] = of_type(events, "round_ended")
    assert ended["returned"] == [["approach-retreat", "high-strike"], ["approach-retreat", "charge-change-stance"]]
    assert ended["set_aside"] == ["low-strike", None]
    assert ended["removed"] == [[], ["counterattack"]]
    assert view(table, 1)["state"]["hand"] == REGULAR
    decide(table, 0, program("high-strike", "approach"), salts=["a", "b"])
    with pytest.raises(IllegalAction, match="low-strike is set aside"):
        decide(table, 0, program("approach", "low-strike"), salts=["a", "b"])
    with pytest.raises(IllegalAction, match="special card \\(counterattack\\) has been played"):
        decide(table, 1, program("special", "approach"), salts=["a", "b"])
    table, events = play_round(table, ("special", "high-strike"), ("high-strike", "low-strike"))
    [ended] = of_type(events, "round_ended")
    assert ended["returned"] == [["low-strike"], ["high-strike"]]
    assert ended["removed"] == [["kesa"], []]
    assert table.state.set_aside == ("high-strike", "low-strike")
    assert view(table, 0)["state"]["hand"] == [c for c in REGULAR if c != "high-strike"]


DIFFERENT = "first and second must be different cards: "


@pytest.mark.parametrize(
    "first, second, reason",
    [
        ("approach", "retreat", DIFFERENT + "approach and retreat are two faces of one card"),
        ("retreat", "retreat", DIFFERENT + "the same card twice (retreat)"),
        ("approach", "approach", DIFFERENT + "the same card twice (approach)"),
        ("charge", "change-stance", DIFFERENT + "charge and change-stance are two faces of one card"),
        ("high-strike", "high-strike", DIFFERENT + "the same card twice (high-strike)"),
        ("special", "special", DIFFERENT + "the same card twice (special)"),
        ("jump", "approach", "first action 'jump' is unknown"),
        ("approach", None, "second action None is unknown"),
        ("kesa", "approach", "first action 'kesa' is unknown"),
    ],
)
def test_illegal_programs_name_the_rule(first: Any, second: Any, reason: str) -> None:
    table, _ = new_game()
    with pytest.raises(IllegalAction, match=reason.replace("(", "\\(").replace(")", "\\)")):
        decide(table, 0, program(first, second), salts=["a", "b"])


@pytest.mark.parametrize(
    "action",
    [
        {"type": "program", "first": "approach"},
        {**program("approach", "high-strike"), "third": "x"},
        {"type": "setup", "space": 5, "stance": "heaven"},
        {"type": "move", "first": "approach", "second": "high-strike"},
    ],
)
def test_malformed_actions_are_refused(action: dict[str, Any]) -> None:
    table, _ = new_game()
    with pytest.raises(IllegalAction):
        decide(table, 0, action, salts=["a", "b"])


def test_there_are_no_turn_actions() -> None:
    table, _ = new_game()
    with pytest.raises(IllegalAction, match="secretly"):
        RULES.decide(table.state, 0, program("approach", "high-strike"))


def test_program_parts_and_legal_count() -> None:
    table, _ = new_game()
    assert RULES.validate_choice(table.state, 0, program("charge", "special")) == [
        {"type": "program", "step": 1, "card": "charge"},
        {"type": "program", "step": 2, "card": "special"},
    ]
    actions = legal_actions(table, 0)
    assert len(actions) == 52 and len({json.dumps(a, sort_keys=True) for a in actions}) == 52


def test_program_is_hidden_until_revealed_and_the_special_named_when_played() -> None:
    table, _ = new_game()
    [committed] = decide(table, 0, program("special", "approach"), salts=["a", "b"])
    assert "special" not in json.dumps(committed.visible_data(1, False))
    own = committed.visible_data(0, False)["private"]["0"]
    assert own["action"] == program("special", "approach")
    table = replay([committed], table)
    assert view(table, 1)["committed"] == [0] and view(table, 1)["to_act"] == [1]
    table, events = play_round(
        replay(create(GAME, "g1", SEATS, b"seed", deal=DEAL)), ("special", "approach"), ("approach", "high-strike")
    )
    [first] = of_type(part_events(events, 0), "step_started")
    assert first == {"round": 1, "step": 1, "actions": ["special", "approach"], "cards": ["kesa", "approach-retreat"]}
    assert view(table, 1)["state"]["specials_used"] == ["kesa", None]
    assert "counterattack" not in json.dumps(view(table, 0))


# ---------------------------------------------------------------- advanced battlefield


def test_advanced_setup_is_hidden_until_both_chose() -> None:
    table, _events = new_game(options={"battlefield": "advanced"})
    assert view(table, 0)["phase"] == "setup" and table.to_act == [0, 1]
    assert view(table, 1)["state"]["samurai"][0]["space"] is None
    assert legal_actions(table, 1) == [
        {"type": "setup", "space": s, "stance": st} for s in (1, 2, 3) for st in ("heaven", "earth")
    ]
    with pytest.raises(IllegalAction, match="red samurai starts on space 4, 5 or 6"):
        decide(table, 0, setup(7, "heaven"), salts=["a"])
    with pytest.raises(IllegalAction, match="stance"):
        decide(table, 1, setup(2, "air"), salts=["a"])
    with pytest.raises(IllegalAction, match="'setup'"):
        decide(table, 0, program("approach", "high-strike"), salts=["a", "b"])
    [committed] = decide(table, 0, setup(4, "earth"), salts=["a", "b"])
    assert "earth" not in json.dumps(committed.visible_data(1, False))
    table = replay([committed], table)
    hidden = {"space": None, "stance": None, "injured": False, "defeated": False}
    assert view(table, 1)["state"]["samurai"][0] == hidden
    more = decide(table, 1, setup(3, "heaven"), salts=["c"])
    assert [e.type for e in more] == [CHOICE_COMMITTED, CHOICES_REVEALED, "samurai_placed"]
    table = replay(more, table)
    assert [s.to_view() for s in table.state.samurai] == [
        {"space": 4, "stance": "earth", "injured": False, "defeated": False},
        {"space": 3, "stance": "heaven", "injured": False, "defeated": False},
    ]
    assert view(table, 0)["phase"] == "program" and view(table, 0)["state"]["spaces"] == 8
    table, _ = play_round(table, ("retreat", "charge"), ("retreat", "charge"))
    assert spaces(table) == (4, 4)  # blue's Heaven charge first; red's Earth charge stops on blue


def test_advanced_edges_are_reachable() -> None:
    table, _ = new_game(options={"battlefield": "advanced"})
    table = replay(decide(table, 0, setup(6, "heaven"), salts=["a"]), table)
    table = replay(decide(table, 1, setup(1, "heaven"), salts=["a"]), table)
    table, _ = play_round(table, ("retreat", "balanced-strike"), ("retreat", "balanced-strike"))
    assert spaces(table) == (7, 0)


# ---------------------------------------------------------------- the pure step


def test_resolve_step_is_pure_and_cached() -> None:
    a = resolve_step(6, (3, 1), ("heaven", "earth"), ("approach", "charge"))
    assert a.spaces == (2, 2) and a.hit is None
    assert resolve_step(6, (3, 1), ("heaven", "earth"), ("approach", "charge")) is a


# ---------------------------------------------------------------- random games (properties)


def random_game(seed: int, options: Mapping[str, Any] | None, check_every: int = 0) -> tuple[Table, list[Event]]:
    """A random game, checking invariants at every decision; optionally the action catalogue too."""
    rnd = random.Random(seed)
    events = create(GAME, f"r{seed}", SEATS, seed=seed.to_bytes(8, "big"), options=options)
    table = replay(events)
    damage = [0, 0]
    decisions = 0
    while not table.finished:
        seat = rnd.choice(table.to_act)
        if check_every and decisions % check_every == 0:
            check_catalogue(table, seat)
        action = rnd.choice(legal_actions(table, seat))
        new = decide(table, seat, action, salts=SALTS)
        table = replay(new, table)
        events += new
        decisions += 1
        for e in new:
            if e.type in ("injured", "defeated"):
                damage[e.data["seat"]] += 1
        check_invariants(table, damage)
    return table, events


def check_invariants(table: Table, damage: Sequence[int]) -> None:
    state = table.state
    red, blue = state.samurai
    if red.space is not None and blue.space is not None:
        assert 0 <= blue.space <= red.space < state.n_spaces
    assert all(d <= 2 for d in damage) and sum(damage) <= 3
    for samurai, d in zip(state.samurai, damage):
        assert samurai.injured == (d >= 1) and samurai.defeated == (d == 2)


def check_catalogue(table: Table, seat: int) -> None:
    """Every legal action is accepted; every other candidate is refused with a reason."""
    legal = {json.dumps(a, sort_keys=True) for a in legal_actions(table, seat)}
    if table.state.phase == "setup":
        candidates = [
            {"type": "setup", "space": s, "stance": st} for s in range(-1, 9) for st in ("heaven", "earth", "water")
        ]
    else:
        candidates = [program(a, b) for a in (*FACES, "kesa") for b in (*FACES, "kesa")]
    accepted = set()
    for action in candidates:
        try:
            decide(table, seat, action, salts=["x", "y"])
        except IllegalAction as exc:
            assert str(exc)
            continue
        accepted.add(json.dumps(action, sort_keys=True))
    assert accepted == legal


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), battlefield=st.sampled_from(["standard", "advanced"]), max_rounds=st.integers(1, 12))
def test_random_games_keep_invariants_and_end_properly(seed: int, battlefield: str, max_rounds: int) -> None:
    table, events = random_game(seed, {"battlefield": battlefield, "max_rounds": max_rounds})
    result = table.result
    assert result is not None
    defeated = [s for s in table.state.samurai if s.defeated]
    if result["reason"] == "defeat":
        assert len(defeated) == 1 and len(result["winners"]) == 1
        assert table.state.samurai[result["winners"][0]].defeated is False
    else:
        assert result["reason"] == "max_rounds" and not defeated
        assert table.state.round == max_rounds and result["winners"] == [0, 1]
    rebuilt = replay([Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in events])
    assert rebuilt == table
    assert view(rebuilt, 0) == view(table, 0)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), battlefield=st.sampled_from(["standard", "advanced"]))
def test_every_legal_action_is_accepted_and_others_refused(seed: int, battlefield: str) -> None:
    random_game(seed, {"battlefield": battlefield, "max_rounds": 6}, check_every=3)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_views_never_leak_hidden_specials(seed: int) -> None:
    rnd = random.Random(seed)
    table, events = new_game(deal=None, seed=seed.to_bytes(8, "big"))
    specials = table.state.specials
    third = table.state.third_special
    while not table.finished:
        for seat in (0, 1):
            seen = [view(table, seat), [e.visible_data(seat, False) for e in events]]
            shown = json.dumps(seen)
            opponent = specials[1 - seat]
            assert third not in shown
            if table.state.specials_used[1 - seat] is None:
                assert opponent not in shown
        for seat in table.to_act:
            new = decide(table, seat, rnd.choice(legal_actions(table, seat)), salts=SALTS)
            table = replay(new, table)
            events += new
            if table.finished:
                break
    assert third in json.dumps(view(table, 0))


def test_a_finished_game_record_verifies() -> None:
    _table, events = random_game(7, {"battlefield": "advanced"})
    report = verify_record(sealed_record(events, (7).to_bytes(8, "big")))
    assert report["verified"], report["checks"]


def test_greedy_bot_plays_legal_programs_and_beats_random() -> None:
    from domain.bots import choose_action

    wins = 0
    for g in range(20):
        levels = ["greedy", "random"] if g % 2 == 0 else ["random", "greedy"]
        table = replay(
            create(GAME, f"b{g}", [Seat(0, "r", levels[0]), Seat(1, "b", levels[1])], seed=g.to_bytes(8, "big"))
        )
        rnd = random.Random(g)
        while not table.finished:
            seat = table.to_act[0]
            action = choose_action(table, seat, levels[seat], rnd)
            assert action in legal_actions(table, seat)
            table = replay(decide(table, seat, action, salts=["a", "b"]), table)
        wins += table.result["winners"] == [levels.index("greedy")]
    assert wins >= 13
