"""What a seat may do now: the compact action space, a random legal action, the short list of actions.

The action space of the acting seat (``action_space``) is a JSON object:

* ``actions``: complete legal actions that can be sent as they are: the short
  list of ``legal_actions`` (``pass`` and a few ready-made declarations in the
  attack phase, every ``refill`` choice in the refill phase);
* ``refill`` (refill phase): ``{"count": k, "from": [reinforcements]}``: send
  exactly ``k`` distinct ids of ``from``;
* ``attack`` (attack phase): ``{"cards": {id: {"zone", "attack", "joker"}},
  "targets": [{"target", "owner", "defence", "normal", "reversed", "jokers"}]}``.
  ``cards`` holds every card of the attacker (``zone`` ``front`` or
  ``reinforcements``; ``attack`` the value it adds). ``targets`` lists every
  opposing front-line card that at least one legal attack can capture; its
  lists hold exactly the attacker's cards that join at least one legal attack
  on it: ``normal`` without a joker, ``reversed`` beside a joker, ``jokers``
  the jokers usable against it.

A declaration ``{"type": "attack", "attacks": [{"target": t, "cards": G}, ...]}``
is legal **if and only if**:

1. it has at least one attack; its targets are distinct entries of ``targets``;
2. for each attack, either no card of ``G`` is a joker and every card is in
   ``t.normal``, or exactly one is a joker in ``t.jokers`` and every other card
   is in ``t.reversed``;
3. ``G``'s first card (the initiator) has zone ``front``; ``G`` lists no card twice;
4. the ``attack`` values of ``G`` add up to more than ``t.defence``;
5. no card is in two attacks (the groups are pairwise disjoint).

Orders of attacks and of the cards after the initiator do not matter.
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

from domain.games.front_line import space
from domain.games.front_line.state import ATTACK, REFILL, State, phase, refill_count

PASS: dict[str, Any] = {"type": "pass"}


def refill_choices(state: State, seat: int) -> list[dict[str, Any]]:
    """Every legal ``refill``: each set of reinforcements of the right size, in their order."""
    ups = combinations(state.reserve[seat], refill_count(state, seat))
    return [{"type": "refill", "cards": list(up)} for up in ups]


def action_space(state: State, seat: int) -> dict[str, Any]:
    """The compact, exact description of every legal action of ``seat``, the seat to act (see the module
    docstring; the engine asks only for the seat to act)."""
    if phase(state) == REFILL:
        return {
            "actions": refill_choices(state, seat),
            "refill": {"count": refill_count(state, seat), "from": list(state.reserve[seat])},
        }
    return {"actions": legal_actions(state, seat), "attack": space.attack_space(space.from_state(state, seat))}


def sample_action(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """A random legal action of the acting ``seat``: every legal action has positive probability.

    Refill: uniform. Attack phase: pass with probability 1/(1 + attackable
    targets), else ``space.sample_declaration``.
    """
    if phase(state) == REFILL:
        return rnd.choice(refill_choices(state, seat))
    pos = space.from_state(state, seat)
    if not pos.targets or rnd.random() * (1 + len(pos.targets)) < 1:
        return dict(PASS)
    return space.sample_declaration(pos, rnd)


def legal_actions(state: State, seat: int) -> list[dict[str, Any]]:
    """A short list of legal actions: every refill choice; or pass plus ``space.listed_declarations``.

    Not every legal declaration (there may be millions): ``action_space`` describes all of them.
    """
    if phase(state) == REFILL:
        return refill_choices(state, seat)
    if phase(state) != ATTACK:
        return []
    return [dict(PASS), *space.listed_declarations(space.from_state(state, seat))]
