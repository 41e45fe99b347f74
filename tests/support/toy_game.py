"""A tiny game for testing the generic machinery (registered only by tests).

Two players, three rounds. Each round both secretly pick a number 1-3
(simultaneous, revealed together); the higher pick scores its value; then the
round's loser (seat 1 on a tie) must ``ack`` (a sequential action). Seat 0's
hand of "cards" is dealt privately at setup from the generator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from domain.contract import Bot, Option, Pending, Rules, require_fields, result_from_scores
from domain.errors import IllegalAction, InvalidOptions
from domain.events import HIDDEN, Event
from domain.registry import register
from domain.rng import SeededRandom

ROUNDS = 3


@dataclass(frozen=True)
class ToyState:
    scores: tuple[int, int] = (0, 0)
    round: int = 1
    waiting_ack: int | None = None
    dealt: tuple[int, ...] = ()


class Toy(Rules):
    id = "toy"
    name = "Toy"
    rules_version = "1"
    min_players = 2
    max_players = 2
    options: ClassVar[Mapping[str, Option]] = {"rounds": Option(ROUNDS, "rounds to play", choices=(1, 2, 3))}
    bots: ClassVar[Mapping[str, Bot]] = {}

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str = "1") -> ToyState:
        return ToyState()

    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]:
        if deal is not None and not isinstance(deal.get("cards"), list):
            raise InvalidOptions('a toy deal is {"cards": [n, ...]}')
        cards = list(deal["cards"]) if deal else rng.sample(range(100), 3)
        return [Event("toy_dealt", {"count": 3}, {"0": {"cards": cards}, HIDDEN: {"spare": rng.below(10)}})]

    def evolve(self, state: ToyState, ev: Event) -> ToyState:
        if ev.type == "toy_dealt":
            return replace(state, dealt=tuple(ev.private["0"]["cards"]))
        if ev.type == "round_scored":
            scores = list(state.scores)
            if ev.data["winner"] is not None:
                scores[ev.data["winner"]] += ev.data["points"]
            return replace(state, scores=tuple(scores), waiting_ack=ev.data["loser"])
        if ev.type == "acked":
            return replace(state, waiting_ack=None, round=state.round + 1)
        return state

    def pending(self, state: ToyState) -> Pending:
        if state.waiting_ack is not None:
            return Pending((state.waiting_ack,))
        return Pending((0, 1), simultaneous=True)

    def legal_actions(self, state: ToyState, seat: int) -> list[dict[str, Any]]:
        if state.waiting_ack is not None:
            return [{"type": "ack"}]
        return [{"type": "pick", "n": n} for n in (1, 2, 3)]

    def decide(self, state: ToyState, seat: int, action: Mapping[str, Any]) -> list[Event]:
        if action["type"] != "ack":
            raise IllegalAction("now the round's loser acknowledges: use 'ack'")
        require_fields(action, [])
        return [Event("acked", {"seat": seat})]

    def validate_choice(self, state: ToyState, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]:
        if action["type"] != "pick":
            raise IllegalAction("pick a number: {'type':'pick','n':1..3}")
        require_fields(action, ["n"])
        if action["n"] not in (1, 2, 3):
            raise IllegalAction("n must be 1, 2 or 3")
        return [dict(action)]

    def resolve(self, state: ToyState, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]:
        a, b = choices[0]["n"], choices[1]["n"]
        winner = 0 if a > b else 1 if b > a else None
        loser = 1 if winner != 1 else 0
        return [Event("round_scored", {"winner": winner, "loser": loser, "points": max(a, b)})]

    def view(self, state: ToyState, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
        cards = list(state.dealt) if viewer == 0 or reveal_all else None
        return {"scores": list(state.scores), "round": state.round, "cards": cards}

    def phase(self, state: ToyState) -> str:
        return "ack" if state.waiting_ack is not None else "pick"

    def outcome(self, state: ToyState) -> dict[str, Any] | None:
        if state.round > ROUNDS:
            return result_from_scores(state.scores)
        return None


TOY = register(Toy())
