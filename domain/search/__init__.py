"""Search bots: information-set Monte-Carlo tree search over what the acting seat knows.

``domain.search.ismcts`` is the algorithm (one for every game); ``domain.search.<game>`` is what it
needs of each game (``Knowledge``): how to draw the hidden parts anew from a seat's view, which
actions to search where they are too many to list, and how to play a game out quickly.

Levels (``LEVELS``) are budgets of iterations, not of time, so that a decision is a pure function of
the seat's information set and the bot's random stream: an auditor re-runs it and gets the same
action (``domain.bots.bot_stream`` says where the stream comes from). ``search`` is sized to stay
within about 200 ms per decision on one core of the reference machine, ``search-strong`` searches
five times as long.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from domain.contract import Game
from domain.search import front_line, kiri_ai, nin_nal, san_ban, san_ni_ichi
from domain.search.ismcts import Budget, Estimate, Knowledge, search

KNOWLEDGE: Mapping[str, Knowledge] = MappingProxyType(
    {
        "front-line": front_line.KNOWLEDGE,
        "kiri-ai": kiri_ai.KNOWLEDGE,
        "nin-nal": nin_nal.KNOWLEDGE,
        "san-ban": san_ban.KNOWLEDGE,
        "san-ni-ichi": san_ni_ichi.KNOWLEDGE,
    }
)

# Iterations per decision of ``search``, per game (a play-out's cost differs tenfold between games).
ITERATIONS: Mapping[str, int] = MappingProxyType(
    {
        "front-line": front_line.ITERATIONS,
        "kiri-ai": kiri_ai.ITERATIONS,
        "nin-nal": nin_nal.ITERATIONS,
        "san-ban": san_ban.ITERATIONS,
        "san-ni-ichi": san_ni_ichi.ITERATIONS,
    }
)
LEVELS: Mapping[str, int] = MappingProxyType({"search": 1, "search-strong": 5})  # level -> budget multiple


def levels_for(game: Game) -> list[str]:
    """The search levels ``game`` offers (every game with a ``Knowledge``)."""
    return list(LEVELS) if game.id in KNOWLEDGE else []


def budget(game: Game, level: str) -> Budget:
    """The budget of ``level`` in ``game``."""
    return Budget(ITERATIONS[game.id] * LEVELS[level], **_SETTINGS.get(game.id, {}))


_SETTINGS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "front-line": front_line.SETTINGS,
        "kiri-ai": kiri_ai.SETTINGS,
        "nin-nal": nin_nal.SETTINGS,
        "san-ban": san_ban.SETTINGS,
        "san-ni-ichi": san_ni_ichi.SETTINGS,
    }
)


ALGORITHM = "so-ismcts"


def settings(game: Game, level: str) -> dict[str, Any]:
    """``level``'s settings in ``game`` as the catalog lists them and a new game's record commits to
    (``game_created``'s seat ``bot_settings``)."""
    return {"algorithm": ALGORITHM, **budget(game, level).describe()}


def budget_of(recorded: Mapping[str, Any]) -> Budget:
    """The budget that ``recorded`` settings (``settings``' shape, as a record holds them) describe.

    A game's bot plays with the settings its record committed to when the game was created, not with
    today's, so a re-run (``domain.bots.rerun``) judges a move by the budget it was made with. Raises
    ``ValueError`` naming the first setting that is missing, unknown or out of range.
    """
    if not isinstance(recorded, Mapping):
        raise ValueError("bot settings are an object")
    unknown = sorted(set(recorded) - {"algorithm", *Budget.__dataclass_fields__})
    if unknown:
        raise ValueError(f"unknown bot setting {unknown[0]!r}")
    if recorded.get("algorithm") != ALGORITHM:
        raise ValueError(f"bot settings name the algorithm {ALGORITHM!r}")
    iterations, exploration = recorded.get("iterations"), recorded.get("exploration")
    depth, opponents = recorded.get("rollout_depth"), recorded.get("opponents")
    if type(iterations) is not int or not 1 <= iterations <= MAX_ITERATIONS:
        raise ValueError(f"iterations is an integer from 1 to {MAX_ITERATIONS}")
    if not isinstance(exploration, int | float) or isinstance(exploration, bool) or not 0 <= exploration <= 100:
        raise ValueError("exploration is a number from 0 to 100")
    if type(depth) is not int or not 1 <= depth <= 10_000:
        raise ValueError("rollout_depth is an integer from 1 to 10000")
    if opponents not in OPPONENT_MODELS:
        raise ValueError(f"opponents is one of {', '.join(OPPONENT_MODELS)}")
    return Budget(iterations, float(exploration), depth, opponents)


MAX_ITERATIONS = 100_000  # a recorded budget larger than any level's would stall a re-run, not prove a move
OPPONENT_MODELS = ("untried", "policy")


def estimate(
    game: Game,
    state: Any,
    seat: int,
    n_seats: int,
    level: str,
    rnd: random.Random,
    must_include: Mapping[str, Any] | None = None,
    recorded: Mapping[str, Any] | None = None,
) -> Estimate:
    """The search of ``level`` for ``seat`` in ``state`` (read only as ``seat`` may see it): with the
    ``recorded`` settings where the game's record holds them (``budget_of``), else with ``level``'s own."""
    plan = budget(game, level) if recorded is None else budget_of(recorded)
    return search(game, KNOWLEDGE[game.id], state, seat, n_seats, rnd, plan, must_include)


def choose(game: Game, state: Any, seat: int, n_seats: int, level: str, rnd: random.Random) -> dict[str, Any]:
    """The action the search bot of ``level`` takes for ``seat``."""
    return estimate(game, state, seat, n_seats, level, rnd).best
