"""Bot turns and move timeouts with a real RQ worker on the test Redis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis
from flask.testing import FlaskClient
from freezegun import freeze_time
from rq import Queue, SimpleWorker
from rq.registry import ScheduledJobRegistry
from rq.scheduler import RQScheduler

from adapters.rq_scheduler import QUEUE_NAME
from tests.support.api import create


def work(client: redis.Redis) -> None:
    SimpleWorker([Queue(QUEUE_NAME, connection=client)], connection=client).work(burst=True)


def test_two_bots_play_a_whole_game(client: FlaskClient, redis_client: redis.Redis) -> None:
    _game_id, (a, b, spectator) = create(
        client, "toy", [{"name": "r1", "bot": "random"}, {"name": "r2", "bot": "random"}]
    )
    assert a.token is None and b.token is None
    work(redis_client)
    view = spectator.get().json
    assert view["status"] == "finished", view
    assert spectator.get("/audit").json["verified"]


def test_a_bot_answers_a_human_through_the_same_command_path(client: FlaskClient, redis_client: redis.Redis) -> None:
    _game_id, (ann, _bot, spectator) = create(client, "toy", [{"name": "ann"}, {"name": "bot", "bot": "random"}])
    work(redis_client)
    assert spectator.get().json["committed"] == [1]  # the bot chose secretly; ann has not
    assert ann.act({"type": "pick", "n": 3}).status_code == 201
    work(redis_client)
    events = spectator.get("/events").json["items"]
    assert [e["type"] for e in events].count("choices_revealed") == 1


def test_duplicated_and_late_bot_jobs_append_nothing(client: FlaskClient, redis_client: redis.Redis) -> None:
    game_id, (ann, _bot, spectator) = create(client, "toy", [{"name": "ann"}, {"name": "bot", "bot": "random"}])
    queue = Queue(QUEUE_NAME, connection=redis_client)
    version = spectator.get().json["version"]
    queue.enqueue("workers.jobs.play_turn", game_id, 1, version, "bot")  # a duplicate of the scheduled job
    work(redis_client)
    assert spectator.get().json["version"] == version + 1  # one commitment, not two
    ann.act({"type": "pick", "n": 1})
    work(redis_client)
    moved_on = spectator.get().json["version"]
    late = queue.enqueue("workers.jobs.play_turn", game_id, 1, version, "bot")
    work(redis_client)
    assert late.return_value() == {"done": False, "reason": "stale"}
    assert spectator.get().json["version"] == moved_on


def test_a_slow_human_gets_a_random_move_when_the_timeout_fires(client: FlaskClient, redis_client: redis.Redis) -> None:
    _game_id, (ann, _bob, spectator) = create(
        client, "toy", [{"name": "ann"}, {"name": "bob"}], options={"move_timeout_s": 30}
    )
    queue = Queue(QUEUE_NAME, connection=redis_client)
    registry = ScheduledJobRegistry(queue=queue)
    jobs = registry.get_job_ids()
    assert len(jobs) == 2
    due = registry.get_scheduled_time(jobs[0])
    now = datetime.now(UTC)
    assert timedelta(seconds=25) < due.replace(tzinfo=UTC) - now <= timedelta(seconds=30)
    scheduler = RQScheduler([queue], connection=redis_client)
    scheduler.acquire_locks()
    scheduler.enqueue_scheduled_jobs()  # nothing is due yet
    work(redis_client)
    assert spectator.get().json["committed"] == []
    assert ann.act({"type": "pick", "n": 2}).status_code == 201  # ann acts in time
    with freeze_time(now + timedelta(seconds=31)):
        scheduler.enqueue_scheduled_jobs()
    work(redis_client)
    events = spectator.get("/events").json["items"]
    by_timeout = [e for e in events if e["data"].get("by") == "timeout"]
    assert [e["data"]["seat"] for e in by_timeout] == [1]  # only bob, who had not acted
    assert spectator.get().json["state"]["round"] == 1 and spectator.get().json["phase"] == "ack"
