"""Front Line: the rulebook's game as the service plays it (full description: docs/rules/front-line.md).

2-4 players attack each other's front lines (3 face-up cards, 3 face-up
reinforcements behind, a face-down draw pile) with teams of cards whose suits
beat the target's (rock > scissors, lizard; paper > rock, water; scissors >
paper, lizard; lizard > paper, water; water > rock, scissors) and whose ranks add
up to more than the target's (Ace 14 attacking, 1 defending; J 11, Q 12, K 13).
A turn declares any number of attacks at once, or passes; each card joins at
most one attack; a joker (0) in an attack reverses the suit rule. The players
who lost cards move reinforcements up, then draw. Captured cards score.

The service's rulings (where the rulebook is silent or unclear): jokers are an
option, one per suit, at most one per attack; the losers refill in turn order
from the attacker's left; the game ends when at most one player still has cards
on the table, or when every player still in has passed in one full cycle.

Modules: ``cards`` (suits, values, ids, decks, fixed deals), ``state`` (immutable
state, ``evolve``), ``attacks`` (the declaration validator), ``space`` (every legal
group per target, as bitmasks), ``actions`` (action space, sampler, listed actions),
``bots`` (random, greedy), ``rules`` (the ``Game``).

Decisions where the rules are silent:

* Card ids: ``rock-a``, ``rock-2`` .. ``rock-10``, ``rock-j``, ``rock-q``, ``rock-k``
  (suits rock, paper, scissors, lizard, water); jokers ``joker-rock`` ..
  ``joker-water``. Per-player decks prefix the owner's seat: ``s1:paper-7``.
  Catalogue order: suits in that order, ranks A..K, then the jokers.
* Shared deck: one shuffle of the 65 (70 with jokers) cards; seat ``s`` gets
  ``deck[s*k:(s+1)*k]`` with ``k = len // seats``, the rest is set aside
  (hidden). Per-player: each seat's deck is shuffled in seat order, nothing is
  set aside. Each pile: 3 front, 3 reinforcements, the rest the draw pile, top first.
* Fixed deal ``{"piles": [[ids] per seat]}``: non-empty piles of the game's own
  deck (per-player: the seat's own ids; jokers only with option jokers), no id
  twice; piles may differ in length (puzzles). Cards of the deck(s) not dealt are
  set aside, in catalogue order.
* A joker in the front line may initiate; it is worth 0, so an attack always needs
  a non-joker card. At most one joker per attack, but two jokers may serve two
  attacks of one turn. A joker's own suit never matters when it attacks.
* A joker target is attacked with the reversed suit rule (its suit must beat the
  attackers'); a joker in that attack does not reverse it back. It defends at 0.
* "A Joker can only be used in 1 attack per round" (rulebook) is read as for
  every card ("A card can only be used in one attack per round"; the rulebook's
  round is the attacker's turn): a joker joins at most one attack per turn; with
  two jokers a player may make two joker attacks in one turn. The reasons are in
  docs/rules/front-line.md, "Rulings and decisions".
* Targets of one declaration are distinct; attacks and supporting cards may be
  listed in any order; only the first card of each attack (the initiator) is
  special. ``{"type": "attack", "attacks": []}`` is refused (pass instead).
* Refill: a seat that lost cards moves up exactly ``min(gaps, reinforcements)``
  cards, never fewer; when that is all of its reinforcements (or none) it happens
  automatically (``advance``); otherwise the seat chooses with ``refill``. Its draw pile then
  tops its reinforcements up to 3 at once. Losers act in turn order from the
  attacker's left; the turn passes on after the last of them.
* Moved-up cards join the end of the front line list (front lines are lists, not slots).
* A seat is out when its front line is empty after its refill (its reinforcements
  and draw pile are empty then too). Out seats are skipped and cannot be attacked.
* The game ends when at most one seat is in, or when as many passes in a row as
  seats still in have been made. Passing is always allowed, even when an attack is
  possible. Result extras: ``reason`` (``elimination`` or ``passes``), ``turns``.
* ``legal_actions`` lists pass, every refill choice, and per target its smallest
  legal attack with and without a joker, plus one declaration capturing the most
  targets: a short sample of the legal actions. ``action_space`` describes all of
  them exactly (``actions`` module docstring); ``sample_action`` draws any of them.

Events: ``cards_dealt`` (front lines, reinforcements and sizes public; draw piles
and set-aside cards hidden), ``attacked`` (every attack of one declaration),
``passed``, ``front_refilled`` (moved-up and drawn cards, public).
"""

from domain.games.front_line.rules import RULES, FrontLine

__all__ = ["RULES", "FrontLine"]
