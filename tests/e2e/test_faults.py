"""The fault suite, short (``bench/faults.py`` is the long one): a real ``kifu run`` loses each of its
processes once, to SIGKILL, while bots and humans play; nothing acknowledged is lost.

Killed in turn: the embedded Redis (valkey-server), a gunicorn worker, the RQ worker, the projector, the sweeper, and
``kifu run`` itself (a new one is started on the same port and data, as a user would).
"""

from __future__ import annotations

from pathlib import Path

from bench.faults import TARGETS, run, stack


def test_every_process_killed_once_loses_nothing_acknowledged(tmp_path: Path) -> None:
    with stack(tmp_path) as s:
        report = run(s, bot_games=6, human_games=3, rounds=1, seed=7)
    assert report.problems == [], report.problems
    assert [target for target, _back in report.faults] == list(TARGETS)
    assert report.acked > 20  # the humans' acknowledged events, each found in its log as answered
    assert max(back for _target, back in report.faults) < 30  # every fault healed (README: the figures)
