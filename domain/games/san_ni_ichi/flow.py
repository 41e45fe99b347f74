"""San, Ni, Ichi! flow: the deal, the reveals, and every step that needs nobody's decision.

``automatic`` is the game's ``advance``: the engine runs it after every command
until somebody must decide or the game is over, so the log never waits on a step
without a player: automatic discards, Blocks, the damage phase when nobody may
smoke, the end of a round and the next one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.events import Event
from domain.games.san_ni_ichi import moves
from domain.games.san_ni_ichi.cards import (
    BLOCK,
    HAND_SIZE,
    TORINOKO,
    WEAPONS,
    attack_cards,
    card,
    deck_size,
    kind,
    sort_key,
    strength,
    validate_deal,
)
from domain.games.san_ni_ichi.state import (
    ATTACK_PHASE,
    BETWEEN,
    CARD_DRAWN,
    CARDS_DEALT,
    CARDS_DISCARDED,
    DAMAGE,
    DAMAGE_TAKEN,
    GAME_FINISHED,
    ROUND_ENDED,
    ROUND_STARTED,
    SELECTIONS_REVEALED,
    SMOKE_BOMBS_REVEALED,
    SMOKE_REQUESTED,
    TAKING,
    DamageLog,
    State,
    lowest_entry,
)
from domain.rng import SeededRandom

# ---------------------------------------------------------------- the deal


def deal(
    options: Mapping[str, Any], n: int, rng: SeededRandom, fixed: Mapping[str, Any] | None
) -> tuple[int, list[str], list[list[str]]]:
    """(highest attack strength, weapons in play, hands): drawn from ``rng`` or a fixed deal.

    Draws: the weapons are the first W of a shuffle of the 12 (strength order); then the
    deck (attack cards fire, water, wood 1..N, then those weapons by strength) is shuffled
    and seat ``s`` gets cards ``7s .. 7s+6``.
    """
    deck = options.get("deck", "standard")
    top, n_weapons = deck_size(deck, n)
    if fixed is not None:
        weapons, hands = validate_deal(fixed, deck, n)
        return top, weapons, hands
    weapons = sorted(rng.sample(WEAPONS, n_weapons), key=sort_key)
    cards = rng.shuffled([*attack_cards(top), *weapons])
    return top, weapons, [cards[HAND_SIZE * s : HAND_SIZE * (s + 1)] for s in range(n)]


def opening(
    options: Mapping[str, Any],
    n: int,
    top: int,
    weapons: Sequence[str],
    hands: Sequence[Sequence[str]],
    teams: Sequence[Sequence[int]] | None,
) -> list[Event]:
    """``cards_dealt`` (hands private per seat) and the first ``round_started``."""
    public = {
        "deck": options.get("deck", "standard"),
        "strengths": top,
        "weapons_in_play": list(weapons),
        "weapons_out": [w for w in WEAPONS if w not in weapons],
        "damage_number": n - 1,
        "hand_sizes": [len(h) for h in hands],
        "teams": None if teams is None else [list(t) for t in teams],
    }
    private = {str(s): {"hand": list(h)} for s, h in enumerate(hands)}
    return [
        Event(CARDS_DEALT, public, private=private),
        Event(ROUND_STARTED, {"round": 1, "selecting": list(range(n)), "sitting_out": []}),
    ]


# ---------------------------------------------------------------- reveals


def reveal_selections(state: State, choices: Mapping[int, Mapping[str, Any]]) -> Event:
    """The selected cards in resolution order, with the seats the Blocks protect."""
    order = []
    for seat, action in sorted(choices.items(), key=lambda kv: sort_key(kv[1]["card"])):
        c = action["card"]
        entry: dict[str, Any] = {"seat": seat, "card": c}
        if card(c).letter:
            entry["letter"] = card(c).letter
        if kind(c) == BLOCK:
            entry["protect"] = action.get("protect", seat)
        order.append(entry)
    protected = sorted({e["protect"] for e in order if "protect" in e})
    return Event(SELECTIONS_REVEALED, {"round": state.round, "order": order, "protected": protected})


def reveal_smoke(state: State, choices: Mapping[int, Mapping[str, Any]]) -> Event:
    """Who smoked (their lowest Torinoko, covering themself or the teammate named) and who did not."""
    used, declined = [], []
    for seat, action in sorted(choices.items()):
        if action["use"]:
            bomb = min((c for c in state.hands[seat] if kind(c) == TORINOKO), key=sort_key)
            used.append({"seat": seat, "card": bomb, "covers": action.get("protect", seat)})
        else:
            declined.append(seat)
    return Event(SMOKE_BOMBS_REVEALED, {"round": state.round, "used": used, "declined": declined})


# ---------------------------------------------------------------- automatic steps


def automatic(state: State) -> list[Event]:
    """The events of a step nobody decides (empty when a seat must act, or the game is over)."""
    if state.phase == ATTACK_PHASE:
        current = state.current
        ev = moves.automatic(state, current) if current is not None else None
        return [ev] if ev is not None else []
    if state.phase == DAMAGE:
        asked = state.asked_to_smoke()
        if asked:
            return [Event(SMOKE_REQUESTED, {"round": state.round, "seats": list(asked)})]
        return damage_events(state)
    if state.phase == TAKING:
        return damage_events(state)
    if state.phase == BETWEEN:
        return between_rounds(state)
    return []


def damage_events(state: State) -> list[Event]:
    """Highest tops (of seats not covered by a smoke bomb) take their piles; covered seats draw."""
    log = state.last_damage or DamageLog(state.round)
    covered = {cover for _, _, cover in log.smoked}
    exposed = [s for s in range(state.n) if state.combat[s] and s not in covered]
    events = []
    if exposed:
        high = max(strength(state.combat[s][-1][0]) for s in exposed)
        events += [
            Event(DAMAGE_TAKEN, {"seat": s, "cards": [c for c, _ in state.combat[s]], "top": state.combat[s][-1][0]})
            for s in exposed
            if strength(state.combat[s][-1][0]) == high
        ]
    piles = {s: list(state.combat[s]) for s in covered}
    for smoker, _bomb, cover in log.smoked:
        if piles[cover]:
            low = lowest_entry(tuple(piles[cover]))
            piles[cover].remove(low)
            events.append(Event(CARD_DRAWN, {"seat": cover, "card": low[0], "by": smoker}))
    kept = [p.card for p in state.played if p.kept]
    return [*events, Event(ROUND_ENDED, {"round": state.round, "discarded": kept})]


def between_rounds(state: State) -> list[Event]:
    """Hands of smoke bombs only are discarded; then the next round starts, or the game ends."""
    events = [
        Event(CARDS_DISCARDED, {"seat": s, "cards": list(h), "reason": "only_torinoko"})
        for s, h in enumerate(state.hands)
        if h and all(kind(c) == TORINOKO for c in h)
    ]
    gone = {ev.data["seat"] for ev in events}
    holding = [s for s, h in enumerate(state.hands) if h and s not in gone]
    if not holding:
        left = [[c for c, _ in pile] for pile in state.combat]
        events.append(
            Event(
                GAME_FINISHED,
                {"round": state.round, "combat_discarded": left, "totals": state.totals(), "scores": state.scores()},
            )
        )
    else:
        events.append(
            Event(
                ROUND_STARTED,
                {
                    "round": state.round + 1,
                    "selecting": holding,
                    "sitting_out": [s for s in range(state.n) if s not in holding],
                },
            )
        )
    return events
