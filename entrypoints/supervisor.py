"""Keep ``kifu run``'s processes up: restart one that exits, stop them all on request.

A child that exits on its own is restarted after a back-off that doubles while
it keeps exiting within ``stable_s`` of its start (1 s, 2 s, 4 s, at most 5 s:
a child that failed because something it needs was briefly gone should not
wait much longer than that took to come back); one that had been running for
longer starts again after the first delay. More than ``max_restarts``
restarts of one child within ``window_s`` means something is wrong for good:
``poll`` then answers False and the caller stops everything.

A *dependency* (the embedded Redis) is what the other children need: it is
started first and waited for until ``ready`` says it answers, restarted almost
at once (0.1 s, doubling) when it dies, and stopped last, after the others have
had their chance to finish with it.

Each child runs in its own process group, and a child that exits takes its
group with it: the RQ worker forks its scheduler, which inherits the worker's
Redis socket; left alive, it keeps the dead worker's blocking BLMOVE open, and
Redis would hand the next job to a client nobody reads.

Each child also dies with the supervisor (``die_with``): if ``kifu run`` is
killed outright (SIGKILL, OOM), nothing is left holding the port, the data
directory or Redis's AOF for the next ``kifu run`` to trip over.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
MAX_BACKOFF_S = 5.0
STABLE_S = 10.0  # a child that ran this long before it exited was not in a crash loop
READY_TIMEOUT_S = 30.0


def die_with(parent: int) -> Callable[[], None]:
    """A hook to run in a new child of ``parent`` (a ``preexec_fn``, an after-fork handler): the child gets
    SIGKILL when ``parent`` dies.

    The kernel sends the signal when the *thread* that forked the child ends, so
    ``parent`` must fork from its main thread. A parent that died before the
    prctl took effect would never signal, hence the check of the parent's pid
    right after it. libc is loaded here, in the parent, not between fork and exec.
    """
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


@dataclass(frozen=True)
class Dependency:
    """A child the others need: started first and waited for, restarted almost at once, stopped last."""

    command: Sequence[str]
    ready: Callable[[], bool]  # answers now (polled until True after the first start)
    backoff_s: float = 0.1


@dataclass
class Child:
    """One supervised command and its restart history."""

    name: str
    command: Sequence[str]
    backoff_s: float = 1.0  # the first restart's delay; it doubles with each quick exit in a row
    ready: Callable[[], bool] | None = None  # a dependency's readiness probe
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    restarts: list[float] = field(default_factory=list)
    quick_exits: int = 0  # in a row, each within ``stable_s`` of its start: the back-off's exponent
    due: float | None = None  # when to restart it, once it has exited


class Supervisor:
    def __init__(
        self,
        commands: Mapping[str, Sequence[str]],
        env: Mapping[str, str] | None = None,
        max_restarts: int = 8,
        window_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        dependencies: Mapping[str, Dependency] | None = None,
        max_backoff_s: float = MAX_BACKOFF_S,
        stable_s: float = STABLE_S,
    ) -> None:
        deps = dependencies or {}
        self.dependencies = [Child(name, list(d.command), d.backoff_s, d.ready) for name, d in deps.items()]
        self.services = [Child(name, list(cmd)) for name, cmd in commands.items()]
        self.children = self.dependencies + self.services
        self.env = dict(env) if env is not None else None
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.max_backoff_s = max_backoff_s
        self.stable_s = stable_s
        self.clock = clock

    def start(self, ready_timeout_s: float = READY_TIMEOUT_S) -> None:
        """Start the dependencies, wait until each answers, then start the rest."""
        for child in self.dependencies:
            self._spawn(child)
            self._wait_ready(child, ready_timeout_s)
        for child in self.services:
            self._spawn(child)

    def _wait_ready(self, child: Child, timeout_s: float) -> None:
        """Poll the child's probe (a process that is starting announces nothing we could block on)."""
        assert child.ready is not None and child.process is not None
        deadline = time.monotonic() + timeout_s
        while not child.ready():
            if child.process.poll() is not None:
                raise RuntimeError(f"{child.name} exited with code {child.process.returncode} while starting")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{child.name} did not answer within {timeout_s:.0f} s")
            time.sleep(0.02)

    def _spawn(self, child: Child) -> None:
        """Start the child in its own process group, armed to die with us (the supervisor runs no threads,
        so a ``preexec_fn`` cannot deadlock on a lock another thread held at the fork)."""
        arm = die_with(os.getpid())
        child.process = subprocess.Popen(child.command, env=self.env, start_new_session=True, preexec_fn=arm)  # noqa: PLW1509
        child.started = self.clock()
        child.due = None

    def poll(self) -> bool:
        """Restart children that exited (when their back-off is over); False to give up."""
        now = self.clock()
        for child in self.children:
            if child.process is None or child.process.poll() is None:
                continue
            if child.due is None and not self._schedule_restart(child, now):
                return False
            if child.due is not None and now >= child.due:
                child.restarts.append(now)
                self._spawn(child)
        return True

    def _schedule_restart(self, child: Child, now: float) -> bool:
        """Note when to restart a child that just exited; False when it failed too often."""
        assert child.process is not None
        _signal_group(child.process, signal.SIGKILL)  # orphans it forked
        child.restarts = [t for t in child.restarts if now - t < self.window_s]
        if len(child.restarts) >= self.max_restarts:
            log.error("%s exited %d times in %.0f s; giving up", child.name, len(child.restarts) + 1, self.window_s)
            return False
        if now - child.started >= self.stable_s:
            child.quick_exits = 0
        delay = min(child.backoff_s * 2.0**child.quick_exits, self.max_backoff_s)
        child.quick_exits += 1
        log.warning("%s exited with code %s; restarting in %.1f s", child.name, child.process.returncode, delay)
        child.due = now + delay
        return True

    def next_restart_in(self) -> float | None:
        """Seconds until the next restart is due (0 when one is overdue); None when none is waiting."""
        dues = [child.due for child in self.children if child.due is not None]
        return max(0.0, min(dues) - self.clock()) if dues else None

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the services, then the dependencies: SIGTERM, then SIGKILL what is left after ``timeout_s``
        (one deadline per group, not per process: a stop takes at most twice ``timeout_s`` however many
        children hang)."""
        _stop_all(self.services, timeout_s)
        _stop_all(self.dependencies, timeout_s)


def _stop_all(children: Sequence[Child], timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
    running = [c.process for c in children if c.process is not None and c.process.poll() is None]
    for process in running:
        _signal_group(process, signal.SIGTERM)
    deadline = clock() + timeout_s
    for process in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=max(0.0, deadline - clock()))
    for child in children:
        if child.process is not None:
            _signal_group(child.process, signal.SIGKILL)
            child.process.wait()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """Signal the process group the child leads (it may be gone already)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


class SignalSafeEvent(threading.Event):
    """A ``threading.Event`` that a signal handler may set.

    ``threading.Event.set`` takes the event's lock, which is not reentrant, and
    CPython runs a Python signal handler in the main thread between two of its
    bytecodes, even inside another handler. So a handler that sets an ordinary
    event while the main thread holds that lock (inside ``wait``, ``clear``, or
    a handler of the signal before: SIGCHLDs come in bursts when the children
    stop together) waits for itself forever. That hung ``kifu run`` on Ctrl-C.

    Here ``set`` only assigns a flag and writes a byte to a pipe (nothing to
    lock), and ``wait`` selects on the pipe; ``clear`` empties it. Any thread
    may wait: the byte stays until ``clear``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._flag = False
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def set(self) -> None:
        self._flag = True
        with contextlib.suppress(BlockingIOError):  # the pipe is full: it is readable already
            os.write(self._write, b"\0")

    def is_set(self) -> bool:
        return self._flag

    def clear(self) -> None:
        self._flag = False  # before emptying the pipe: a set() meanwhile leaves the flag True
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass

    def wait(self, timeout: float | None = None) -> bool:
        if not self._flag:
            select.select([self._read], [], [], timeout)  # retried after a handler (PEP 475); its byte wakes us
        return self._flag


def on_stop_signals(handler: Callable[[], None]) -> None:
    """Call ``handler`` on SIGTERM and on SIGINT (a shell may start us in the background with SIGINT ignored).

    It runs as a signal handler: it must take no lock (set a ``SignalSafeEvent``, not a ``threading.Event``).
    """
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: handler())
