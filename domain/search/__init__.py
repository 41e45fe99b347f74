"""Search bots: information-set Monte-Carlo tree search over what the acting seat knows.

``domain.search.ismcts`` is the algorithm (one for every game); ``domain.search.<game>`` is what it
needs of each game (``Knowledge``): how to draw the hidden parts anew from a seat's view, which
actions to search where they are too many to list, and how to play a game out quickly.

San Ban's ``advanced`` mode is searched otherwise: by expectimax (``domain.search.san_ban_expectimax``,
whose docstring says why), with its own settings (``"algorithm": "expectimax"``), which a game of
that mode commits to (``settings`` with the game's options; the catalog's ``bot_settings_by_options``).

Levels (``LEVELS``) are budgets of iterations (or of depth), not of time, so that a decision is a pure function of
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

from domain.contract import Bot, Game
from domain.search import front_line, kiri_ai, nin_nal, san_ban, san_ban_expectimax, san_ni_ichi
from domain.search.ismcts import Budget, Estimate, Knowledge, search
from domain.search.san_ban_expectimax import Plan

Settings = Budget | Plan  # what a level searches with: the tree search's budget, or the expectimax's

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
# The tree's model of another seat's bot level where it is not the bot itself (``"opponents": "bots"``)
MODELS: Mapping[str, Mapping[str, Bot]] = MappingProxyType({"san-ni-ichi": san_ni_ichi.MODELS})


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
# The expectimax of San Ban's advanced mode, per level (``search-strong``: to the end from six empty cells).
EXPECTIMAX: Mapping[str, Plan] = MappingProxyType(
    {"search": Plan(depth=3, exact=5, samples=3), "search-strong": Plan(depth=3, exact=6, samples=8)}
)
EXPECTIMAX_OPTIONS: Mapping[str, Mapping[str, Any]] = MappingProxyType({"san-ban": {"mode": "advanced"}})


def expectimax_for(game: Game, options: Mapping[str, Any] | None) -> bool:
    """Whether a game of ``game`` with ``options`` is searched by expectimax (San Ban's advanced mode)."""
    wanted = EXPECTIMAX_OPTIONS.get(game.id)
    return wanted is not None and all((options or {}).get(k) == v for k, v in wanted.items())


def settings(game: Game, level: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``level``'s settings in a game of ``game`` with ``options``, as the catalog lists them and a new
    game's record commits to (``game_created``'s seat ``bot_settings``)."""
    if expectimax_for(game, options):
        return {"algorithm": san_ban_expectimax.ALGORITHM, **EXPECTIMAX[level].describe()}
    return {"algorithm": ALGORITHM, **budget(game, level).describe()}


def settings_by_options(game: Game) -> list[dict[str, Any]]:
    """The catalog's ``bot_settings_by_options``: the options under which ``game``'s levels play with
    other settings than its ``bot_settings``, and those settings."""
    wanted = EXPECTIMAX_OPTIONS.get(game.id)
    if wanted is None or game.id not in KNOWLEDGE:
        return []
    return [{"options": dict(wanted), "bot_settings": {level: settings(game, level, wanted) for level in LEVELS}}]


def check_settings(game: Game, options: Mapping[str, Any], recorded: Mapping[str, Any]) -> None:
    """``recorded`` settings fit a game of ``game`` with ``options``: read by ``budget_of``, and an
    expectimax only where the game is searched so. Raises ``ValueError``."""
    plan = budget_of(recorded)
    if isinstance(plan, Plan) and not expectimax_for(game, options):
        raise ValueError(f"{san_ban_expectimax.ALGORITHM} searches San Ban's advanced mode only")


def budget_of(recorded: Mapping[str, Any]) -> Settings:
    """The budget that ``recorded`` settings (``settings``' shape, as a record holds them) describe.

    A game's bot plays with the settings its record committed to when the game was created, not with
    today's, so a re-run (``domain.bots.rerun``) judges a move by the budget it was made with. Raises
    ``ValueError`` naming the first setting that is missing, unknown or out of range.
    """
    if not isinstance(recorded, Mapping):
        raise ValueError("bot settings are an object")
    if recorded.get("algorithm") == san_ban_expectimax.ALGORITHM:
        return _plan_of(recorded)
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


def _plan_of(recorded: Mapping[str, Any]) -> Plan:
    unknown = sorted(set(recorded) - {"algorithm", *Plan.__dataclass_fields__})
    if unknown:
        raise ValueError(f"unknown bot setting {unknown[0]!r}")
    limits = {"depth": (1, MAX_DEPTH), "exact": (0, MAX_EXACT), "samples": (1, MAX_SAMPLES)}
    for name, (low, high) in limits.items():
        value = recorded.get(name)
        if type(value) is not int or not low <= value <= high:
            raise ValueError(f"{name} is an integer from {low} to {high}")
    return Plan(recorded["depth"], recorded["exact"], recorded["samples"])


# An expectimax deeper than these would stall a re-run, not prove a move: four placements ahead take
# about 1.7 s at the opening, the rest of the game from six empty cells about 0.5 s, from seven 12 s.
MAX_DEPTH, MAX_EXACT, MAX_SAMPLES = 4, 6, 64
MAX_ITERATIONS = 100_000  # a recorded budget larger than any level's would stall a re-run, not prove a move
OPPONENT_MODELS = ("untried", "policy", "bots")


def estimate(
    game: Game,
    state: Any,
    seat: int,
    n_seats: int,
    level: str,
    rnd: random.Random,
    must_include: Mapping[str, Any] | None = None,
    recorded: Mapping[str, Any] | None = None,
    bots: Mapping[int, str | None] | None = None,
) -> Estimate:
    """The search of ``level`` for ``seat`` in ``state`` (read only as ``seat`` may see it): with the
    ``recorded`` settings where the game's record holds them (``budget_of``), else with ``level``'s own
    (the expectimax's in San Ban's advanced mode, which the state shows).

    ``bots``: each seat's bot level as the game's record declares it (public; None for a person).
    Under ``"opponents": "bots"`` the tree plays a seat of a level the game defines (``game.bots``)
    by that bot's rule (``domain.search.ismcts``), or by the game's model of it (``MODELS``)."""
    plan: Settings
    if recorded is not None:
        plan = budget_of(recorded)
    elif game.id in EXPECTIMAX_OPTIONS and san_ban_expectimax.applies(state):
        plan = EXPECTIMAX[level]
    else:
        plan = budget(game, level)
    if isinstance(plan, Plan):
        if not san_ban_expectimax.applies(state):
            raise ValueError(f"{san_ban_expectimax.ALGORITHM} searches San Ban's advanced mode only")
        return san_ban_expectimax.search(state, seat, rnd, plan, must_include)
    return search(game, KNOWLEDGE[game.id], state, seat, n_seats, rnd, plan, must_include, models_of(game, seat, bots))


def models_of(game: Game, seat: int, bots: Mapping[int, str | None] | None) -> dict[int, Bot]:
    """The rules the tree plays the other seats by under ``"opponents": "bots"``: a seat declared a bot
    of a level ``game`` defines (``bots``: each seat's level, None for a person), by that bot's rule or
    the game's model of it (``MODELS``)."""
    rules = {**game.bots, **MODELS.get(game.id, {})}
    return {s: rules[b] for s, b in (bots or {}).items() if s != seat and b is not None and b in game.bots}


def choose(game: Game, state: Any, seat: int, n_seats: int, level: str, rnd: random.Random) -> dict[str, Any]:
    """The action the search bot of ``level`` takes for ``seat``."""
    return estimate(game, state, seat, n_seats, level, rnd).best
