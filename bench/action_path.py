"""How often one ``POST /v1/games/{id}/actions`` moves between the service layer's files on its way to the append.

``python -m bench.action_path`` (an embedded Redis, two apps on it standing for two API processes, no
listener) prints, for the three cases a process meets, the service files the request passed through, in
order, and the number of moves between two of them (``--whole``: on past the append, until the route
has its answer):

* warm: the process created the game, so it holds its table and knows the token;
* behind: it holds the table and the token, but the other seat moved through the other process;
* cold: it has never seen the game.

How it is measured (``crossings``): a profile hook (``sys.setprofile``) sees every Python call and return.
From the moment the route's view function is entered until the log's ``append`` is called, each event
names the file of the frame that runs next (the callee on a call, the caller on a return); files outside
``service/`` (the route, Flask, marshmallow, the domain, the adapters) are skipped, and what remains is
collapsed into runs of one file. A move is a change from one run to the next: the route calling into
``service/commands.py``, which calls ``service/memory.py`` once and is returned to, is two moves.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import redis
from flask import Flask
from flask.testing import FlaskClient

from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app

SERVICE = str(Path(__file__).resolve().parents[1] / "service") + "/"
DECKS = [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"], ["sb-006", "sb-007", "sb-008", "sb-009", "sb-010"]]
GAME = {
    "game": "san-ban",
    "players": [{"name": "a"}, {"name": "b"}],
    "options": {"mode": "standard"},
    "deal": {"first": 0, "decks": DECKS},
}


class Trace:
    """The service files a request runs in, from its view function to the log's append."""

    def __init__(self, view: str, whole: bool = False) -> None:
        self.view = view
        self.whole = whole  # on past the append, until the view returns
        self.started = self.stopped = self.appended = False
        self.files: list[str] = []

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        code = frame.f_code
        if event == "call" and not self.started:
            self.started = code.co_name == self.view and code.co_filename.endswith("entrypoints/api/games.py")
            return
        if not self.started or self.stopped or event not in ("call", "return"):
            return
        if event == "call" and code.co_name == "append" and "/adapters/" in code.co_filename:
            self.appended, self.stopped = True, not self.whole
            return
        if event == "return" and code.co_name == self.view and code.co_filename.endswith("entrypoints/api/games.py"):
            self.stopped = True
            return
        running = frame if event == "call" else frame.f_back
        if running is None:
            return
        name = running.f_code.co_filename
        if name.startswith(SERVICE) and (not self.files or self.files[-1] != name):
            self.files.append(name)

    @property
    def path(self) -> list[str]:
        return [name.removeprefix(SERVICE) for name in self.files]

    @property
    def moves(self) -> int:
        return max(0, len(self.files) - 1)


@contextmanager
def tracing(view: str, whole: bool = False) -> Iterator[Trace]:
    trace = Trace(view, whole)
    sys.setprofile(trace)
    try:
        yield trace
    finally:
        sys.setprofile(None)


def crossings(client: FlaskClient, game: str, token: str, action: dict[str, Any], whole: bool = False) -> Trace:
    """The service files one action passed through on its way to the append (``whole``: and on, until the
    route has its answer); it must be acknowledged."""
    with tracing("take_action", whole) as trace:
        answer = client.post(f"/v1/games/{game}/actions", json={"action": action}, headers=_bearer(token))
    assert answer.status_code == 201, answer.get_json()
    assert trace.appended, "the action never reached the log's append"
    return trace


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def place(move: int) -> dict[str, Any]:
    return {"type": "place", "cell": move, "card": DECKS[move % 2][move // 2]}


def app_on(url: str) -> Flask:
    """One API process on the Redis at ``url`` (no listener: each case sets its own memory up)."""
    return create_app({"REDIS_URL": url, "REDIS_CLIENT": redis.Redis.from_url(url), "TESTING": True})


def measure(url: str, whole: bool = False) -> dict[str, Trace]:
    """The three cases (warm, behind, cold), each on a game of its own."""
    first, second = app_on(url).test_client(), app_on(url).test_client()
    out: dict[str, Trace] = {}
    game, tokens = _created(first)
    out["warm"] = crossings(first, game, tokens[0], place(0), whole)
    second.get(f"/v1/games/{game}", headers=_bearer(tokens[1]))  # the second process meets seat 1 and the game
    for move, process in ((1, second), (2, first)):
        answer = process.post(
            f"/v1/games/{game}/actions", json={"action": place(move)}, headers=_bearer(tokens[move % 2])
        )
        assert answer.status_code == 201, answer.get_json()
    out["behind"] = crossings(second, game, tokens[1], place(3), whole)  # it holds the game before seat 0's move 2
    game, tokens = _created(first)
    out["cold"] = crossings(second, game, tokens[0], place(0), whole)
    return out


def _created(client: FlaskClient) -> tuple[str, list[str]]:
    body = client.post("/v1/games", json=GAME).get_json()
    return body["id"], [s["token"] for s in body["seats"]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--whole", action="store_true", help="count on past the append, until the route answers")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory, EmbeddedRedis(Path(directory)) as server:
        for case, trace in measure(server.url, args.whole).items():
            print(f"{case:7} {trace.moves:2} moves  {' -> '.join(trace.path)}")


if __name__ == "__main__":
    main()
