"""The service layer on the in-memory log (``adapters.memory_log``): no Redis, no HTTP.

Two ``GameService`` on one ``MemoryLog`` stand for two API processes, each with its own memory. The
log counts its round trips, so that what the one-round-trip path promises is checked here too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from adapters.memory_log import MemoryLog
from domain.audit import verify_record
from domain.errors import NotYourTurn
from service.commands import JOB_GRACE_MS, Placement, Trust
from service.errors import Conflict, GameNotFound, IdempotencyKeyReused, Unauthorized
from service.games import GameService
from service.memory import GameMemory
from service.ports import Announcement, Quota, QuotaExceeded, Quotas
from tests.support.commands import act_as

DECKS = [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"], ["sb-006", "sb-007", "sb-008", "sb-009", "sb-010"]]
PLAYERS = [{"name": "a"}, {"name": "b"}]
OPTIONS = {"mode": "standard"}
DEAL = {"first": 0, "decks": DECKS}
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


class CountingLog(MemoryLog):
    """A ``MemoryLog`` that names each round trip a command makes (a ``look`` by what it read)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def append(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append("append")
        return super().append(*args, **kwargs)

    def look(self, game_id: str, fields: Sequence[str] = (), after: int = 0, limit: int = 0) -> Any:
        parts = [part for part, asked in (("fields", fields), ("log", limit)) if asked]
        self.calls.append(f"look({', '.join(parts)})")
        return super().look(game_id, fields, after, limit)

    def head(self, game_id: str) -> Any:
        self.calls.append("head")
        return super().look(game_id).head

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> Any:
        self.calls.append("read")
        return super().read(game_id, after, limit)


def process(log: MemoryLog, settle: Callable[[], object] = lambda: None) -> GameService:
    """One API process on ``log``: its own memory."""
    return GameService(log, GameMemory(settle=settle), clock=lambda: NOW)


def new_game(games: GameService, **kwargs: Any) -> tuple[str, list[str]]:
    answer = games.create_game("san-ban", PLAYERS, OPTIONS, DEAL, **kwargs)
    return answer.body["id"], [s["token"] for s in answer.body["seats"]]


def place(move: int) -> dict[str, Any]:
    seat = move % 2
    return {"type": "place", "cell": move, "card": DECKS[seat][move // 2]}


def act(games: GameService, game: str, token: str, action: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return act_as(games, game, token, games.commands.identify_actor(game, token), action, **kwargs).body


def test_a_game_is_played_to_its_seal_each_action_one_append() -> None:
    log = CountingLog()
    games = process(log)
    game, tokens = new_game(games)
    for move in range(9):
        log.calls.clear()
        answer = act(games, game, tokens[move % 2], place(move))
        assert log.calls == ["append"]
    assert answer["status"] == "finished"
    assert [e["type"] for e in answer["events"]][-2:] == ["game_ended", "game_sealed"]
    report = verify_record(games.record(game))
    assert report["verified"] and report["sealed"]


def test_two_processes_catch_up_from_the_refused_append() -> None:
    log = CountingLog()
    first, second = process(log), process(log)
    game, tokens = new_game(first)
    second.identify(game, tokens[1])
    second.reader.load(game)
    for move in range(9):
        log.calls.clear()
        answer = act(first if move % 2 == 0 else second, game, tokens[move % 2], place(move))
        # the table held was behind by the other seat's move: refused by the rules on it, then read
        assert log.calls == (["look(log)", "append"] if move > 0 else ["append"])
        assert answer["version"] == log.head(game).version
    assert answer["status"] == "finished"


def test_a_conflicting_append_is_decided_again_on_the_events_it_carries() -> None:
    log = CountingLog()
    first, second = process(log), process(log)
    game, tokens = new_game(first)
    second.identify(game, tokens[0])
    second.identify(game, tokens[1])
    act(second, game, tokens[0], place(0))  # seat 0 on the second process
    act(second, game, tokens[1], place(1))  # the first process's table is two moves behind
    log.calls.clear()
    answer = act(first, game, tokens[0], place(2))  # the first process knows seat 0: decided on its table
    # its table said seat 0 was to act (true then): the rules allowed the move, the append was refused
    # with the two moves since, and the move decided again on them: no read
    assert log.calls == ["append", "append"]
    assert answer["version"] == log.head(game).version


def test_a_process_meeting_a_game_first_reads_it_with_the_callers_identity() -> None:
    log = CountingLog()
    first, second = process(log), process(log)
    game, tokens = new_game(first)
    act(first, game, tokens[0], place(0))
    log.calls.clear()
    act(second, game, tokens[1], place(1))
    assert log.calls == ["look(fields, log)", "append"]
    with pytest.raises(Unauthorized):
        act(second, game, "not-a-token", place(2))


def test_a_refusal_on_a_table_behind_is_judged_on_the_game_and_final_on_it() -> None:
    log = MemoryLog()
    first, second = process(log), process(log)
    game, tokens = new_game(first)
    act(second, game, tokens[0], place(0))
    assert act(first, game, tokens[1], place(1))["version"] > 0  # the first process's table said seat 0
    with pytest.raises(NotYourTurn):
        act(first, game, tokens[1], place(3))


def test_a_refusal_on_a_table_behind_takes_what_was_announced_before_reading() -> None:
    log = CountingLog()
    announced: list[Announcement] = []
    second = process(log, settle=lambda: [second.hear(a) for a in announced])
    first = process(log)
    game, tokens = new_game(first)
    second.identify(game, tokens[1])
    second.reader.load(game)
    before = log.head(game).version
    act(first, game, tokens[0], place(0))
    envs = log.read(game, before)
    announced.append(Announcement(game, before + 1, orjson.dumps(envs), {}))
    log.calls.clear()
    answer = act(second, game, tokens[1], place(1))
    assert log.calls == ["append"]  # refused on the table held; the announcement, let in then, made it current
    assert answer["version"] == log.head(game).version


def test_an_expected_version_is_judged_against_the_game() -> None:
    log = MemoryLog()
    first, second = process(log), process(log)
    game, tokens = new_game(first)
    moved = act(second, game, tokens[0], place(0))["version"]
    answer = act(first, game, tokens[1], place(1), expected_version=moved)
    with pytest.raises(Conflict) as stale:
        act(second, game, tokens[0], place(2), expected_version=moved)
    assert stale.value.current == answer["version"]


def test_a_retried_command_is_answered_as_it_was_and_a_reused_key_refused() -> None:
    log = MemoryLog()
    first, second = process(log), process(log)
    game, tokens = new_game(first)
    done = act(first, game, tokens[0], place(0), idempotency_key="k1")
    for games in (first, second):
        again = act_as(
            games, game, tokens[0], games.commands.identify_actor(game, tokens[0]), place(0), idempotency_key="k1"
        )
        assert again.replayed and again.body == done
    with pytest.raises(IdempotencyKeyReused):
        act(second, game, tokens[0], place(2), idempotency_key="k1")


def test_a_creation_retried_with_its_key_answers_the_same_game_without_tokens() -> None:
    games = process(MemoryLog())
    created = games.create_game("san-ban", PLAYERS, OPTIONS, DEAL, idempotency_key="c1")
    again = games.create_game("san-ban", PLAYERS, OPTIONS, DEAL, idempotency_key="c1")
    assert again.replayed and again.body["id"] == created.body["id"]
    assert [s["token"] for s in again.body["seats"]] == [None, None]
    assert all(s["token"] for s in created.body["seats"])
    with pytest.raises(IdempotencyKeyReused):
        games.create_game("san-ban", PLAYERS, {"mode": "standard"}, None, idempotency_key="c1")


def test_a_token_remembered_for_a_game_gone_from_the_log_is_asked_of_the_log() -> None:
    memory = GameMemory()
    games = GameService(MemoryLog(), memory)
    game, tokens = new_game(games)
    actor = games.commands.identify_actor(game, tokens[0])
    assert actor.trust is Trust.CACHED and actor.holder is not None
    emptied = GameService(MemoryLog(), memory)  # the same process's memory, a log without the game
    with pytest.raises(GameNotFound):
        act_as(emptied, game, tokens[0], actor, place(0))
    assert memory.known(game) is None


def test_the_outbox_holds_when_the_game_next_needs_a_job() -> None:
    log = MemoryLog()
    games = process(log)
    bots = [{"name": "a"}, {"name": "bot", "bot": "random"}]
    game = games.create_game("san-ban", bots, OPTIONS, DEAL).body["id"]
    assert log.due(game) is None  # seat 0, a human without a move timeout, is to act
    games.act(game, 0, place(0))
    assert log.due(game) == int(NOW.timestamp() * 1000) + JOB_GRACE_MS  # the bot is to act
    games.act(game, 1, place(1))
    assert log.due(game) is None
    timed = games.create_game("san-ban", PLAYERS, {"mode": "standard", "move_timeout_s": 30}, DEAL).body["id"]
    assert log.due(timed) == int(NOW.timestamp() * 1000) + 30_000 + JOB_GRACE_MS
    assert log.overdue(int(NOW.timestamp() * 1000) + 40_000) == [timed]


def test_a_quota_refuses_past_its_limit_and_writes_nothing() -> None:
    log = MemoryLog()
    games = process(log)
    game, tokens = new_game(games)
    window = Quota("seat-a", 1, 60)
    act(games, game, tokens[0], place(0), quotas=Quotas([window]))
    version = log.head(game).version
    with pytest.raises(QuotaExceeded) as limited:
        act(games, game, tokens[1], place(1), quotas=Quotas([window]))
    assert limited.value.index == 0 and 1 <= limited.value.retry_after_s <= 60
    assert log.head(game).version == version


def test_a_held_game_is_sealed_only_when_released() -> None:
    log = MemoryLog()
    games = process(log)
    placement = Placement({"id": "t1", "round": 1, "table": 1}, {}, seed=b"\x01" * 32, hold=True)
    game, tokens = new_game(games, placement=placement)
    for move in range(9):
        answer = act(games, game, tokens[move % 2], place(move))
    assert answer["status"] == "finished" and answer["events"][-1]["type"] == "game_ended"
    assert not games.log_complete(game)
    assert games.release(game) is True
    assert games.log_complete(game) and log.read(game)[-1]["type"] == "game_sealed"
    assert games.release(game) is True  # once sealed, nothing more is appended
    assert log.read(game)[-2]["type"] == "game_ended"


def test_a_secret_commitment_keeps_the_due_time() -> None:
    log = MemoryLog()
    games = process(log)
    created = games.create_game("nin-nal", PLAYERS, {"move_timeout_s": 60}, None)
    game = created.body["id"]
    due = log.due(game)
    hand = games.view(game, 0)["state"]["hand"]
    games.act(game, 0, {"type": "select", "card": hand[0]})
    assert log.read(game)[-1]["type"] == "choice_committed"
    assert log.due(game) == due  # Keep: the seats to act and their clock are as before


def test_what_a_process_remembers_is_bounded() -> None:
    memory = GameMemory(size=2)
    games = GameService(MemoryLog(), memory)
    made = [new_game(games)[0] for _ in range(4)]
    assert [memory.known(g) is not None for g in made] == [False, False, True, True]
