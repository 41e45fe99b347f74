"""Whole games over real HTTP with a real RQ worker: nobody sees another seat's secrets."""

from __future__ import annotations

import random
import re
from typing import Any

import redis
import requests

from adapters.redis_store import EventStore
from tests.e2e.conftest import work

TIMEOUT = 10


class Player:
    def __init__(self, base: str, game_id: str, token: str | None) -> None:
        self.url = f"{base}/v1/games/{game_id}"
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str = "") -> requests.Response:
        return requests.get(self.url + path, headers=self.headers, timeout=TIMEOUT)

    def everything(self) -> str:
        view = self.get()
        version = view.json()["version"]
        texts = [
            view.text,
            self.get("/actions").text,
            self.get("/events?limit=1000").text,
            self.get("/record").text,
            self.get(f"/replay?step={version}").text,
            self.get(f"/replay?step={max(1, version - 3)}").text,
        ]
        return "\n".join(texts)

    def act(self, action: dict[str, Any]) -> requests.Response:
        return requests.post(self.url + "/actions", json={"action": action}, headers=self.headers, timeout=TIMEOUT)


def start(base: str, game: str, players: list[dict[str, Any]], **body: Any) -> tuple[list[Player], Player]:
    r = requests.post(f"{base}/v1/games", json={"game": game, "players": players, **body}, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return [Player(base, r.json()["id"], s["token"]) for s in r.json()["seats"]], Player(base, r.json()["id"], None)


def test_nin_nal_three_humans_and_a_bot_never_see_each_others_cards(bot_server: str, redis_client: redis.Redis) -> None:
    seats, spectator = start(
        bot_server, "nin-nal", [{"name": "ann"}, {"name": "bob"}, {"name": "cid"}, {"name": "hal", "bot": "greedy"}]
    )
    humans = seats[:3]
    rnd = random.Random(5)
    checks = 0
    while True:
        work(redis_client)
        view = spectator.get().json()
        if view["status"] == "finished":
            break
        hands = {i: set(p.get().json()["state"]["hand"]) for i, p in enumerate(humans)}
        for reader_seat, reader in enumerate([*humans, spectator]):
            seen = reader.everything()
            for owner, hand in hands.items():
                if owner != reader_seat:
                    leaked = {card for card in hand if f'"{card}"' in seen}
                    assert leaked == set(), (reader_seat, owner, leaked, view["phase"])
                    checks += 1
        actor = next(p for i, p in enumerate(humans) if i in view["to_act"])
        assert actor.act(rnd.choice(actor.get("/actions").json()["actions"])).status_code == 201
    assert checks > 100
    final = spectator.get().json()
    assert len(final["state"]["hands"]) == 4 and "unused" in final["state"]
    audit = spectator.get("/audit").json()
    assert audit["verified"], audit
    commitments = next(c for c in audit["checks"] if c["name"] == "commitments")
    assert int(commitments["detail"].split()[0]) >= 36  # 4 seats x 9 selects, plus any tie-break throws


def test_kiri_ai_keeps_specials_and_second_steps_hidden_over_http(bot_server: str, redis_client: redis.Redis) -> None:
    seats, spectator = start(
        bot_server,
        "kiri-ai",
        [{"name": "red"}, {"name": "blue", "bot": "random"}],
        deal={"specials": ["kesa", "counterattack"]},
    )
    red = seats[0]
    work(redis_client)
    assert "counterattack" not in red.everything()  # blue's special, not yet played
    assert "kesa" not in spectator.everything()
    assert red.act({"type": "program", "first": "approach", "second": "high-strike"}).status_code == 201
    work(redis_client)
    events = spectator.get("/events?limit=1000").json()["items"]
    committed = [e for e in events if e["type"] == "choice_committed"]
    assert all(len(e["data"]["commitments"]) == 2 and "private" not in e["data"] for e in committed)
    reveals = [e for e in events if e["type"] == "choices_revealed"]
    assert [r["data"]["part"] for r in reveals][:2] == [0, 1]
    while spectator.get().json()["status"] == "active":
        actions = red.get("/actions").json()["actions"]
        red.act(random.Random(len(actions)).choice(actions))
        work(redis_client)
    audit = spectator.get("/audit").json()
    assert audit["verified"], audit


SAN_NI_ICHI_CARD = re.compile(r"\b(?:fire|water|wood)-(?:10|[1-9])\b|\b[a-z]+(?:-kogeki)?-(?:1[1-9]|2[0-2])\b")
FRONT_LINE_CARD = re.compile(r"\b(?:s\d:)?(?:(?:rock|paper|scissors|lizard|water)-(?:10|[2-9ajqk])|joker-[a-z]+)\b")


def public_cards(client: redis.Redis, game_id: str, pattern: re.Pattern[str]) -> set[str]:
    """Every card id in the public data of the log so far: the ground truth of what anybody may know."""
    return {c for env in EventStore(client).read_all(game_id) for c in pattern.findall(str(env["data"]))}


def play_checking_leaks(
    client: redis.Redis, humans: dict[int, Player], spectator: Player, pattern: re.Pattern[str], seed: int
) -> int:
    """Play the humans' random legal actions (the bots through the worker) to the end; at every step each
    reader sees no card beyond the public log and its own ``state.hand``. Returns the number of checks."""
    rnd, checks = random.Random(seed), 0
    for _ in range(2000):
        work(client)
        view = spectator.get().json()
        if view["status"] == "finished":
            return checks
        public = public_cards(client, spectator.url.rsplit("/", 1)[1], pattern)
        for reader_seat, reader in [*humans.items(), (None, spectator)]:
            own = set(reader.get().json()["state"].get("hand") or []) if reader_seat is not None else set()
            leaked = set(pattern.findall(reader.everything())) - public - own
            assert leaked == set(), (reader_seat, leaked, view["phase"])
            checks += 1
        actor = next(p for s, p in humans.items() if s in view["to_act"])
        answer = actor.act(rnd.choice(actor.get("/actions").json()["actions"]))
        assert answer.status_code == 201, answer.text
    raise AssertionError("the game did not end")


def test_san_ni_ichi_two_humans_two_bots_never_see_a_hidden_hand(bot_server: str, redis_client: redis.Redis) -> None:
    players = [{"name": "ann"}, {"name": "hal", "bot": "greedy"}, {"name": "bob"}, {"name": "rob", "bot": "random"}]
    seats, spectator = start(bot_server, "san-ni-ichi", players)
    assert play_checking_leaks(redis_client, {0: seats[0], 2: seats[2]}, spectator, SAN_NI_ICHI_CARD, 9) > 50
    final = spectator.get().json()
    assert final["result"]["winners"] and len(final["state"]["damage"]) == 4
    audit = spectator.get("/audit").json()
    assert audit["verified"], audit


def test_front_line_three_players_with_a_bot_never_see_a_draw_pile(bot_server: str, redis_client: redis.Redis) -> None:
    players = [{"name": "ann"}, {"name": "bob"}, {"name": "hal", "bot": "greedy"}]
    seats, spectator = start(bot_server, "front-line", players, options={"jokers": True})
    first = spectator.get().json()["state"]
    assert [len(f) for f in first["front"]] == [3, 3, 3] and sum(first["draw_sizes"]) == 70 - 18 - 70 % 3
    assert play_checking_leaks(redis_client, {0: seats[0], 1: seats[1]}, spectator, FRONT_LINE_CARD, 4) > 20
    final = spectator.get().json()
    assert final["result"]["scores"] == [len(c) for c in final["state"]["captured"]]
    audit = spectator.get("/audit").json()
    assert audit["verified"], audit
