"""The one-round-trip action path against a real Redis.

A process that holds a game's table and knows the caller's token decides the
action on that table and lets the conditional append check it: one round
trip. Two services on one store stand for two API processes; a seat acting
through one while the other seat acts through the other finds its table
behind, and the refused append brings the events it missed.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import orjson
import pytest
import redis

from adapters import announcements
from adapters.announcements import AppendFollower
from adapters.embedded_redis import EmbeddedRedis
from adapters.redis_store import EventStore
from domain import engine
from domain.events import Event
from domain.record import GENESIS, envelopes, to_event
from service import memory as memory_module
from service.commands import Trust
from service.errors import Conflict, GameNotFound, IdempotencyKeyReused, Unauthorized
from service.games import GameService
from service.memory import GameMemory, token_hash
from service.ports import Announcement, Append, Head, HolderRefused, VersionConflict
from tests.integration.test_store import batch, game_id
from tests.support.commands import act_as
from tests.support.records import SALTS

DECKS = [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"], ["sb-006", "sb-007", "sb-008", "sb-009", "sb-010"]]
BUSY_S = 0.002  # another greenlet's turn in the pause that lets announcements in: twenty times the pause
SAN_BAN = {"game": "san-ban", "players": [{"name": "a"}, {"name": "b"}], "options": {"mode": "standard"}}


class CountingStore(EventStore):
    """An event store that counts the round trips each of its methods makes."""

    def __init__(self, client: redis.Redis) -> None:
        super().__init__(client, partitions=4)
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if name in {"append", "head", "look", "read", "meta", "idempotency_record"}:
            calls: list[str] = super().__getattribute__("calls")

            def counted(*args: Any, **kwargs: Any) -> Any:
                calls.append(name if name != "look" else looked(*args, **kwargs))
                return value(*args, **kwargs)

            return counted
        return value


def looked(_game_id: str, fields: Sequence[str] = (), after: int = 0, limit: int = 0) -> str:
    """A ``look`` named by what it read besides the head: ``look(fields)``, ``look(log)``, ``look(fields, log)``."""
    return f"look({', '.join(part for part, asked in (('fields', fields), ('log', limit)) if asked)})"


def service(client: redis.Redis, settle: Callable[[], object] = lambda: None) -> tuple[GameService, CountingStore]:
    store = CountingStore(client)
    return GameService(store, GameMemory(settle=settle)), store


def new_game(games: GameService) -> tuple[str, list[str]]:
    answer = games.create_game(SAN_BAN["game"], SAN_BAN["players"], SAN_BAN["options"], {"first": 0, "decks": DECKS})
    return answer.body["id"], [s["token"] for s in answer.body["seats"]]


def place(move: int) -> dict[str, Any]:
    seat = move % 2
    return {"type": "place", "cell": move, "card": DECKS[seat][move // 2]}


def act(games: GameService, game: str, token: str, action: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    actor = games.commands.identify_actor(game, token)
    return act_as(games, game, token, actor, action, **kwargs).body


def test_the_process_that_created_a_game_acts_on_it_in_one_round_trip(redis_client: redis.Redis) -> None:
    games, store = service(redis_client)
    game, tokens = new_game(games)
    for move in range(9):
        store.calls.clear()
        answer = act(games, game, tokens[move % 2], place(move))
        assert store.calls == ["append"]
        assert answer["version"] == store.head(game).version
    assert answer["status"] == "finished"
    assert [e["type"] for e in answer["events"]][-2:] == ["game_ended", "game_sealed"]


def test_seats_on_two_processes_catch_up_from_the_refused_append(redis_client: redis.Redis) -> None:
    first, first_store = service(redis_client)
    second, second_store = service(redis_client)
    game, tokens = new_game(first)
    second.identify(game, tokens[1])  # the second process has met seat 1 once (reads the head)
    second.reader.load(game)
    for move in range(9):
        games, store = (first, first_store) if move % 2 == 0 else (second, second_store)
        store.calls.clear()
        answer = act(games, game, tokens[move % 2], place(move))
        assert answer["version"] == redis_client.xlen(first.store.log_key(game))  # type: ignore[attr-defined]
        # the table it held was behind by the other seat's move: the rules refused seat 1 on it, so the
        # head and the events since were read (one round trip) before the append
        assert store.calls == (["look(log)", "append"] if move > 0 else ["append"])
    assert answer["status"] == "finished"


def test_a_process_meeting_a_game_first_reads_it_with_the_callers_identity(redis_client: redis.Redis) -> None:
    first, _ = service(redis_client)
    second, second_store = service(redis_client)
    game, tokens = new_game(first)
    act(first, game, tokens[0], place(0))
    second_store.calls.clear()
    answer = act(second, game, tokens[1], place(1))  # the second process has never seen this game
    assert second_store.calls == ["look(fields, log)", "append"]
    assert answer["version"] == second_store.head(game).version
    with pytest.raises(Unauthorized):  # a token that is no seat is refused as before (the log read is not used)
        act(second, game, "not-a-token", place(2))


def test_a_refusal_judged_on_a_table_that_is_behind_is_judged_again(redis_client: redis.Redis) -> None:
    first, _ = service(redis_client)
    second, _ = service(redis_client)
    game, tokens = new_game(first)
    act(second, game, tokens[0], place(0))  # the first process's table is now behind
    # seat 1 is to act: the first process's table says seat 0 is, but the answer is judged on the game
    answer = act(first, game, tokens[1], place(1))
    assert answer["version"] > 0
    # seat 1 acting again is refused by the rules, judged on the game as it is
    with pytest.raises(Exception, match="not to act"):
        act(first, game, tokens[1], place(3))


def test_an_expected_version_is_judged_against_the_game_not_the_table_held(redis_client: redis.Redis) -> None:
    first, _ = service(redis_client)
    second, _ = service(redis_client)
    game, tokens = new_game(first)
    moved = act(second, game, tokens[0], place(0))["version"]
    answer = act(first, game, tokens[1], place(1), expected_version=moved)  # the first process held moved - n
    assert answer["version"] > moved
    with pytest.raises(Conflict) as stale:
        act(second, game, tokens[0], place(2), expected_version=moved)
    assert stale.value.current == answer["version"]


def test_a_retried_command_is_answered_as_it_was_on_either_process(redis_client: redis.Redis) -> None:
    first, _ = service(redis_client)
    second, _ = service(redis_client)
    game, tokens = new_game(first)
    done = act(first, game, tokens[0], place(0), idempotency_key="k1")
    for games in (first, second):
        again = act_as(
            games, game, tokens[0], games.commands.identify_actor(game, tokens[0]), place(0), idempotency_key="k1"
        )
        assert again.replayed and again.body["version"] == done["version"]
        assert again.body["events"] == done["events"]
    with pytest.raises(IdempotencyKeyReused):
        act(second, game, tokens[0], place(2), idempotency_key="k1")


def test_a_token_remembered_for_a_game_that_is_gone_is_asked_of_redis(redis_client: redis.Redis) -> None:
    games, _ = service(redis_client)
    game, tokens = new_game(games)
    actor = games.commands.identify_actor(game, tokens[0])
    assert actor.trust is Trust.CACHED and actor.holder is not None  # from memory: nothing read
    redis_client.flushall()
    with pytest.raises(GameNotFound):
        act_as(games, game, tokens[0], actor, place(0))
    with pytest.raises(Unauthorized):
        other, other_tokens = new_game(games)
        act_as(games, other, tokens[0], games.commands.identify_actor(other, tokens[0]), place(0))
    assert other_tokens  # the new game's own tokens still act
    assert act(games, other, other_tokens[0], place(0))["version"] > 0


@pytest.mark.parametrize("behind", [1, 3])
def test_a_refused_append_carries_the_events_since_the_expected_version(redis_client: redis.Redis, behind: int) -> None:
    store = EventStore(redis_client, partitions=4)
    gid = game_id()
    first = batch(2)
    store.append(gid, Append(first, Head(0, GENESIS)))
    later = batch(behind, first=3, prev=first[-1]["hash"], tag="later")
    store.append(gid, Append(later, Head(2, first[-1]["hash"])))
    with pytest.raises(VersionConflict) as refused:
        store.append(gid, Append(batch(1, first=3, prev=first[-1]["hash"]), Head(2, first[-1]["hash"])))
    assert refused.value.current == 2 + behind
    assert refused.value.tail == later


def test_a_refused_append_far_behind_carries_no_events(redis_client: redis.Redis) -> None:
    store = EventStore(redis_client, partitions=4)
    gid = game_id()
    envs = batch(80)
    store.append(gid, Append(envs, Head(0, GENESIS)))
    with pytest.raises(VersionConflict) as refused:
        store.append(gid, Append(batch(1, first=2, prev=envs[0]["hash"]), Head(1, envs[0]["hash"])))
    assert refused.value.current == 80 and refused.value.tail == []


def test_an_append_for_a_holder_checks_the_meta_field_first(redis_client: redis.Redis) -> None:
    store = EventStore(redis_client, partitions=4)
    gid = game_id()
    store.append(gid, Append(batch(1), Head(0, GENESIS), meta={"tok:abc": "1"}))
    attempt: Callable[[tuple[str, str]], int] = lambda holder: store.append(  # noqa: E731
        gid, Append(batch(1, first=2, prev=store.head(gid).hash), Head(1, store.head(gid).hash), holder=holder)
    )
    for wrong in [("tok:abc", "0"), ("tok:xyz", "1")]:
        with pytest.raises(HolderRefused):
            attempt(wrong)
        assert store.head(gid).version == 1  # nothing written
    assert attempt(("tok:abc", "1")) == 2


class Following:
    """A service that follows every process's appends (as an API process does), with hooks telling
    when an announcement reached it, and a gate that can hold announcements back (``hold``)."""

    def __init__(self, client: redis.Redis) -> None:
        self.settle: Callable[[], object] = lambda: None  # what the memory's ``settle`` does
        self.games, self.store = service(client, settle=lambda: self.settle())  # noqa: PLW0108 (late: a test sets it)
        self.received: list[Announcement] = []
        self.heard: list[Announcement] = []
        self.holding = False
        self.changed = threading.Condition()
        self.stop, self.listening = threading.Event(), threading.Event()
        self.follower = AppendFollower(self.store, self.hear)
        self.thread = threading.Thread(target=self.follower.run, args=(self.stop, self.listening), daemon=True)
        self.thread.start()
        assert self.listening.wait(10)

    def hear(self, heard: Announcement) -> None:
        with self.changed:
            self.received.append(heard)
            self.changed.notify_all()
            assert self.changed.wait_for(lambda: not self.holding, timeout=10)
        self.games.hear(heard)  # as bootstrap wires it
        with self.changed:
            self.heard.append(heard)
            self.changed.notify_all()

    def hold(self) -> None:
        """Announcements arrive but are not taken until ``let_in``."""
        with self.changed:
            self.holding = True

    def let_in(self, game_id: str, first: int) -> None:
        """Take what was held, up to the announcement of the game's append from event ``first`` on."""
        with self.changed:
            self.holding = False
            self.changed.notify_all()
        self.wait_for(game_id, first)

    def wait_for(self, game_id: str, first: int, taken: bool = True) -> Announcement:
        """The announcement of the game's append from event ``first`` on, once taken (or received)."""

        def found() -> Announcement | None:
            seen = self.heard if taken else self.received
            return next((a for a in seen if (a.game_id, a.first) == (game_id, first)), None)

        with self.changed:
            assert self.changed.wait_for(found, timeout=10)
            return found()  # type: ignore[return-value]

    def close(self) -> None:
        with self.changed:
            self.holding = False
            self.changed.notify_all()
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def test_a_process_that_follows_appends_acts_in_one_round_trip_after_another_processs_move(
    redis_client: redis.Redis,
) -> None:
    first, _ = service(redis_client)
    second = Following(redis_client)
    try:
        game, tokens = new_game(first)
        second.games.identify(game, tokens[1])
        second.games.reader.load(game)
        for move in range(0, 8, 2):
            before = second.store.head(game).version
            moved = act(first, game, tokens[0], place(move))["version"]
            second.wait_for(game, before + 1)  # the announcement of the move reached the second process
            second.store.calls.clear()
            answer = act(second.games, game, tokens[1], place(move + 1))
            assert second.store.calls == ["append"]  # its table was current: nothing read
            assert answer["version"] > moved
            first.reader.load(game)  # the first process does not follow: it reads what it missed
        assert answer["version"] == second.store.head(game).version
    finally:
        second.close()


def test_a_process_that_follows_appends_acts_in_one_round_trip_in_a_game_another_process_created(
    redis_client: redis.Redis,
) -> None:
    first, _ = service(redis_client)
    second = Following(redis_client)
    try:
        game, tokens = new_game(first)
        created = second.wait_for(game, 1)
        assert sorted(created.seats.values()) == [0, 1]  # the creation named both seats' token hashes
        assert set(created.seats) == {f"tok:{token_hash(t)}" for t in tokens}
        act(first, game, tokens[0], place(0))
        second.wait_for(game, created.first + len(orjson.loads(created.envelopes)))
        second.store.calls.clear()
        answer = act(second.games, game, tokens[1], place(1))  # this process never read the game
        assert second.store.calls == ["append"]
        assert answer["version"] == second.store.head(game).version
        assert second.games.memory.known(game) == (
            engine.replay([to_event(e) for e in second.store.read(game)]),
            second.store.head(game),
        )
    finally:
        second.close()


def test_a_token_named_by_a_forged_announcement_gets_no_seat(redis_client: redis.Redis) -> None:
    """Announcements are a shortcut, not a source of trust: the append checks the token's seat in
    Redis, so a token hash announced for a seat it is not is refused as if never heard."""
    games, _ = service(redis_client)
    other, _ = service(redis_client)
    game, tokens = new_game(other)
    envs = other.store.read(game)
    forged = Announcement(game, 1, orjson.dumps(envs), {f"tok:{token_hash('mallory')}": 0})
    games.hear(forged)
    actor = games.commands.identify_actor(game, "mallory")
    assert actor.holder is not None  # believed from memory...
    with pytest.raises(Unauthorized):  # ...until the append asked Redis
        act_as(games, game, "mallory", actor, place(0))
    assert games.store.head(game).version == len(envs)  # nothing written
    assert act(games, game, tokens[0], place(0))["version"] > len(envs)


@pytest.mark.parametrize("missed", ["first", "middle"])
def test_a_game_heard_with_a_gap_is_read_when_met(redis_client: redis.Redis, missed: str) -> None:
    games, store = service(redis_client)
    other, _ = service(redis_client)
    game, tokens = new_game(other)
    act(other, game, tokens[0], place(0))
    act(other, game, tokens[1], place(1))
    envs = store.read(game)
    runs = [envs[:-2], envs[-2:-1], envs[-1:]]  # as three appends announced them
    kept = runs[1:] if missed == "first" else [runs[0], runs[2]]
    for run in kept:
        games.hear(Announcement(game, run[0]["seq"], orjson.dumps(run), {}))
    assert games.memory.held_or_heard(game) is None  # no unbroken chain from the first event
    store.calls.clear()
    assert act(games, game, tokens[0], place(2))["version"] > len(envs)
    assert store.calls[0] == "look(fields, log)"  # met for the first time: read


def test_what_is_heard_of_games_not_held_is_bounded(redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module, "HEARD_GAMES", 3)
    monkeypatch.setattr(memory_module, "HEARD_RUNS", 2)
    games, _ = service(redis_client)
    other, store = service(redis_client)
    game, _tokens = new_game(other)
    run = orjson.dumps(store.read(game))  # a game's start, as if announced for each of five games
    for n in range(5):
        games.memory.hear(Announcement(f"g-{n}", 1, run, {}))
    assert [games.memory.held_or_heard(f"g-{n}") is None for n in range(5)] == [True, True, False, False, False]
    games.memory.hear(Announcement("g-long", 1, run, {}))
    for _ in range(2):  # more runs than kept: the game is dropped, to be read when met
        games.memory.hear(Announcement("g-long", 2, run, {}))
    assert games.memory.held_or_heard("g-long") is None
    games.memory.hear(Announcement("g-junk", 1, b'[{"seq": 1}]', {}))  # not a game's log: never held
    assert games.memory.held_or_heard("g-junk") is None


def test_announcements_that_do_not_continue_the_table_held_are_ignored(redis_client: redis.Redis) -> None:
    games, store = service(redis_client)
    game, tokens = new_game(games)
    table, head = games.memory.known(game) or (None, None)
    assert table is not None and head is not None
    other, _ = service(redis_client)
    act(other, game, tokens[0], place(0))
    later = store.read(game, head.version)
    games.memory.follow(game, later[1:])  # a gap: the first of them is missing
    games.memory.follow(game, [{**later[0], "prev": "0" * 64}, *later[1:]])  # another chain
    games.memory.hear(Announcement(game, later[1]["seq"], orjson.dumps(later[1:]), {}))
    games.memory.follow("g-not-cached-here", later)
    assert games.memory.known(game) == (table, head)
    games.memory.hear(Announcement(game, later[0]["seq"], orjson.dumps(later), {}))
    known = games.memory.known(game)
    assert known is not None and known[1] == store.head(game)


def test_a_broken_subscription_never_fails_a_command(redis_client: redis.Redis) -> None:
    following = Following(redis_client)
    try:
        game, tokens = new_game(following.games)
        following.listening.clear()
        assert redis_client.client_kill_filter(_type="pubsub") >= 1  # as when Redis restarts
        for move in range(3):
            assert act(following.games, game, tokens[move % 2], place(move))["version"] > 0
        assert following.listening.wait(10)  # the listener subscribed again
        other, _ = service(redis_client)
        game, tokens = new_game(other)
        following.wait_for(game, 1)
    finally:
        following.close()


def test_a_command_refused_on_a_table_behind_lets_announcements_in_first(redis_client: redis.Redis) -> None:
    first, _ = service(redis_client)
    second = Following(redis_client)
    try:
        game, tokens = new_game(first)
        second.wait_for(game, 1)
        second.games.identify(game, tokens[1])
        second.games.reader.load(game)
        before = second.store.head(game).version
        second.hold()
        act(first, game, tokens[0], place(0))
        second.wait_for(game, before + 1, taken=False)  # announced, arrived, not taken yet
        assert second.games.memory.known(game)[1].version == before  # type: ignore[index]
        # as under gevent, where the listener's turn comes when the command yields
        second.settle = lambda: second.let_in(game, before + 1)
        second.store.calls.clear()
        answer = act(second.games, game, tokens[1], place(1))
        # the rules refused seat 1 on the table held; the announcement, let in then, made it current
        assert second.store.calls == ["append"]
        assert answer["version"] == second.store.head(game).version
    finally:
        second.close()


def test_a_forged_announcement_never_reaches_an_answer(redis_client: redis.Redis) -> None:
    """Anyone who can publish on the channel could announce events that chain onto a held table; the
    head's hash in Redis decides, so no view, refusal or action is judged on them."""
    games, store = service(redis_client)
    game, tokens = new_game(games)
    act(games, game, tokens[0], place(0))
    _table, head = games.memory.known(game) or (None, Head(0, ""))
    renamed = Event("seat_joined", {"seat": 1, "name": "mallory"})
    forged = envelopes([renamed], head.version + 1, head.hash, "2026-01-01T00:00:00.000Z", SALTS)
    games.memory.follow(game, forged)  # it continues the chain held: taken into the cache
    assert games.view(game, None)["seats"][1]["name"] == "b"  # a view reads the head: the real game
    other, _ = service(redis_client)
    act(other, game, tokens[1], place(1))  # the real game moves past the forged event's number
    answer = act(games, game, tokens[0], place(2))
    assert answer["version"] == store.head(game).version
    assert games.view(game, None)["seats"][1]["name"] == "b"
    assert games.reader.load(game)[0] == engine.replay([to_event(e) for e in store.read(game)])


def test_an_announcement_names_the_store_that_appended(redis_client: redis.Redis) -> None:
    store = EventStore(redis_client, partitions=4)
    gid = game_id()
    with redis_client.pubsub() as pubsub:
        pubsub.ssubscribe(store.appended_channel(store.partition(gid)))  # sharded: the partition's channel
        assert pubsub.get_sharded_message(timeout=5)["type"] == "ssubscribe"  # type: ignore[index]
        store.append(gid, Append(batch(2), Head(0, GENESIS)))
        message = pubsub.get_sharded_message(timeout=5)
    heard = announcements.parse(message["data"])  # type: ignore[index]
    assert (heard.game_id, heard.first, heard.origin) == (gid, 1, store.origin)
    assert EventStore(redis_client, partitions=4).origin != store.origin


def test_the_listener_passes_over_announcements_of_its_own_appends(
    redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="push_response")  # redis-py's default handler logs each message
    following = Following(redis_client)
    try:
        channel = following.store.appended_channel(0)
        mine = following.store.origin.encode()
        redis_client.spublish(channel, b"g-mine 5 " + mine + b'\n[{"seq": 5}]')  # can arrive before Redis answers
        redis_client.spublish(channel, b'g-other 5 elsewhere\n[{"seq": 5}]')
        following.wait_for("g-other", 5)  # announcements come in order: the first one was passed over
        assert [(a.game_id, a.first) for a in following.heard] == [("g-other", 5)]
        assert [r for r in caplog.records if r.name == "push_response"] == []  # not even built as a string
    finally:
        following.close()


def test_under_gevent_letting_announcements_in_runs_a_listener_whose_socket_became_readable(
    redis_server: EmbeddedRedis,
) -> None:
    """The wiring of ``follow_appends`` in a monkey-patched child (as in a gunicorn gevent worker): a
    greenlet blocked reading a socket, as the listener is, gets to read what arrived while the
    command's greenlet was busy (``time.sleep(0)`` alone would not poll the sockets), also when another
    greenlet holds the loop past the pause (a busy worker's other requests): then one round of the loop
    finds both the socket readable and the pause over, and runs the pause's timer first."""
    program = f"""
from gevent import monkey; monkey.patch_all()
import socket, threading, time, gevent, redis
from bootstrap import build
from domain.record import GENESIS
from service.ports import Head, NoScheduler
kifu = build(redis.Redis(port={redis_server.port}), scheduler=NoScheduler())
kifu.follow_appends(threading.Event())
listener_end, publisher_end = socket.socketpair()
read = []
gevent.spawn(lambda: read.append(listener_end.recv(10)))
gevent.sleep(0.01)  # the reader is waiting on its socket
publisher_end.send(b"announced")  # arrives while this greenlet is busy: no yield from here on
def busy():
    end = time.perf_counter() + {BUSY_S}
    while time.perf_counter() < end:
        pass
gevent.spawn(busy)  # runs in the pause, and holds the loop past it
kifu.games.memory.newer("g-none", Head(0, GENESIS))  # a command refused on a table behind asks this
print(read)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["[b'announced']"]


@pytest.mark.slow
def test_the_listener_rides_out_a_redis_that_does_not_answer() -> None:
    class Stop(threading.Event):
        """Set after the listener has waited to retry twice."""

        retries = 0

        def wait(self, timeout: float | None = None) -> bool:
            self.retries += 1
            if self.retries == 2:
                self.set()
            return self.is_set()

    unreachable = EventStore(redis.Redis(port=1, socket_connect_timeout=1), partitions=4)  # nothing listens there
    stop = Stop()
    AppendFollower(unreachable, lambda _heard: None).run(stop, retry_s=0)  # returns once stopped, raises nothing
    assert stop.retries == 2


def test_an_announcement_names_only_seats_token_hashes() -> None:
    """A tournament's creation names its organiser's token hash too: not a seat, so not a seat here."""
    heard = announcements.parse(b'g-1 1\n[{"seq": 1}]\n{"tok:aa": "0", "tok:bb": "organiser"}')
    assert (heard.game_id, heard.first, heard.envelopes, heard.seats) == ("g-1", 1, b'[{"seq": 1}]', {"tok:aa": 0})
    assert announcements.parse(b"g-1 3\n[]").seats == {}
