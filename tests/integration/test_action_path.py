"""The action path's trip from the route to the append, as ``bench.action_path`` measures it."""

from __future__ import annotations

from adapters.embedded_redis import EmbeddedRedis
from bench.action_path import measure


def test_an_action_crosses_the_service_layers_files_at_most_twice_when_the_process_holds_the_game(
    redis_server: EmbeddedRedis,
) -> None:
    traces = measure(redis_server.url)
    assert traces["warm"].path == ["commands.py", "memory.py", "commands.py"]  # the memory once: the seat and table
    # behind: the memory's table is refused by the rules, then brought up to the head in one read
    assert traces["behind"].moves <= 8 and traces["behind"].path[-1] == "commands.py"
    # cold: the caller identified with the start of the log, which the memory then holds
    assert traces["cold"].moves <= 8 and "reader.py" in traces["cold"].path
