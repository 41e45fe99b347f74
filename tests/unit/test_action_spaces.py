"""``GET /actions`` over random positions of every game, mode and option: small, and exact.

Positions come from random games: a game, a player count, options drawn from the
game's own catalogue (every choice an option allows for that many players), for
San Ban random decks of 5-12 cards with inline ids up to the 40-character limit
(astral characters cost 12 bytes each in ASCII-escaped JSON), played by random
legal actions to a random depth. At every position, for every seat to act:

* the answer (``{"seat", "version", **engine.action_space(...)}``, as the service
  builds it) is at most 256 KB as JSON, ASCII-escaped (the larger spelling);
* the description is exact: every action it admits (``engine.expand``) is legal,
  every legal action is admitted (``engine.admits``), and ``admits`` agrees with
  ``decide`` on near misses of legal actions (a card left out, doubled, swapped for
  another, reordered; a field added, a value of another type).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

import pytest
from hypothesis import given, settings, target
from hypothesis import strategies as hs

import domain.games  # noqa: F401 (registers the games)
from domain import engine
from domain.canonical import canonical_json
from domain.engine import Seat, Table
from domain.errors import IllegalAction, NotYourTurn
from domain.registry import get_game
from tests.support.records import SALTS

GAMES = ("san-ban", "nin-nal", "kiri-ai", "san-ni-ichi", "front-line")
MAX_ANSWER = 256 * 1024
MAX_STEPS = 160  # actions played per random game (Kiri-ai may run to 2,000 and more)


# ---------------------------------------------------------------- random positions


@dataclass(frozen=True)
class Setting:
    """A game to play: its id, seats, options, San Ban deal (or None) and the seed of its play."""

    game: str
    n_seats: int
    options: dict[str, Any]
    deal: dict[str, Any] | None
    seed: int
    steps: int


ASTRAL = hs.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, exclude_categories=("Cs",))
CARD_IDS = hs.one_of(
    hs.text(min_size=1, max_size=40),
    hs.text(alphabet=ASTRAL, min_size=40, max_size=40),  # the largest id as ASCII-escaped JSON: 480 bytes
    hs.builds(lambda n: f"sb-{n:03d}", hs.integers(1, 60)),  # catalogue cards
)


@hs.composite
def san_ban_decks(draw: hs.DrawFn) -> list[list[Any]]:
    """Two decks of 5-12 cards: catalogue ids and inline cards, one definition per id in the game."""
    sizes = [draw(hs.integers(5, 12)), draw(hs.integers(5, 12))]
    ids = draw(hs.lists(CARD_IDS, min_size=max(sizes), max_size=sum(sizes), unique=True))
    power = hs.integers(1, 13)
    element = hs.sampled_from([None, "water", "fire", "metal", "wood", "earth"])
    defs = {
        i: i
        if i.startswith("sb-") and i[3:].isdigit() and 1 <= int(i[3:]) <= 60
        else {"id": i, "top": draw(power), "right": draw(power), "bottom": draw(power), "left": draw(power)}
        | {"element": draw(element)}
        for i in ids
    }
    decks = []
    for size in sizes:
        chosen = draw(hs.permutations(ids))[:size]
        decks.append([defs[i] for i in chosen])
    return decks


def option_values(game_id: str, name: str, n_seats: int) -> hs.SearchStrategy[Any]:
    """Every value the catalogue allows option ``name`` for ``n_seats`` players (San Ban's decks: below)."""
    option = get_game(game_id).options[name]
    if option.choices is not None:
        allowed = [
            c
            for c in option.choices
            if not option.players or n_seats in next((p for v, p in option.players.items() if v == c), (n_seats,))
        ]
        return hs.sampled_from(allowed)
    schema = option.json_schema()
    if schema.get("type") in ("integer", ["integer", "null"]):
        return hs.integers(schema["minimum"], schema["maximum"])
    return hs.none()  # San Ban's deck/decks: the decks come as a deal or as option "decks" (below)


@hs.composite
def settings_(draw: hs.DrawFn) -> Setting:
    game_id = draw(hs.sampled_from(GAMES))
    game = get_game(game_id)
    n = draw(hs.integers(game.min_players, game.max_players))
    options = {name: draw(option_values(game_id, name, n)) for name in sorted(game.options)}
    deal = None
    if game_id == "san-ban" and draw(hs.booleans()):
        decks = draw(san_ban_decks())
        if draw(hs.booleans()):
            deal = {"decks": decks, "first": draw(hs.sampled_from([0, 1, "coin"]))}
        else:
            options["decks"] = decks
    return Setting(game_id, n, options, deal, draw(hs.integers(0, 2**32)), draw(hs.integers(0, MAX_STEPS)))


def positions(setting: Setting) -> Iterator[Table]:
    """Every position of a random game with ``setting``, from the first to ``setting.steps`` actions in."""
    rnd = random.Random(setting.seed)
    seats = [Seat(i, f"p{i}") for i in range(setting.n_seats)]
    table = engine.replay(
        engine.create(setting.game, "g", seats, setting.seed.to_bytes(8, "big"), setting.options, setting.deal)
    )
    for _ in range(setting.steps + 1):
        if table.finished:
            return
        yield table
        seat = rnd.choice(table.to_act)
        table = engine.replay(engine.decide(table, seat, engine.sample_action(table, seat, rnd), salts=SALTS), table)


# ---------------------------------------------------------------- the answer's size


@settings(max_examples=200, deadline=None)
@given(settings_())
def test_no_answer_of_get_actions_exceeds_256_kb(setting: Setting) -> None:
    largest = 0
    for table in positions(setting):
        for seat in table.to_act:
            answer = {"seat": seat, "version": table.version, **engine.action_space(table, seat)}
            size = len(json.dumps(answer).encode())  # ASCII-escaped: never smaller than the API's UTF-8
            assert size <= MAX_ANSWER, (setting.game, table.game.phase(table.state), size)
            largest = max(largest, size)
    target(largest, label="largest GET /actions answer (bytes)")


def widest_ids_deck(seat: int) -> list[dict[str, Any]]:
    """12 inline cards whose ids are 40 astral characters: 480 bytes each as ASCII-escaped JSON."""
    return [
        {"id": chr(0x10000 + seat) * 39 + chr(0x10100 + i), "top": 5, "right": 5, "bottom": 5, "left": 5}
        for i in range(12)
    ]


def test_the_largest_pick_is_described_not_listed() -> None:
    """San Ban gamer mode, two 12-card decks of the widest ids: 95,040 orders (24 MB as a list)."""
    deal = {"decks": [widest_ids_deck(0), widest_ids_deck(1)], "first": 0}
    table = engine.replay(engine.create("san-ban", "g", [Seat(0, "a"), Seat(1, "b")], b"s", {"mode": "gamer"}, deal))
    space = engine.action_space(table, 0)
    assert len(table.game.legal_actions(table.state, 0)) == 95_040
    assert space["choose"] == {
        "type": "set_order",
        "count": 5,
        "from": [c["id"] for c in widest_ids_deck(0)],
        "ordered": True,
    }
    assert len(space["actions"]) == 12  # one window per card
    assert [a["cards"][0] for a in space["actions"]] == space["choose"]["from"]  # each card first once
    assert len(json.dumps({"seat": 0, "version": table.version, **space}).encode()) < 40_000


@pytest.mark.parametrize("mode", ["standard", "gamer"])
@pytest.mark.parametrize("size", range(5, 13))
def test_a_pick_lists_one_window_per_card_and_every_pick_when_those_are_all(mode: str, size: int) -> None:
    deck = [f"sb-{i:03d}" for i in range(1, size + 1)]
    table = engine.replay(
        engine.create("san-ban", "g", [Seat(0, "a"), Seat(1, "b")], b"s", {"mode": mode}, {"decks": [deck, deck]})
    )
    if 0 not in table.to_act:  # standard mode with 5 cards: nothing to pick
        assert (mode, size) == ("standard", 5)
        return
    space = engine.action_space(table, 0)
    legal = table.game.legal_actions(table.state, 0)
    listed = [canonical_json(a) for a in space["actions"]]
    assert len(set(listed)) == len(listed) == size  # one per card, none twice
    assert {canonical_json(a) for a in legal} >= set(listed)
    assert (len(legal) == size) == (mode == "standard" and size == 6)  # all of them: 6 cards, choose_hand
    for card in deck:  # each card in five windows
        assert sum(card in a["cards"] for a in space["actions"]) == 5


# ---------------------------------------------------------------- the description is exact

EXPANDED_AT_MOST = 20_000  # actions taken from ``engine.expand`` per position (a Front Line turn can have millions)
DECIDED = 40  # of those, how many go through ``decide`` per position (plus the listed ones)
COMPLETE_LISTS = {"san-ban", "nin-nal", "kiri-ai", "san-ni-ichi"}  # legal_actions lists every legal action


def accepted(table: Table, seat: int, action: Any) -> bool:
    """Whether ``decide`` takes ``action`` of ``seat`` (the seat is to act)."""
    try:
        engine.decide(table, seat, action, salts=SALTS)
    except IllegalAction:
        return False
    except NotYourTurn as exc:
        raise AssertionError(f"seat {seat} is to act: {exc}") from exc
    return True


def strings_in(value: Any) -> list[str]:
    """Every string in a JSON value (ids to swap in: card ids of the space, types, ...)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (k, *strings_in(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def near_miss(action: Any, pool: list[str], rnd: random.Random) -> Any:
    """``action`` changed in one place: the kind of change a client gets wrong, legal or not."""
    if isinstance(action, Mapping):
        keys = [k for k in action if k != "type"]
        roll = rnd.random()
        if roll < 0.1 or not keys:
            return {**action, rnd.choice(["extra", "card", "cards", "cell"]): rnd.choice([1, "x", None])}
        if roll < 0.15:
            return {k: v for k, v in action.items() if k != rnd.choice(keys)}
        key = rnd.choice(keys if roll < 0.95 or "type" not in action else ["type"])
        return {**action, key: near_miss(action[key], pool, rnd)}
    if isinstance(action, list):
        roll, items = rnd.random(), list(action)
        if not items or roll < 0.15:
            return [*items, rnd.choice(pool)]
        i = rnd.randrange(len(items))
        if roll < 0.3:
            return items[:i] + items[i + 1 :]
        if roll < 0.45:
            return [*items, items[i]]
        if roll < 0.6:
            return rnd.sample(items, len(items))
        return [*items[:i], near_miss(items[i], pool, rnd), *items[i + 1 :]]
    if isinstance(action, bool):
        return rnd.choice([not action, int(action)])
    if isinstance(action, int):
        return rnd.choice([action + 1, action - 1, float(action), str(action), action + 9])
    if isinstance(action, str):
        return rnd.choice([*pool, 0, [action]])
    return rnd.choice([*pool, 0, False])


def check_exact(table: Table, seat: int, rnd: random.Random) -> None:
    kind, game = table.kind, table.game
    space = engine.action_space(table, seat)
    for action in space["actions"]:
        assert engine.admits(kind, space, action) and accepted(table, seat, action), action
    expanded = list(islice(engine.expand(kind, space), EXPANDED_AT_MOST + 1))
    for action in rnd.sample(expanded, min(DECIDED, len(expanded))):
        assert accepted(table, seat, action), ("admitted but refused", action)
    legal = game.legal_actions(table.state, seat)
    sampled = [engine.sample_action(table, seat, rnd) for _ in range(10)]
    for action in [*rnd.sample(legal, min(len(legal), 2000)), *sampled]:
        assert engine.admits(kind, space, action), ("legal but not admitted", action)
    if len(expanded) <= EXPANDED_AT_MOST:  # the whole expansion: admitted actions are exactly the legal ones
        assert all(engine.admits(kind, space, a) for a in expanded)
        assert len({canonical_json(a) for a in expanded}) == len(expanded), "an action expanded twice"
        if kind in COMPLETE_LISTS:
            assert {canonical_json(a) for a in expanded} == {canonical_json(a) for a in legal}
        elif "attack" in space:  # pass and every declaration, by the count from the bitmask enumeration
            from domain.games.front_line import space as front_line_space

            position = front_line_space.from_state(table.state, seat)
            assert len(expanded) == 1 + front_line_space.count_declarations(position)
    elif kind in COMPLETE_LISTS:  # San Ban's 95,040 orders: the same sets, compared whole
        whole = {canonical_json(a) for a in engine.expand(kind, space)}
        assert whole == {canonical_json(a) for a in legal}
    pool = strings_in(space)
    for _ in range(30):
        miss = near_miss(rnd.choice([*legal, *sampled]), pool, rnd)
        assert engine.admits(kind, space, miss) == accepted(table, seat, miss), miss


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(settings_())
def test_the_description_admits_exactly_the_legal_actions(setting: Setting) -> None:
    rnd = random.Random(setting.seed)
    for table in positions(setting):
        for seat in table.to_act:
            check_exact(table, seat, rnd)
