"""Two processes' commands on one game, interleaved at random, against the Redis store and the in-memory log.

Each world is a log (``EventStore`` on a real Redis, or ``MemoryLog``) and two ``GameService`` on it,
each with its own memory, standing for two API processes. Hypothesis drives both worlds through the
same steps: a seat acts through either process (legal or not, with or without an expected version or
an idempotency key), a seat is joined, a process hears what was appended (as its listener would) or
forgets the game (as its bounded memory does). Every answer, refusal included, must be the same in both
worlds, and so must the logs: the fake is held to the real store's contract, and the service's answers
do not depend on which process, or how stale its memory, served them. Randomness (ids, tokens, seeds,
salts) is drawn from one seeded generator per world, and the clock is fixed, so the two worlds' logs
are equal byte for byte.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
import redis
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from adapters.memory_log import MemoryLog
from adapters.redis_store import EventStore
from domain import engine
from domain.audit import SEALED_CHECK, verify_record
from service.errors import Conflict
from service.games import GameService
from service.memory import GameMemory
from service.ports import Announcement, EventLog
from service.reader import GameReader
from tests.support.commands import act_as

DECKS = [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"], ["sb-006", "sb-007", "sb-008", "sb-009", "sb-010"]]
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
PREFIXES = itertools.count()


class World:
    """One log and two processes on it."""

    def __init__(self, log: EventLog, seed: int) -> None:
        rng = random.Random(seed)
        self.log = log
        self.processes = [
            GameService(log, GameMemory(size=8), clock=lambda: NOW, random_bytes=rng.randbytes) for _ in range(2)
        ]
        players = [{"name": "a"}, {"open": True}]
        created = self.processes[0].create_game("san-ban", players, {"mode": "standard"}, {"first": 0, "decks": DECKS})
        self.game: str = created.body["id"]
        self.tokens: list[str | None] = [s["token"] for s in created.body["seats"]]

    def answer(self, command: Callable[[], Any]) -> tuple[Any, ...]:
        """What a command answered, or how it was refused: comparable across worlds."""
        try:
            done = command()
        except Conflict as conflict:
            return ("refused", "Conflict", conflict.current)
        except Exception as refusal:
            return ("refused", type(refusal).__name__, str(refusal))
        return ("done", done.body, done.replayed)

    def act(self, process: int, seat: int, action: dict[str, Any], expected: int | None, key: str | None) -> Any:
        games, token = self.processes[process], self.tokens[seat]
        return self.answer(
            lambda: act_as(
                games, self.game, token, games.commands.identify_actor(self.game, token), action, expected, key
            )
        )

    def join(self, process: int, key: str | None) -> Any:
        answer = self.answer(lambda: self.processes[process].join(self.game, 1, "b", key))
        if answer[0] == "done" and answer[1]["token"] is not None:
            self.tokens[1] = answer[1]["token"]
        return answer

    def hear(self, process: int) -> None:
        """Hand the process what was appended since the table it holds (all of it when it holds none)."""
        memory = self.processes[process].memory
        known = memory.known(self.game)
        after = known[1].version if known is not None else 0
        envs = self.log.read(self.game, after)
        if envs:
            memory.hear(Announcement(self.game, after + 1, orjson.dumps(envs), {}))


class TwoProcessesTwoLogs(RuleBasedStateMachine):
    def __init__(self, client: redis.Redis) -> None:
        super().__init__()
        seed = 2026
        store = EventStore(client, partitions=4, prefix=f"stateful{next(PREFIXES)}")
        self.worlds = [World(store, seed), World(MemoryLog(), seed)]

    def both(self, step: Callable[[World], Any]) -> Any:
        real, fake = (step(world) for world in self.worlds)
        assert real == fake
        return real

    @rule(
        process=st.integers(0, 1),
        seat=st.integers(0, 1),
        pick=st.integers(0, 50),
        expect=st.sampled_from([None, "now", "stale"]),
        key=st.sampled_from([None, "k1", "k2"]),
    )
    def act(self, process: int, seat: int, pick: int, expect: str | None, key: str | None) -> None:
        world = self.worlds[0]
        table, head = GameReader(world.log, GameMemory()).load(world.game)  # as it is, no process's memory
        legal = engine.legal_actions(table, seat) if seat in table.to_act else []
        action = legal[pick % len(legal)] if legal and pick < 45 else {"type": "place", "cell": pick % 9, "card": "x"}
        expected = {None: None, "now": head.version, "stale": head.version - 1}[expect]
        self.both(lambda w: w.act(process, seat, action, expected, key))

    @rule(process=st.integers(0, 1), key=st.sampled_from([None, "j1"]))
    def join(self, process: int, key: str | None) -> None:
        self.both(lambda w: w.join(process, key))

    @rule(process=st.integers(0, 1))
    def hear(self, process: int) -> None:
        self.both(lambda w: w.hear(process))

    @rule(process=st.integers(0, 1))
    def forget(self, process: int) -> None:
        self.both(lambda w: w.processes[process].memory.forget(w.game))

    @invariant()
    def the_logs_are_the_same_and_verify(self) -> None:
        real, fake = (list(w.log.read_all(w.game)) for w in self.worlds)
        assert real == fake
        assert self.worlds[1].log.meta(self.worlds[1].game) == self.worlds[0].log.meta(self.worlds[0].game)
        report = verify_record(self.worlds[1].processes[0].full_record(self.worlds[1].game))
        assert all(check["ok"] for check in report["checks"] if check["name"] != SEALED_CHECK), report


def test_two_processes_answer_alike_on_the_redis_store_and_the_memory_log(redis_client: redis.Redis) -> None:
    run_state_machine_as_test(
        lambda: TwoProcessesTwoLogs(redis_client),
        settings=settings(max_examples=40, stateful_step_count=30, deadline=None),
    )
