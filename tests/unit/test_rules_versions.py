"""Rules versions: a game goes on, replays and verifies under the rules version its ``game_created`` names.

San, Ni, Ichi! rules version 2 lets only an attack card or a Yoso Kogeki be discarded by choice; under
version 1 a Sai, Shuriken or Tonfa could be discarded too. ``data/san-ni-ichi-rules-1.record.json`` is
a record the server made before rules versions existed (commit e367e8e, its ``git archive`` run with
``engine.create`` and ``tests.support.records.sealed_record``, fixed deal ``BASE4`` of
``tests/unit/test_san_ni_ichi.py``, seed ``rules-version-1``): a whole 4-player game in which a
Sai (event 32), two Tonfas and two Shurikens were discarded by choice. A record valid when made must
verify forever.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tests.support.toy_game  # noqa: F401  (registers "toy": a game of one rules version)
from domain import engine
from domain.audit import verify_record
from domain.engine import Seat
from domain.errors import IllegalAction, InvalidOptions
from domain.events import Event
from domain.games.san_ni_ichi import RULES, moves
from domain.record import IN_PROGRESS_NOTE, to_event
from domain.registry import get_game
from domain.snapshot import table_from_data, table_to_data
from entrypoints.cli import main as cli
from tests.support.records import SALTS, sealed_record
from tests.unit.test_audit import rechain
from tests.unit.test_san_ni_ichi import BASE4

GAME = "san-ni-ichi"
OLD_RECORD = Path(__file__).parent / "data" / "san-ni-ichi-rules-1.record.json"
SAI_DISCARD = 32  # the position of the Sai's chosen discard (``action_taken``) in the old record
WEAPONS = ("sai", "shuriken", "tonfa")


def old_record() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(OLD_RECORD.read_text())
    return record


def chosen_weapon_discards(record: dict[str, Any]) -> list[str]:
    return [
        e["data"]["card"]
        for e in record["events"]
        if e["type"] == "card_discarded" and e["data"]["reason"] == "chosen" and e["data"]["card"].startswith(WEAPONS)
    ]


def up_to_the_sai(rules_version: str | None) -> engine.Table:
    """A game on ``BASE4`` (seed of the old record) played to seat 3's resolving ``sai-16``, which has
    two piles to swap: round 1 as in ``base4``, then seats 1 and 2 discard their attack cards."""
    seats = [Seat(i, f"p{i}") for i in range(4)]
    table = engine.replay(engine.create(GAME, "gv", seats, b"rules-version-1", deal=BASE4, rules_version=rules_version))
    script: list[tuple[int, dict[str, Any]]] = [
        *[(s, {"type": "select", "card": c}) for s, c in enumerate(("fire-4", "fire-1", "water-2", "wood-3"))],
        *[(s, {"type": "play", "target": t}) for s, t in ((1, 0), (2, 1), (3, 2), (0, 3))],
        *[(s, {"type": "select", "card": c}) for s, c in enumerate(("block-11", "water-5", "fire-6", "sai-16"))],
        (1, {"type": "discard"}),
        (2, {"type": "discard"}),
    ]
    for seat, action in script:
        table = engine.step(table, seat, action, salts=SALTS)[1]
    assert table.to_act == [3] and table.state.current is not None and table.state.current.card == "sai-16"
    return table


# ---------------------------------------------------------------- old records and old games


def test_a_record_made_before_rules_version_2_verifies_with_its_chosen_weapon_discards() -> None:
    record = old_record()
    assert record["rules_version"] == "1" and record["events"][0]["data"]["rules_version"] == "1"
    assert chosen_weapon_discards(record) == ["sai-16", "tonfa-14", "tonfa-13", "shuriken-22", "shuriken-21"]
    assert record["events"][SAI_DISCARD - 1]["data"] == {"seat": 3, "action": {"type": "discard"}}
    report = verify_record(record)
    assert report["verdict"] == "verified", report
    result = CliRunner().invoke(cli, ["verify", str(OLD_RECORD)])
    assert result.exit_code == 0 and "\nVERIFIED head " in result.output, result.output


def test_the_version_a_record_names_is_the_one_it_re_runs_under() -> None:
    """The same record claiming version 2 (chain and header fixed) fails at the Sai's discard."""
    record = old_record()
    record["events"][0]["data"]["rules_version"] = record["rules_version"] = "2"
    rechain(record)
    report = verify_record(record)
    assert report["verdict"] == "failed" and report["first_bad_event"] == SAI_DISCARD, report
    failed = next(c for c in report["checks"] if not c["ok"])
    assert "the rules refuse the recorded action: sai-16 cannot be discarded" in failed["detail"]


def test_a_stored_version_1_game_keeps_offering_the_discard_after_reload() -> None:
    """The old server's log up to the Sai, read back as stored (JSON), goes on under version 1."""
    envs = old_record()["events"][: SAI_DISCARD - 1]
    table = engine.replay([to_event(json.loads(json.dumps(e))) for e in envs])
    again = table_from_data(json.loads(json.dumps(table_to_data(table))))  # a snapshot of it, read back
    for loaded in (table, again):
        assert loaded.rules_version == loaded.state.rules_version == "1"
        assert loaded.to_act == [3] and loaded.state.current is not None and loaded.state.current.card == "sai-16"
        assert engine.legal_actions(loaded, 3) == [{"type": "sai", "piles": [1, 2]}, {"type": "discard"}]
        events = [e.to_dict() for e in engine.decide(loaded, 3, {"type": "discard"})]  # what the old server wrote
        assert events == [to_event(e).to_dict() for e in old_record()["events"][SAI_DISCARD - 1 :][: len(events)]]
        assert events[1]["data"] == {"seat": 3, "card": "sai-16", "reason": "chosen"}


def test_a_new_game_is_version_2_and_refuses_the_same_discard() -> None:
    table = up_to_the_sai(None)
    assert table.rules_version == table.state.rules_version == RULES.rules_version == "2"
    assert engine.legal_actions(table, 3) == [{"type": "sai", "piles": [1, 2]}]
    with pytest.raises(IllegalAction, match="sai-16 cannot be discarded: only an attack card or a Yoso Kogeki"):
        engine.decide(table, 3, {"type": "discard"})
    old = up_to_the_sai("1")  # the same position in a game created under version 1
    assert engine.legal_actions(old, 3) == [{"type": "sai", "piles": [1, 2]}, {"type": "discard"}]
    assert engine.decide(old, 3, {"type": "discard"})[1].data == {"seat": 3, "card": "sai-16", "reason": "chosen"}


def version_1_game(seed: int) -> dict[str, Any]:
    """The record of a version-1 game of two greedy bots and two random players who discard often."""
    rnd = random.Random(seed)
    seats = [Seat(0, "p0"), Seat(1, "g1", "greedy"), Seat(2, "p2"), Seat(3, "g3", "greedy")]
    key = f"v1-{seed}".encode()
    events = engine.create(GAME, f"v1r{seed}", seats, key, rules_version="1")
    table = engine.replay(events)
    while not table.finished:
        seat = rnd.choice(table.to_act)
        legal = engine.legal_actions(table, seat)
        if table.seats[seat].bot:
            action = dict(RULES.bots["greedy"](table.state, seat, rnd))
        elif {"type": "discard"} in legal and rnd.random() < 0.5:
            action = {"type": "discard"}  # often, so that weapons get discarded by choice
        else:
            action = engine.sample_action(table, seat, rnd)
        assert action in legal
        new, table = engine.step(table, seat, action, salts=SALTS)
        events += new
    return sealed_record(events, key)


def test_version_1_games_of_bots_and_random_players_finish_and_verify() -> None:
    """Bots and move timeouts pick among the legal actions of the game's own version."""
    records = [version_1_game(seed) for seed in range(4)]
    for record in records:
        assert record["rules_version"] == "1"
        assert verify_record(record)["verified"]
    assert sum(len(chosen_weapon_discards(r)) for r in records) >= 3  # the games do discard weapons by choice


# ---------------------------------------------------------------- versions a game does not have


def unknown_version(record: dict[str, Any], sealed: bool) -> dict[str, Any]:
    """``record`` claiming rules version 9, with the chain fixed (or cut before the Sai, unsealed)."""
    forged = copy.deepcopy(record)
    if not sealed:
        del forged["events"][SAI_DISCARD - 1 :]
        forged.update(seed=None, complete=False, note=IN_PROGRESS_NOTE)
    forged["events"][0]["data"]["rules_version"] = forged["rules_version"] = "9"
    rechain(forged)
    return forged


@pytest.mark.parametrize("sealed", [True, False])
def test_a_record_naming_a_rules_version_the_game_does_not_have_fails_naming_it(sealed: bool) -> None:
    genuine = unknown_version(old_record(), sealed)
    genuine["events"][0]["data"]["rules_version"] = genuine["rules_version"] = "1"
    rechain(genuine)
    assert verify_record(genuine)["verdict"] == ("verified" if sealed else "in_progress")
    report = verify_record(unknown_version(old_record(), sealed))
    assert report["verdict"] == "failed" and report["first_bad_event"] == 1, report
    details = " ".join(c["detail"] for c in report["checks"] if not c["ok"])
    assert 'San, Ni, Ichi! has no rules version "9": this server plays "1", "2"' in details


def test_only_the_versions_a_game_plays_are_created_or_replayed() -> None:
    seats = [Seat(i, f"p{i}") for i in range(3)]
    with pytest.raises(InvalidOptions, match='no rules version "9"') as refused:
        engine.create(GAME, "g", seats, b"s", rules_version="9")
    assert refused.value.field == ("rules_version",)
    created = engine.create(GAME, "g", seats, b"s")
    forged = Event(created[0].type, {**created[0].data, "rules_version": "9"}, created[0].private)
    with pytest.raises(InvalidOptions, match='no rules version "9"'):
        engine.replay([forged, *created[1:]])
    assert engine.rules_versions(RULES) == RULES.rules_versions == ("1", "2")
    assert set(moves.DISCARDABLE) == set(RULES.rules_versions)  # each version says what it discards


def test_a_game_without_rules_versions_plays_its_rules_version_only() -> None:
    toy = get_game("toy")
    assert engine.rules_versions(toy) == (toy.rules_version,) == ("1",)
    seats = [Seat(0, "ann"), Seat(1, "bob")]
    assert engine.create("toy", "t", seats, b"s", rules_version="1")[0].data["rules_version"] == "1"
    with pytest.raises(InvalidOptions, match='Toy has no rules version "2": this server plays "1"'):
        engine.create("toy", "t", seats, b"s", rules_version="2")
