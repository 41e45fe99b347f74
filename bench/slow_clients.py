"""Slow-client attack: N slow-body and N idle connections, and the latency of everybody else meanwhile.

Against a running server (``kifu serve``), from one process (asyncio):

* ``--slow`` connections each send the head of ``POST /v1/audits`` announcing a
  body of ``--body-bytes``, then one byte of it every ``--trickle`` seconds;
* ``--idle`` connections each connect and send nothing;
* both kinds are held for the whole attack: a connection the server closes is
  counted (with the status it answered, if any, and how long it had lasted)
  and opened again, so the pressure stays at N + N (``--no-reconnect``: each
  is opened once);
* meanwhile the other clients send ``--rate`` requests a second, open loop
  (each on a new connection, whatever the earlier ones are doing), alternately
  ``GET /v1/catalog`` and ``GET /v1/games/{id}`` of a game made at the start;
  a request unanswered after ``--timeout`` seconds counts as failed.

The attack runs in a process of its own, so that its event loop's bursts (a
thousand connections opened at once) do not delay the other clients' requests
or their timing. It prints the others' latency alone (``--warmup`` seconds)
and under attack (p50, p99, max, answered/sent; ``--timeline``: the slowest
answer of each second), what happened to the attack's connections, the CPU
the generator used (both processes: their CPU time over wall time), so that a
figure is read knowing what the load generator took from the server's two
cores, and with ``--server-pid`` the server's (that process and its children).
``--attack-from 127.0.0.2`` sends the attack from another loopback address than
the other clients (the server sees two clients).

    python -m bench.slow_clients --url http://127.0.0.1:8000 --slow 2100 --idle 2100 --seconds 20

It sends traffic only to the URL given (use a server on this machine), stops
by itself after ``--warmup`` + ``--seconds``, and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import statistics
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field

CONNECT_TIMEOUT = 10.0


@dataclass
class Latencies:
    """The other clients' requests: latencies of the answered ones (s), and the rest."""

    answered: list[float] = field(default_factory=list)
    started: list[float] = field(default_factory=list)  # when each answered request was sent (monotonic)
    statuses: Counter[int] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    sent: int = 0

    def timeline(self, since: float) -> str:
        """The slowest answer of each second (by when it was sent), in ms."""
        worst: dict[int, float] = {}
        for began, took in zip(self.started, self.answered):
            second = int(began - since)
            worst[second] = max(worst.get(second, 0.0), took * 1000)
        return " ".join(f"{s}s:{worst[s]:.0f}" for s in sorted(worst))

    def summary(self) -> str:
        ms = sorted(t * 1000 for t in self.answered)
        if not ms:
            return f"answered 0/{self.sent}; failures {dict(self.failed)}"
        p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
        return (
            f"answered {len(ms)}/{self.sent}, p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, "
            f"max {ms[-1]:.1f} ms; statuses {dict(sorted(self.statuses.items()))}"
            + (f"; failures {dict(self.failed)}" if self.failed else "")
        )


@dataclass
class Attack:
    """What happened to the attack's connections of one kind."""

    kind: str
    opened: int = 0
    failed_to_open: Counter[str] = field(default_factory=Counter)
    closed: int = 0
    answers: Counter[str] = field(default_factory=Counter)  # status line's code, or "closed" without one
    lifetimes: list[float] = field(default_factory=list)  # seconds from connect to the server's close
    open_now: int = 0
    peak_open: int = 0

    def summary(self) -> str:
        life = sorted(self.lifetimes)
        held = f", held p50 {statistics.median(life):.1f} s, max {life[-1]:.1f} s" if life else ""
        return (
            f"{self.kind}: opened {self.opened} (peak {self.peak_open} at once), closed by the server "
            f"{self.closed} {dict(self.answers)}{held}"
            + (f"; could not open {dict(self.failed_to_open)}" if self.failed_to_open else "")
        )


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of ``root`` and all its descendants so far, from /proc (Linux)."""
    from bench.compare import cpu_seconds

    return cpu_seconds({"tree": [root]})["tree"]


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        url = urllib.parse.urlsplit(args.url)
        self.host = url.hostname or "127.0.0.1"
        self.port = url.port or 80
        self.args = args
        self.stop_at = 0.0
        self.game_id = ""

    # -- plumbing ---------------------------------------------------------------------------

    async def connect(self, source: str | None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        local = (source, 0) if source else None
        return await asyncio.wait_for(asyncio.open_connection(self.host, self.port, local_addr=local), CONNECT_TIMEOUT)

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """One request on a new connection (``Connection: close``): the status and the body."""
        reader, writer = await self.connect(None)
        try:
            head = (
                f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        status_line, _, rest = raw.partition(b"\r\n")
        return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]

    # -- the other clients ------------------------------------------------------------------

    async def measure(self, seconds: float, into: Latencies) -> None:
        """Open loop: a request every 1/rate s, each its own task, until ``seconds`` have passed."""
        tasks: set[asyncio.Task[None]] = set()
        interval = 1.0 / self.args.rate
        start = time.monotonic()
        n = 0
        while (now := time.monotonic()) < start + seconds:
            path = "/v1/catalog" if n % 2 == 0 else f"/v1/games/{self.game_id}"
            task = asyncio.create_task(self.one(path, into))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            n += 1
            await asyncio.sleep(max(0.0, start + n * interval - now))
        if tasks:
            await asyncio.wait(tasks)

    async def one(self, path: str, into: Latencies) -> None:
        into.sent += 1
        began = time.monotonic()
        try:
            status, _body = await asyncio.wait_for(self.request("GET", path), self.args.timeout)
        except TimeoutError:
            into.failed["timeout"] += 1
        except (OSError, IndexError, ValueError) as exc:
            into.failed[type(exc).__name__] += 1
        else:
            into.answered.append(time.monotonic() - began)
            into.started.append(began)
            into.statuses[status] += 1

    # -- the attackers ----------------------------------------------------------------------

    async def hold(self, attack: Attack, slow: bool, opening: asyncio.Semaphore) -> None:
        """Keep one attack connection open until the end, opening it again whenever the server closes it."""
        while time.monotonic() < self.stop_at:
            try:
                async with opening:
                    reader, writer = await self.connect(self.args.attack_from)
            except (OSError, TimeoutError) as exc:
                attack.failed_to_open[type(exc).__name__] += 1
                await asyncio.sleep(0.5)
                continue
            attack.opened += 1
            attack.open_now += 1
            attack.peak_open = max(attack.peak_open, attack.open_now)
            began = time.monotonic()
            try:
                answer = await self.provoke(reader, writer, slow)
            finally:
                attack.open_now -= 1
                writer.close()
            if answer is not None:  # the server answered or closed before the end of the attack
                attack.closed += 1
                attack.answers[answer] += 1
                attack.lifetimes.append(time.monotonic() - began)
            if not self.args.reconnect:
                return

    async def provoke(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slow: bool) -> str | None:
        """Trickle a body (or nothing) until the end; the server's answer if it gave up first."""
        if slow:
            head = (
                f"POST /v1/audits HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {self.args.body_bytes}\r\n\r\n"
            )
            writer.write(head.encode())
        sent = 0
        read = asyncio.create_task(reader.read(64))
        try:
            while time.monotonic() < self.stop_at:
                timeout = min(self.args.trickle, max(0.0, self.stop_at - time.monotonic()))
                done, _ = await asyncio.wait({read}, timeout=timeout)
                if done:
                    data = read.result() if not read.exception() else b""
                    parts = data.split()
                    return parts[1].decode() if len(parts) > 1 and data.startswith(b"HTTP/") else "closed"
                if slow and sent < self.args.body_bytes:
                    try:
                        writer.write(b" ")  # whitespace: a valid start of a JSON body, forever
                        await writer.drain()
                    except OSError:
                        return "reset"
                    sent += 1
            return None
        finally:
            read.cancel()

    # -- the whole run ----------------------------------------------------------------------

    async def attack(self) -> tuple[Attack, Attack]:
        """Hold the attack's connections for ``--seconds`` (in the attack's own process)."""
        slow, idle = Attack("slow bodies"), Attack("idle connections")
        opening = asyncio.Semaphore(self.args.connect_concurrency)
        self.stop_at = time.monotonic() + self.args.seconds
        holders = [asyncio.create_task(self.hold(slow, True, opening)) for _ in range(self.args.slow)]
        holders += [asyncio.create_task(self.hold(idle, False, opening)) for _ in range(self.args.idle)]
        await asyncio.gather(*holders)
        return slow, idle

    async def main(self) -> None:
        args = self.args
        status, body = await self.request(
            "POST", "/v1/games", json.dumps({"game": "san-ban", "players": [{"name": "a"}, {"name": "b"}]}).encode()
        )
        if status != 201:
            raise SystemExit(f"could not create the game to read: {status} {body[:200]!r}")
        self.game_id = json.loads(body)["id"]

        alone = Latencies()
        await self.measure(args.warmup, alone)
        print(f"others alone ({args.warmup:.0f} s at {args.rate}/s): {alone.summary()}", flush=True)

        # the attack runs in a process of its own: its event loop's bursts must not delay the measurements
        results: multiprocessing.Queue[tuple[Attack, Attack, float]] = multiprocessing.Queue()
        attacker = multiprocessing.Process(target=attack_process, args=(args, results))
        cpu0, wall0 = time.process_time(), time.monotonic()
        server0 = tree_cpu_seconds(args.server_pid) if args.server_pid else 0.0
        attacker.start()
        attacked = Latencies()
        await self.measure(args.seconds, attacked)
        slow, idle, attack_cpu = await asyncio.get_running_loop().run_in_executor(None, results.get)
        attacker.join()
        cpu, wall = time.process_time() - cpu0 + attack_cpu, time.monotonic() - wall0
        server = tree_cpu_seconds(args.server_pid) - server0 if args.server_pid else 0.0
        print(
            f"others under attack ({args.seconds:.0f} s, {args.slow} slow + {args.idle} idle"
            f"{'' if args.reconnect else ', each opened once'}"
            f"{' from ' + args.attack_from if args.attack_from else ''}): {attacked.summary()}"
        )
        if args.timeline:
            print(f"slowest answer per second of the attack (ms): {attacked.timeline(wall0)}")
        print(slow.summary())
        print(idle.summary())
        print(
            f"generator CPU (attack {attack_cpu:.1f} s + measuring {cpu - attack_cpu:.1f} s) in {wall:.1f} s = "
            f"{100 * cpu / wall:.0f}% of one core ({50 * cpu / wall:.0f}% of the machine's two)"
        )
        if args.server_pid:
            print(
                f"server CPU (pid {args.server_pid} and its children): {server:.1f} s = "
                f"{100 * server / wall:.0f}% of one core ({50 * server / wall:.0f}% of the two)"
            )


def attack_process(args: argparse.Namespace, results: multiprocessing.Queue[tuple[Attack, Attack, float]]) -> None:
    """The attack's process: hold the connections, then send back what happened and its CPU time."""
    cpu0 = time.process_time()
    slow, idle = asyncio.run(Run(args).attack())
    results.put((slow, idle, time.process_time() - cpu0))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--slow", type=int, default=2100, help="slow-body connections held")
    p.add_argument("--idle", type=int, default=2100, help="idle connections held")
    p.add_argument("--seconds", type=float, default=20.0, help="length of the attack")
    p.add_argument("--warmup", type=float, default=5.0, help="others measured alone first")
    p.add_argument("--rate", type=float, default=50.0, help="other clients' requests per second")
    p.add_argument("--timeout", type=float, default=10.0, help="an other request unanswered by then failed")
    p.add_argument("--trickle", type=float, default=1.0, help="seconds between two bytes of a slow body")
    p.add_argument("--body-bytes", type=int, default=100_000, help="Content-Length a slow body announces")
    p.add_argument("--attack-from", default=None, help="local address for the attack (e.g. 127.0.0.2)")
    p.add_argument("--reconnect", action=argparse.BooleanOptionalAction, default=True, help="reopen closed ones")
    p.add_argument("--server-pid", type=int, default=None, help="report the CPU of this process tree too")
    p.add_argument("--timeline", action="store_true", help="print the slowest answer of each second")
    p.add_argument("--connect-concurrency", type=int, default=200, help="attack connects in flight at once")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    asyncio.run(Run(parse(argv)).main())


if __name__ == "__main__":
    main()
