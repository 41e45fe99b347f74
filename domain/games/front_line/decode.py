"""Front Line's action space read back from its JSON alone, as a client would (no state, no rules module).

``admits`` judges one action by the rules of the ``actions`` module docstring
(``refill``: ``count`` distinct ids of ``from``; ``attack``: rules 1-5); ``expand``
lists every action the space admits, up to the orders that do not matter (of the
attacks, of the cards after an initiator, of a refill's cards): ``pass`` first,
then each declaration with its attacks in ``targets`` order and each attack's
cards in ``cards`` order after the initiator. Neither looks at the listed
``actions`` beyond ``pass``: the engine's ``admits`` checks those first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any


def admits(space: Mapping[str, Any], action: Any) -> bool:
    """Whether the ``refill`` or ``attack`` description of ``space`` admits ``action``."""
    if not isinstance(action, Mapping):
        return False
    refill = space.get("refill")
    if refill is not None:
        return action.keys() == {"type", "cards"} and action["type"] == "refill" and _pick(action["cards"], refill)
    attack = space.get("attack")
    if attack is None or action.keys() != {"type", "attacks"} or action["type"] != "attack":
        return False
    attacks = action["attacks"]
    if not isinstance(attacks, list) or not attacks:
        return False
    targets = {t["target"]: t for t in attack["targets"]}
    seen_targets: set[str] = set()
    seen_cards: set[str] = set()
    for one in attacks:
        if not isinstance(one, Mapping) or one.keys() != {"target", "cards"} or not isinstance(one["target"], str):
            return False
        t = targets.get(one["target"])
        if t is None or t["target"] in seen_targets or not _group(attack["cards"], t, one["cards"], seen_cards):
            return False
        seen_targets.add(t["target"])
        seen_cards.update(one["cards"])
    return True


def _pick(cards: Any, refill: Mapping[str, Any]) -> bool:
    """``cards`` is exactly ``count`` distinct ids of ``from``."""
    return (
        isinstance(cards, list)
        and len(cards) == refill["count"]
        and all(isinstance(c, str) and c in refill["from"] for c in cards)
        and len(set(cards)) == len(cards)
    )


def _group(cards: Mapping[str, Any], target: Mapping[str, Any], group: Any, used: set[str]) -> bool:
    """Rules 2-5 for one attack on ``target`` with ``group`` (initiator first), given the cards ``used``."""
    if not isinstance(group, list) or not group or not all(isinstance(c, str) and c in cards for c in group):
        return False
    if len(set(group)) < len(group) or used.intersection(group):
        return False
    jokers = [c for c in group if cards[c]["joker"]]
    if jokers:
        others = [c for c in group if c != jokers[0]]
        if len(jokers) > 1 or jokers[0] not in target["jokers"] or any(c not in target["reversed"] for c in others):
            return False
    elif any(c not in target["normal"] for c in group):
        return False
    return bool(cards[group[0]]["zone"] == "front" and sum(cards[c]["attack"] for c in group) > target["defence"])


def expand(space: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every action ``space`` admits (module docstring), lazily: there can be millions of declarations."""
    refill = space.get("refill")
    if refill is not None:
        for cards in combinations(refill["from"], refill["count"]):
            yield {"type": "refill", "cards": list(cards)}
        return
    attack = space.get("attack")
    if attack is None:
        yield from (dict(a) for a in space["actions"])
        return
    yield {"type": "pass"}
    per_target = [list(_groups(attack["cards"], t)) for t in attack["targets"]]
    for attacks in _declarations(attack["targets"], per_target, 0, frozenset()):
        if attacks:
            yield {"type": "attack", "attacks": attacks}


def _groups(cards: Mapping[str, Any], target: Mapping[str, Any]) -> Iterator[list[str]]:
    """Every legal attack on ``target``, as its cards: each initiator first, the rest in ``cards`` order."""
    order = list(cards)
    normal = [c for c in order if c in target["normal"]]
    reversed_ = [c for c in order if c in target["reversed"]]
    sets: list[Sequence[str]] = [s for r in range(1, len(normal) + 1) for s in combinations(normal, r)]
    for joker in target["jokers"]:
        sets += [(joker, *s) for r in range(len(reversed_) + 1) for s in combinations(reversed_, r)]
    for s in sets:
        if sum(cards[c]["attack"] for c in s) <= target["defence"]:
            continue
        ranked = sorted(s, key=order.index)
        for first in (c for c in ranked if cards[c]["zone"] == "front"):
            yield [first, *(c for c in ranked if c != first)]


def _declarations(
    targets: Sequence[Mapping[str, Any]], per_target: Sequence[list[list[str]]], i: int, used: frozenset[str]
) -> Iterator[list[dict[str, Any]]]:
    """Every choice of at most one attack per target from ``i`` on, using no card of ``used`` (the empty
    choice too)."""
    if i == len(targets):
        yield []
        return
    yield from _declarations(targets, per_target, i + 1, used)
    for group in per_target[i]:
        if used.isdisjoint(group):
            for rest in _declarations(targets, per_target, i + 1, used | set(group)):
                yield [{"target": targets[i]["target"], "cards": group}, *rest]
