"""A typed, synchronous Python client of Kifu's REST API (``openapi.yaml``; the guide: ``docs/api.md``,
"Python client")::

    from kifu.client import Client, human

    kifu = Client("http://127.0.0.1:8000")
    game = kifu.create_game("san-ban", [human("ann"), human("bob")], options={"mode": "standard"})
    ann = game["seats"][0]["token"]
    kifu.act(game["id"], kifu.legal_actions(game["id"], ann)["actions"][0], ann)
    for event in kifu.stream(game["id"], ann):  # to the game's last event, reconnecting as needed
        print(event.id, event.event)

It depends on ``requests`` alone and imports nothing of the server.
"""

from kifu.client.client import Client, bot, human, new_key, open_seat
from kifu.client.errors import (
    ApiError,
    ClientError,
    Conflict,
    Forbidden,
    GameOver,
    IllegalAction,
    InvalidRequest,
    NotFound,
    NotYourTurn,
    RateLimited,
    TransportError,
    Unauthorized,
    Unavailable,
    VersionConflict,
)
from kifu.client.streams import ServerEvent

__all__ = [
    "ApiError",
    "Client",
    "ClientError",
    "Conflict",
    "Forbidden",
    "GameOver",
    "IllegalAction",
    "InvalidRequest",
    "NotFound",
    "NotYourTurn",
    "RateLimited",
    "ServerEvent",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "VersionConflict",
    "bot",
    "human",
    "new_key",
    "open_seat",
]
