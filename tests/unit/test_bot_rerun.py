"""A bot's decision is reproducible from the record: ``domain.bots.rerun`` re-runs every one.

Games are played as the service's bot workers play them (``GameService.bot_random``: a search level's
stream from the game's seed, the others' public), sealed into a record, verified, and re-run. A move
that was not the bot's (another legal action in its place) is named.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain import analysis, engine, search
from domain.audit import verify_record
from domain.bots import bot_stream, choose_action, rerun, turn_stream
from domain.canonical import same
from domain.decisions import decisions as engine_decisions
from domain.engine import Seat, Table
from domain.errors import InvalidOptions
from domain.events import Event
from domain.registry import get_game
from entrypoints.cli import main as cli
from tests.support.records import salt_source, sealed_record

SEED = bytes(range(32))
Swap = Callable[[Table, int, dict[str, Any]], dict[str, Any]]


def _played(
    game: str,
    levels: Sequence[str],
    swap_at: int | None = None,
    settings: Mapping[int, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], int | None]:
    """A sealed record of bots of ``levels`` (a seat's committed ``settings`` where given); at the
    ``swap_at``-th bot decision another legal action is played in the bot's place. Also the seq of the
    event that recorded the swapped decision."""
    given = settings or {}
    seats = [Seat(i, f"bot{i}", level, settings=given.get(i)) for i, level in enumerate(levels)]
    events, table = engine.start(game, "g-rerun", seats, SEED)
    salts = salt_source("rerun")
    decisions, swapped = 0, None
    while not table.finished:
        seat = table.to_act[0]
        level = levels[seat]
        rnd = turn_stream(level, SEED, "g-rerun", seat, table.turn_version)
        action = choose_action(table, seat, level, rnd)
        if decisions == swap_at:
            others = [a for a in engine.legal_actions(table, seat) if not same(a, action)]
            if others:
                action = others[0]
                swapped = len(events) + 1
            else:
                swap_at += 1  # a forced move: swap the next one
        decisions += 1
        more, table = engine.step(table, seat, action, salts=salts)
        events += more
    return sealed_record(events, SEED), swapped


def _seq_of(record: dict[str, Any], seq: int) -> Event:
    return Event.from_dict(record["events"][seq - 1])


def test_every_bot_decision_of_a_search_game_is_the_bots() -> None:
    record, _ = _played("nin-nal", ["search", "greedy"])
    assert verify_record(record)["verdict"] == "verified"
    decisions = rerun(record)
    assert {d["level"] for d in decisions} == {"search", "greedy"}
    assert len(decisions) >= 18  # nine selects each, then the takes and places
    assert all(d["same"] for d in decisions), [d for d in decisions if not d["same"]][:1]


def test_a_move_that_was_not_the_bots_is_named() -> None:
    record, swapped = _played("nin-nal", ["search", "random"], swap_at=3)
    assert swapped is not None
    decisions = rerun(record)
    wrong = [d for d in decisions if not d["same"]]
    assert [d["seq"] for d in wrong] == [swapped]
    assert _seq_of(record, swapped).type in (engine.ACTION_TAKEN, engine.CHOICE_COMMITTED)


def test_kifu_verify_bots_fails_a_record_whose_bot_move_was_not_the_bots(tmp_path: Path) -> None:
    """The record verifies (chained, committed, re-derived: the swapped move is legal), yet ``--bots`` fails it
    at the swapped event; without ``--bots`` it is VERIFIED."""
    record, swapped = _played("nin-nal", ["search", "random"], swap_at=3)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    plain = CliRunner().invoke(cli, ["verify", str(path)])
    assert plain.exit_code == 0, plain.output
    checked = CliRunner().invoke(cli, ["verify", "--bots", str(path)])
    assert checked.exit_code == 1
    assert "FAIL bots: 1 of" in checked.output and f"event {swapped}," in checked.output
    assert f"first bad event: {swapped}" in checked.output


def test_another_seed_gives_the_search_bot_another_stream() -> None:
    """The stream is keyed by the seed: the same seat and turn give unrelated streams under two seeds,
    and the same stream under the same seed (the auditor's)."""
    one = [bot_stream(SEED, 0, 5).random() for _ in range(3)]
    again = [bot_stream(SEED, 0, 5).random() for _ in range(3)]
    other = [bot_stream(bytes(32), 0, 5).random() for _ in range(3)]
    later = [bot_stream(SEED, 0, 6).random() for _ in range(3)]
    assert one == again
    assert one not in (other, later)
    assert bot_stream(SEED, 1, 5).random() != one[0]


def test_timeouts_are_not_rerun() -> None:
    """An action marked ``by: timeout`` is the server's random move, not the bot's."""
    seats = [Seat(0, "a", "greedy"), Seat(1, "b", "greedy")]
    events, table = engine.start("san-ban", "g-t", seats, SEED, options={"first": 0})
    salts = salt_source("t")
    rnd = random.Random(0)
    while not table.finished:
        seat = table.to_act[0]
        action = engine.sample_action(table, seat, rnd)
        more, table = engine.step(table, seat, action, salts=salts, by="timeout")
        events += more
    assert rerun(sealed_record(events, SEED)) == []


def test_a_search_seat_plays_and_reruns_with_the_settings_its_record_commits_to() -> None:
    """A seat created with a budget of its own (``bot_settings``) plays the whole game with it; the record
    shows it (``bot_info.settings``) and the re-run uses it: every decision is the bot's. Re-run with the
    level's budget of today instead, some decisions differ, so the recorded budget is what decided."""
    small = {**search.settings(get_game("nin-nal"), "search"), "iterations": 4}
    record, _ = _played("nin-nal", ["search", "greedy"], settings={0: small})
    assert record["events"][0]["data"]["seats"][0]["bot_settings"] == small
    assert record["seats"][0]["bot_info"]["settings"] == small
    assert record["seats"][1]["bot_info"]["settings"] == {}
    assert verify_record(record)["verdict"] == "verified"
    decisions = [d for d in rerun(record) if d["level"] == "search"]
    assert len(decisions) >= 9 and all(d["same"] for d in decisions)
    differ = []
    for d in engine_decisions(record):
        if d.seat == 0:
            table = d.table
            rnd = turn_stream("search", SEED, "g-rerun", 0, table.turn_version)
            todays = search.choose(table.game, table.state, 0, len(table.seats), "search", rnd)
            differ += [] if same(d.action, todays) else [d.step]
    assert differ, "the level's own budget took every decision the 4-iteration budget took"


def test_a_new_search_seat_commits_to_its_levels_settings_of_today() -> None:
    seat = engine.new_seat("kiri-ai", 1, "kiri", "search-strong")
    assert seat.settings == search.settings(get_game("kiri-ai"), "search-strong")
    assert seat.to_dict()["bot_settings"] == seat.settings
    assert engine.new_seat("kiri-ai", 0, "k", "greedy").to_dict() == {"seat": 0, "name": "k", "bot": "greedy"}
    assert Seat.from_dict(seat.to_dict()) == seat


@pytest.mark.parametrize(
    ("bot", "change", "says"),
    [
        ("greedy", {}, "only a search level"),
        ("search", {"iterations": 0}, "iterations"),
        ("search", {"iterations": "150"}, "iterations"),
        ("search", {"exploration": True}, "exploration"),
        ("search", {"rollout_depth": 2.0}, "rollout_depth"),
        ("search", {"opponents": "oracle"}, "opponents"),
        ("search", {"algorithm": "minimax"}, "algorithm"),
        ("search", {"peek": True}, "unknown bot setting 'peek'"),
    ],
)
def test_bad_bot_settings_are_refused_naming_the_field(bot: str, change: dict[str, Any], says: str) -> None:
    """Event 1 is re-created from its seats by the auditor, so settings no level could have are refused
    there as here: a forged budget cannot pass for a search bot's."""
    settings = {**search.settings(get_game("nin-nal"), "search"), **change}
    seats = [Seat(0, "a", bot, settings=settings), Seat(1, "b", "random")]
    with pytest.raises(InvalidOptions) as refused:
        engine.start("nin-nal", "g-bad", seats, SEED)
    assert says in str(refused.value)
    assert refused.value.field == ("players", 0, "bot_settings")


ADVANCED = {"mode": "advanced"}
LEVELS = ("search", "greedy")  # the advanced record's seats


def _advanced_record(swap_at: int | None = None) -> tuple[dict[str, Any], int | None]:
    """A sealed advanced San Ban record, an expectimax ``search`` seat against ``greedy``; at the
    ``swap_at``-th decision of seat 0 another cell is played in the bot's place."""
    seats = [engine.new_seat("san-ban", i, f"bot{i}", level, options=ADVANCED) for i, level in enumerate(LEVELS)]
    events, table = engine.start("san-ban", "g-adv", seats, SEED, options=ADVANCED)
    salts = salt_source("adv")
    mine, swapped = 0, None
    while not table.finished:
        seat = table.to_act[0]
        rnd = turn_stream(LEVELS[seat], SEED, "g-adv", seat, table.turn_version)
        action = choose_action(table, seat, LEVELS[seat], rnd)
        if seat == 0:
            others = [a for a in engine.legal_actions(table, seat) if not same(a, action)]
            if mine == swap_at and others:
                action, swapped = others[0], len(events) + 1
            mine += 1
        more, table = engine.step(table, seat, action, salts=salts)
        events += more
    return sealed_record(events, SEED), swapped


def test_an_advanced_san_ban_search_seat_plays_and_reruns_by_expectimax() -> None:
    """The seat commits to the expectimax's settings (not the tree search's), the record shows them, and
    every decision re-runs the same; a cell that was not the bot's is named."""
    record, _ = _advanced_record()
    settings = record["seats"][0]["bot_info"]["settings"]
    assert settings == search.settings(get_game("san-ban"), "search", ADVANCED)
    assert settings["algorithm"] == "expectimax"
    assert verify_record(record)["verdict"] == "verified"
    decisions = [d for d in rerun(record) if d["level"] == "search"]
    assert len(decisions) >= 4 and all(d["same"] for d in decisions)
    forged, swapped = _advanced_record(swap_at=2)
    assert swapped is not None
    assert [d["seq"] for d in rerun(forged) if not d["same"]] == [swapped]


@pytest.mark.parametrize(
    ("game", "options", "change", "says"),
    [
        ("nin-nal", None, {}, "San Ban's advanced mode only"),
        ("san-ban", {"mode": "gamer"}, {}, "San Ban's advanced mode only"),
        ("san-ban", ADVANCED, {"depth": 0}, "depth"),
        ("san-ban", ADVANCED, {"exact": 7}, "exact"),
        ("san-ban", ADVANCED, {"depth": 5}, "depth"),
        ("san-ban", ADVANCED, {"samples": 1.5}, "samples"),
        ("san-ban", ADVANCED, {"iterations": 400}, "unknown bot setting 'iterations'"),
    ],
)
def test_expectimax_settings_are_refused_where_they_do_not_fit(
    game: str, options: dict[str, Any] | None, change: dict[str, Any], says: str
) -> None:
    settings = {**search.settings(get_game("san-ban"), "search", ADVANCED), **change}
    seats = [Seat(0, "a", "search", settings=settings), Seat(1, "b", "random")]
    with pytest.raises(InvalidOptions) as refused:
        engine.start(game, "g-bad", seats, SEED, options=options)
    assert says in str(refused.value)
    assert refused.value.field == ("players", 0, "bot_settings")


def test_an_advanced_san_ban_game_is_analysed_by_the_expectimax() -> None:
    """Each placement's verdict carries the expectimax's exact values: the taken cell's and the best's,
    as the search itself gives them from the same position."""
    record, _ = _advanced_record()
    verdicts = {v["step"]: v for v in analysis.analyse(record)}
    placements = 0
    for decision in engine_decisions(record):
        verdict = verdicts[decision.step]
        if verdict["forced"] or decision.action.get("type") != "place":
            continue
        table = decision.table
        rnd = random.Random(f"analysis:{record['game_id']}:{decision.step}")
        estimate = search.estimate(table.game, table.state, decision.seat, 2, "search", rnd)
        values = {a.action["cell"]: a.value for a in estimate.arms}
        assert verdict["value"] == round(values[decision.action["cell"]], 4)
        assert verdict["best_value"] == round(max(values.values()), 4)
        assert verdict["loss"] == pytest.approx(verdict["best_value"] - verdict["value"], abs=1e-9)
        placements += 1
    assert placements >= 6
