"""A finished game's decisions, one row each, for analysts (``kifu export --csv``).

A decision is what a seat chose: a turn's action (``action_taken``) or one part of a secret choice as it
was revealed (``choices_revealed``: public, or a private reveal's parts, shown once the game is sealed).
Each row: the game's id and kind, the rules version, the decision's ``step`` (the position of its event
in the record, as the replay and the audit count), the ``seat``, the ``action`` (JSON), who played it
for the seat (``by``: empty, ``timeout`` or ``forfeit``), the seat's kind (``human`` or the bot level)
and the game's ``result`` (JSON); ``decided_at``, the step where the seat made the decision (its
``action_taken``, or the ``choice_committed`` of a secret choice, revealed later at ``step``).

``ANALYSIS_COLUMNS`` join a game's analysis (``domain.analysis``: one verdict per decision, at its
``decided_at`` step) onto its rows: the engine's ``best`` action (JSON), the expected ``value`` of the
action taken and of the best, the ``loss`` and the ``label``; empty where the game was not analysed
(and on a timeout's move, which is not judged). A secret choice in parts (a Kiri-ai program) has one
verdict, the whole choice's, repeated on each part's row.

``decisions`` gives the same decisions with the table each was made on (as the engine replays the
record): what the analysis judges (``domain.analysis``) and the bots' re-run repeats (``domain.bots``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from domain import engine
from domain.engine import ACTION_TAKEN, CHOICE_COMMITTED, RESIGN, Table
from domain.record import to_event

COLUMNS = ("game_id", "game", "rules_version", "step", "seat", "player", "action", "by", "result", "decided_at")
ANALYSIS_COLUMNS = ("best", "value", "best_value", "loss", "label")


def decision_rows(record: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every decision of a sealed record, in the order they were made."""
    events = record["events"]
    created = events[0]["data"]
    players = {s["seat"]: s.get("bot") or "human" for s in created["seats"]}
    ended = next((e["data"].get("result") for e in events if e["type"] == "game_ended"), None)
    common = {"game_id": created["game_id"], "game": created["game"], "rules_version": created["rules_version"]}
    committed: dict[int, int] = {}  # seat -> the step of its secret choice now pending
    for step, env in enumerate(events, start=1):
        data = env["data"]
        if env["type"] == "choice_committed":
            committed[data["seat"]] = step
            continue
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
                "decided_at": step if env["type"] == "action_taken" else committed.get(seat, step),
            }


def with_analysis(rows: Iterable[dict[str, Any]], verdicts: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """``rows`` of one game with ``ANALYSIS_COLUMNS`` from its analysis' ``verdicts`` (empty where none)."""
    by_decision = {(v["step"], v["seat"]): v for v in verdicts}
    for row in rows:
        verdict = by_decision.get((row["decided_at"], row["seat"]))
        if verdict is None:
            yield {**row, **dict.fromkeys(ANALYSIS_COLUMNS, "")}
            continue
        yield {
            **row,
            "best": json.dumps(verdict["best"], sort_keys=True, ensure_ascii=False),
            "value": "" if verdict["value"] is None else verdict["value"],
            "best_value": "" if verdict["best_value"] is None else verdict["best_value"],
            "loss": verdict["loss"],
            "label": verdict["label"],
        }


@dataclass(frozen=True)
class Decision:
    """A seat's decision in a record: the event that holds it, the table before it, what it chose."""

    step: int
    seat: int
    table: Table
    action: Mapping[str, Any]


def decisions(record: Mapping[str, Any]) -> Iterator[Decision]:
    """Every decision of the record's seats as the engine saw it, in order: a turn's ``action_taken`` or
    a secret choice's ``choice_committed`` (its action from the sealed record); a timeout's move
    (``by``) and a resignation are not the seat's decisions. For the analysis and the bots' re-run."""
    table: Table | None = None
    for step, env in enumerate(record["events"], start=1):
        event = to_event(env)
        after = engine.replay([event], table)
        if table is not None and event.type in (ACTION_TAKEN, CHOICE_COMMITTED) and not event.data.get("by"):
            seat = event.data["seat"]
            if event.type == CHOICE_COMMITTED:
                yield Decision(step, seat, table, after.choices[seat].action)
            elif event.data["action"].get("type") != RESIGN:
                yield Decision(step, seat, table, event.data["action"])
        table = after
