"""Taking an action as the API's route does: identify the seat, then the ``TakeAction`` command."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.commands import Actor, Answer, TakeAction
from service.games import GameService
from service.ports import Quotas


def act_as(
    games: GameService,
    game_id: str,
    token: str | None,
    actor: Actor,
    action: Mapping[str, Any],
    expected_version: int | None = None,
    idempotency_key: str | None = None,
    quotas: Quotas | None = None,
) -> Answer:
    """``TakeAction`` for the seat of ``token``, identified as ``actor`` (``Commands.identify_actor``)."""
    command = TakeAction(game_id, actor, action, expected_version, idempotency_key, token, quotas=quotas)
    return games.commands.take_action(command)
