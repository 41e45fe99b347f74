"""The generic table: commit/reveal, turn order, redaction, endings (on the toy game)."""

from __future__ import annotations

import pytest

import tests.support.toy_game  # noqa: F401  (registers "toy")
from domain import engine
from domain.engine import Seat
from domain.errors import GameOver, IllegalAction, InvalidOptions, NoSuchSeat, NotYourTurn, SeatTaken

SEATS = [Seat(0, "ann"), Seat(1, "bob")]


def new_table(seed: bytes = b"seed") -> engine.Table:
    return engine.replay(engine.create("toy", "t1", SEATS, seed))


def act(table: engine.Table, seat: int, action: dict, salt: str = "s") -> tuple[engine.Table, list]:
    events = engine.decide(table, seat, action, salts=[salt])
    return engine.replay(events, table), events


def test_creation_publishes_only_the_seed_hash_and_keeps_deal_private() -> None:
    events = engine.create("toy", "t1", SEATS, b"secret-seed")
    created, dealt = events
    assert created.type == engine.GAME_CREATED
    assert "secret-seed" not in str(created.to_dict())
    assert created.data["seed_hash"] != b"secret-seed".hex()
    assert dealt.visible_data(1, False) == {"count": 3}
    assert dealt.visible_data(0, False)["private"] == {"0": {"cards": dealt.private["0"]["cards"]}}
    assert dealt.visible_data(None, True)["private"].keys() == {"0", "hidden"}


def test_same_seed_same_deal_other_seed_other_deal() -> None:
    a = engine.create("toy", "t1", SEATS, b"one")[1].private
    assert engine.create("toy", "t1", SEATS, b"one")[1].private == a
    assert engine.create("toy", "t1", SEATS, b"two")[1].private != a


def test_a_commitment_hides_the_choice_until_both_are_in() -> None:
    table = new_table()
    table, events = act(table, 0, {"type": "pick", "n": 3}, salt="salt-0")
    [committed] = events
    assert committed.type == engine.CHOICE_COMMITTED
    assert committed.visible_data(1, False).keys() == {"seat", "step", "commitments"}
    assert table.to_act == [1] and set(table.commitments) == {0}
    table, events = act(table, 1, {"type": "pick", "n": 1}, salt="salt-1")
    types = [e.type for e in events]
    assert types == [engine.CHOICE_COMMITTED, engine.CHOICES_REVEALED, "round_scored"]
    revealed = events[1].data["choices"]
    assert revealed == {
        "0": {"action": {"type": "pick", "n": 3}, "salt": "salt-0"},
        "1": {"action": {"type": "pick", "n": 1}, "salt": "salt-1"},
    }
    expected = engine.commitment("t1", 0, 0, 0, {"type": "pick", "n": 3}, "salt-0")
    assert committed.data["commitments"] == [expected]
    assert table.state.scores == (3, 0) and table.to_act == [1]


def test_a_seat_cannot_choose_twice_or_act_out_of_turn() -> None:
    table, _ = act(new_table(), 0, {"type": "pick", "n": 2})
    with pytest.raises(NotYourTurn, match="already made its secret choice"):
        engine.decide(table, 0, {"type": "pick", "n": 1}, salts=["x"])
    table, _ = act(table, 1, {"type": "pick", "n": 1})
    with pytest.raises(NotYourTurn, match="not to act now"):
        engine.decide(table, 0, {"type": "ack"})


@pytest.mark.parametrize(
    "action, message",
    [
        ({"type": "pick", "n": 4}, "n must be 1, 2 or 3"),
        ({"type": "pick"}, "needs field"),
        ({"type": "pick", "n": 1, "x": 1}, "does not take field"),
        ({"type": "ack"}, "pick a number"),
        ({"kind": "pick"}, "string field 'type'"),
    ],
)
def test_refused_choices_say_why(action: dict, message: str) -> None:
    with pytest.raises(IllegalAction, match=message):
        engine.decide(new_table(), 0, action, salts=["s"])


def test_the_game_ends_with_a_result_and_refuses_more_actions() -> None:
    table = new_table()
    for _ in range(3):
        table, _ = act(table, 0, {"type": "pick", "n": 2})
        table, events = act(table, 1, {"type": "pick", "n": 1})
        table, events = act(table, table.to_act[0], {"type": "ack"})
    assert events[-1].type == engine.GAME_ENDED
    assert table.result == {"scores": [6, 0], "ranks": [1, 2], "winners": [0]}
    assert engine.view(table, None)["status"] == "finished"
    with pytest.raises(GameOver):
        engine.decide(table, 0, {"type": "ack"})


def test_options_and_players_are_checked() -> None:
    with pytest.raises(InvalidOptions, match="unknown option"):
        engine.create("toy", "t", SEATS, b"s", {"colour": "red"})
    with pytest.raises(InvalidOptions, match="must be one of"):
        engine.create("toy", "t", SEATS, b"s", {"rounds": 9})
    with pytest.raises(InvalidOptions, match="needs exactly 2 players"):
        engine.create("toy", "t", SEATS[:1], b"s")
    with pytest.raises(InvalidOptions, match="move_timeout_s"):
        engine.create("toy", "t", SEATS, b"s", {"move_timeout_s": 0})
    with pytest.raises(InvalidOptions, match="unknown bot"):
        engine.create("toy", "t", [Seat(0, "a", "genius"), SEATS[1]], b"s")


# ---------------------------------------------------------------- resigning, open seats, the turn's start


def test_any_seat_may_resign_at_any_time_and_is_ranked_last() -> None:
    table, _ = act(new_table(), 0, {"type": "pick", "n": 2})  # seat 0's choice is in; seat 1 resigns out of turn
    events = engine.decide(table, 1, {"type": "resign"})
    assert [e.type for e in events] == [engine.ACTION_TAKEN, engine.GAME_ENDED]
    table = engine.replay(events, table)
    assert table.finished and table.to_act == []
    assert table.result == {"scores": [1, 0], "ranks": [1, 2], "winners": [0], "reason": "resignation", "resigned": 1}
    with pytest.raises(GameOver):
        engine.decide(table, 0, {"type": "resign"})


@pytest.mark.parametrize("action", [{"type": "resign", "now": True}, {"type": "resign", "seat": 0}])
def test_a_resignation_takes_no_fields(action: dict) -> None:
    with pytest.raises(IllegalAction, match="exactly"):
        engine.decide(new_table(), 0, action)


def test_an_open_seat_is_joined_once_and_replays() -> None:
    events = engine.create("toy", "t1", [Seat(0, "ann"), Seat(1, None, open=True)], b"seed")
    assert events[0].data["seats"][1] == {"seat": 1, "name": None, "bot": None, "open": True}
    table = engine.replay(events)
    joined = engine.join(table, 1, "bob")
    table = engine.replay(joined, table)
    assert table.seats[1] == Seat(1, "bob") and not table.seats[1].open
    with pytest.raises(SeatTaken):
        engine.join(table, 1, "cy")
    with pytest.raises(SeatTaken):
        engine.join(table, 0, "cy")
    with pytest.raises(NoSuchSeat):
        engine.join(table, 5, "cy")
    assert engine.replay([*events, *joined]) == table


def test_the_turn_starts_with_the_last_event_that_is_not_a_secret_commitment() -> None:
    table = new_table()
    assert table.turn_version == table.version == 2
    table, _ = act(table, 0, {"type": "pick", "n": 2})  # a commitment: seat 1's turn began before it
    assert table.version == 3 and table.turn_version == 2
    table, _ = act(table, 1, {"type": "pick", "n": 1})  # the reveal starts a new turn (the ack)
    assert table.turn_version == table.version
