"""Helpers for API tests: an app on the test Redis and a small client per seat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask.testing import FlaskClient


@dataclass
class Seat:
    """One seat's view of a game through the API."""

    client: FlaskClient
    game_id: str
    token: str | None
    headers: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def get(self, path: str = "", **kw: Any) -> Any:
        return self.client.get(f"/v1/games/{self.game_id}{path}", headers=self.headers, **kw)

    def act(self, action: dict[str, Any], **body: Any) -> Any:
        return self.client.post(
            f"/v1/games/{self.game_id}/actions", json={"action": action, **body}, headers=self.headers
        )


def create(client: FlaskClient, game: str, players: list[dict[str, Any]], **body: Any) -> tuple[str, list[Seat]]:
    """Create a game; return its id and a Seat per player (plus a spectator last)."""
    r = client.post("/v1/games", json={"game": game, "players": players, **body})
    assert r.status_code == 201, r.json
    game_id = r.json["id"]
    seats = [Seat(client, game_id, s["token"]) for s in r.json["seats"]]
    return game_id, [*seats, Seat(client, game_id, None)]
