"""kifu run's supervisor: a child that exits is restarted after a back-off (capped, and reset
after a stable run); one that keeps failing makes it give up; a dependency (Redis) starts
first, is waited for, restarts almost at once and stops last; stop() ends every child, and
every child dies with the supervisor. Time is a fake clock, never a sleep."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from entrypoints.supervisor import Child, Dependency, Supervisor, _stop_all

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


def exits_and_polls(sup: Supervisor, child: Child) -> float:
    """Wait for ``child`` to exit, let the supervisor see it; the delay it chose before the restart."""
    assert child.process is not None and child.process.wait(timeout=30) == 3
    assert sup.poll() and child.due is not None
    return child.due - sup.clock()


def test_the_back_off_stops_doubling_at_five_seconds() -> None:
    """A child that failed because something it needs was briefly gone should not wait 30 s once it is back."""
    clock = Clock()
    sup = Supervisor({"flaky": EXITS}, max_restarts=10, window_s=300, clock=clock)
    sup.start()
    (flaky,) = sup.children
    try:
        delays = []
        for _ in range(5):
            delays.append(exits_and_polls(sup, flaky))
            clock.now += delays[-1]
            assert sup.poll()  # restarted
        assert delays == [1.0, 2.0, 4.0, 5.0, 5.0]
    finally:
        sup.stop()


def test_a_child_that_ran_for_a_while_restarts_after_the_first_delay_again() -> None:
    clock = Clock()
    sup = Supervisor({"flaky": EXITS}, clock=clock, stable_s=10)
    sup.start()
    (flaky,) = sup.children
    try:
        assert exits_and_polls(sup, flaky) == 1.0
        clock.now += 1.0
        assert sup.poll()
        clock.now += 10.0  # this run lasted 10 s: not a crash loop
        assert exits_and_polls(sup, flaky) == 1.0
    finally:
        sup.stop()


def written(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0


def pid_file_writer(path: Path) -> list[str]:
    """A command that writes its pid to ``path`` (its readiness), then runs until a signal stops it."""
    code = f"import os, signal; open({str(path)!r}, 'w').write(str(os.getpid())); signal.pause()"
    return [sys.executable, "-c", code]


def test_a_dependency_starts_first_and_is_waited_for_and_restarts_almost_at_once(tmp_path: Path) -> None:
    pid_file = tmp_path / "redis.pid"
    seen_before_ready: list[object] = []

    def ready() -> bool:
        seen_before_ready.extend(c.process for c in sup.services)  # nothing else may start before it answers
        return written(pid_file)

    clock = Clock()
    sup = Supervisor({"api": LIVES}, clock=clock, dependencies={"redis": Dependency(pid_file_writer(pid_file), ready)})
    try:
        sup.start()
        (redis,), (api,) = sup.dependencies, sup.services
        assert seen_before_ready and set(seen_before_ready) == {None}
        assert api.process is not None and api.process.poll() is None
        assert redis.process is not None and int(pid_file.read_text()) == redis.process.pid
        redis.process.kill()
        redis.process.wait()
        assert sup.poll() and redis.due == clock.now + 0.1
        assert sup.next_restart_in() == pytest.approx(0.1)  # how long the caller may sleep
        clock.now += 0.1
        assert sup.poll() and redis.process.poll() is None and api.process.poll() is None
    finally:
        sup.stop()


def test_a_dependency_is_stopped_last(tmp_path: Path) -> None:
    """The services finish with Redis still there (the RQ worker registers its death in it)."""
    pid_file, seen, started = tmp_path / "redis.pid", tmp_path / "seen", tmp_path / "started"
    os.mkfifo(started)
    on_sigterm = (
        "import os, signal, sys\n"
        "def check(*_):\n"
        f"    pid = open({str(pid_file)!r}).read()\n"
        "    state = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[0]\n"
        f"    open({str(seen)!r}, 'w').write(state)\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, check)\n"
        f"open({str(started)!r}, 'w').write('handler installed')\n"
        "signal.pause()"
    )
    sup = Supervisor(
        {"worker": [sys.executable, "-c", on_sigterm]},
        dependencies={"redis": Dependency(pid_file_writer(pid_file), lambda: written(pid_file))},
    )
    sup.start()
    assert started.read_text() == "handler installed"  # blocks until the worker wrote it
    (redis,) = sup.dependencies
    sup.stop()
    assert seen.read_text() in {"S", "R"}  # Redis was still running (not a zombie) when the worker stopped
    assert redis.process is not None and redis.process.returncode == -signal.SIGTERM


def test_children_that_ignore_sigterm_share_one_deadline_then_are_killed(tmp_path: Path) -> None:
    """Three hung services cost one ``timeout_s``, not three (``kifu run``'s Ctrl-C within its budget)."""
    clock = Clock()
    children, waited = [], []
    for i in range(3):
        started = tmp_path / f"started-{i}"
        os.mkfifo(started)
        ignores = (
            "import signal\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            f"open({str(started)!r}, 'w').write('ignoring')\n"
            "signal.pause()"
        )
        process = subprocess.Popen([sys.executable, "-c", ignores], start_new_session=True)
        assert started.read_text() == "ignoring"  # blocks until SIGTERM is ignored
        real_wait = process.wait

        def hung_wait(timeout: float | None = None, real_wait=real_wait, process=process) -> int:  # type: ignore[no-untyped-def]
            if timeout is None:  # after SIGKILL
                return real_wait()
            waited.append(timeout)
            clock.now += timeout  # the whole timeout passes: SIGTERM is ignored
            raise subprocess.TimeoutExpired(process.args, timeout)

        process.wait = hung_wait  # type: ignore[method-assign]
        children.append(Child(f"hung-{i}", [], process=process))
    _stop_all(children, 5.0, clock=clock)
    assert waited == [5.0, 0.0, 0.0]
    assert [c.process.returncode for c in children if c.process is not None] == [-signal.SIGKILL] * 3


def test_children_and_what_they_fork_die_with_the_supervisor() -> None:
    """`kifu run` killed outright (SIGKILL, OOM) must not leave its stack holding the port and the AOF."""
    forker = (  # like the RQ worker: arms what it forks (its scheduler) to die with it
        "import os, signal\n"
        "from entrypoints.supervisor import die_with\n"
        "os.register_at_fork(after_in_child=die_with(os.getpid()))\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    signal.pause()\n"
        "print('grandchild', pid, flush=True)\n"
        "signal.pause()"
    )
    supervisor = (
        "import signal, sys\n"
        "from entrypoints.supervisor import Supervisor\n"
        f"sup = Supervisor({{'forker': [sys.executable, '-c', {forker!r}]}})\n"
        "sup.start()\n"
        "print('child', sup.children[0].process.pid, flush=True)\n"
        "signal.pause()"
    )
    proc = subprocess.Popen([sys.executable, "-c", supervisor], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        pids = dict(proc.stdout.readline().split() for _ in range(2))  # both write to our pipe, in either order
        exits = [os.pidfd_open(int(pids["child"])), os.pidfd_open(int(pids["grandchild"]))]
        proc.kill()
        proc.wait()
        for fd in exits:
            assert select.select([fd], [], [], 10)[0] == [fd]  # each exited
            os.close(fd)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_signal_safe_event_is_set_by_a_burst_of_handlers_while_the_main_thread_waits_and_clears() -> None:
    """A burst of signals whose handler sets the event, while the main thread waits on it and clears it
    in a loop: a ``threading.Event`` deadlocks within a few hundred (a handler runs while the main thread
    holds its lock); this one must see every burst through and still report a set."""
    burst = (
        "import os, signal, subprocess\n"
        "from entrypoints.supervisor import SignalSafeEvent\n"
        "event, seen = SignalSafeEvent(), 0\n"
        "signal.signal(signal.SIGUSR1, lambda *_: event.set())\n"
        "sender = subprocess.Popen(['bash', '-c', f'for i in $(seq 2000); do kill -USR1 {os.getpid()}; done'])\n"
        "while sender.poll() is None:\n"
        "    if event.wait(0.0001):\n"
        "        seen += 1\n"
        "    event.clear()\n"
        "assert not event.is_set() and not event.wait(0)\n"
        "os.kill(os.getpid(), signal.SIGUSR1)\n"
        "assert event.wait() and event.is_set()\n"
        "print(seen > 0, flush=True)"
    )
    assert python_c(burst, timeout_s=120) == "True"


def test_kifu_runs_loop_stops_on_ctrl_c_after_a_burst_of_sigchld() -> None:
    """``kifu run``'s loop (``entrypoints.stack._supervise``) under a burst of SIGCHLDs, as when its
    children exit together, then Ctrl-C. Its handlers once set ``threading.Event``s, and a CI run's stop
    hung for good; with them this loop hangs within the burst nearly every time."""
    stack = (
        "from entrypoints.stack import _supervise\n"
        "from entrypoints.supervisor import Supervisor\n"
        "burst = 'for i in $(seq 3000); do kill -CHLD $PPID; done; kill -INT $PPID; sleep 60'\n"
        "sup = Supervisor({'burst': ['bash', '-c', burst]})\n"
        "sup.start()\n"
        "assert _supervise(sup)\n"
        "sup.stop(timeout_s=5)\n"
        "print('stopped', flush=True)"
    )
    assert python_c(stack, timeout_s=60) == "stopped"


def python_c(code: str, timeout_s: float) -> str:
    """What ``python -c code`` printed, once it exited 0 (its stderr in the failure otherwise); the
    timeout turns a hang (the deadlock these tests look for) into a failure."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
