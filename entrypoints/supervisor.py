"""Keep ``kifu run``'s processes up: restart one that exits, stop them all on request.

A child that exits on its own (say the RQ worker after Redis stalled) is
restarted after a back-off that doubles with each recent restart (1 s, 2 s, 4 s
... at most 30 s). More than ``max_restarts`` restarts of one child within
``window_s`` means something is wrong for good: ``poll`` then answers False
and the caller stops everything.

Each child runs in its own process group, and a child that exits takes its
group with it: the RQ worker forks its scheduler, which inherits the worker's
Redis socket; left alive, it keeps the dead worker's blocking BLMOVE open, and
Redis would hand the next job to a client nobody reads.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class Child:
    """One supervised command and its restart history."""

    name: str
    command: Sequence[str]
    process: subprocess.Popen[bytes] | None = None
    restarts: list[float] = field(default_factory=list)
    due: float | None = None  # when to restart it, once it has exited


class Supervisor:
    def __init__(
        self,
        commands: Mapping[str, Sequence[str]],
        env: Mapping[str, str] | None = None,
        max_restarts: int = 8,
        window_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.children = [Child(name, list(cmd)) for name, cmd in commands.items()]
        self.env = dict(env) if env is not None else None
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.clock = clock

    def start(self) -> None:
        for child in self.children:
            self._spawn(child)

    def _spawn(self, child: Child) -> None:
        child.process = subprocess.Popen(child.command, env=self.env, start_new_session=True)
        child.due = None

    def poll(self) -> bool:
        """Restart children that exited (when their back-off is over); False to give up."""
        now = self.clock()
        for child in self.children:
            if child.process is None or child.process.poll() is None:
                continue
            if child.due is None:
                _signal_group(child.process, signal.SIGKILL)  # orphans it forked
                child.restarts = [t for t in child.restarts if now - t < self.window_s]
                if len(child.restarts) >= self.max_restarts:
                    log.error(
                        "%s exited %d times in %.0f s; giving up", child.name, len(child.restarts) + 1, self.window_s
                    )
                    return False
                delay = min(2.0 ** len(child.restarts), 30.0)
                log.warning("%s exited with code %s; restarting in %.0f s", child.name, child.process.returncode, delay)
                child.due = now + delay
            if now >= child.due:
                child.restarts.append(now)
                self._spawn(child)
        return True

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM every running child, then SIGKILL what is left after ``timeout_s``."""
        running = [c.process for c in self.children if c.process is not None and c.process.poll() is None]
        for process in running:
            _signal_group(process, signal.SIGTERM)
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=timeout_s)
        for child in self.children:
            if child.process is not None:
                _signal_group(child.process, signal.SIGKILL)
                child.process.wait()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """Signal the process group the child leads (it may be gone already)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)
