"""The offline verifier: a clean record verifies; any change is caught at its first bad event."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import tests.support.toy_game  # noqa: F401
from domain import engine
from domain.audit import verify_record
from domain.engine import Seat
from domain.record import GENESIS, build_record, chain_hash, envelopes

SEED = b"audit-seed"
AT = "2026-01-01T00:00:00.000Z"


def finished_record() -> dict[str, Any]:
    events = engine.create("toy", "a1", [Seat(0, "ann"), Seat(1, "bob", "random")], SEED)
    table = engine.replay(events)
    picks = [(3, 1), (1, 2), (2, 2)]
    for i, (a, b) in enumerate(picks):
        for seat, n in ((0, a), (1, b)):
            new = engine.decide(table, seat, {"type": "pick", "n": n}, salts=[f"salt-{i}-{seat}"])
            table, events = engine.replay(new, table), events + new
        new = engine.decide(table, table.to_act[0], {"type": "ack"})
        table, events = engine.replay(new, table), events + new
    envs = envelopes(events, 1, GENESIS, AT)
    envs += envelopes([engine.seal(SEED, envs[-1]["hash"])], len(envs) + 1, envs[-1]["hash"], AT)
    bots = {"random": {"name": "random", "version": "toy/1", "settings": {}}}
    return build_record(envs, bots)


def rechain(record: dict[str, Any], start: int = 0) -> None:
    """Recompute hashes after a forgery (an attacker who also fixes the chain)."""
    prev = record["events"][start - 1]["hash"] if start else GENESIS
    for env in record["events"][start:]:
        env["prev"] = prev
        body = {k: env[k] for k in ("seq", "type", "data", "private", "at")}
        env["hash"] = prev = chain_hash(prev, body)
    record["head"] = prev


def first_bad(record: dict[str, Any]) -> int | None:
    report = verify_record(record)
    assert not report["verified"]
    return report["first_bad_event"]


def test_a_clean_record_verifies_with_every_check() -> None:
    report = verify_record(finished_record())
    assert report["verified"], report
    assert [c["name"] for c in report["checks"]] == ["format", "hash_chain", "header", "seed", "commitments",
                                                      "rederivation"]
    assert "6 revealed choices" in report["checks"][4]["detail"]


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
