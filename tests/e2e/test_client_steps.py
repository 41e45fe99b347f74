"""kifu.client's ``steps`` and ``iter_steps`` against a real server over real HTTP: the pages walked by
``iter_steps`` are every step once, each what ``replay`` answers for it; another seat while the game
runs raises ``Forbidden``, a step beyond the game ``InvalidRequest``."""

from __future__ import annotations

import random

import pytest

from kifu.client import Client, Forbidden, InvalidRequest, human


def play(kifu: Client, actions: int, seed: int) -> tuple[str, list[str]]:
    """A San Ban game (gamer mode: hidden hands) of two humans, ``actions`` random legal actions in."""
    game = kifu.create_game("san-ban", [human("ann"), human("bob")], options={"mode": "gamer"})
    tokens = [seat["token"] for seat in game["seats"]]
    assert all(tokens)
    rnd = random.Random(seed)
    for _ in range(actions):
        view = kifu.view(game["id"])
        if view["status"] == "finished":
            break
        token = tokens[view["to_act"][0]]
        assert token is not None
        kifu.act(game["id"], rnd.choice(kifu.legal_actions(game["id"], token)["actions"]), token)
    return game["id"], [t for t in tokens if t is not None]


def test_iter_steps_walks_every_step_as_replay_answers_it(base_url: str) -> None:
    kifu = Client(base_url)
    game_id, tokens = play(kifu, 500, seed=7)
    last = kifu.view(game_id)["version"]
    assert kifu.view(game_id)["status"] == "finished" and last > 20
    for as_seat in (None, 0, 1):
        walked = list(kifu.iter_steps(game_id, as_seat=as_seat, page_size=7))
        assert [item["step"] for item in walked] == list(range(1, last + 1))
        for item in walked:
            replayed = kifu.replay(game_id, item["step"], as_seat=as_seat)
            assert (item["event"], item["view"]) == (replayed["event"], replayed["view"])
    page = kifu.steps(game_id, 3, 5, as_seat=1, token=tokens[0])  # once over, any caller, any seat
    assert (page["first"], page["last"], page["next"]) == (3, last, 8)
    assert page["items"] == list(kifu.iter_steps(game_id, as_seat=1, from_=3))[:5]


def test_steps_of_a_running_game(base_url: str) -> None:
    kifu = Client(base_url, retries=0)
    game_id, (ann, bob) = play(kifu, 3, seed=1)
    last = kifu.view(game_id)["version"]
    own = list(kifu.iter_steps(game_id, as_seat=0, token=ann, page_size=2))
    assert [item["step"] for item in own] == list(range(1, last + 1))
    assert own[-1]["view"] == kifu.replay(game_id, last, as_seat=0, token=ann)["view"]
    with pytest.raises(Forbidden):
        kifu.steps(game_id, as_seat=0, token=bob)
    with pytest.raises(InvalidRequest) as beyond:
        kifu.steps(game_id, last + 1)
    assert beyond.value.status == 422 and "from" in beyond.value.errors
