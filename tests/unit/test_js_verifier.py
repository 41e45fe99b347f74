"""The JavaScript verifier (verifier/kifu-verify.mjs), written from the docs alone, against the Python one.

One ``node --batch`` process verifies every record here (genuine records of all five games, fixed
deals, a game in progress, format 1, hand-picked forgeries and a sample of ``bench.forgeries``), and
each verdict is compared with ``domain.audit.verify_record``'s. The JavaScript verifier does not
re-run the rules (its ``deal`` check re-derives only the deal), so where Python's ``rederivation``
fails the comparison is of the checks both run: the same checks fail, and the first bad event is the
one the shared checks name (or the deal's, which ``rederivation`` names too).
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.forgeries import GAMES, counter_salts, forgeries, play, rechain, sealed
from domain import engine
from domain.audit import verify_record
from domain.engine import Seat
from domain.record import (
    GENESIS,
    IN_PROGRESS_NOTE,
    build_record,
    chain_hash,
    envelopes,
    hashed_body,
    part_commitment,
    withheld_envelope,
)

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "verifier" / "kifu-verify.mjs"
AT = "2026-01-01T00:00:00.000Z"
PYTHON_ONLY, JS_ONLY = {"rederivation"}, {"deal", "signature", "inclusion"}


def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail(
            "node is not installed: install Node 20 (https://nodejs.org) to run the JavaScript verifier's tests"
        )
    return path


def run_batch(records: list[Any]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    done = subprocess.run(
        [node(), str(VERIFIER), "--batch"], input=lines.encode(), capture_output=True, timeout=120, check=True
    )
    out = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(out) == len(records), done.stderr.decode()
    return out


# ---------------------------------------------------------------- records


def record_of(events: list[Any], seed: bytes, tag: str) -> dict[str, Any]:
    salts = counter_salts(tag)
    envs = envelopes(events, 1, GENESIS, AT, salts)
    envs += envelopes([engine.seal(seed, envs[-1]["hash"])], len(envs) + 1, envs[-1]["hash"], AT, salts)
    out: dict[str, Any] = json.loads(json.dumps(build_record(envs)))
    return out


def fixed_deal_records() -> list[dict[str, Any]]:
    """A finished, sealed game of each game dealt from a fixed deal: the deal check reads the deal."""
    deals: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = [
        ("san-ban", 2, {"first": 1}, {"decks": [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"]] * 2}),
        (
            "nin-nal",
            2,
            {},
            {
                "piles": ["rock-1", "paper-1", "scissors-1"],
                "hands": [[f"rock-{i}" for i in range(2, 11)], [f"paper-{i}" for i in range(2, 11)]],
            },
        ),
        ("kiri-ai", 2, {}, {"specials": ["counterattack", "kesa"]}),
        (
            "san-ni-ichi",
            3,
            {"deck": "alt-2"},
            {
                "weapons": [],
                "hands": [
                    [f"{e}-{s}" for e, s in cards]
                    for cards in (
                        [("fire", i) for i in range(1, 8)],
                        [("water", i) for i in range(1, 8)],
                        [("wood", i) for i in range(1, 8)],
                    )
                ],
            },
        ),
        ("front-line", 2, {}, {"piles": [["rock-a", "rock-2", "rock-3", "rock-4"], ["water-k"]]}),
    ]
    out = []
    for game, n, options, deal in deals:
        seed, rnd = bytes(range(32)), random.Random(game)
        events, table = engine.start(game, f"fixed-{game}", [Seat(i, f"p{i}") for i in range(n)], seed, options, deal)
        salts = counter_salts(f"play{game}")
        while not table.finished:
            seat = rnd.choice(table.to_act)
            new, table = engine.step(table, seat, engine.sample_action(table, seat, rnd), salts=salts)
            events += new
        out.append(record_of(events, seed, f"fixed{game}"))
    return out


def in_progress(record: dict[str, Any], upto: int) -> dict[str, Any]:
    events = [withheld_envelope(e) for e in record["events"][:upto]]
    return {**build_record(events), "note": IN_PROGRESS_NOTE}


def old_format(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` rewritten in format 1 (private parts hashed in the clear)."""
    record = copy.deepcopy(record)
    prev = GENESIS
    for env in record["events"]:
        for key in ("v", "private_commitments", "private_salts"):
            env.pop(key)
        env["prev"] = prev
        if env["type"] == engine.GAME_SEALED:
            env["data"]["head"] = prev
        env["hash"] = prev = chain_hash(prev, hashed_body(env))
    record.update(format="kifu-record/1", head=prev)
    return record


def forgery(genuine: dict[str, Any], change: Callable[[dict[str, Any]], Any], chain: bool = False) -> dict[str, Any]:
    """A copy of ``genuine`` with ``change`` made (and the hash chain made whole again with ``chain``)."""
    rec = copy.deepcopy(genuine)
    change(rec)
    if chain:
        rechain(rec)
    return rec


def hand_picked(genuine: dict[str, Any]) -> list[Any]:
    """Forgeries of one sealed record, each changing one thing the checks both verifiers run must catch."""

    def forged(change: Callable[[dict[str, Any]], Any], chain: bool = False) -> dict[str, Any]:
        return forgery(genuine, change, chain)

    def ev(i: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda r: r["events"][i]

    return [
        forged(lambda r: ev(1)(r)["data"].update(x=1)),
        forged(lambda r: ev(1)(r)["data"].update(x=1), chain=True),
        forged(lambda r: ev(-1)(r)["data"].update(seed="00" * 32), chain=True),
        forged(lambda r: ev(-1)(r)["data"].pop("head"), chain=True),
        forged(lambda r: ev(3)(r).update(seq=3.0), chain=True),
        forged(lambda r: ev(3)(r).update(seq=True)),
        forged(lambda r: ev(2)(r).update(extra=1)),
        forged(lambda r: ev(2)(r).update(hash=ev(2)(r)["hash"].upper())),
        forged(lambda r: ev(1)(r)["private_salts"].update({k: "F" * 32 for k in ev(1)(r)["private_salts"]})),
        forged(lambda r: ev(1)(r)["private"].clear()),
        forged(lambda r: ev(1)(r)["private_commitments"].update(stray="0" * 64), chain=True),
        forged(lambda r: r.update(extra=True)),
        forged(lambda r: r.update(note=IN_PROGRESS_NOTE)),
        forged(lambda r: r.update(complete=1)),
        forged(lambda r: r.update(format="kifu-record/3")),
        forged(lambda r: r["seats"][0].update(bot_info={})),
        forged(lambda r: r["options"].update(extra=None)),
        forged(lambda r: r.update(head=None)),
        forged(lambda r: r["events"].append(copy.deepcopy(r["events"][-1]))),
        forged(lambda r: r.update(events=[])),
        forged(lambda r: ev(0)(r)["data"].update(seed_hash="0" * 64), chain=True),
        {"format": "kifu-record/2"},
        [genuine],
    ]


def deal_forgery(genuine: dict[str, Any]) -> dict[str, Any]:
    """Event 2's deal changed (seats 0 and 1 swap their parts, or the hidden draw piles are reversed),
    recommitted and rechained: only the deal tells it from the seed's."""
    rec = copy.deepcopy(genuine)
    env = rec["events"][1]
    parts = env["private"]
    if "1" in parts:
        parts["0"], parts["1"] = parts["1"], parts["0"]
    else:
        parts["hidden"]["draw"].reverse()
    for audience in parts:
        env["private_commitments"][audience] = part_commitment(
            audience, parts[audience], env["private_salts"][audience]
        )
    rechain(rec)
    return rec


@pytest.fixture(scope="module")
def genuine() -> list[dict[str, Any]]:
    out = []
    for game in GAMES:
        events, seed = play(game, 7, counter_salts(f"js{game}"))
        out.append(sealed(events, seed, counter_salts(f"jsseal{game}")))
    return out


# ---------------------------------------------------------------- comparing verdicts


def agree(py: dict[str, Any], js: dict[str, Any]) -> str | None:
    """None when the two verifiers agree on a record, else what differs."""
    py_failed = {c["name"] for c in py["checks"] if not c["ok"] and c["name"] != "sealed"}
    js_failed = set(js["failed"])
    if js_failed - JS_ONLY != py_failed - PYTHON_ONLY:
        return f"failed checks: python {sorted(py_failed)}, js {sorted(js_failed)}"
    if js["bad_field"] != py["bad_field"]:
        return f"bad_field: python {py['bad_field']}, js {js['bad_field']}"
    if "rederivation" not in py_failed:
        if "deal" in js_failed or (js["verdict"], js["first_bad_event"]) != (py["verdict"], py["first_bad_event"]):
            py_says, js_says = (py["verdict"], py["first_bad_event"]), (js["verdict"], js["first_bad_event"])
            return f"verdict and first bad event: python {py_says}, js {js_says}"
        return None
    shared = [
        c["seq"] for c in py["checks"] if not c["ok"] and c["name"] in py_failed - PYTHON_ONLY and c["seq"] is not None
    ]
    first_shared = min(shared) if shared else None
    js_first = js["first_bad_event"]
    if "deal" in js_failed:  # the deal is the rules' opening: rederivation names it too, at the same event or before
        ok = (
            js_first is not None
            and js_first >= py["first_bad_event"]
            and (first_shared is None or js_first <= first_shared)
        )
    else:
        ok = js_first == first_shared
    return (
        None if ok else f"first bad event: python {py['first_bad_event']} (shared checks {first_shared}), js {js_first}"
    )


def compare(records: list[Any]) -> list[str]:
    js = run_batch(records)
    return [f"record {i}: {why}" for i, (r, j) in enumerate(zip(records, js)) if (why := agree(verify_record(r), j))]


# ---------------------------------------------------------------- tests


def test_the_documented_vectors() -> None:
    done = subprocess.run(
        [node(), str(ROOT / "verifier" / "test-vectors.mjs")], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


def test_genuine_records_verify_in_both(genuine: list[dict[str, Any]]) -> None:
    records = [*genuine, *fixed_deal_records(), old_format(genuine[0]), in_progress(genuine[1], 5)]
    records.append(in_progress(genuine[2], 1))
    assert compare(records) == []
    verdicts = [r["verdict"] for r in run_batch(records)]
    assert verdicts == ["verified"] * 11 + ["in_progress"] * 2


def test_hand_picked_forgeries_fail_alike(genuine: list[dict[str, Any]]) -> None:
    records = [f for g in genuine for f in hand_picked(g)] + [deal_forgery(g) for g in genuine]
    assert compare(records) == []
    js = run_batch([deal_forgery(g) for g in genuine])
    assert all(r["verdict"] == "failed" and r["failed"] == ["deal"] and r["first_bad_event"] == 2 for r in js), js


def test_a_sample_of_bench_forgeries_fails_alike(genuine: list[dict[str, Any]]) -> None:
    rnd = random.Random(3)
    records = []
    for g in genuine:
        n = len(g["events"])
        positions = sorted({1, 2, n - 1, n, rnd.randrange(3, n - 1)})
        records += [f.record for f in forgeries(g, positions)]
    assert len(records) > 250
    assert compare(records) == []


def search_seat_record() -> dict[str, Any]:
    """A sealed Kiri-ai record whose seat 1 is a search level with its settings committed in event 1
    (the moves are random: the verifiers do not re-run bots)."""
    seats = [Seat(0, "ann"), engine.new_seat("kiri-ai", 1, "bot", "search")]
    events, table = engine.start("kiri-ai", "g-js-search", seats, bytes(32))
    salts, rnd = counter_salts("jssearch"), random.Random(5)
    while not table.finished:
        seat = rnd.choice(table.to_act)
        more, table = engine.step(table, seat, engine.sample_action(table, seat, rnd), salts=salts)
        events += more
    return sealed(events, bytes(32), counter_salts("jssearchseal"))


def test_a_search_seats_settings_are_derived_alike() -> None:
    """Both verifiers derive ``bot_info.settings`` from the seat's ``bot_settings`` in event 1: the genuine
    record verifies in both; a header whose settings differ, or event 1's settings changed (chained
    again), fails alike."""
    record = search_seat_record()
    assert record["seats"][1]["bot_info"]["settings"]["algorithm"] == "so-ismcts"

    def forged(change: Callable[[dict[str, Any]], Any], chain: bool = False) -> dict[str, Any]:
        return forgery(record, change, chain)

    records = [
        record,
        forged(lambda r: r["seats"][1]["bot_info"]["settings"].update(iterations=1)),
        forged(lambda r: r["seats"][1]["bot_info"].update(settings={})),
        forged(lambda r: r["events"][0]["data"]["seats"][1]["bot_settings"].update(iterations=1)),
        forged(lambda r: r["events"][0]["data"]["seats"][1]["bot_settings"].update(iterations=1), chain=True),
    ]
    assert compare(records) == []
    js = run_batch(records)
    assert [r["verdict"] for r in js] == ["verified"] + ["failed"] * 4
    assert js[1]["bad_field"] == "seats[1].bot_info.settings.iterations"


def test_text_that_is_not_strict_json_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kifu-record/2", "format": "kifu-record/1", "events": []}')
    done = subprocess.run([node(), str(VERIFIER), str(bad)], capture_output=True, timeout=30, check=False)
    assert done.returncode == 1 and done.stdout.decode().splitlines()[-1] == "NOT VERIFIED head None"
    missing = subprocess.run(
        [node(), str(VERIFIER), str(tmp_path / "none.json")], capture_output=True, timeout=30, check=False
    )
    assert missing.returncode == 2
