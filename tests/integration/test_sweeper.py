"""The outbox and the sweeper: a lost job (a crash between an append and its enqueue, a worker killed
mid-job) is asked for again, so no game and no tournament waits for good.

Games are created through a service whose scheduler drops every job (``NoScheduler``: the
enqueue that was lost); the sweeper runs with the real RQ scheduler, and the real RQ worker
(``work``) runs what it asks for. Time moves with freezegun.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis
from freezegun import freeze_time
from rq import Queue, SimpleWorker

from adapters.rq_scheduler import QUEUE_NAME
from bootstrap import build
from domain.tournament import commands
from entrypoints.sweeper import sweep_once
from service.commands import JOB_GRACE_MS
from service.games import RETRY_MS
from service.ports import NoScheduler
from service.tournaments import SWEEP_MS

T0 = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def work(client: redis.Redis) -> None:
    SimpleWorker([Queue(QUEUE_NAME, connection=client)], connection=client).work(burst=True)


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def due_of(client: redis.Redis, stream_id: str) -> float | None:
    store = build(client).store
    return client.zscore(store.due_key(store.partition(stream_id)), stream_id)  # type: ignore[return-value]


def test_a_bot_game_whose_first_job_was_lost_is_played_to_the_end(redis_client: redis.Redis) -> None:
    lost = build(redis_client, scheduler=NoScheduler())
    bots = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
    with freeze_time(T0):
        game = lost.games.create_game("san-ban", bots, None, None).body["id"]
    assert due_of(redis_client, game) == ms(T0) + JOB_GRACE_MS  # written by the append itself
    assert Queue(QUEUE_NAME, connection=redis_client).count == 0  # the enqueue was lost
    kifu = build(redis_client)
    assert sweep_once(kifu, ms(T0) + JOB_GRACE_MS - 1) == 0  # not overdue yet: the job may still run
    with freeze_time(T0 + timedelta(milliseconds=JOB_GRACE_MS + 1)):
        assert sweep_once(kifu) == 1
    work(redis_client)  # the first turn, asked for again; the worker's own service asks for the rest
    assert lost.games.view(game, None)["status"] == "finished" and lost.games.audit(game)["verified"]
    assert due_of(redis_client, game) is None  # over: nothing more to ask for


def test_a_job_still_in_the_queue_is_not_asked_for_again(redis_client: redis.Redis) -> None:
    """Under load a bot's job may wait in a deep queue past the grace: the sweeper leaves it there
    (a copy per sweep would flood the queue)."""
    kifu = build(redis_client)
    bots = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
    with freeze_time(T0):
        game = kifu.games.create_game("san-ban", bots, None, None).body["id"]
    queue = Queue(QUEUE_NAME, connection=redis_client)
    assert queue.count == 1
    for later in (1, 2, 3):
        with freeze_time(T0 + timedelta(milliseconds=JOB_GRACE_MS + later * RETRY_MS)):
            assert sweep_once(kifu) == 1
    assert queue.count == 1  # still the one job, which plays when its turn in the queue comes
    work(redis_client)
    assert kifu.games.view(game, None)["status"] == "finished"


def test_a_job_a_dying_worker_took_from_the_queue_is_asked_for_again(redis_client: redis.Redis) -> None:
    """A worker takes a job off the queue and dies before it starts: the job still says queued, but no
    worker will find it; the sweeper asks for it again, at the front of the queue."""
    kifu = build(redis_client)
    bots = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
    with freeze_time(T0):
        game = kifu.games.create_game("san-ban", bots, None, None).body["id"]
    queue = Queue(QUEUE_NAME, connection=redis_client)
    taken = queue.job_ids[0]
    redis_client.lrem(queue.key, 1, taken)  # what the dead worker's BLMOVE did
    with freeze_time(T0 + timedelta(milliseconds=JOB_GRACE_MS + 1)):
        assert sweep_once(kifu) == 1
    assert queue.job_ids == [taken]  # the same turn, asked for again
    work(redis_client)
    assert kifu.games.view(game, None)["status"] == "finished"


def test_each_lost_bot_turn_is_asked_for_again_after_the_grace(redis_client: redis.Redis) -> None:
    """A bot's turn in a game against a human: the job is lost every time; only the sweeper moves it."""
    lost = build(redis_client, scheduler=NoScheduler())
    with freeze_time(T0):
        created = lost.games.create_game("kiri-ai", [{"name": "ann"}, {"name": "hal", "bot": "random"}], None, None)
    game, ann = created.body["id"], created.body["seats"][0]["token"]
    assert lost.games.identify(game, ann).seat == 0
    kifu = build(redis_client)
    with freeze_time(T0 + timedelta(milliseconds=JOB_GRACE_MS + 1)):
        assert sweep_once(kifu) == 1
        assert due_of(redis_client, game) == ms(T0) + JOB_GRACE_MS + 1 + RETRY_MS  # asked: look again later
    work(redis_client)
    view = lost.games.view(game, 0)
    assert view["committed"] == [1] and view["to_act"] == [0]  # the bot's secret program is in


def test_an_expired_move_timeout_whose_job_was_lost_is_played(redis_client: redis.Redis) -> None:
    lost = build(redis_client, scheduler=NoScheduler())
    players = [{"name": "ann"}, {"name": "bob"}]
    with freeze_time(T0):
        game = lost.games.create_game("san-ban", players, {"mode": "standard", "move_timeout_s": 60}, None).body["id"]
    deadline = ms(T0) + 60_000 + JOB_GRACE_MS
    assert due_of(redis_client, game) == deadline
    kifu = build(redis_client)
    before = lost.games.view(game, None)["version"]
    with freeze_time(T0 + timedelta(seconds=30)):
        assert sweep_once(kifu) == 0  # the deadline is not here
    with freeze_time(T0 + timedelta(milliseconds=60_000 + JOB_GRACE_MS + 1)):
        assert sweep_once(kifu) == 1
        work(redis_client)
    events = lost.games.events(game, None, before, 10)["items"]
    assert events[0]["type"] == "action_taken" and events[0]["data"]["by"] == "timeout"


def test_a_secret_commitment_keeps_the_due_time_and_a_finished_game_clears_it(redis_client: redis.Redis) -> None:
    kifu = build(redis_client, scheduler=NoScheduler())
    players = [{"name": "ann"}, {"name": "bob"}]
    with freeze_time(T0):
        created = kifu.games.create_game("nin-nal", players, {"move_timeout_s": 60}, None)
    game, tokens = created.body["id"], [s["token"] for s in created.body["seats"]]
    first = due_of(redis_client, game)
    hand = kifu.games.view(game, 0)["state"]["hand"]
    with freeze_time(T0 + timedelta(seconds=10)):
        kifu.games.act(game, 0, {"type": "select", "card": hand[0]})
    assert due_of(redis_client, game) == first  # seat 1's clock did not restart
    assert kifu.games.identify(game, tokens[1]).seat == 1
    kifu.games.act(game, 1, {"type": "resign"})
    assert due_of(redis_client, game) is None


def test_a_running_tournament_whose_runner_was_lost_is_moved_along(redis_client: redis.Redis) -> None:
    lost = build(redis_client, scheduler=NoScheduler())
    settings = {
        "game": "san-ban",
        "entrants": [{"name": f"b{i}", "bot": "random"} for i in range(4)],
        "format": "swiss",
    }
    with freeze_time(T0):
        made = lost.tournaments.create(settings).body
        tid = made["id"]
        assert due_of(redis_client, tid) is None  # not started: nothing to do
        lost.tournaments.command(tid, made["organiser_token"], commands.start)
    assert due_of(redis_client, tid) == ms(T0) + SWEEP_MS
    assert lost.tournaments.view(tid)["tables"] == []  # the runner was lost: round 1 is not paired
    kifu = build(redis_client)
    with freeze_time(T0 + timedelta(milliseconds=SWEEP_MS + 1)):
        assert sweep_once(kifu) >= 1
    for _ in range(100):
        work(redis_client)
        if lost.tournaments.view(tid)["status"] == "finished":
            break
    assert lost.tournaments.view(tid)["status"] == "finished"
    assert due_of(redis_client, tid) is None
