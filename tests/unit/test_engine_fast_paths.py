"""The engine's fast paths equal their obvious definitions.

* ``replay`` folds a run of game events into one table copy: the same table as
  ``evolve`` event by event, from any starting table, in every game;
* ``start`` is ``create`` plus ``replay``;
* a table keeps its game's ``pending`` with the state it belongs to;
* ``Event`` sets its fields in its own ``__init__`` and behaves as the dataclass;
* ``ranks_from_scores``, ``require_fields`` and ``Option.validate`` answer as the
  plain definitions (hypothesis).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.support.toy_game  # noqa: F401  (registers "toy")
from domain import engine
from domain.contract import Option, as_json, changed, ranks_from_scores, require_fields
from domain.engine import Seat
from domain.errors import IllegalAction, InvalidOptions
from domain.events import Event
from domain.registry import all_games
from domain.snapshot import table_to_data
from tests.support.records import SALTS

GAMES = [g.id for g in all_games()]
MAX_ACTIONS = 3000


def random_log(game_id: str, seed: int) -> list[Event]:
    """A random game's whole log: an open seat joined, a resignation now and then, the seal."""
    game = engine.get_game(game_id)
    rnd = random.Random(seed)
    n = game.min_players + seed % (game.max_players - game.min_players + 1)
    seats = [Seat(i, None if i == n - 1 else f"p{i}", open=i == n - 1) for i in range(n)]
    log = engine.create(game_id, f"g{seed}", seats, seed.to_bytes(8, "big"))
    table = engine.replay(log)
    joined = engine.join(table, n - 1, "late")
    log, table = log + joined, engine.replay(joined, table)
    for _ in range(MAX_ACTIONS):
        if table.finished:
            break
        seat = rnd.choice(table.to_act)
        action = {"type": "resign"} if rnd.random() < 0.002 else engine.sample_action(table, seat, rnd)
        events, table = engine.step(table, seat, action, salts=SALTS)
        log += events
    return [*log, engine.seal(seed.to_bytes(8, "big"), "head")]


@pytest.mark.parametrize("game_id", GAMES)
def test_replay_gives_the_table_evolve_gives_event_by_event(game_id: str) -> None:
    for seed in range(3):
        log = random_log(game_id, seed)
        tables = []  # tables[k]: after log[: k + 1], one event at a time
        table = None
        for ev in log:
            table = engine.evolve(table, ev)
            tables.append(table)
        assert engine.replay(log) == tables[-1]
        rnd = random.Random(seed)
        for _ in range(30):  # from scratch (i = 0) or from a table, to any later event
            i, j = sorted(rnd.sample(range(len(log) + 1), 2))
            assert engine.replay(log[i:j], tables[i - 1] if i else None) == tables[j - 1]
        assert engine.replay([], tables[3]) is tables[3]


@pytest.mark.parametrize("game_id", [*GAMES, "toy"])
def test_start_is_create_plus_replay(game_id: str) -> None:
    game = engine.get_game(game_id)
    seats = [Seat(i, f"p{i}") for i in range(game.max_players)]
    events, table = engine.start(game_id, "g1", seats, b"seed")
    assert [e.to_dict() for e in events] == [e.to_dict() for e in engine.create(game_id, "g1", seats, b"seed")]
    assert table == engine.replay(events)


@pytest.mark.parametrize("game_id", GAMES)
def test_a_table_asks_the_game_again_when_its_state_changes(game_id: str) -> None:
    log = random_log(game_id, 5)
    before = engine.replay(log[:3])
    snapshot = table_to_data(before)
    assert before.to_act is not None  # asked, and kept
    assert table_to_data(before) == snapshot  # the kept answer is no field: not in snapshots
    later = engine.replay(log[:-2])
    copied = changed(before, state=later.state)  # copies the kept answer of the old state along
    assert copied.pending == later.game.pending(later.state)
    assert copied.to_act == [s for s in later.game.pending(later.state).seats if s not in copied.commitments]


def test_an_event_is_the_frozen_dataclass_it_was() -> None:
    a, b = Event("x", {"n": 1}), Event("x", {"n": 1})
    assert a == b == Event("x", {"n": 1}, {}) == Event(type="x", data={"n": 1}, private={})
    assert a.private == {} and a.private is not b.private  # a fresh dict each, as the default_factory gave
    assert Event("x", {}, {"0": {"k": 1}}).private == {"0": {"k": 1}}
    assert [f.name for f in dataclasses.fields(Event)] == ["type", "data", "private"]
    assert repr(a) == "Event(type='x', data={'n': 1}, private={})"
    assert dataclasses.replace(a, type="y") == Event("y", {"n": 1})
    assert Event.from_dict(a.to_dict()) == a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.type = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Event("x")  # type: ignore[call-arg]


# ---------------------------------------------------------------- the contract's helpers


def obvious_ranks(scores: Sequence[float], higher_is_better: bool) -> list[int]:
    sign = -1 if higher_is_better else 1
    return [1 + sum(1 for other in scores if sign * other < sign * mine) for mine in scores]


numbers = st.one_of(st.integers(-5, 5), st.fractions(min_value=-3, max_value=3, max_denominator=4))


@settings(max_examples=300, deadline=None)
@given(st.lists(numbers, min_size=1, max_size=8), st.booleans())
def test_ranks_are_one_plus_the_number_of_better_scores(scores: list[float], higher_is_better: bool) -> None:
    assert ranks_from_scores(scores, higher_is_better) == obvious_ranks(scores, higher_is_better)


def obvious_require_fields(action: Mapping[str, Any], required: Sequence[str], optional: Sequence[str]) -> None:
    missing = [f for f in required if f not in action]
    if missing:
        raise IllegalAction(f"action {action.get('type')!r} needs field(s): {', '.join(missing)}")
    extra = [f for f in action if f != "type" and f not in required and f not in optional]
    if extra:
        raise IllegalAction(f"action {action.get('type')!r} does not take field(s): {', '.join(sorted(extra))}")


def outcome(check: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", check(*args)
    except (IllegalAction, InvalidOptions) as exc:
        return type(exc).__name__, str(exc)


names = st.sampled_from(["type", "cell", "card", "first", "x"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(names, st.integers(0, 2)), st.lists(names, max_size=4), st.lists(names, max_size=2))
def test_required_fields_are_checked_as_by_their_definition(
    action: dict[str, Any], required: list[str], optional: list[str]
) -> None:
    assert outcome(require_fields, action, required, optional) == outcome(
        obvious_require_fields, action, required, optional
    )


def obvious_validate(option: Option, name: str, value: Any, n_seats: int | None) -> Any:
    """``Option.validate`` as first written (any() and next() over generators)."""
    if option.choices is not None and not any(value == c and type(value) is type(c) for c in option.choices):
        allowed = ", ".join(map(as_json, option.choices))
        raise InvalidOptions(f"option {name!r} must be one of {allowed}; got {as_json(value)}", ("options", name))
    if option.check is not None:
        problem = option.check(value)
        if problem:
            raise InvalidOptions(f"option {name!r}: {problem}", ("options", name))
    counts = next((c for v, c in (option.players or {}).items() if v == value and type(v) is type(value)), None)
    if n_seats is not None and counts is not None and n_seats not in counts:
        *most, last = map(str, counts)
        allowed = f"{', '.join(most)} or {last}" if most else last
        raise InvalidOptions(
            f"option {name!r} = {as_json(value)} needs {allowed} players, not {n_seats}", ("options", name)
        )
    return value


values = st.sampled_from([0, 1, 2, True, False, 1.0, 2.0, "1", "coin", None, "teams"])
OPTIONS = [
    Option(1, "a choice", choices=(0, 1, "coin")),
    Option(None, "nullable choice", choices=(None, 1.0, True)),
    Option("solo", "by players", choices=("solo", "teams", 2), players={"teams": (4, 6), 2: (2,)}),
    Option.whole_number(None, "a number", 1, 2, nullable=True),
]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(OPTIONS), values, st.one_of(st.none(), st.integers(1, 7)))
def test_options_are_validated_as_by_their_definition(option: Option, value: Any, n_seats: int | None) -> None:
    assert outcome(option.validate, "o", value, n_seats) == outcome(obvious_validate, option, "o", value, n_seats)
