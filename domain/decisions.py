"""A finished game's decisions, one row each, for analysts (``kifu export --csv``).

A decision is what a seat chose: a turn's action (``action_taken``) or one part of a secret choice as it
was revealed (``choices_revealed``: public, or a private reveal's parts, shown once the game is sealed).
Each row: the game's id and kind, the rules version, the decision's ``step`` (the position of its event
in the record, as the replay and the audit count), the ``seat``, the ``action`` (JSON), who played it
for the seat (``by``: empty, ``timeout`` or ``forfeit``), the seat's kind (``human`` or the bot level)
and the game's ``result`` (JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

COLUMNS = ("game_id", "game", "rules_version", "step", "seat", "player", "action", "by", "result")


def decision_rows(record: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every decision of a sealed record, in the order they were made."""
    events = record["events"]
    created = events[0]["data"]
    players = {s["seat"]: s.get("bot") or "human" for s in created["seats"]}
    ended = next((e["data"].get("result") for e in events if e["type"] == "game_ended"), None)
    common = {"game_id": created["game_id"], "game": created["game"], "rules_version": created["rules_version"]}
    for step, env in enumerate(events, start=1):
        data = env["data"]
        if env["type"] == "action_taken":
            chosen: Iterator[tuple[Any, Any]] = iter([(data["seat"], data["action"])])
        elif env["type"] == "choices_revealed":
            shown = data.get("choices") or env.get("private") or {}
            chosen = ((int(seat), part["action"]) for seat, part in sorted(shown.items(), key=lambda kv: int(kv[0])))
        else:
            continue
        for seat, action in chosen:
            yield {
                **common,
                "step": step,
                "seat": seat,
                "player": players.get(seat, ""),
                "action": json.dumps(action, sort_keys=True, ensure_ascii=False),
                "by": data.get("by", ""),
                "result": json.dumps(ended, sort_keys=True, ensure_ascii=False),
            }
