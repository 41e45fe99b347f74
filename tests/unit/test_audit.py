"""The offline verifier: a clean record verifies; any change is caught at its first bad event."""

from __future__ import annotations

import json
from typing import Any

import pytest

import tests.support.toy_game  # noqa: F401
from domain import engine
from domain.audit import verify_record
from domain.engine import Seat
from domain.record import GENESIS, chain_hash, hashed_body
from tests.support.records import salt_source, sealed_record

SEED = b"audit-seed"


def finished_events() -> list[Any]:
    events = engine.create("toy", "a1", [Seat(0, "ann"), Seat(1, "bob", "random")], SEED)
    table = engine.replay(events)
    salts = salt_source("audit")
    picks = [(3, 1), (1, 2), (2, 2)]
    for a, b in picks:
        for seat, n in ((0, a), (1, b)):
            new = engine.decide(table, seat, {"type": "pick", "n": n}, salts=salts)
            table, events = engine.replay(new, table), events + new
        new = engine.decide(table, table.to_act[0], {"type": "ack"})
        table, events = engine.replay(new, table), events + new
    return events


def finished_record() -> dict[str, Any]:
    return sealed_record(finished_events(), SEED)


def rechain(record: dict[str, Any], start: int = 0) -> None:
    """Recompute hashes after a forgery (an attacker who also fixes the chain and the seal's head)."""
    prev = record["events"][start - 1]["hash"] if start else GENESIS
    for env in record["events"][start:]:
        env["prev"] = prev
        if env["type"] == "game_sealed":
            env["data"]["head"] = prev
        env["hash"] = prev = chain_hash(prev, hashed_body(env))
    record["head"] = prev


def first_bad(record: dict[str, Any]) -> int | None:
    report = verify_record(record)
    assert not report["verified"]
    return report["first_bad_event"]


def test_a_clean_record_verifies_with_every_check() -> None:
    report = verify_record(finished_record())
    assert report["verified"], report
    assert [c["name"] for c in report["checks"]] == [
        "format",
        "hash_chain",
        "header",
        "private_parts",
        "seed",
        "commitments",
        "rederivation",
        "signature",
    ]
    assert "6 revealed choices" in report["checks"][5]["detail"]
    assert report["format"] == "kifu-record/2"


def test_a_record_survives_json_round_trip() -> None:
    assert verify_record(json.loads(json.dumps(finished_record())))["verified"]


def test_changed_event_data_fails_at_that_event() -> None:
    record = finished_record()
    record["events"][5]["data"]["points"] = 99
    assert first_bad(record) == 6


def test_changed_data_with_a_recomputed_chain_fails_rederivation_at_that_event() -> None:
    record = finished_record()
    target = next(e for e in record["events"] if e["type"] == "round_scored")
    target["data"]["points"] = 1
    rechain(record)
    report = verify_record(record)
    bad = {c["name"]: c for c in report["checks"] if not c["ok"]}
    assert "rederivation" in bad and bad["rederivation"]["seq"] == target["seq"]
    assert "data.points should be 3, the record has 1" in bad["rederivation"]["detail"]


def test_a_rederivation_failure_names_the_first_field_that_differs() -> None:
    from domain.audit import first_difference

    want = {"data": {"result": {"scores": [3, 1]}, "a": 1}, "type": "x"}
    assert first_difference(want, {"data": {"result": {"scores": [3, 2]}, "a": 1}, "type": "x"}) == (
        "data.result.scores[1]",
        1,
        2,
    )
    where, _want, got = first_difference(want, {"data": {"result": {"scores": [3, 1]}}, "type": "x"})
    assert where == "data.a" and got is not None


def test_changed_hash_fails_at_that_event() -> None:
    record = finished_record()
    record["events"][3]["hash"] = "f" * 64
    assert first_bad(record) == 4


def test_changed_seed_fails() -> None:
    record = finished_record()
    record["seed"] = "00" * 16
    assert first_bad(record) == len(record["events"])


def test_changed_seed_inside_the_seal_fails_even_with_a_fixed_chain() -> None:
    record = finished_record()
    record["events"][-1]["data"]["seed"] = b"other-seed".hex()
    record["seed"] = b"other-seed".hex()
    rechain(record)
    assert first_bad(record) == len(record["events"])


def test_swapped_events_fail_at_the_first_of_them() -> None:
    record = finished_record()
    ev = record["events"]
    ev[3], ev[4] = ev[4], ev[3]
    assert first_bad(record) == 4


def test_dropped_event_fails_where_it_was() -> None:
    record = finished_record()
    del record["events"][6]
    assert first_bad(record) == 7


def test_a_changed_commitment_is_caught_even_with_a_fixed_chain() -> None:
    record = finished_record()
    committed = next(e for e in record["events"] if e["type"] == "choice_committed")
    committed["data"]["commitments"] = ["0" * 64]
    rechain(record)
    report = verify_record(record)
    failed = {c["name"]: c["seq"] for c in report["checks"] if not c["ok"]}
    assert "commitments" in failed and report["first_bad_event"] == committed["seq"]


def test_a_changed_secret_choice_is_caught() -> None:
    record = finished_record()
    committed = next(e for e in record["events"] if e["type"] == "choice_committed")
    committed["private"][str(committed["data"]["seat"])]["action"]["n"] = 1
    rechain(record)
    assert first_bad(record) == committed["seq"]


def test_a_changed_deal_is_caught_by_the_seed() -> None:
    record = finished_record()
    record["events"][1]["private"]["0"]["cards"][0] += 1
    rechain(record)
    assert first_bad(record) == 2


@pytest.mark.parametrize("field, value", [("game", "other"), ("options", {"rounds": 1}), ("seed_hash", "0" * 64)])
def test_a_changed_header_is_caught(field: str, value: Any) -> None:
    record = finished_record()
    record[field] = value
    assert first_bad(record) == 1


@pytest.mark.parametrize("garbage", [None, [], {}, {"events": []}, {"events": [1]}, {"events": [{"seq": 1}]}])
def test_garbage_is_refused_not_crashed_on(garbage: Any) -> None:
    assert not verify_record(garbage)["verified"]


def test_every_single_event_mutation_is_rejected() -> None:
    """Trillian-style: change each event in turn (data, then type); none verifies."""
    for i in range(len(finished_record()["events"])):
        for mutate in ("data", "type"):
            record = finished_record()
            env = record["events"][i]
            if mutate == "data":
                env["data"] = {**env["data"], "forged": True}
            else:
                env["type"] = env["type"] + "_forged"
            assert not verify_record(record)["verified"], (i, mutate)
            rechain(record)
            assert not verify_record(record)["verified"], (i, mutate, "rechained")


# ---------------------------------------------------------------- private parts and their commitments


def with_private(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in record["events"] if e["private"]]


def test_every_private_part_and_every_salt_change_is_rejected_at_its_event() -> None:
    """Trillian-style over the private parts: change each part, then each salt; each fails at its event."""
    for i, env in enumerate(with_private(finished_record())):
        for audience in env["private"]:
            for target in ("private", "private_salts"):
                record = finished_record()
                forged = with_private(record)[i]
                if target == "private":
                    forged["private"][audience] = {**forged["private"][audience], "forged": True}
                else:
                    forged["private_salts"][audience] = "f" * 32
                report = verify_record(record)
                failed = {c["name"]: c["seq"] for c in report["checks"] if not c["ok"]}
                assert failed.get("private_parts") == forged["seq"], (forged["type"], audience, target)
                assert report["first_bad_event"] == forged["seq"]


def test_a_recommitted_deal_with_a_fixed_chain_is_caught_by_the_seed() -> None:
    """A forger who changes a dealt hand and also recomputes its commitment and the chain."""
    from domain.record import part_commitment

    record = finished_record()
    dealt = record["events"][1]
    dealt["private"]["0"]["cards"][0] += 1
    dealt["private_commitments"]["0"] = part_commitment("0", dealt["private"]["0"], dealt["private_salts"]["0"])
    rechain(record)
    report = verify_record(record)
    failed = {c["name"] for c in report["checks"] if not c["ok"]}
    assert failed == {"rederivation"} and report["first_bad_event"] == 2


def test_a_withheld_private_part_in_a_complete_record_fails() -> None:
    record = finished_record()
    dealt = record["events"][1]
    del dealt["private"]["hidden"], dealt["private_salts"]["hidden"]
    assert first_bad(record) == 2


def test_a_short_salt_fails_even_when_its_commitment_matches() -> None:
    """A salt under 128 bits would have let anyone test guesses against the commitment while the game ran."""
    from domain.record import part_commitment

    record = finished_record()
    dealt = record["events"][1]
    dealt["private_salts"]["0"] = "abcd"
    dealt["private_commitments"]["0"] = part_commitment("0", dealt["private"]["0"], "abcd")
    rechain(record)
    check = next(c for c in verify_record(record)["checks"] if c["name"] == "private_parts")
    assert not check["ok"] and "128 bits" in check["detail"] and check["seq"] == 2


def test_a_short_choice_salt_fails_the_commitments_check() -> None:
    events = engine.create("toy", "a1", [Seat(0, "ann"), Seat(1, "bob")], SEED)
    table = engine.replay(events)
    for seat in (0, 1):
        new = engine.decide(table, seat, {"type": "pick", "n": 2}, salts=["ab"])
        table, events = engine.replay(new, table), events + new
    report = verify_record({**sealed_record(events, SEED), "complete": True})
    check = next(c for c in report["checks"] if c["name"] == "commitments")
    assert not check["ok"] and "128 bits" in check["detail"]


def test_a_record_of_a_game_in_progress_checks_its_chain_but_is_not_verified() -> None:
    from domain.record import withheld_envelope

    record = finished_record()
    running = {
        **record,
        "complete": False,
        "seed": None,
        "events": [withheld_envelope(e) for e in record["events"][:-2]],
    }
    running["head"] = running["events"][-1]["hash"]
    report = verify_record(running)
    assert {c["name"]: c["ok"] for c in report["checks"]} == {
        "format": True,
        "hash_chain": True,
        "header": True,
        "private_parts": True,
        "seed": True,
        "commitments": True,
        "signature": True,
        "sealed": False,
    }
    assert report["verdict"] == "in_progress" and not report["verified"] and report["first_bad_event"] is None
    running["events"][3]["data"]["seat"] = 1 - running["events"][3]["data"]["seat"]
    assert not next(c for c in verify_record(running)["checks"] if c["name"] == "hash_chain")["ok"]
    assert verify_record(running)["verdict"] == "failed"


# ---------------------------------------------------------------- the old format (kifu-record/1)


def old_format(record: dict[str, Any], upto: int | None = None) -> dict[str, Any]:
    """``record`` rewritten in format 1 (private parts hashed in the clear), for its first ``upto`` events."""
    events = record["events"]
    upto = len(events) if upto is None else upto
    prev = GENESIS
    for env in events[:upto]:
        for key in ("v", "private_commitments", "private_salts"):
            env.pop(key)
        env["prev"] = prev
        body = {"seq": env["seq"], "type": env["type"], "data": env["data"], "private": env["private"], "at": env["at"]}
        env["hash"] = prev = chain_hash(prev, body)
    if upto == len(events):
        record["format"] = "kifu-record/1"
        if events[-1]["type"] == "game_sealed":  # the seal carries the head before it
            events[-1]["data"]["head"] = events[-1]["prev"]
            events[-1]["hash"] = chain_hash(events[-1]["prev"], hashed_body(events[-1]))
        record["head"] = events[-1]["hash"]
    else:
        rechain(record, upto)
    return record


def test_an_old_format_record_verifies_and_is_marked_old() -> None:
    report = verify_record(old_format(finished_record()))
    assert report["verified"], report
    assert report["format"] == "kifu-record/1"
    assert "old format" in report["checks"][0]["detail"]
    names = [c["name"] for c in report["checks"]]
    assert "private_parts" in names  # nothing to check in format 1, and it says so
    forged = old_format(finished_record())
    forged["events"][1]["private"]["0"]["cards"][0] += 1
    assert first_bad(forged) == 2  # format 1 hashed the part itself


def test_a_game_upgraded_mid_way_verifies_with_its_format_1_prefix_counted() -> None:
    report = verify_record(old_format(finished_record(), upto=4))
    assert report["verified"], report
    assert "the first 4 in format 1" in report["checks"][0]["detail"]


def test_format_1_events_after_format_2_ones_are_refused() -> None:
    record = finished_record()
    del record["events"][5]["v"]
    assert first_bad(record) == 6


@pytest.mark.parametrize("fmt", [None, "kifu-record/3", "nonsense"])
def test_an_unknown_record_format_is_refused_with_a_clear_message(fmt: Any) -> None:
    record = {**finished_record(), "format": fmt}
    report = verify_record(record)
    assert not report["verified"] and "unknown record format" in report["checks"][0]["detail"]


def test_a_record_with_a_join_and_a_resignation_verifies_and_a_forged_join_fails() -> None:
    events = engine.create("toy", "j1", [Seat(0, "ann"), Seat(1, None, open=True)], SEED)
    table = engine.replay(events)
    for new in (engine.join(table, 1, "bob"), engine.decide(table, 0, {"type": "resign"})):
        table, events = engine.replay(new, table), events + new
    record = sealed_record(events, SEED)
    assert verify_record(record)["verified"]
    assert record["events"][-2]["data"]["result"]["resigned"] == 0
    joined = next(e for e in record["events"] if e["type"] == "seat_joined")
    joined["data"]["seat"] = 0  # seat 0 was never open
    rechain(record)
    assert first_bad(record) == joined["seq"]
