"""What ``GET /actions`` answers for San Ban: a compact description of the secret pick, and its decoder.

A seat picks its five from a deck of up to 12 cards: 792 sets (``choose_hand``) or
95,040 ordered fives (``set_order``, gamer mode), each a list of five ids of up to
40 characters: several megabytes as a list. So in the ``choose`` phase the action
space is

* ``actions``: ready-made picks, the deck's cards five at a time in windows that
  wrap around (``deck[i:i+5]``, then from the start again; one per card of the
  deck, each card in five of them, no window twice): every pick when these are all
  of them (a deck of 5 cards for ``choose_hand``, or 6), else a few;
* ``choose``: ``{"type", "count", "from", "ordered"}``: send
  ``{"type": type, "cards": [...]}`` with exactly ``count`` distinct ids of
  ``from`` (the seat's deck, in deck order). ``ordered`` is true for ``set_order``:
  the list's order is the play order, so every order is another action; false for
  ``choose_hand``: any order, the hand keeps deck order.

Every other phase lists all its legal actions (at most 9 cells times 5 cards).
``admits`` and ``expand`` decode the description from the JSON alone, as a client
would: ``admits`` judges one action, ``expand`` lists every admitted one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations, permutations
from typing import Any

from domain.games.san_ban.state import HAND_SIZE

CHOOSE_HAND, SET_ORDER = "choose_hand", "set_order"


def windows(deck: Sequence[str], ordered: bool) -> list[list[str]]:
    """The ready-made picks: ``HAND_SIZE`` consecutive cards from each card of ``deck`` on, wrapping
    around; in deck order unless ``ordered``; each distinct one once."""
    out: list[list[str]] = []
    for start in range(len(deck)):
        window = [deck[(start + k) % len(deck)] for k in range(HAND_SIZE)]
        pick = window if ordered else [c for c in deck if c in window]
        if pick not in out:
            out.append(pick)
    return out


def choose_space(kind: str, deck: Sequence[str]) -> dict[str, Any]:
    """The action space of a seat that picks its five with ``kind`` from ``deck`` (module docstring)."""
    ordered = kind == SET_ORDER
    return {
        "actions": [{"type": kind, "cards": pick} for pick in windows(deck, ordered)],
        "choose": {"type": kind, "count": HAND_SIZE, "from": list(deck), "ordered": ordered},
    }


def admits(space: Mapping[str, Any], action: Any) -> bool:
    """Whether the ``choose`` description of ``space`` admits ``action`` (False where there is none)."""
    choose = space.get("choose")
    if not isinstance(choose, Mapping) or not isinstance(action, Mapping):
        return False
    cards = action.get("cards")
    return (
        action.keys() == {"type", "cards"}
        and action["type"] == choose["type"]
        and isinstance(cards, list)
        and len(cards) == choose["count"]
        and all(isinstance(c, str) and c in choose["from"] for c in cards)
        and len(set(cards)) == len(cards)
    )


def expand(space: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every action ``space`` admits, once each: every pick of ``choose`` (sets in deck order), else
    the listed ``actions``."""
    choose = space.get("choose")
    if choose is None:
        yield from (dict(a) for a in space["actions"])
        return
    picks = permutations if choose["ordered"] else combinations
    for cards in picks(choose["from"], choose["count"]):
        yield {"type": choose["type"], "cards": list(cards)}
