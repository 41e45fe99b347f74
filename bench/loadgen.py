"""A lean HTTP load generator for Kifu's API and its no-op baseline (asyncio, one process, one thread).

Used by ``bench.compare``; also on its own::

    python -m bench.loadgen --mode game --url-a http://127.0.0.1:8001 --url-b http://127.0.0.1:8002

Modes (``--clients`` C connections in every mode, spread over the two URLs):

* ``noop``: each connection POSTs a San Ban action's JSON body to ``/noop``
  (``bench.noop_app``) back to back;
* ``game``, one connection per game: each connection plays San Ban games back
  to back, like ``bench/wrk_san_ban.lua`` (the same fixed deal: create, then the
  nine ``place`` actions alternating seats, each with its seat's Bearer token).
  Connection i goes to URL A when i is even, else to URL B;
* ``pair``, two connections per game: C/2 games at a time; each game has one
  connection per seat, to DIFFERENT URLs, and each seat sends its move only
  once the other seat's move has been answered. Seat 0 (which creates the game
  and moves first, so carries one more request per game) is on URL A in even
  pairs and on URL B in odd ones, so that the two servers get the same work, as
  in ``game`` mode. Run the API as two single-worker servers (one port each) and
  the seats of a game are served by two different processes: the second seat's
  process has not seen the first seat's move.

How it stays lean. Each connection is an ``asyncio.Protocol`` that holds at
most one request in flight. Requests are built once as bytes (an action's
nine requests when its game is created, from the game id and the tokens);
an answer is parsed for its status line and ``Content-Length`` only, and only a
create answer's body is JSON-decoded (for the game id and the seats' tokens).
No task runs per request: an answer's callback sends the next request from
``data_received`` directly. In ``pair`` mode that callback is also the hand-off
between the two seats (the answer to seat 0's move, read on its connection,
sends seat 1's move on the other one): the ordering an ``asyncio.Event`` per
move would give, without a task wake-up per move.

What is counted. Any answer other than 201 is a failure (counted by status, as
is a connection lost mid-request; a connection that cannot be opened ends its
client), and abandons the game in play: the client creates a new one. Latency
is per request, from its write to the end of its answer's body. The run has a
warm-up (not recorded), then a window of ``--seconds`` whose answers are
counted; then no new game is started, the games in play are played to their end
(in ``noop`` mode the requests in flight are answered), and totals over the
whole run (every action answered 201, every game created and played to its
end) are kept beside the window's figures: ``tests/integration/test_loadgen.py``
checks them against the logs in Redis.

Its own CPU over the window is ``getrusage(RUSAGE_THREAD)`` of the event loop's
thread, printed as a share of one core and of the machine (``os.cpu_count()``):
on a 2-core machine whatever it takes is taken from the servers it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import resource
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

import orjson

Mode = Literal["noop", "game", "pair"]
MODES: tuple[Mode, ...] = ("noop", "game", "pair")
SHAPES: dict[str, str] = {
    "noop": "no-op POST",
    "game": "one connection per game",
    "pair": "two connections per game",
}

# The fixed deal of bench/wrk_san_ban.lua: standard mode, 5-card decks, seat 0 first.
DECKS = (("sb-001", "sb-002", "sb-003", "sb-004", "sb-005"), ("sb-006", "sb-007", "sb-008", "sb-009", "sb-010"))
CREATE_BODY = (
    b'{"game":"san-ban","players":[{"name":"bench-a"},{"name":"bench-b"}],'
    b'"options":{"mode":"standard"},"deal":{"first":0,"decks":['
    b'["sb-001","sb-002","sb-003","sb-004","sb-005"],["sb-006","sb-007","sb-008","sb-009","sb-010"]]}}'
)
MOVES = 9
ACTION_BODIES = tuple(
    b'{"action":{"type":"place","cell":%d,"card":"%s"}}' % (move, DECKS[move % 2][move // 2].encode())
    for move in range(MOVES)
)
NOOP_PATH = "/noop"
NOOP_BODY = ACTION_BODIES[0]  # the no-op gets an action's body: the same bytes to read and parse
DRAIN_S = 30.0  # after the window, the games in play must end within this

# status of an answer; 0: no answer (the connection was lost or could not be opened)
Answered = Callable[[int, bytes, float], None]


def post(host: str, path: str, body: bytes, token: str | None = None) -> bytes:
    """A whole ``POST`` request (head and JSON body) as bytes, ready to write."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{auth}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def host_port(url: str) -> tuple[str, int]:
    """Host and port of an ``http://`` base URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"not an http:// URL: {url!r}")
    return parts.hostname, parts.port or 80


def thread_cpu_seconds() -> float:
    """CPU seconds (user + system) of this thread (of the process where RUSAGE_THREAD is missing)."""
    usage = resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF))
    return usage.ru_utime + usage.ru_stime


def percentile(ordered: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of sorted values (0 when there are none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


@dataclass
class Recorder:
    """Counts, shared by every client of a run."""

    recording: bool = False  # inside the measured window
    stopping: bool = False  # the window is over: start no new game
    count: int = 0  # in the window: actions answered 201 (noop: requests answered 201)
    creates: int = 0
    latencies: list[float] = field(default_factory=list)  # s, of the counted actions (requests)
    create_latencies: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    total_count: int = 0  # over the whole run, warm-up and drain included
    total_creates: int = 0
    total_failures: Counter[str] = field(default_factory=Counter)
    games: list[str] = field(default_factory=list)  # every game created
    finished_games: int = 0  # games whose nine actions were all answered 201

    def counted(self, took: float) -> None:
        self.total_count += 1
        if self.recording:
            self.count += 1
            self.latencies.append(took)

    def created(self, took: float, game_id: str) -> None:
        self.total_creates += 1
        self.games.append(game_id)
        if self.recording:
            self.creates += 1
            self.create_latencies.append(took)

    def failed(self, status: int, why: str = "") -> None:
        key = str(status) if status else why or "no answer"
        self.total_failures[key] += 1
        if self.recording:
            self.failures[key] += 1


class Wire(asyncio.Protocol):
    """One transport of a ``Connection`` (a new one each time it reconnects): it passes on what it gets
    while it is the connection's current one, so that a late ``connection_lost`` of an old transport
    does not fail the request already sent on the new one."""

    def __init__(self, owner: Connection) -> None:
        self.owner = owner
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (uvloop's, too, which is not a subclass of asyncio.Transport: an isinstance check
        # here failed every connection under uvloop)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self.owner.wire is self:
            self.owner.received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.owner.wire is self:
            self.owner.lost()


class Connection:
    """One keep-alive HTTP/1.1 connection holding at most one request in flight (reopened when the server
    closes it)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.host_header = f"{host}:{port}"
        self.wire: Wire | None = None
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.pending: Answered | None = None
        self.sent_at = 0.0
        self.tasks: set[asyncio.Task[None]] = set()

    async def open(self) -> None:
        wire = Wire(self)
        await asyncio.get_running_loop().create_connection(lambda: wire, self.host, self.port)
        self.wire, self.transport = wire, wire.transport
        self.buffer.clear()

    def send(self, request: bytes, answered: Answered) -> None:
        """Write ``request``; ``answered(status, body, seconds)`` is called with its answer."""
        self.pending = answered
        self.sent_at = time.perf_counter()
        if self.transport is None:
            task = asyncio.get_running_loop().create_task(self._reopen_and_write(request))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        else:
            self.transport.write(request)

    async def _reopen_and_write(self, request: bytes) -> None:
        try:
            await self.open()
        except OSError as exc:
            self._answer(0, f"connect failed: {exc.strerror or exc}".encode())
            return
        assert self.transport is not None
        self.transport.write(request)

    def received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(buffer[:end]).lower()
        at = head.find(b"\r\ncontent-length:")
        if at < 0:
            self.close()
            self._answer(0, b"answer without Content-Length")
            return
        line_end = head.find(b"\r\n", at + 17)
        length = int(head[at + 17 : line_end if line_end >= 0 else end])
        total = end + 4 + length
        if len(buffer) < total:
            return
        status = int(head[9:12])
        body = bytes(buffer[end + 4 : total])
        del buffer[:total]
        if b"\r\nconnection: close" in head:
            self.close()  # the next request opens a new connection
        self._answer(status, body)

    def lost(self) -> None:
        self.wire = self.transport = None
        self.buffer.clear()
        self._answer(0, b"connection lost")

    def _answer(self, status: int, body: bytes) -> None:
        answered, self.pending = self.pending, None
        if answered is not None:
            answered(status, body, time.perf_counter() - self.sent_at)

    def close(self) -> None:
        """Close the transport now (an answer still awaited on it is not called)."""
        if self.transport is not None:
            self.transport.close()
        self.wire = self.transport = None
        self.buffer.clear()


class Client:
    """One client of a run; ``done`` resolves when it has stopped."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def start(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def lost(self, status: int, body: bytes) -> bool:
        """Count a failure; True when the client must stop (its connection cannot be opened)."""
        why = body.decode(errors="replace") if not status else ""
        self.recorder.failed(status, why.split(":")[0])
        return why.startswith("connect failed")


class NoopClient(Client):
    """POSTs the no-op request back to back on one connection."""

    def __init__(self, recorder: Recorder, conn: Connection) -> None:
        super().__init__(recorder)
        self.conn = conn
        self.request = post(conn.host_header, NOOP_PATH, NOOP_BODY)
        self.answered: Answered = self._answered

    def start(self) -> None:
        self.conn.send(self.request, self.answered)

    def _answered(self, status: int, body: bytes, took: float) -> None:
        if status == 201:
            self.recorder.counted(took)
        elif self.lost(status, body):
            self.finish()
            return
        if self.recorder.stopping:
            self.finish()
        else:
            self.conn.send(self.request, self.answered)


class GameClient(Client):
    """Plays San Ban games back to back: seat s's requests on ``seats[s]`` (one connection, or one per seat)."""

    def __init__(self, recorder: Recorder, seats: tuple[Connection, Connection]) -> None:
        super().__init__(recorder)
        self.seats = seats
        self.create_request = post(seats[0].host_header, "/v1/games", CREATE_BODY)
        self.requests: list[bytes] = []
        self.move = 0
        self.on_created: Answered = self._created
        self.on_acted: Answered = self._acted

    def start(self) -> None:
        self._new_game()

    def _new_game(self) -> None:
        if self.recorder.stopping:
            self.finish()
            return
        self.seats[0].send(self.create_request, self.on_created)

    def _created(self, status: int, body: bytes, took: float) -> None:
        if status != 201:
            if self.lost(status, body):
                self.finish()
            else:
                self._new_game()
            return
        answer = orjson.loads(body)
        game_id = answer["id"]
        tokens = [seat["token"] for seat in answer["seats"]]
        self.recorder.created(took, game_id)
        path = f"/v1/games/{game_id}/actions"
        self.requests = [
            post(self.seats[move % 2].host_header, path, ACTION_BODIES[move], tokens[move % 2]) for move in range(MOVES)
        ]
        self.move = 0
        self.seats[0].send(self.requests[0], self.on_acted)

    def _acted(self, status: int, body: bytes, took: float) -> None:
        if status != 201:
            if self.lost(status, body):
                self.finish()
            else:
                self._new_game()  # the game is abandoned
            return
        self.recorder.counted(took)
        self.move = move = self.move + 1
        if move == MOVES:
            self.recorder.finished_games += 1
            self._new_game()
        else:  # the other seat moves now: on its own connection in ``pair`` mode
            self.seats[move % 2].send(self.requests[move], self.on_acted)


@dataclass
class Result:
    """What a run measured (window figures) and counted (totals over the whole run)."""

    mode: Mode
    urls: tuple[str, str]
    clients: int
    window_s: float
    count: int
    creates: int
    latencies_ms: list[float]  # sorted
    create_latencies_ms: list[float]  # sorted
    failures: Counter[str]
    cpu_s: float  # the generator's thread over the window
    total_count: int
    total_creates: int
    total_failures: Counter[str]
    games: list[str]
    finished_games: int
    unfinished_clients: int  # clients still busy DRAIN_S after the window
    probe: dict[str, float] = field(default_factory=dict)  # what ``probe`` measured over the window (end - start)

    @property
    def unit(self) -> str:
        return "req/s" if self.mode == "noop" else "actions/s"

    @property
    def rate(self) -> float:
        return self.count / self.window_s if self.window_s else 0.0

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)

    @property
    def max_ms(self) -> float:
        return self.latencies_ms[-1] if self.latencies_ms else 0.0

    @property
    def cpu_core_share(self) -> float:
        """The generator's CPU over the window as a share of one core."""
        return self.cpu_s / self.window_s if self.window_s else 0.0

    @property
    def cpu_machine_share(self) -> float:
        return self.cpu_core_share / (os.cpu_count() or 1)

    def report(self) -> list[str]:
        what = "requests" if self.mode == "noop" else "actions"
        lines = [
            f"{self.mode} ({SHAPES[self.mode]}), {self.clients} connections, {self.window_s:.1f} s: "
            f"{self.count:,} {what} answered 201 -> {self.rate:,.0f} {self.unit}; "
            f"latency p50 {self.p50:.1f} ms, p99 {self.p99:.1f} ms, max {self.max_ms:.1f} ms",
        ]
        if self.mode != "noop":
            creates = self.create_latencies_ms
            lines.append(
                f"  games created {self.creates:,} in the window (create p50 {percentile(creates, 50):.1f} ms, "
                f"p99 {percentile(creates, 99):.1f} ms); whole run: {self.total_creates:,} created, "
                f"{self.finished_games:,} played to the end, {self.total_count:,} actions"
            )
        failures = ", ".join(f"{k}: {v}" for k, v in sorted(self.total_failures.items())) or "none"
        lines.append(
            f"  failures (non-201) in the window {sum(self.failures.values())}, whole run {failures}"
            + (
                f"; {self.unfinished_clients} clients still busy {DRAIN_S:.0f} s after"
                if self.unfinished_clients
                else ""
            )
        )
        lines.append(
            f"  load generator CPU {self.cpu_core_share:.0%} of a core "
            f"= {self.cpu_machine_share:.0%} of the machine ({os.cpu_count()} cores)"
        )
        return lines


def _clients(
    mode: Mode, urls: tuple[str, str], clients: int, recorder: Recorder
) -> tuple[list[Client], list[Connection]]:
    ends = [host_port(url) for url in urls]
    if mode != "pair":
        conns = [Connection(*ends[i % 2]) for i in range(clients)]
        if mode == "noop":
            return [NoopClient(recorder, conn) for conn in conns], conns
        return [GameClient(recorder, (conn, conn)) for conn in conns], conns
    if clients % 2:
        raise ValueError("pair mode needs an even number of clients (two connections per game)")
    games: list[Client] = []
    conns = []
    for p in range(clients // 2):  # seat 0 on URL A when p is even, else on B; seat 1 on the other
        seats = (Connection(*ends[p % 2]), Connection(*ends[(p + 1) % 2]))
        conns += seats
        games.append(GameClient(recorder, seats))
    return games, conns


async def run(
    mode: Mode,
    urls: Sequence[str],
    clients: int = 16,
    seconds: float = 15.0,
    warmup: float = 3.0,
    probe: Callable[[], dict[str, float]] | None = None,
) -> Result:
    """Run ``mode`` against ``urls`` (one or two base URLs): warm-up, then a measured window of ``seconds``.

    ``probe`` is called when the window opens and when it closes; the result
    holds the difference of what it returned (e.g. other processes' CPU seconds).
    """
    pair = (urls[0], urls[-1])
    recorder = Recorder()
    running, conns = _clients(mode, pair, clients, recorder)
    try:
        await asyncio.gather(*(conn.open() for conn in conns))
        for client in running:
            client.start()
        await asyncio.sleep(warmup)
        before = probe() if probe else {}
        cpu0, t0 = thread_cpu_seconds(), time.perf_counter()
        recorder.recording = True
        await asyncio.sleep(seconds)
        recorder.recording = False
        window, cpu = time.perf_counter() - t0, thread_cpu_seconds() - cpu0
        after = probe() if probe else {}
        recorder.stopping = True
        _done, busy = await asyncio.wait([c.done for c in running], timeout=DRAIN_S)
    finally:
        for conn in conns:
            conn.close()
    return Result(
        mode=mode,
        urls=pair,
        clients=clients,
        window_s=window,
        count=recorder.count,
        creates=recorder.creates,
        latencies_ms=sorted(t * 1000 for t in recorder.latencies),
        create_latencies_ms=sorted(t * 1000 for t in recorder.create_latencies),
        failures=recorder.failures,
        cpu_s=cpu,
        total_count=recorder.total_count,
        total_creates=recorder.total_creates,
        total_failures=recorder.total_failures,
        games=recorder.games,
        finished_games=recorder.finished_games,
        unfinished_clients=len(busy),
        probe={k: after[k] - before.get(k, 0.0) for k in after},
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=MODES, default="game")
    parser.add_argument("--url-a", required=True, help="base URL, e.g. http://127.0.0.1:8001")
    parser.add_argument("--url-b", default=None, help="the second server's base URL (default: the first)")
    parser.add_argument("--clients", type=int, default=16, help="connections")
    parser.add_argument("--seconds", type=float, default=15.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=3.0)
    args = parser.parse_args(argv)
    urls = (args.url_a, args.url_b or args.url_a)
    result = asyncio.run(run(args.mode, urls, args.clients, args.seconds, args.warmup))
    print(f"loadgen against {urls[0]} and {urls[1]}")
    print("\n".join(result.report()))


if __name__ == "__main__":
    main()
