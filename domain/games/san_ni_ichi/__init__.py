"""San, Ni, Ichi!: the rulebook as the service plays it, with its rulings; the player-facing
description (every action, view field and event) is docs/rules/san-ni-ichi.md.

Modules: ``cards`` (catalogue, letters, decks, fixed deals), ``state`` (immutable state,
``evolve``), ``secret`` (select and smoke choices), ``moves`` (the attack phase), ``flow``
(deal, reveals, and every step nobody decides), ``view``, ``rules`` (the ``Game``),
``bots`` (greedy).

The service's rulings (the rulebook's card list is missing): 12 weapons with strengths
11-22, two each of Block, Tonfa, Sai, Yoso Kogeki, Torinoko and Shuriken, each worth the
damage number players - 1; equal attack strengths resolve by letter a, b, c, given to
fire, water, wood rotated left by (strength - 1) mod 3; the deck table (attack strengths
1..N and W weapons by player count, 7 cards each) wins over the rulebook's "1 through 7"
example, which would not deal 7 each.

Decisions where the rules are silent:

* Card ids: ``fire-1`` .. ``wood-10``; weapons ``block-11``, ``block-12``, ``tonfa-13``,
  ``tonfa-14``, ``sai-15``, ``sai-16``, ``yoso-kogeki-17``, ``yoso-kogeki-18``,
  ``torinoko-19``, ``torinoko-20``, ``shuriken-21``, ``shuriken-22``.
* Generator draws, in this order: the weapons in play are the first W of
  ``rng.sample`` of the 12 (strength order); then the deck (fire 1..N, water 1..N,
  wood 1..N, then the weapons in play by strength) is ``rng.shuffled`` and seat ``s``
  gets cards ``7s .. 7s+6``. Every card is dealt; the weapons out of play are public.
* ``deck`` = ``alt-1``/``alt-2`` for 6 players and ``teams`` for 3 or 5 players are
  refused at setup (``InvalidOptions`` naming the option).
* A Block protects its seat (chosen at selection in team play) from the reveal on, so
  also against cards resolving before it: no attack card or Yoso Kogeki goes on it (not
  even its own), no countered pile is moved to it, no Sai swaps its pile.
* Only an attack card or a Yoso Kogeki ("played as an Attack card") may be discarded by
  choice (``{"type": "discard"}``): the rulebook's "You may choose to discard your card"
  is one of its "rules for playing Attack Cards on Combat piles"; a Sai, Shuriken or
  Tonfa does what its own text says whenever it can (``moves.DISCARDABLE``; reasons in
  docs/rules/san-ni-ichi.md, "Discarding by choice"). A card with no legal use is
  discarded automatically (event ``card_discarded``, reason ``no_legal_play``): an
  attack card no pile accepts, a Yoso Kogeki when every other seat is protected, a
  Sai with fewer than two swappable piles, a Tonfa with no combat pile ("nothing
  happens"). Such a card goes to the discard pile at once; a Block, Sai or Tonfa that
  was used lies on the table until the round ends. A Block resolves by itself
  (``block_resolved``). This is rules version 2; games created under version 1 (until
  2026-11-26) go on, replay and verify under it: every card that asks its owner may be
  discarded there, weapons included (``State.rules_version``, ``moves.DISCARDABLE``).
* A counter needs the card to land on an existing own pile: starting an own pile and
  moving it would equal playing the card on that seat directly, so it is not offered.
* Shuriken may hit any seat, the thrower's own damage pile included (literal "any
  player"). Tonfa may take from any pile (own, protected). Sai lists its two seats in
  ascending order (one action per swap).
* A Yoso Kogeki starting a pile, or on an element-less Yoso Kogeki, has no element.
* A seat plays at most one smoke bomb per damage phase, always its lowest-strength
  Torinoko. The covered seat (the smoker, or in team play the teammate named in
  ``protect``) skips damage and draws: the rulebook lets teammates play the smoke bomb
  "for each other", so its whole effect goes to the seat it is played for; the smoker
  who covers its teammate is not covered itself. Two bombs covering one seat draw one
  card each. Smoking without a combat pile is allowed (the bomb is simply spent).
* "Last card": a Torinoko is offered only when the hand holds another card. Right
  after each damage phase every hand of Torinoko cards only is discarded (event
  ``cards_discarded``, reason ``only_torinoko``), so such a seat sits the next round
  out, and the game ends when nothing but smoke bombs was left.
* Seats with no card sit rounds out but keep their combat pile, which can still be
  played on, swapped, and taken as damage.
* Team play: ``protect`` is required on a team Block and on a used team smoke bomb
  (own seat or teammate) and refused everywhere else. Result ``scores`` are the team
  totals (each seat carries its team's), so teammates share a rank; extras
  ``totals`` (per seat), ``teams`` and ``scoring``.
* Hidden information: the smoke decision is asked of every seat with two cards or more
  while a Torinoko in play is not yet discarded (``State.asked_to_smoke``), from public
  facts only; a seat without a usable bomb can only answer ``use: false``. Asking only
  the holders, as the rulebook's wording has it, would show the table in ``to_act``
  (and ``smoke_requested``) who holds one.

Events: ``cards_dealt``, ``round_started``, ``selections_revealed``, ``card_played``,
``card_discarded``, ``block_resolved``, ``piles_swapped``, ``shuriken_thrown``,
``tonfa_used``, ``smoke_requested``, ``smoke_bombs_revealed``, ``damage_taken``,
``card_drawn``, ``round_ended``, ``cards_discarded``, ``game_finished``.
"""

from domain.games.san_ni_ichi.rules import RULES, SanNiIchi

__all__ = ["RULES", "SanNiIchi"]
