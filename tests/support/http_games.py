"""Games played over real HTTP for the browser tests: the API's answers, as a page would get them."""

from __future__ import annotations

from typing import Any

import requests

TIMEOUT = 10


def finished_san_ban(base: str) -> dict[str, Any]:
    """A San Ban game played to its end through the API (every seat's first legal move): its record."""
    r = requests.post(
        f"{base}/v1/games", json={"game": "san-ban", "players": [{"name": "ann"}, {"name": "bob"}]}, timeout=TIMEOUT
    )
    assert r.status_code == 201, r.text
    game = r.json()
    auth = [{"Authorization": f"Bearer {s['token']}"} for s in game["seats"]]
    for _ in range(100):
        view = requests.get(f"{base}/v1/games/{game['id']}", timeout=TIMEOUT).json()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        legal = requests.get(f"{base}/v1/games/{game['id']}/actions", headers=auth[seat], timeout=TIMEOUT).json()
        space = legal.get("choose")
        action = {"type": space["type"], "cards": space["from"][: space["count"]]} if space else legal["actions"][0]
        body = {"action": action, "expected_version": legal["version"]}
        assert requests.post(f"{base}/v1/games/{game['id']}/actions", json=body, headers=auth[seat], timeout=TIMEOUT).ok
    record = requests.get(f"{base}/v1/games/{game['id']}/record", timeout=TIMEOUT).json()
    assert record["events"][-1]["type"] == "game_sealed"
    return dict(record)


def replay_view(base: str, game_id: str, step: int, seat: int | None = None) -> dict[str, Any]:
    """``GET /v1/games/{id}/replay?step=N[&as=S]``'s view: the table after event N as seat S (or a spectator) saw it."""
    query = f"step={step}" + ("" if seat is None else f"&as={seat}")
    answer = requests.get(f"{base}/v1/games/{game_id}/replay?{query}", timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["view"])
