"""Batched bot turns (``workers.batch``) with the real RQ worker of ``kifu worker`` on the test Redis.

A job that has moved for a bot keeps playing its game's next bot turns itself, within a budget, and
enqueues what is left. These tests play bot-only games to the end through ``run_worker`` (``kifu
worker --burst``) and check every log: each move was played once, for the turn it answers, by the job
of that turn (its idempotency record points at it); duplicated, racing and late jobs append nothing;
and a batch that fails or whose worker is killed loses no turn (its own job, RQ's retry, or the
sweeper picks it up).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from rq import Queue, Worker
from rq.job import Job
from rq.registry import FinishedJobRegistry

import workers.jobs
from adapters.rq_scheduler import QUEUE_NAME, RQScheduler
from bootstrap import Kifu, build
from entrypoints.sweeper import sweep_once
from entrypoints.worker import run_worker
from workers import batch
from workers.batch import KeepingScheduler

BOTS = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
MOVES = ("action_taken", "choice_committed")


@pytest.fixture(autouse=True)
def generous_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget of moves only (no clock): what a job plays does not depend on how fast this machine is."""
    monkeypatch.setattr(batch, "BATCH_MS", 60_000.0)
    monkeypatch.setattr(batch, "BATCH_MOVES", 4)


@pytest.fixture
def kifu(redis_client: redis.Redis) -> Iterator[Kifu]:
    workers.jobs._WIRED.clear()  # each test's client is new: no wiring left from an earlier test
    yield build(redis_client)
    workers.jobs._WIRED.clear()


def work(client: redis.Redis) -> None:
    """``kifu worker --burst``: the worker class and settings of ``kifu worker``, until the queue is empty."""
    run_worker(client, burst=True)


def new_games(kifu: Kifu, games: tuple[str, ...] = ("san-ban", "kiri-ai")) -> list[str]:
    return [kifu.games.create_game(game, BOTS, None, None).body["id"] for game in games]


def moves(kifu: Kifu, game_id: str) -> list[tuple[int, int, int]]:
    """Every move of the game as (seat, turn, seq): ``turn`` is the version at which the seat's turn began
    (the last event before the move that was not a secret commitment)."""
    found, turn = [], 0
    for env in kifu.store.read(game_id):
        if env["type"] in MOVES:
            found.append((env["data"]["seat"], turn, env["seq"]))
        if env["type"] != "choice_committed":
            turn = env["seq"]
    return found


def assert_played_once_each(kifu: Kifu, game_id: str) -> None:
    """The game is over and verified; each seat moved once per turn, and each move was appended with the
    key of the very turn it answers (``bot:<turn>``): no duplicate, and no late job's move."""
    assert kifu.games.view(game_id, None)["status"] == "finished"
    report = kifu.games.audit(game_id)
    assert report["verified"] and report["signed"] == "checked", [c for c in report["checks"] if not c["ok"]]
    assert kifu.games.record(game_id)["signature"]["statement"]["game"] == game_id  # a bot's last move signs too
    played = moves(kifu, game_id)
    assert len({(seat, turn) for seat, turn, _seq in played}) == len(played)
    for seat, turn, seq in played:
        record = kifu.store.idempotency_record(game_id, f"{seat}:bot:{turn}")
        assert record is not None and record["first"] == seq, (seat, turn, seq, record)


def due_of(kifu: Kifu, game_id: str) -> int:
    """When the game next needs a job (the outbox entry its last append wrote)."""
    due = kifu.client.zscore(kifu.store.due_key(kifu.store.partition(game_id)), game_id)
    assert due is not None
    return int(due)


def finished_jobs(client: redis.Redis) -> list[dict[str, Any]]:
    queue = Queue(QUEUE_NAME, connection=client)
    ids = FinishedJobRegistry(queue=queue).get_job_ids()
    return [Job.fetch(job_id, connection=client).return_value() or {} for job_id in ids]


def test_bot_only_games_are_played_to_the_end_in_batches_within_the_budget(
    kifu: Kifu, redis_client: redis.Redis
) -> None:
    games = new_games(kifu, ("san-ban", "kiri-ai", "san-ban", "kiri-ai"))
    work(redis_client)
    for game_id in games:
        assert_played_once_each(kifu, game_id)
    results = finished_jobs(redis_client)
    total = sum(len(moves(kifu, game_id)) for game_id in games)
    assert sum(r.get("played", 0) for r in results) == total  # every move was played by exactly one job
    assert max(r.get("played", 0) for r in results) == batch.BATCH_MOVES  # batches happened, none longer
    assert len(results) < total / 2  # far fewer jobs than moves
    assert Queue(QUEUE_NAME, connection=redis_client).count == 0


def test_without_a_budget_each_move_is_its_own_job(
    kifu: Kifu, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch, "BATCH_MOVES", 1)
    (game_id,) = new_games(kifu, ("san-ban",))
    work(redis_client)
    assert_played_once_each(kifu, game_id)
    assert {r.get("played") for r in finished_jobs(redis_client)} == {1}


def test_duplicated_and_late_jobs_of_a_batched_game_append_nothing(kifu: Kifu, redis_client: redis.Redis) -> None:
    (game_id,) = new_games(kifu, ("kiri-ai",))
    queue = Queue(QUEUE_NAME, connection=redis_client)
    first = [(seat, kifu.games.view(game_id, None)["version"]) for seat in (0, 1)]
    for seat, version in first * 2:  # two more copies of each first turn, under other job ids
        queue.enqueue("workers.jobs.play_turn", game_id, seat, version, "bot")
    work(redis_client)
    assert_played_once_each(kifu, game_id)
    sealed = kifu.store.head(game_id).version
    late = [
        queue.enqueue("workers.jobs.play_turn", game_id, seat, turn, "bot") for seat, turn, _seq in moves(kifu, game_id)
    ]
    work(redis_client)
    assert {job.id: job.return_value() for job in late} == {job.id: {"done": False, "reason": "stale"} for job in late}
    assert kifu.store.head(game_id).version == sealed


def test_a_racing_job_that_plays_a_kept_turn_first_leaves_the_batch_nothing_to_append(
    kifu: Kifu, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker's copy of a turn this batch kept (the sweeper asked for it again) plays it first:
    the batch finds the turn done and appends nothing; the other worker's service asks for what follows."""
    (game_id,) = new_games(kifu, ("san-ban",))
    first_turn = kifu.games.view(game_id, None)["version"]
    other = build(redis_client)  # another worker's wiring: its own tables and scheduler
    real_play = workers.jobs._play
    raced = []

    def play(service: Any, game: str, seat: int, version: int, why: workers.jobs.Why) -> dict[str, Any]:
        if service is not other.games and not raced and version > first_turn:  # the first turn a batch kept
            raced.append(real_play(other.games, game, seat, version, why))  # the other worker wins the race
            answer = real_play(service, game, seat, version, why)
            assert answer == {"done": False, "reason": "stale"}
            return answer
        return real_play(service, game, seat, version, why)

    monkeypatch.setattr(workers.jobs, "_play", play)
    work(redis_client)
    assert raced and raced[0]["done"]
    assert_played_once_each(kifu, game_id)


def test_a_kept_turn_that_fails_is_left_to_its_own_job(
    kifu: Kifu, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (game_id,) = new_games(kifu, ("san-ban",))
    (first_job,) = Queue(QUEUE_NAME, connection=redis_client).job_ids
    real_choose = workers.jobs.choose_action
    calls = []

    def choose(*args: Any) -> Any:
        calls.append(args[1])
        if len(calls) == 3:  # the second turn the first job kept
            raise RuntimeError("the bot broke")
        return real_choose(*args)

    monkeypatch.setattr(workers.jobs, "choose_action", choose)
    with caplog.at_level(logging.WARNING, logger="workers.jobs"):
        work(redis_client)
    assert any("left to its own job" in r.getMessage() for r in caplog.records)
    assert_played_once_each(kifu, game_id)
    assert Job.fetch(first_job, connection=redis_client).return_value()["played"] == 2  # its own, one kept


def test_a_job_whose_own_turn_fails_is_retried_by_rq(
    kifu: Kifu, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    (game_id,) = new_games(kifu, ("kiri-ai",))
    first_job = Queue(QUEUE_NAME, connection=redis_client).job_ids[0]
    real_choose = workers.jobs.choose_action
    calls = []

    def choose(*args: Any) -> Any:
        calls.append(args[1])
        if len(calls) == 1:  # the first job's own turn
            raise RuntimeError("the bot broke")
        return real_choose(*args)

    monkeypatch.setattr(workers.jobs, "choose_action", choose)
    work(redis_client)
    retried = Job.fetch(first_job, connection=redis_client)
    assert retried.retries_left == 4 and retried.return_value()["done"]  # RQ ran it again, and it moved
    assert_played_once_each(kifu, game_id)


def test_a_worker_killed_in_the_middle_of_a_batch_loses_nothing(kifu: Kifu, redis_client: redis.Redis) -> None:
    """The job's process dies (SIGKILL) after two moves of its batch: the turns it kept die with it, RQ
    marks the job failed and retries it (stale: its own turn was played), and the sweeper asks again for
    the game's turn once its grace is over (written by the last append); the game then ends as usual."""
    (game_id,) = new_games(kifu, ("san-ban",))
    (first_job,) = Queue(QUEUE_NAME, connection=redis_client).job_ids
    plays = "test:plays"
    real_play = workers.jobs._play

    def play(*args: Any) -> dict[str, Any]:
        if redis_client.incr(plays) == 3:  # the third move of the first batch, in RQ's forked work horse
            os.kill(os.getpid(), signal.SIGKILL)
        return real_play(*args)

    forking = Worker([Queue(QUEUE_NAME, connection=redis_client)], connection=redis_client)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers.jobs, "_play", play)
        forking.work(burst=True, logging_level="ERROR")
    stalled = kifu.store.head(game_id).version
    killed = Job.fetch(first_job, connection=redis_client)
    assert killed.retries_left == 4 and killed.return_value() == {"done": False, "reason": "stale"}
    assert len(moves(kifu, game_id)) == 2 and kifu.games.view(game_id, None)["status"] == "active"
    assert Queue(QUEUE_NAME, connection=redis_client).count == 0  # nothing asked for the game's turn

    assert sweep_once(kifu, due_of(kifu, game_id) - 1) == 0  # within the grace: the job might still come
    assert sweep_once(kifu, due_of(kifu, game_id)) == 1
    work(redis_client)
    assert kifu.store.head(game_id).version > stalled
    assert_played_once_each(kifu, game_id)


def test_a_failed_enqueue_at_the_end_of_a_batch_is_covered_by_the_outbox(kifu: Kifu, redis_client: redis.Redis) -> None:
    """Redis fails as the job hands back the turn it kept: the job fails (RQ's retry finds its own turn
    done), nothing asks for the game's turn, and the sweeper asks again once its grace is over."""
    (game_id,) = new_games(kifu, ("san-ban",))
    lost = []

    def enqueue_fails(*args: Any, **kwargs: Any) -> None:
        lost.append(args[1:])
        raise redis.ConnectionError("Redis went away")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RQScheduler, "bot_turn", enqueue_fails)  # only the batch's hand-back enqueues now
        work(redis_client)
    assert len(lost) == 1 and len(moves(kifu, game_id)) == batch.BATCH_MOVES
    assert Queue(QUEUE_NAME, connection=redis_client).count == 0
    assert kifu.games.view(game_id, None)["status"] == "active"
    assert sweep_once(kifu, due_of(kifu, game_id)) == 1
    work(redis_client)
    assert_played_once_each(kifu, game_id)


def test_the_keeping_scheduler_keeps_only_its_own_games_bot_turns(kifu: Kifu, redis_client: redis.Redis) -> None:
    class Spy:
        def __init__(self) -> None:
            self.calls: list[tuple[str, tuple[Any, ...]]] = []

        def bot_turn(self, *args: Any) -> None:
            self.calls.append(("bot_turn", args))

        def move_timeout(self, *args: Any) -> None:
            self.calls.append(("move_timeout", args))

        def tournament_step(self, *args: Any) -> None:
            self.calls.append(("tournament_step", args))

        def job_pending(self, *args: Any) -> bool:
            self.calls.append(("job_pending", args))
            return True

    spy = Spy()
    keeper = KeepingScheduler(spy)
    with keeper.keeping("g1") as kept:
        keeper.bot_turn("g1", 0, 5)
        keeper.bot_turn("g2", 1, 7)
        keeper.move_timeout("g1", 1, 5, 30)
        keeper.tournament_step("t1")
        assert keeper.job_pending("bot", "g1", 0, 5)
        keeper.bot_turn("g1", 1, 5, urgent=True)
        assert [(t.seat, t.version, t.urgent) for t in kept] == [(0, 5, False), (1, 5, True)]
        assert [name for name, _args in spy.calls] == ["bot_turn", "move_timeout", "tournament_step", "job_pending"]
        kept.popleft()  # the job played that one
    assert spy.calls[-1] == ("bot_turn", ("g1", 1, 5, True))  # what was left, handed to the queue
    keeper.bot_turn("g1", 0, 9)  # no job is playing g1 any more
    assert spy.calls[-1] == ("bot_turn", ("g1", 0, 9, False))
    with pytest.raises(RuntimeError), keeper.keeping("g1"), keeper.keeping("g2"):
        pass
