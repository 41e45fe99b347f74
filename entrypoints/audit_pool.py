"""Uploaded records verified in a small pool of separate processes, off the API's event loop.

``POST /v1/audits`` takes a record of up to ``MAX_RECORD_BYTES`` (16 MiB); the
largest real one (5.4 MB) takes about a second of CPU to parse and verify. In
a gevent worker that second blocked the event loop: every other request the
worker held waited for it (README, "Limits"). So the API process hands the
body, unparsed, to a verifier process and its request waits for the answer
cooperatively; the other requests go on meanwhile.

* **Verifiers** are ``python -m entrypoints.audit_pool`` processes: a fresh
  interpreter (fork and exec, the ``spawn`` start method's way), so nothing of
  the API worker is inherited: not its gevent hub, its Redis connections nor
  its sockets (``close_fds``). Each lowers its own priority (``os.nice``
  ``NICE``) so that the API's requests win the CPU, imports the games the API
  process has registered, and answers one record at a time: it parses the raw
  bytes itself with ``domain.strict_json`` (so not even the parse of a 16 MiB
  body runs in the event loop) and runs ``domain.audit.verify_record``, or for
  a tournament archive (its top-level ``format`` is ``kifu-tournament/1``)
  ``domain.tournament.archive.verify_archive`` (``verify_upload``). A pool
  starts its first verifier at its first audit, and belongs to the process
  that made it (a forked process makes its own).
* **The protocol**, over the verifier's stdin and stdout (its fd 1 is pointed
  at stderr, so a stray print cannot break it): the verifier sends ``READY``
  once it has imported everything; then each job is an 8-byte big-endian
  length and the body, each answer a tag byte (``REPORT``, ``MALFORMED``,
  ``FAILED``), an 8-byte length and JSON.
* **The wait is cooperative.** The API's ends of the pipes are non-blocking,
  and every read or write that would block waits with ``select.poll``, looked
  up when it is called: under gunicorn's gevent worker (everything
  monkey-patched) that is gevent's ``poll``, so the greenlet sleeps and the hub
  serves everybody else; in a server without gevent (werkzeug's threaded one,
  Flask's test client) it is the real one, and the request's thread blocks.
  ``subprocess`` and ``threading`` are looked up the same way (gevent's under
  gevent).
* **Bounded**: at most ``processes`` verifications run at once per API
  process, and at most ``queue`` more wait for a verifier; past that
  ``verify`` raises ``Busy`` (503 with ``Retry-After``) at once.
* **A time limit** of ``seconds`` per verification (from the job's first byte
  to its answer's last): past it the verifier is killed, a fresh one started,
  and ``verify`` raises ``TooLong``. A verifier that dies (a crash, a kill) is
  replaced the same way: ``Died`` for the record it had, and one found dead
  while idle is replaced before it is given a record.
* ``close`` (``close_all`` for every pool of the process, from gunicorn's
  ``worker_exit``; otherwise at exit, or when the pool is garbage) ends the
  verifiers: each sees its stdin close and exits.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import logging
import math
import os
import select
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain import strict_json

log = logging.getLogger("kifu.audits")

NICE = 10  # added to a verifier's niceness: the API's own requests come first
READY, REPORT, MALFORMED, FAILED = b"K", b"R", b"M", b"F"
LENGTH = 8  # bytes of a length prefix
START_SECONDS = 30.0  # a new verifier's import must be done within this (else it counts as dead)
STOP_SECONDS = 2.0  # a closed verifier's time to exit before it is killed
PIPE_BYTES = 1 << 20  # each pipe's capacity, where the system allows: fewer wake-ups for a large record
CHILD = "entrypoints.audit_pool"


class Busy(Exception):
    """Every verifier is busy and the queue is full: try again in ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"every verifier is busy; retry in {retry_after} s")
        self.retry_after = retry_after


class TooLong(Exception):
    """The verification took longer than the limit; its verifier was killed and replaced."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the verification took longer than {seconds:g} s")
        self.seconds = seconds


class Malformed(Exception):
    """The body is not strict JSON: ``error`` is the parser's own (``domain.strict_json``) refusal."""

    def __init__(self, error: strict_json.StrictJSONError) -> None:
        super().__init__(str(error))
        self.error = error


class Died(Exception):
    """The verifier died, or failed, with the record; it was replaced (the reason is logged)."""


class _Expired(Exception):
    """A wait reached its deadline."""


@dataclass(eq=False)
class _Verifier:
    proc: subprocess.Popen[bytes]
    ready: bool = False

    @property
    def to_child(self) -> int:
        assert self.proc.stdin is not None
        return self.proc.stdin.fileno()

    @property
    def from_child(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()


@dataclass(eq=False)
class _Verifiers:
    """Every verifier a pool has, and the process that owns them (a forked copy must not end them)."""

    owner: int = field(default_factory=os.getpid)
    every: set[_Verifier] = field(default_factory=set)
    idle: list[_Verifier] = field(default_factory=list)


_POOLS: weakref.WeakSet[AuditPool] = weakref.WeakSet()


class AuditPool:
    """At most ``processes`` verifications at once and ``queue`` waiting, each within ``seconds``."""

    def __init__(self, processes: int = 1, queue: int = 4, seconds: float = 30.0) -> None:
        if processes < 1 or queue < 0 or seconds <= 0:
            raise ValueError("an audit pool needs processes >= 1, queue >= 0 and seconds > 0")
        self.processes, self.queue, self.seconds = processes, queue, seconds
        self.pid = os.getpid()
        self.admitted = 0  # verifications running or waiting for a verifier
        self.running = 0  # verifications given to a verifier
        self._typical = 1.0  # seconds a verification takes (a moving average): for Retry-After
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(processes)
        self._verifiers = _Verifiers()
        self._closed = False
        self._finalizer = weakref.finalize(self, _stop, self._verifiers)
        _POOLS.add(self)

    def verify(self, body: bytes, keys: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``verify_upload`` of ``body`` parsed as strict JSON, in a verifier, its signatures checked against
        the JWK set ``keys`` when given; or ``Busy``, ``TooLong``, ``Malformed`` or ``Died``."""
        with self._lock:
            if self._closed:
                raise Busy(1)
            if self.admitted >= self.processes + self.queue:
                raise Busy(self._retry_after())
            self.admitted += 1
        try:
            with self._slots:
                tag, payload = self._run(json.dumps(keys).encode() if keys is not None else b"", body)
        finally:
            with self._lock:
                self.admitted -= 1
        if tag == REPORT:
            report: dict[str, Any] = json.loads(payload)
            return report
        if tag == MALFORMED:
            raise Malformed(_parse_error(payload))
        log.error("a verifier failed on an uploaded record:\n%s", payload.decode("utf-8", "replace"))
        raise Died("the verifier failed on this record; the error was logged")

    def pids(self) -> list[int]:
        """The process ids of the verifiers now started."""
        return sorted(v.proc.pid for v in self._verifiers.every)

    def close(self) -> None:
        """End every verifier (waiting at most ``STOP_SECONDS`` for each); later audits are ``Busy``."""
        self._closed = True
        self._finalizer()

    def _retry_after(self) -> int:
        return max(1, math.ceil(self._typical * self.admitted / self.processes))

    def _run(self, keys: bytes, body: bytes) -> tuple[bytes, bytes]:
        """Hand ``body`` to an idle verifier and read its answer; the verifier goes back idle after, or is
        killed and replaced when anything went wrong (so a half-done job never reaches the next record)."""
        verifier = self._idle_verifier()
        done = False
        with self._lock:
            self.running += 1
        began = time.monotonic()
        try:
            if not verifier.ready:
                _started(verifier)
            deadline = time.monotonic() + self.seconds
            for part in (keys, body):  # a job: the keys (empty: none), then the document
                _write(verifier.to_child, len(part).to_bytes(LENGTH, "big"), deadline)
                _write(verifier.to_child, part, deadline)
            head = _read(verifier.from_child, 1 + LENGTH, deadline)
            payload = _read(verifier.from_child, int.from_bytes(head[1:], "big"), deadline)
            done = True
        except _Expired:
            log.warning("an uploaded record took longer than %g s to verify: its verifier was killed", self.seconds)
            raise TooLong(self.seconds) from None
        except (EOFError, OSError) as exc:
            code = _end(verifier)
            log.error("a verifier died with an uploaded record (exit status %s): %s", code, exc)
            raise Died(f"the verifier process died ({_status(code)}) while checking this record") from None
        finally:
            with self._lock:
                self.running -= 1
            if done:
                self._typical = 0.8 * self._typical + 0.2 * (time.monotonic() - began)
                self._verifiers.idle.append(verifier)
            else:
                self._replace(verifier)
        return head[:1], payload

    def _idle_verifier(self) -> _Verifier:
        """An idle verifier (one found dead is replaced): there is one for each free slot."""
        verifiers = self._verifiers
        while verifiers.idle:
            verifier = verifiers.idle.pop()
            if verifier.proc.poll() is None:
                return verifier
            log.warning("a verifier exited while idle (%s); starting another", _status(verifier.proc.returncode))
            self._forget(verifier)
        return self._start()

    def _start(self) -> _Verifier:
        setup = json.dumps({"path": sys.path, "modules": _game_modules()})
        proc = subprocess.Popen(
            [sys.executable, "-m", CHILD, setup], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True
        )
        verifier = _Verifier(proc)
        for fd in (verifier.to_child, verifier.from_child):
            os.set_blocking(fd, False)
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        self._verifiers.every.add(verifier)
        return verifier

    def _replace(self, verifier: _Verifier) -> None:
        """Kill ``verifier`` (whatever it was doing) and start a fresh one in its place, idle."""
        _end(verifier)
        self._forget(verifier)
        if not self._closed:
            self._verifiers.idle.append(self._start())

    def _forget(self, verifier: _Verifier) -> None:
        self._verifiers.every.discard(verifier)
        for pipe in (verifier.proc.stdin, verifier.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def close_all() -> None:
    """Close every pool of this process (gunicorn's ``worker_exit``)."""
    for pool in list(_POOLS):
        if pool.pid == os.getpid():
            pool.close()


def _stop(verifiers: _Verifiers) -> None:
    """End every verifier: its stdin closes, so it exits; one still running after ``STOP_SECONDS`` is killed."""
    if verifiers.owner != os.getpid():
        return
    for verifier in list(verifiers.every):
        with contextlib.suppress(OSError):
            if verifier.proc.stdin is not None:
                verifier.proc.stdin.close()
    for verifier in list(verifiers.every):
        try:
            verifier.proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            _end(verifier)
        with contextlib.suppress(OSError):
            if verifier.proc.stdout is not None:
                verifier.proc.stdout.close()
    verifiers.every.clear()
    verifiers.idle.clear()


def _end(verifier: _Verifier) -> int | None:
    """Kill ``verifier`` if it still runs and reap it; its exit status."""
    with contextlib.suppress(OSError):
        verifier.proc.kill()
    try:
        return verifier.proc.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:  # not even SIGKILL ended it yet (a process stuck in the kernel)
        return None


def _started(verifier: _Verifier) -> None:
    """Wait for a new verifier's ``READY`` (``EOFError`` if it dies first or takes ``START_SECONDS``)."""
    try:
        said = _read(verifier.from_child, len(READY), time.monotonic() + START_SECONDS)
    except _Expired:
        raise EOFError(f"the verifier did not start within {START_SECONDS:g} s") from None
    if said != READY:
        raise EOFError(f"the verifier said {said!r} instead of being ready")
    verifier.ready = True


def _status(code: int | None) -> str:
    if code is None:
        return "still running"
    return f"signal {-code}" if code < 0 else f"exit status {code}"


def _wait(fd: int, events: int, deadline: float) -> None:
    """Wait until ``fd`` is ready for ``events`` (``_Expired`` at ``deadline``): gevent's ``poll`` when
    ``select`` is patched (this greenlet alone waits), the system's otherwise (this thread waits)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _Expired
    poller = select.poll()
    poller.register(fd, events)
    if not poller.poll(math.ceil(remaining * 1000)):
        raise _Expired


def _write(fd: int, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)


def _read(fd: int, size: int, deadline: float) -> bytes:
    """Exactly ``size`` bytes (``EOFError`` if the verifier closes its end first)."""
    chunks, wanted = [], size
    while wanted:
        try:
            chunk = os.read(fd, min(wanted, PIPE_BYTES))
        except BlockingIOError:
            _wait(fd, select.POLLIN, deadline)
            continue
        if not chunk:
            raise EOFError(f"the verifier closed its answer after {size - wanted} of {size} bytes")
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def _parse_error(payload: bytes) -> strict_json.StrictJSONError:
    """The verifier's ``StrictJSONError`` again, of the same class (``NestedTooDeep``, ...)."""
    error = json.loads(payload)
    kind = getattr(strict_json, str(error.get("class")), None)
    if not (isinstance(kind, type) and issubclass(kind, strict_json.StrictJSONError)):
        kind = strict_json.StrictJSONError
    return kind(str(error.get("message", "")))


def _game_modules() -> list[str]:
    """The modules of every game this process has registered (tests register their own), for a verifier
    to import before its first record."""
    from domain.registry import all_games

    return sorted({type(game).__module__ for game in all_games()})


# -- the verifier process ----------------------------------------------------------------------------


def _answer(out: Any, tag: bytes, payload: bytes) -> None:
    out.write(tag + len(payload).to_bytes(LENGTH, "big") + payload)
    out.flush()


def _verified(keys: bytes, body: bytes) -> tuple[bytes, bytes]:
    """One job: the tag and the JSON of its answer."""
    try:
        upload = strict_json.loads(body)
    except strict_json.StrictJSONError as exc:
        return MALFORMED, json.dumps({"class": type(exc).__name__, "message": str(exc)}).encode()
    try:
        return REPORT, json.dumps(verify_upload(upload, json.loads(keys) if keys else None)).encode()
    except Exception:
        return FAILED, traceback.format_exc().encode()


def verify_upload(upload: Any, keys: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report on an uploaded document: a tournament archive (top-level ``format`` is
        ``ARCHIVE_FORMAT``) as ``kifu verify-tournament`` checks it, anything else as a game record (whose
        own ``format`` check reports whatever is not one). Signatures are checked against ``keys`` when given;
    an unsigned document (sealed before records were signed, or from elsewhere) is not refused for that
    alone: its report says ``signed: unsigned``."""
    from domain.audit import verify_record
    from domain.tournament.archive import ARCHIVE_FORMAT, verify_archive

    if isinstance(upload, Mapping) and upload.get("format") == ARCHIVE_FORMAT:
        return verify_archive(upload, keys=keys, unsigned_ok=True)
    return verify_record(upload, keys=keys, unsigned_ok=True)


def _read_exactly(source: Any, size: int) -> bytes | None:
    data = source.read(size)
    return data if len(data) == size else None


def serve(modules: Iterable[str], source: Any, out: Any) -> None:
    """A verifier's life: import, say ``READY``, then answer each job until its input ends."""
    import domain.audit  # before READY: the first record is not kept waiting for imports
    import domain.games  # registers every game
    import domain.tournament.archive  # noqa: F401  (nor the first archive)

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a game module this process cannot import: its records fail the checks
            print(f"audit verifier: cannot import {name}: {exc}", file=sys.stderr)
    out.write(READY)
    out.flush()
    while (head := _read_exactly(source, LENGTH)) is not None:
        keys = _read_exactly(source, int.from_bytes(head, "big"))
        size = _read_exactly(source, LENGTH)
        body = _read_exactly(source, int.from_bytes(size, "big")) if size is not None else None
        if keys is None or body is None:
            return
        tag, payload = _verified(keys, body)
        del body
        _answer(out, tag, payload)


def main() -> None:
    setup = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    sys.path.extend(p for p in setup.get("path", []) if p not in sys.path)
    with contextlib.suppress(OSError):
        os.nice(NICE)
    # its own copies of the pipes; fd 1 becomes stderr (a stray print goes to the log) and fd 0 /dev/null
    source = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve(setup.get("modules", []), source, out)


if __name__ == "__main__":
    main()
