"""Whole games over real HTTP with a real RQ worker, played through kifu.client: nobody sees another
seat's secrets."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

import redis

from adapters.redis_store import EventStore
from kifu.client import Client
from kifu.client.types import Action, ActionAnswer, GameView, Player
from tests.e2e.conftest import work


@dataclass
class Seat:
    """A seat of a game (or a spectator, without a token) and what it may ask of the API."""

    kifu: Client
    game_id: str
    token: str | None

    def view(self) -> GameView:
        return self.kifu.view(self.game_id, self.token)

    def actions(self) -> list[Action]:
        return self.kifu.legal_actions(self.game_id, self.token)["actions"]

    def everything(self) -> str:
        """Every answer this seat can read of the game now, as JSON text."""
        view = self.view()
        version = view["version"]
        answers: list[Any] = [
            view,
            self.kifu.legal_actions(self.game_id, self.token),
            self.kifu.events(self.game_id, self.token, limit=1000),
            self.kifu.record(self.game_id, self.token),
            self.kifu.replay(self.game_id, version, token=self.token),
            self.kifu.replay(self.game_id, max(1, version - 3), token=self.token),
        ]
        return "\n".join(json.dumps(answer) for answer in answers)

    def act(self, action: Action) -> ActionAnswer:
        assert self.token is not None
        return self.kifu.act(self.game_id, action, self.token)


def start(base: str, game: str, players: list[Player], **settings: Any) -> tuple[list[Seat], Seat]:
    kifu = Client(base)
    created = kifu.create_game(game, players, **settings)
    return [Seat(kifu, created["id"], s["token"]) for s in created["seats"]], Seat(kifu, created["id"], None)


def test_nin_nal_three_humans_and_a_bot_never_see_each_others_cards(bot_server: str, redis_client: redis.Redis) -> None:
    seats, spectator = start(
        bot_server, "nin-nal", [{"name": "ann"}, {"name": "bob"}, {"name": "cid"}, {"name": "hal", "bot": "greedy"}]
    )
    humans = seats[:3]
    rnd = random.Random(5)
    checks = 0
    while True:
        work(redis_client)
        view = spectator.view()
        if view["status"] == "finished":
            break
        hands = {i: set(p.view()["state"]["hand"]) for i, p in enumerate(humans)}
        for reader_seat, reader in enumerate([*humans, spectator]):
            seen = reader.everything()
            for owner, hand in hands.items():
                if owner != reader_seat:
                    leaked = {card for card in hand if f'"{card}"' in seen}
                    assert leaked == set(), (reader_seat, owner, leaked, view["phase"])
                    checks += 1
        actor = next(p for i, p in enumerate(humans) if i in view["to_act"])
        actor.act(rnd.choice(actor.actions()))  # an error answer raises
    assert checks > 100
    final = spectator.view()
    assert len(final["state"]["hands"]) == 4 and "unused" in final["state"]
    audit = spectator.kifu.audit(spectator.game_id)
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
    red.act({"type": "program", "first": "approach", "second": "high-strike"})
    work(redis_client)
    events = spectator.kifu.events(spectator.game_id, limit=1000)["items"]
    committed = [e for e in events if e["type"] == "choice_committed"]
    assert all(len(e["data"]["commitments"]) == 2 and "private" not in e["data"] for e in committed)
    reveals = [e for e in events if e["type"] == "choices_revealed"]
    assert [r["data"]["part"] for r in reveals][:2] == [0, 1]
    while spectator.view()["status"] == "active":
        actions = red.actions()
        red.act(random.Random(len(actions)).choice(actions))
        work(redis_client)
    audit = spectator.kifu.audit(spectator.game_id)
    assert audit["verified"], audit


SAN_NI_ICHI_CARD = re.compile(r"\b(?:fire|water|wood)-(?:10|[1-9])\b|\b[a-z]+(?:-kogeki)?-(?:1[1-9]|2[0-2])\b")
FRONT_LINE_CARD = re.compile(r"\b(?:s\d:)?(?:(?:rock|paper|scissors|lizard|water)-(?:10|[2-9ajqk])|joker-[a-z]+)\b")


def public_cards(client: redis.Redis, game_id: str, pattern: re.Pattern[str]) -> set[str]:
    """Every card id in the public data of the log so far: the ground truth of what anybody may know."""
    return {c for env in EventStore(client).read_all(game_id) for c in pattern.findall(str(env["data"]))}


def play_checking_leaks(
    client: redis.Redis, humans: dict[int, Seat], spectator: Seat, pattern: re.Pattern[str], seed: int
) -> int:
    """Play the humans' random legal actions (the bots through the worker) to the end; at every step each
    reader sees no card beyond the public log and its own ``state.hand``. Returns the number of checks."""
    rnd, checks = random.Random(seed), 0
    for _ in range(2000):
        work(client)
        view = spectator.view()
        if view["status"] == "finished":
            return checks
        public = public_cards(client, spectator.game_id, pattern)
        for reader_seat, reader in [*humans.items(), (None, spectator)]:
            own = set(reader.view()["state"].get("hand") or []) if reader_seat is not None else set()
            leaked = set(pattern.findall(reader.everything())) - public - own
            assert leaked == set(), (reader_seat, leaked, view["phase"])
            checks += 1
        actor = next(p for s, p in humans.items() if s in view["to_act"])
        actor.act(rnd.choice(actor.actions()))  # an error answer raises
    raise AssertionError("the game did not end")


def test_san_ni_ichi_two_humans_two_bots_never_see_a_hidden_hand(bot_server: str, redis_client: redis.Redis) -> None:
    players = [{"name": "ann"}, {"name": "hal", "bot": "greedy"}, {"name": "bob"}, {"name": "rob", "bot": "random"}]
    seats, spectator = start(bot_server, "san-ni-ichi", players)
    assert play_checking_leaks(redis_client, {0: seats[0], 2: seats[2]}, spectator, SAN_NI_ICHI_CARD, 9) > 50
    final = spectator.view()
    assert final["result"] and final["result"]["winners"] and len(final["state"]["damage"]) == 4
    audit = spectator.kifu.audit(spectator.game_id)
    assert audit["verified"], audit


def test_front_line_three_players_with_a_bot_never_see_a_draw_pile(bot_server: str, redis_client: redis.Redis) -> None:
    players = [{"name": "ann"}, {"name": "bob"}, {"name": "hal", "bot": "greedy"}]
    seats, spectator = start(bot_server, "front-line", players, options={"jokers": True})
    first = spectator.view()["state"]
    assert [len(f) for f in first["front"]] == [3, 3, 3] and sum(first["draw_sizes"]) == 70 - 18 - 70 % 3
    assert play_checking_leaks(redis_client, {0: seats[0], 1: seats[1]}, spectator, FRONT_LINE_CARD, 4) > 20
    final = spectator.view()
    assert final["result"] and final["result"]["scores"] == [len(c) for c in final["state"]["captured"]]
    audit = spectator.kifu.audit(spectator.game_id)
    assert audit["verified"], audit
