"""``bench.scale`` measures what it says: a real ``kifu run`` with the API workers asked for, under load
from several load generator processes, each part of the stack's CPU found and Redis's commands read.
Nothing here depends on how fast anything is."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from bench.scale import measure, saturation


@pytest.fixture
def sigterm_only_noted() -> Iterator[None]:
    """A SIGTERM handler that only notes the signal, as kifu's processes (and the tests that build their
    parts in-process) install: a load generator forked from such a process could outlive
    ``Pool.terminate`` (when it had not yet taken its end-of-work sentinel), and the row never ended."""
    before = signal.signal(signal.SIGTERM, lambda *_: None)
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.mark.slow  # starts the whole stack (kifu run)
def test_a_row_counts_every_load_generators_answers_and_each_parts_cpu(sigterm_only_noted: None) -> None:
    row = measure(api_workers=2, clients=6, loadgens=2, seconds=1.0, warmup=0.3, mode="pair")

    assert row.failures == {}
    assert row.api_workers == 2 and row.clients == 6  # three games in play, two connections each
    assert row.per_s > 0 and 0 < row.p50_ms <= row.p99_ms
    assert row.cores["api"] > 0 and row.cores["redis"] > 0 and row.cores["load"] > 0  # each process found
    assert 0 <= row.cores["redis-system"] <= row.cores["redis"]
    assert row.machine_cores >= row.cores["api"] * 0.5  # the machine's busy time holds the API's
    commands = {name: per_action for name, per_action, _us in row.redis_commands}
    assert commands["evalsha"] >= 1.0  # at least the append's script for each action answered
    assert "at 2 API workers: Redis" in saturation(row)
