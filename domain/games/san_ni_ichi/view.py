"""What a seat (or a spectator) sees of a San, Ni, Ichi! table."""

from __future__ import annotations

from typing import Any

from domain.games.san_ni_ichi.cards import WEAPONS, card, sort_key
from domain.games.san_ni_ichi.state import DEAL, SMOKE, DamageLog, Played, State


def _played(p: Played) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": p.seat, "card": p.card, "resolved": p.how is not None}
    if card(p.card).letter:
        out["letter"] = card(p.card).letter
    if p.protect is not None:
        out["protect"] = p.protect
    if p.how is not None:
        out["result"] = {"event": p.how, **{k: list(v) if isinstance(v, tuple) else v for k, v in p.detail}}
        out["on_table"] = p.kept
    return out


def _top(state: State, seat: int) -> dict[str, Any] | None:
    top = state.top(seat)
    if top is None:
        return None
    return {"card": top[0], "element": top[1], "strength": card(top[0]).strength}


def _damage_log(log: DamageLog | None) -> dict[str, Any] | None:
    if log is None:
        return None
    return {
        "round": log.round,
        "smoked": [{"seat": s, "card": c, "covers": cover} for s, c, cover in log.smoked],
        "declined": list(log.declined),
        "took_damage": [{"seat": s, "cards": n} for s, n in log.taken],
        "drawn": [{"seat": s, "card": c} for s, c in log.drawn],
    }


def view(state: State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
    """Public table, own hand; never another hand (teammates included) before the end."""
    dealt = state.phase != DEAL
    current = state.current
    out: dict[str, Any] = {
        "players": state.n,
        "deck": state.deck,
        "strengths": state.strengths,
        "damage_number": state.n - 1,
        "scoring": state.scoring,
        "teams": state.team_list(),
        "weapons_in_play": list(state.weapons),
        "weapons_out": [w for w in WEAPONS if w not in state.weapons] if dealt else [],
        "round": state.round,
        "phase": state.phase,
        "combat": [[c for c, _ in pile] for pile in state.combat],
        "tops": [_top(state, s) for s in range(state.n)] if dealt else [],
        "damage": [list(d) for d in state.damage],
        "discards": list(state.discards),
        "hand": sorted(state.hands[viewer], key=sort_key) if viewer is not None and dealt else None,
        "hand_sizes": [len(h) for h in state.hands],
        "selecting": list(state.selecting),
        "sitting_out": [s for s in range(state.n) if s not in state.selecting] if dealt else [],
        "selections": [_played(p) for p in state.played],
        "previous_selections": [_played(p) for p in state.previous],
        "protected": list(state.protected),
        "resolving": None if current is None else {"seat": current.seat, "card": current.card},
        "smoke_deciding": list(state.smokers) if state.phase == SMOKE else [],
        "last_damage": _damage_log(state.last_damage),
        "totals": state.totals(),
        "scores": state.scores(),
    }
    if reveal_all:
        out["hands"] = [sorted(h, key=sort_key) for h in state.hands]
    return out
