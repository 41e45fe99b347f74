"""The fault suite: kill every process of a running stack, at random moments, while bots and humans play.

    python -m bench.faults --bot-games 1000 --human-games 50 --rounds 3

It starts ``kifu run`` on a free port with a fresh data directory, starts bot
games (the worker plays them) and human games (threads that play random legal
actions over HTTP, each action with its own ``Idempotency-Key``, retried on a
connection error or a 503 until it is answered), and meanwhile kills with
SIGKILL, in turn: the embedded Redis (valkey-server), a gunicorn worker, the RQ worker, the
projector, the sweeper and ``kifu run`` itself (then starts a new ``kifu run``
on the same port and data, as a user would). At the end it checks that:

* every acknowledged action (a 201) is in its game's log at the version the
  answer gave, with the hash it gave;
* every log is gapless and every finished game's audit verifies;
* every game finishes (no bot game stalls for good) and the games list
  converges to the games' own status.

It prints the figures: games, acknowledged actions, faults, the longest any
game waited between two events, time to converge. ``tests/e2e/test_faults.py``
runs a short version in ``make test``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import requests

from adapters.embedded_redis import free_port

TARGETS = ("redis", "api-worker", "worker", "projector", "sweeper", "supervisor")
TIMEOUT = 5


@dataclass
class Stack:
    """A ``kifu run`` started by the suite (its data directory and port survive restarts)."""

    data: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_s: float = 60.0) -> None:
        self.log = self.data / "run.log"
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env["KIFU_RATE_LIMITS"] = "false"  # one client creates every game of the run
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "entrypoints.cli", "run", "--port", str(self.port), "--data", str(self.data)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        wait_until(lambda: _ready(self.url), ready_s, "the stack did not become ready")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)

    def descendants(self) -> dict[int, str]:
        """Every process under ``kifu run``: pid -> its command line."""
        if self.process is None:
            return {}
        tree = _process_tree()
        out, todo = {}, [self.process.pid]
        while todo:
            pid = todo.pop()
            for child, cmd in tree.get(pid, []):
                out[child] = cmd
                todo.append(child)
        return out

    def target_pid(self, target: str) -> int | None:
        """The pid to kill for ``target`` (None when it is not running right now)."""
        if target == "supervisor":
            return self.process.pid if self.process is not None else None
        procs = self.descendants()
        if target == "api-worker":
            masters = {p for p, cmd in procs.items() if "gunicorn" in cmd}
            workers = [p for p in masters if _ppid(p) in masters]
            return random.choice(workers) if workers else None
        needles = {"redis": ("valkey-server", "redis-server"), "worker": ("cli worker",)}
        needles["projector"] = ("cli projector",)
        wanted = needles.get(target, (target,))
        parent = self.process.pid if self.process else 0
        found = [p for p, cmd in procs.items() if any(n in cmd for n in wanted) and _ppid(p) == parent]
        return found[0] if found else None


def _ready(url: str) -> bool:
    try:
        return requests.get(f"{url}/readyz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def _process_tree() -> dict[int, list[tuple[int, str]]]:
    tree: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            ppid = _ppid(int(entry.name))
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if ppid is not None:
                tree.setdefault(ppid, []).append((int(entry.name), cmd))
    return tree


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def wait_until(condition: Callable[[], bool], within_s: float, what: str) -> float:
    """Poll ``condition`` until it holds; the seconds it took (raises after ``within_s``)."""
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > within_s:
            raise TimeoutError(f"{what} within {within_s:.0f} s")
        time.sleep(0.05)  # polling another process's state: there is nothing to block on
    return time.monotonic() - began


# ---------------------------------------------------------------- clients that never give up


def call(method: str, url: str, give_up_s: float = 120.0, **kw: Any) -> requests.Response:
    """A request retried (same body, same Idempotency-Key) through connection errors and 503s."""
    deadline = time.monotonic() + give_up_s
    while True:
        try:
            r = requests.request(method, url, timeout=TIMEOUT, **kw)
            if r.status_code != 503:
                return r
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{method} {url} unanswered for {give_up_s:.0f} s")
        time.sleep(0.1)  # the server is restarting: try again shortly


@dataclass
class Ledger:
    """What the server acknowledged: (game, version) -> the hash of that event, per its answer."""

    acked: dict[tuple[str, int], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, game: str, answer: dict[str, Any]) -> None:
        with self.lock:
            for ev in answer["events"]:
                self.acked[(game, ev["seq"])] = ev["hash"]


def new_human_game(url: str) -> tuple[str, list[str]]:
    """A two-human San Ban game (created before the faults: its tokens are shown only once)."""
    body = {"game": "san-ban", "players": [{"name": "ann"}, {"name": "bob"}], "options": {"mode": "standard"}}
    created = call("POST", f"{url}/v1/games", json=body).json()
    return created["id"], [s["token"] for s in created["seats"]]


def play_human_game(url: str, game: str, tokens: list[str], ledger: Ledger, rnd: random.Random) -> None:
    """Play a human game out with random legal actions, each retried with its own key until answered."""
    while True:
        view = call("GET", f"{url}/v1/games/{game}").json()
        if view["status"] == "finished":
            return
        seat = view["to_act"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        actions = call("GET", f"{url}/v1/games/{game}/actions", headers=auth).json()["actions"]
        if not actions:
            continue  # read before the latest write landed: read again
        key = {"Idempotency-Key": uuid.uuid4().hex, **auth}
        r = call("POST", f"{url}/v1/games/{game}/actions", json={"action": rnd.choice(actions)}, headers=key)
        if r.status_code == 201:
            ledger.record(game, r.json())


# ---------------------------------------------------------------- the run


@dataclass
class Report:
    bot_games: int = 0
    human_games: int = 0
    acked: int = 0
    faults: list[tuple[str, float]] = field(default_factory=list)  # target, seconds back to ready
    longest_wait_s: float = 0.0
    converge_s: float = 0.0
    problems: list[str] = field(default_factory=list)


@contextmanager
def stack(data: Path | None = None) -> Iterator[Stack]:
    own = data is None
    directory = Path(tempfile.mkdtemp(prefix="kifu-faults-")) if own else data
    assert directory is not None
    s = Stack(directory, free_port())
    s.start()
    try:
        yield s
    finally:
        s.stop()
        if own:
            shutil.rmtree(directory, ignore_errors=True)


def inject(s: Stack, target: str) -> float:
    """SIGKILL ``target`` (a new ``kifu run`` after the supervisor); seconds until the stack is ready again."""
    pid = s.target_pid(target)
    if pid is None:
        return 0.0
    began = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    if target == "supervisor":
        assert s.process is not None
        s.process.wait()
        s.start()
    return time.monotonic() - began + wait_until(lambda: _ready(s.url), 60, f"ready after killing {target}")


def run(s: Stack, bot_games: int, human_games: int, rounds: int, seed: int = 1) -> Report:
    """Play ``bot_games`` + ``human_games`` while ``rounds`` rounds of faults hit every target."""
    rnd, report, ledger = random.Random(seed), Report(bot_games, human_games), Ledger()
    bots = [{"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
    bot_ids = [
        call("POST", f"{s.url}/v1/games", json={"game": "san-ban", "players": bots}).json()["id"]
        for _ in range(bot_games)
    ]
    humans = [new_human_game(s.url) for _ in range(human_games)]
    threads = [
        threading.Thread(target=play_human_game, args=(s.url, game, tokens, ledger, random.Random(i)))
        for i, (game, tokens) in enumerate(humans)
    ]
    for t in threads:
        t.start()
    for _round in range(rounds):
        for target in TARGETS:
            time.sleep(rnd.uniform(0.2, 1.0))  # a random moment in the load
            report.faults.append((target, inject(s, target)))
    for t in threads:
        t.join()
    report.acked = len(ledger.acked)
    check(s, bot_ids + [game for game, _tokens in humans], ledger, report)
    return report


def check(s: Stack, games: list[str], ledger: Ledger, report: Report) -> None:
    """Every acknowledged event present, logs gapless, every game over and audited, the list converged."""
    unfinished = list(games)

    def all_over() -> bool:
        unfinished[:] = [g for g in unfinished if _status(s.url, g) != "finished"]
        return not unfinished

    try:  # a bot game takes ~0.1 s of the worker's time; allow twice that, and a minute
        wait_until(all_over, 60 + 0.2 * len(games), "every game finished")
    except TimeoutError:
        report.problems.append(f"{len(unfinished)} games never finished: {unfinished[:5]}")
    for game in games:
        events = _all_events(s.url, game)
        if [e["seq"] for e in events] != list(range(1, len(events) + 1)):
            report.problems.append(f"{game}: a gap or a duplicate in its log")
        by_seq = {e["seq"]: e["hash"] for e in events}
        lost = [v for (g, v), h in ledger.acked.items() if g == game and by_seq.get(v) != h]
        if lost:
            report.problems.append(f"{game}: acknowledged events {lost} are not in its log as answered")
        if call("GET", f"{s.url}/v1/games/{game}/audit").json()["verdict"] == "failed":  # unfinished: in_progress
            report.problems.append(f"{game}: its audit fails")
        stamps = [datetime.fromisoformat(e["at"].replace("Z", "+00:00")) for e in events]
        gaps = [(b - a).total_seconds() for a, b in pairwise(stamps)]
        report.longest_wait_s = max([report.longest_wait_s, *gaps])
    finished = len(games) - len(unfinished)
    try:
        report.converge_s = wait_until(lambda: _listed_finished(s.url) >= finished, 60, "the games list converged")
    except TimeoutError:
        report.problems.append(f"the games list shows {_listed_finished(s.url)} finished games of {finished}")


def _status(url: str, game: str) -> str:
    """A game's status (a lean request: the games list would do, but it lags the log)."""
    status: str = call("GET", f"{url}/v1/games/{game}").json()["status"]
    return status


def _all_events(url: str, game: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = call("GET", f"{url}/v1/games/{game}/events?limit=1000").json()["items"]
    return events


def _listed_finished(url: str) -> int:
    count, cursor = 0, None
    while True:
        params = {"status": "finished", "limit": 200, **({"cursor": cursor} if cursor else {})}
        page = call("GET", f"{url}/v1/games", params=params).json()
        count += len(page["items"])
        if (cursor := page["next"]) is None:
            return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot-games", type=int, default=200)
    parser.add_argument("--human-games", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2, help="rounds of faults (each hits every target once)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="run in this data directory and keep it (for a look after)")
    args = parser.parse_args()
    began = time.monotonic()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    with stack(args.keep) as s:
        report = run(s, args.bot_games, args.human_games, args.rounds, args.seed)
    print(f"{report.bot_games} bot games, {report.human_games} human games, {report.acked} acknowledged events")
    for target in TARGETS:
        backs = [b for t, b in report.faults if t == target]
        print(f"  kill -9 {target:<10} x{len(backs)}: ready again after {max(backs, default=0):.2f} s at most")
    print(f"longest wait between two events of a game: {report.longest_wait_s:.2f} s")
    print(f"games list converged {report.converge_s:.2f} s after the last game ended")
    print(f"problems: {len(report.problems)}", *report.problems[:20], sep="\n  ")
    print(f"total {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
