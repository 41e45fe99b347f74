"""Issue 19's holes in the game verifier, each as the forgery that used to verify.

* an unsealed record is never a verified result (its verdict is ``in_progress`` at best), whatever its
  unhashed ``complete`` says, and a stacked deal hides behind no missing seal;
* every field of a record is bound to what its events commit to; values are compared type and all;
* the first bad event is the position where the record stops being the game, for inserted events,
  damage inside an action's batch and damage to a setup event;
* ``by`` is only ``timeout`` (a human seat of a timed game) or ``forfeit`` (a tournament's resignation).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tests.support.toy_game  # noqa: F401
from domain import engine
from domain.audit import verify_record
from domain.engine import Seat
from domain.events import Event
from domain.record import GENESIS, IN_PROGRESS_NOTE, build_record, envelopes, part_commitment
from domain.rng import seed_hash
from domain.strict_json import StrictJSONError, loads
from entrypoints.cli import main as cli
from tests.support.records import AT, salt_source, sealed_record
from tests.unit.test_audit import finished_events, finished_record, rechain

SEED = b"audit-seed"


def unsealed(record: dict[str, Any], upto: int) -> dict[str, Any]:
    """The first ``upto`` events, with the header a server would give a game still running."""
    cut = copy.deepcopy(record)
    del cut["events"][upto:]
    cut.update(seed=None, complete=False, head=cut["events"][-1]["hash"], note=IN_PROGRESS_NOTE)
    return cut


# ---------------------------------------------------------------- defect 1: unsealed records


def test_the_reported_forgery_is_refused_its_unhashed_complete_field_is_bound_to_the_seal() -> None:
    """Drop the seal, set head to the new last hash and seed to null: it verified, because ``complete``
    (outside the chain) was left true and the seed and deal checks were skipped."""
    record = finished_record()
    record["events"].pop()
    record.update(head=record["events"][-1]["hash"], seed=None)
    report = verify_record(record)
    assert report["verdict"] == "failed" and not report["verified"]
    assert report["bad_field"] == "complete" and report["first_bad_event"] == len(record["events"])


@pytest.mark.parametrize("upto", range(1, len(finished_events()) + 1))
def test_a_record_cut_anywhere_is_in_progress_never_verified(upto: int) -> None:
    report = verify_record(unsealed(finished_record(), upto))
    assert report["verdict"] == "in_progress" and not report["verified"] and not report["sealed"], report
    assert report["first_bad_event"] is None
    assert [c["name"] for c in report["checks"] if not c["ok"]] == ["sealed"]


@pytest.mark.parametrize("upto", range(1, len(finished_events()) + 1))
def test_a_record_cut_anywhere_that_keeps_the_seed_fails_at_its_last_event(upto: int) -> None:
    record = finished_record()
    forged = {**unsealed(record, upto), "seed": record["seed"]}
    report = verify_record(forged)
    assert report["verdict"] == "failed" and report["first_bad_event"] == upto and report["bad_field"] == "seed"


def stacked_game(dealt_from: bytes, committed: bytes) -> list[Event]:
    """A finished toy game dealt from ``dealt_from`` whose event 1 commits to ``committed``'s hash."""
    events = engine.create("toy", "s1", [Seat(0, "ann"), Seat(1, "bob")], dealt_from)
    events[0] = Event(events[0].type, {**events[0].data, "seed_hash": seed_hash(committed)}, events[0].private)
    table = engine.replay(events)
    while not table.finished:
        seat = table.to_act[0]
        action = {"type": "ack"} if table.state.waiting_ack is not None else {"type": "pick", "n": 3 - seat}
        new = engine.decide(table, seat, action, salts=salt_source("stacked"))
        table, events = engine.replay(new, table), events + new
    return events


def test_a_stacked_deal_without_its_seal_is_only_in_progress_and_with_either_seal_fails() -> None:
    """A whole game dealt from another seed than the committed one: unsealed it verified; now it is
    never a proven result, and whichever seed a seal publishes, the record fails."""
    events = stacked_game(dealt_from=b"favours seat 0", committed=SEED)
    envs = envelopes(events, 1, GENESIS, AT, salt_source("e"))
    report = verify_record(json.loads(json.dumps(build_record(envs))))
    assert report["verdict"] == "in_progress" and not report["verified"]
    claimed = sealed_record(events, SEED)  # the committed seed: the deal does not follow from it
    assert verify_record(claimed)["verdict"] == "failed" and verify_record(claimed)["first_bad_event"] == 2
    actual = sealed_record(events, b"favours seat 0")  # the real seed: not the one committed
    assert verify_record(actual)["verdict"] == "failed"
    assert verify_record(actual)["first_bad_event"] == len(actual["events"])


def test_a_seal_before_the_result_or_in_the_middle_fails_where_it_stands() -> None:
    events = finished_events()
    early = sealed_record(events[:5], SEED)  # the game is not over
    assert verify_record(early)["first_bad_event"] == 6
    record = finished_record()
    seal = record["events"].pop()
    record["events"].insert(4, seal)
    rechain_all(record)
    assert verify_record(record)["first_bad_event"] == 5


def rechain_all(record: dict[str, Any]) -> None:
    for pos, env in enumerate(record["events"], start=1):
        env["seq"] = pos
    rechain(record)


def test_the_cli_says_in_progress_with_exit_3_verified_0_failed_1(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    cases = [
        (finished_record(), 0, "VERIFIED head "),
        (unsealed(finished_record(), 6), 3, "IN PROGRESS: chain and commitments valid, result not proven head "),
        ({**finished_record(), "engine_version": "2"}, 1, "NOT VERIFIED head "),
    ]
    for record, code, last in cases:
        path.write_text(json.dumps(record))
        result = CliRunner().invoke(cli, ["verify", str(path)])
        assert result.exit_code == code and result.output.splitlines()[-1].startswith(last), result.output


# ---------------------------------------------------------------- defect 3: every field bound


BOT_EVENTS = engine.create("toy", "b1", [Seat(0, "ann"), Seat(1, "hal", "random")], SEED)


@pytest.mark.parametrize(
    "change, field, position",
    [
        (lambda r: r.update(engine_version="2"), "engine_version", 1),
        (lambda r: r["seats"][1]["bot_info"].update(version="toy/9"), "seats[1].bot_info.version", 1),
        (lambda r: r["seats"][1]["bot_info"].update(settings={"depth": 5}), "seats[1].bot_info.settings.depth", 1),
        (lambda r: r["seats"][1].update(bot_info=None), "seats[1].bot_info", 1),
        (lambda r: r["seats"][0].update(bot_info={"name": "x"}), "seats[0].bot_info", 1),
        (lambda r: r["options"].update(rounds=3.0), "options.rounds", 1),
        (lambda r: r["options"].update(rounds=True), "options.rounds", 1),
        (lambda r: r.update(note=IN_PROGRESS_NOTE), "note", -1),
        (lambda r: r.update(complete=1), "complete", -1),
        (lambda r: r.update(unknown="x"), "unknown", None),
    ],
)
def test_a_header_field_that_its_events_do_not_commit_to_fails(change: Any, field: str, position: int | None) -> None:
    record = sealed_record(BOT_EVENTS + play_out(BOT_EVENTS), SEED)
    assert verify_record(record)["verified"]
    change(record)
    report = verify_record(record)
    assert report["verdict"] == "failed" and report["bad_field"] == field, report
    expected = len(record["events"]) if position == -1 else position
    assert report["first_bad_event"] == expected


def play_out(events: list[Event]) -> list[Event]:
    table, out = engine.replay(events), []
    while not table.finished:
        seat = table.to_act[0]
        action = {"type": "ack"} if table.state.waiting_ack is not None else {"type": "pick", "n": 2}
        new = engine.decide(table, seat, action, salts=salt_source("out"))
        table, out = engine.replay(new, table), out + new
    return out


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "kifu-record/2", "format": "kifu-record/1", "events": []}',
        '{"events": [{"seq": 1, "seq": 2}]}',
        '{"x": NaN}',
        '{"x": "\\ud800"}',
        '{"x": 1e400}',
    ],
)
def test_a_record_that_is_not_strict_json_is_refused_before_any_check(text: str, tmp_path: Path) -> None:
    with pytest.raises(StrictJSONError):
        loads(text)
    path = tmp_path / "r.json"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["verify", str(path)])
    assert result.exit_code == 1 and "not JSON" in result.output


def test_strict_json_keeps_integers_floats_and_booleans_apart() -> None:
    value = loads(b'{"a": 0, "b": 0.0, "c": false, "d": [1, 1.0, true]}')
    assert [type(value[k]) for k in "abc"] == [int, float, bool]
    assert [type(v) for v in value["d"]] == [int, float, bool]
    with pytest.raises(StrictJSONError):
        loads('{"a": 1}'.encode("utf-16"))
    with pytest.raises(StrictJSONError):
        loads(b"\xef\xbb\xbf{}")


@pytest.mark.parametrize("confused", [1.0, True])
def test_a_type_confused_value_in_an_event_fails_at_that_event(confused: Any) -> None:
    record = finished_record()
    scored = next(e for e in record["events"] if e["type"] == "round_scored" and e["data"]["loser"] == 1)
    scored["data"]["loser"] = confused  # the same number to Python's ==
    rechain(record)
    assert verify_record(record)["first_bad_event"] == scored["seq"]


@pytest.mark.parametrize("key, value", [("seq", True), ("v", 2.0), ("seq", 1.0)])
def test_an_envelope_with_a_type_confused_seq_or_version_fails_at_it(key: str, value: Any) -> None:
    record = finished_record()
    record["events"][0][key] = value
    rechain(record)
    report = verify_record(record)
    assert report["verdict"] == "failed" and report["first_bad_event"] == 1


def test_an_envelope_with_an_unknown_key_fails_at_it() -> None:
    record = finished_record()
    record["events"][3]["signed_by"] = "mallory"
    assert verify_record(record)["first_bad_event"] == 4


# ---------------------------------------------------------------- defect 4: the first bad event


def test_an_inserted_event_is_named_by_its_position_not_its_own_seq() -> None:
    """A copy of event 3 inserted at position 7, the chain rebuilt but the copy's ``seq`` left as 3."""
    record = finished_record()
    record["events"].insert(6, copy.deepcopy(record["events"][2]))
    rechain(record)
    report = verify_record(record)
    assert report["first_bad_event"] == 7
    assert all(c["seq"] is None or c["seq"] >= 7 for c in report["checks"])


def test_damage_inside_an_actions_batch_is_named_at_the_damaged_event() -> None:
    record = finished_record()
    events = record["events"]
    opener = next(i for i, e in enumerate(events) if e["type"] == "choice_committed" and i + 2 < len(events))
    opener = next(i for i in range(opener, len(events)) if events[i + 1]["type"] == "choices_revealed")
    revealed = events[opener + 1]
    revealed["data"]["choices"] = "not an object"
    rechain(record)
    assert verify_record(record)["first_bad_event"] == opener + 2


def test_damage_to_a_setup_event_is_named_at_that_event_not_event_1() -> None:
    record = finished_record()
    dealt = record["events"][1]
    dealt["private"]["0"] = {"cards": "not a list"}
    part_commitment_fix(dealt, "0")
    rechain(record)
    assert verify_record(record)["first_bad_event"] == 2


def part_commitment_fix(env: dict[str, Any], audience: str) -> None:
    env["private_commitments"][audience] = part_commitment(
        audience, env["private"][audience], env["private_salts"][audience]
    )


# ---------------------------------------------------------------- by


def record_with_by(by: str, timed: bool = False, tournament: bool = False) -> dict[str, Any]:
    options = {"move_timeout_s": 60} if timed else None
    link = {"id": "t1", "round": 1, "table": 0} if tournament else None
    events = engine.create("toy", "by1", [Seat(0, "ann"), Seat(1, "bob")], SEED, options, tournament=link)
    table = engine.replay(events)
    action = {"type": "resign"} if by == "forfeit" else {"type": "pick", "n": 1}
    new = engine.decide(table, 0, action, salts=salt_source("by"), by=by)
    events += new
    return sealed_record(events + play_out(events), SEED)


@pytest.mark.parametrize(
    "by, timed, tournament, ok",
    [
        ("timeout", True, False, True),
        ("timeout", False, False, False),
        ("forfeit", False, True, True),
        ("forfeit", False, False, False),
        ("bogus", True, True, False),
    ],
)
def test_by_is_a_timeout_in_a_timed_game_or_a_forfeit_in_a_tournament(
    by: str, timed: bool, tournament: bool, ok: bool
) -> None:
    report = verify_record(record_with_by(by, timed, tournament))
    assert report["verified"] is ok, report
    if not ok:
        assert report["first_bad_event"] == 3  # the action that claims it


# ---------------------------------------------------------------- what an outside review found next


def test_an_envelope_without_its_private_parts_or_salts_fails_at_it_and_never_crashes() -> None:
    for key in ("private", "private_salts"):
        for record in (finished_record(), unsealed(finished_record(), 10)):
            del record["events"][3][key]
            report = verify_record(record)
            assert report["verdict"] == "failed" and report["first_bad_event"] == 4, (key, report)


@pytest.mark.parametrize("salt", [" " * 31 + "1", "0x" + "0" * 30, "0_" * 16 + "0", "A" * 32, "a" * 34, "a" * 31])
def test_a_salt_is_exactly_32_lowercase_hex_digits(salt: str) -> None:
    record = finished_record()
    dealt = record["events"][1]
    dealt["private_salts"]["0"] = salt
    part_commitment_fix(dealt, "0")
    rechain(record)
    report = verify_record(record)
    assert report["verdict"] == "failed" and report["first_bad_event"] == 2


def resigned_record(seats: list[Seat], by: str | None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Seat 1 resigns at once (the engine allows it to any seat: who may is the service's rule)."""
    events = engine.create("toy", "r1", seats, SEED, options)
    events += engine.decide(engine.replay(events), 1, {"type": "resign"}, by=by)
    return sealed_record(events, SEED)


@pytest.mark.parametrize(
    "seat_1, by, options",
    [
        (Seat(1, "bob"), "timeout", {"move_timeout_s": 60}),  # a timeout plays a legal action, never this
        (Seat(1, "hal", "random"), None, None),  # a bot never resigns
        (Seat(1, None, open=True), None, None),  # nobody sits there to resign
    ],
)
def test_a_resignation_nobody_could_have_made_fails_at_it(seat_1: Seat, by: str | None, options: Any) -> None:
    assert verify_record(resigned_record([Seat(0, "ann"), Seat(1, "bob")], None))["verified"]
    report = verify_record(resigned_record([Seat(0, "ann"), seat_1], by, options))
    assert report["verdict"] == "failed" and report["first_bad_event"] == 3, report


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(engine_version="99"),
        lambda d: d.update(rules_version="0"),
        lambda d: d["options"].update(bogus=1),
        lambda d: d["options"].update(move_timeout_s=0),
        lambda d: d.update(fixed_deal="yes"),
        lambda d: d.update(extra=1),
        lambda d: d["seats"][1].update(seat=7),
        lambda d: d["seats"][1].update(bot="grandmaster"),
        lambda d: d["seats"][1].update(name=""),
        lambda d: d.update(seats=d["seats"][:1]),
        lambda d: d.update(seed_hash="xyz"),
        lambda d: d.update(tournament={"id": "t1", "round": 0, "table": 0}),  # no link (a good one: its archive)
    ],
)
def test_event_1_of_a_game_in_progress_is_checked_without_the_seed(change: Any) -> None:
    """The server's own audit of a running game sees every part but not the seed: event 1 is still
    exactly what the rules write for its settings."""
    record = unsealed(finished_record(), 5)
    assert verify_record(record)["verdict"] == "in_progress"
    change(record["events"][0]["data"])
    rechain(record)
    record = {"format": record["format"], "events": record["events"]}
    report = verify_record(record)
    assert report["verdict"] == "failed" and report["first_bad_event"] == 1, report


def test_a_result_in_the_opening_of_a_game_in_progress_fails_at_it() -> None:
    record = unsealed(finished_record(), 2)
    ended = copy.deepcopy(finished_record()["events"][-2])
    assert ended["type"] == "game_ended"
    ended["seq"] = 3
    record["events"].append(ended)
    rechain(record)
    report = verify_record({"format": record["format"], "events": record["events"]})
    assert report["verdict"] == "failed" and report["first_bad_event"] == 3


@pytest.mark.parametrize("name", [{"x": [1]}, None, 12, "", "x" * 65])
def test_a_joined_name_the_service_would_not_take_fails_at_the_join(name: Any) -> None:
    events = engine.create("toy", "j1", [Seat(0, "ann"), Seat(1, None, open=True)], SEED)
    events += engine.join(engine.replay(events), 1, "bob")
    events += play_out(events)
    record = sealed_record(events, SEED)
    joined = next(e for e in record["events"] if e["type"] == "seat_joined")
    joined["data"]["name"] = name
    rechain(record)
    assert verify_record(record)["first_bad_event"] == joined["seq"]


def test_a_wrong_or_missing_format_names_event_1_and_the_field() -> None:
    from tests.unit.test_audit import old_format

    mixed = old_format(finished_record(), upto=3)
    mixed["format"] = "kifu-record/1"
    for record in (mixed, {k: v for k, v in finished_record().items() if k != "format"}):
        report = verify_record(record)
        assert report["first_bad_event"] == 1 and report["bad_field"] == "format", report
