"""kifu run's supervisor: a child that exits is restarted after a back-off; one that keeps
failing makes it give up; stop() ends every child. Time is a fake clock, never a sleep."""

from __future__ import annotations

import os
import select
import sys
from pathlib import Path

from entrypoints.supervisor import Supervisor

EXITS = [sys.executable, "-c", "raise SystemExit(3)"]
LIVES = [sys.executable, "-c", "import signal; signal.pause()"]  # runs until a signal stops it


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_child_that_exits_is_restarted_after_a_doubling_back_off() -> None:
    clock = Clock()
    sup = Supervisor({"flaky": EXITS, "steady": LIVES}, max_restarts=3, window_s=300, clock=clock)
    sup.start()
    flaky, steady = sup.children
    try:
        first, steady_process = flaky.process, steady.process
        assert first is not None and first.wait(timeout=30) == 3
        assert sup.poll() and flaky.process is first  # waits 1 s before the first restart
        clock.now += 1.0
        assert sup.poll() and flaky.process is not first and flaky.restarts == [1001.0]
        assert flaky.process.wait(timeout=30) == 3
        assert sup.poll() and flaky.due == clock.now + 2.0  # then 2 s
        clock.now += 2.0
        assert sup.poll() and len(flaky.restarts) == 2
        assert steady.process is steady_process and steady_process.poll() is None  # untouched
    finally:
        sup.stop()
    assert steady.process is not None and steady.process.returncode is not None


def test_too_many_restarts_in_the_window_gives_up() -> None:
    clock = Clock()
    sup = Supervisor({"broken": EXITS}, max_restarts=2, window_s=300, clock=clock)
    sup.start()
    (broken,) = sup.children
    try:
        for _ in range(2):
            assert broken.process is not None and broken.process.wait(timeout=30) == 3
            assert sup.poll()
            clock.now += 60
            assert sup.poll()
        assert broken.process.wait(timeout=30) == 3
        assert not sup.poll()  # a third exit within five minutes
    finally:
        sup.stop()


def test_restarts_older_than_the_window_are_forgotten() -> None:
    clock = Clock()
    sup = Supervisor({"rare": EXITS}, max_restarts=1, window_s=300, clock=clock)
    sup.start()
    (rare,) = sup.children
    try:
        assert rare.process is not None and rare.process.wait(timeout=30) == 3
        sup.poll()
        clock.now += 1
        assert sup.poll() and len(rare.restarts) == 1
        assert rare.process.wait(timeout=30) == 3
        clock.now += 301
        assert sup.poll()  # the earlier restart is out of the window
    finally:
        sup.stop()


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_that_exits_takes_what_it_forked_with_it(tmp_path: Path) -> None:
    """The RQ worker's forked scheduler would otherwise keep the dead worker's Redis socket."""
    pid_file = tmp_path / "grandchild"
    forks = [
        sys.executable,
        "-c",
        "import os, signal, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    signal.pause()\n"
        f"open({str(pid_file)!r}, 'w').write(str(pid))\n"
        "sys.exit(3)",
    ]
    clock = Clock()
    sup = Supervisor({"forker": forks}, clock=clock)
    sup.start()
    try:
        (forker,) = sup.children
        assert forker.process is not None and forker.process.wait(timeout=30) == 3
        grandchild = int(pid_file.read_text())
        exited = os.pidfd_open(grandchild)  # readable once the process has exited
        try:
            assert alive(grandchild) and select.select([exited], [], [], 0)[0] == []
            sup.poll()
            assert select.select([exited], [], [], 10)[0] == [exited]  # the kill is asynchronous
        finally:
            os.close(exited)
        assert not alive(grandchild)
    finally:
        sup.stop()
