"""``kifu play GAME``: one game against the server's bots in a terminal, on ``kifu.client``.

The table is printed as the view's fields (each game's page in ``docs/rules/`` says what
they mean), the legal actions numbered; type a number (or an action as JSON, or ``q``
to resign). While the bots think, it follows the game's stream. ``ask`` and ``say`` are
the terminal's ``input`` and ``print`` unless given (tests give their own).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kifu.client import ApiError, Client, bot, human
from kifu.client.types import Action, GameView

QUIT = "q"


def play(
    kifu: Client,
    game: str,
    levels: Sequence[str] = ("greedy",),
    options: Mapping[str, Any] | None = None,
    name: str = "you",
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> GameView:
    """Play ``game`` as seat 0 against a bot per level in ``levels``; the final view."""
    players = [human(name), *(bot(f"{level}-{n}", level) for n, level in enumerate(levels, 1))]
    created = kifu.create_game(game, players, options=options)
    game_id, token = created["id"], created["seats"][0]["token"]
    assert token is not None  # a first creation shows the human seat's token
    say(f"game {game_id}: {game}, you are seat 0 ({name})")
    while (view := kifu.view(game_id, token))["status"] == "active":
        if 0 not in view["to_act"]:
            for _event in kifu.stream(game_id, token, after=view["version"]):
                break  # something happened: look again
            continue
        say(table(view))
        actions = kifu.legal_actions(game_id, token)["actions"]
        say("\n".join(f"  {n}. {json.dumps(action)}" for n, action in enumerate(actions, 1)))
        try:
            kifu.act(game_id, choose(actions, ask), token, expected_version=view["version"])
        except ApiError as refused:
            say(f"refused: {refused.detail}")
    say(table(view))
    say(f"result: {json.dumps(view['result'])}")
    return view


def choose(actions: Sequence[Action], ask: Callable[[str], str]) -> Action:
    """The action the player picks: a number of the list, an action as JSON, or ``q`` (resign)."""
    while True:
        answer = ask(f"your move (1-{len(actions)}, an action as JSON, {QUIT} to resign): ").strip()
        if answer == QUIT:
            return {"type": "resign"}
        if answer.isdigit() and 1 <= int(answer) <= len(actions):
            return actions[int(answer) - 1]
        try:
            typed = json.loads(answer)
        except ValueError:
            continue
        if isinstance(typed, dict) and "type" in typed:
            return typed


def table(view: GameView) -> str:
    """The view as lines: whose turn, the phase, then each field of the game's ``state``."""
    names = ", ".join(
        f"{s['seat']}: {s['name'] or 'open'}{' (' + s['bot'] + ')' if s['bot'] else ''}" for s in view["seats"]
    )
    head = [f"-- version {view['version']}, phase {view['phase']}, to act {view['to_act']} -- seats {names}"]
    return "\n".join(head + [f"  {key}: {json.dumps(value)}" for key, value in view["state"].items()])
