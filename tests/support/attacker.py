"""An attacker who tries to learn hidden cards from what a spectator or a seat can read.

For every private part that a viewer may not see, the attacker builds a set of
candidates for its content and checks each candidate against every hash the
viewer has read, through every construction the project uses or used: the
format-1 chain (private parts hashed in the clear), a plain hash of the part,
the format-2 part commitment and the secret-choice commitment, each with every
salt the viewer has seen (its own salts, revealed ones) and with none. A leak is
a candidate set that the public hashes split: some candidates match and others
do not, so the viewer has learnt which.

The attacker is stronger than a real one: its candidates always include the
true content (an oracle), it knows every other part of the same event, and for
events with several hidden parts it also tries every way of handing the true
parts to the hidden audiences (who holds which hand, which special was set
aside). What it cannot know are the random salts inside a part (a secret
choice's salts): those it replaces by salts it has seen, as a real attacker
would have to.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.canonical import canonical_json, sha256_hex
from domain.engine import CHOICE_COMMITTED, CHOICES_REVEALED, commitment
from domain.record import chain_hash, part_commitment
from tests.support.values import strings

HASH = re.compile(r"^[0-9a-f]{64}$")
SALTISH = re.compile(r"^[0-9a-f]{32,}$")
MAX_CANDIDATES = 80
MAX_ASSIGNMENTS = 720
SALT_SLOT = "\u0000salt\u0000"  # stands for the salt while a payload is encoded once for every salt


def salted(payload: Mapping[str, Any], salts: Sequence[str], reference: Any) -> list[str]:
    """SHA-256 of ``payload`` with each of ``salts`` added as its ``salt``, as ``reference(salt)`` computes it.

    The payload is encoded once (the salt's place kept by ``SALT_SLOT``) and each salt's encoding put in
    that place: the canonical JSON of a whole payload is its parts' encodings in key order, so the bytes
    are the same, and the first salt's hash is checked against ``reference`` to prove it (an attacker
    hashing other bytes than the server would see nothing, and this suite would pass blind).
    """
    encoded = canonical_json({**payload, "salt": SALT_SLOT})
    slot = canonical_json(SALT_SLOT)
    if encoded.count(slot) != 1:
        return [reference(s) for s in salts]
    before, after = encoded.split(slot)
    head = hashlib.sha256(before)
    hashes = []
    for s in salts:
        whole = head.copy()
        whole.update(_encoded_salt(s) + after)
        hashes.append(whole.hexdigest())
    if salts:
        assert hashes[0] == reference(salts[0]), "the attacker must hash what the server hashes"
    return hashes


@functools.lru_cache(maxsize=1 << 14)
def _encoded_salt(salt: str) -> bytes:
    return canonical_json(salt)


@dataclass
class Reading:
    """Everything one viewer (a seat, or None for a spectator) received while the game ran."""

    viewer: int | None
    documents: list[Any] = field(default_factory=list)
    events: dict[int, Mapping[str, Any]] = field(default_factory=dict)  # seq -> the event as shown

    def add(self, document: Any) -> None:
        self.documents.append(document)

    def hashes(self) -> set[str]:
        return {s for s in strings(self.documents) if HASH.match(s)}

    def salts(self) -> list[str]:
        return sorted({s for s in strings(self.documents) if SALTISH.match(s)})


@dataclass(frozen=True)
class Leak:
    viewer: int | None
    seq: int
    audiences: tuple[str, ...]
    how: str


def universe(envelopes: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Every scalar found under each key name in the game's events: the attacker's alphabet."""
    found: dict[str, set[Any]] = {}

    def walk(value: Any, key: str) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v, key)
        elif (
            isinstance(value, str | int)
            and not isinstance(value, bool | None)
            and not (isinstance(value, str) and SALTISH.match(value))
        ):
            found.setdefault(key, set()).add(value)

    for env in envelopes:
        walk(env["data"], "")
        walk(env.get("private", {}), "")
    return {k: sorted(v, key=repr) for k, v in found.items()}


def _blind(value: Any, known: set[str], stand_in: str) -> Any:
    """``value`` with every salt the attacker has not seen replaced by a guess."""
    if isinstance(value, str) and SALTISH.match(value) and value not in known:
        return stand_in
    if isinstance(value, Mapping):
        return {k: _blind(v, known, stand_in) for k, v in value.items()}
    if isinstance(value, list):
        return [_blind(v, known, stand_in) for v in value]
    return value


def variants(
    part: Mapping[str, Any], alphabet: Mapping[str, Sequence[Any]], rnd: random.Random, depth: int = 0
) -> list[dict[str, Any]]:
    """Other plausible contents for ``part``: reordered lists, swapped cards, other values."""
    out: list[dict[str, Any]] = []
    for key, value in part.items():
        for other in _value_variants(key, value, alphabet, rnd, depth):
            out.append({**part, key: other})
    rnd.shuffle(out)
    unique = {canonical_json(v): v for v in out if v != part}
    return list(unique.values())[:MAX_CANDIDATES]


def _value_variants(
    key: str, value: Any, alphabet: Mapping[str, Sequence[Any]], rnd: random.Random, depth: int
) -> list[Any]:
    if isinstance(value, bool) or value is None:
        return [not value] if isinstance(value, bool) else []
    if isinstance(value, str):
        return [] if SALTISH.match(value) else [v for v in alphabet.get(key, ()) if v != value][:20]
    if isinstance(value, int):
        return [value + d for d in (-2, -1, 1, 2)]
    if isinstance(value, Mapping) and depth < 2:
        return variants(value, alphabet, rnd, depth + 1)
    if isinstance(value, list) and value:
        return _list_variants(key, value, alphabet, rnd)
    return []


def _list_variants(key: str, value: list[Any], alphabet: Mapping[str, Sequence[Any]], rnd: random.Random) -> list[Any]:
    if any(isinstance(v, str) and SALTISH.match(v) for v in value):
        return []
    if len(value) <= 5:
        orders = [list(p) for p in itertools.permutations(value)]
    else:
        orders = [rnd.sample(value, len(value)) for _ in range(20)]
    spare = [v for v in alphabet.get(key, ()) if v not in value]
    swaps = []
    for _ in range(20 if spare else 0):
        changed = list(value)
        changed[rnd.randrange(len(changed))] = rnd.choice(spare)
        swaps.append(changed)
    return orders + swaps


class Attacker:
    """Tries every candidate of every hidden part of ``truth`` against what ``reading`` holds."""

    def __init__(self, game_id: str, truth: Sequence[Mapping[str, Any]], reading: Reading, seed: int = 0) -> None:
        self.game_id = game_id
        self.truth = truth
        self.reading = reading
        self.hashes = reading.hashes()
        self.salts = reading.salts()
        self.known = set(self.salts)
        self.alphabet = universe(truth)
        self.rnd = random.Random(seed)
        self.revealed = self._revealed_choices()

    def _revealed_choices(self) -> set[tuple[Any, int, int]]:
        """(step, seat, part) of every secret choice the viewer has seen revealed: public, not a leak."""
        out = set()
        for env in self.reading.events.values():
            if env["type"] == CHOICES_REVEALED:
                data = env["data"]
                shown = {**data.get("choices", {}), **data.get("private", {})}
                out |= {(data["step"], int(seat), data["part"]) for seat in shown}
        return out

    def leaks(self) -> list[Leak]:
        found: list[Leak] = []
        for env in self.truth:
            shown = self.reading.events.get(env["seq"])
            if shown is None:
                continue
            hidden = [a for a in env.get("private", {}) if a not in shown["data"].get("private", {})]
            for audience in hidden:
                how = self._splits(env, shown, {audience: self._candidates(env, audience)})
                if how:
                    found.append(Leak(self.reading.viewer, env["seq"], (audience,), how))
            if len(hidden) > 1:
                how = self._splits(env, shown, self._assignments(env, hidden))
                if how:
                    found.append(Leak(self.reading.viewer, env["seq"], tuple(hidden), how))
        return found

    def _candidates(self, env: Mapping[str, Any], audience: str) -> list[dict[str, Any]]:
        true = _blind(env["private"][audience], self.known, "0" * 32)
        return [true, *variants(true, self.alphabet, self.rnd)]

    def _assignments(self, env: Mapping[str, Any], hidden: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Joint candidates: the true hidden parts handed out to the hidden audiences in every order."""
        parts = [_blind(env["private"][a], self.known, "0" * 32) for a in hidden]
        orders = list(itertools.islice(itertools.permutations(range(len(hidden))), MAX_ASSIGNMENTS))
        return {"@joint": [{a: parts[i] for a, i in zip(hidden, order)} for order in orders]}

    def _splits(
        self, env: Mapping[str, Any], shown: Mapping[str, Any], candidates: Mapping[str, list[Any]]
    ) -> str | None:
        """The construction whose hashes tell some candidates from others, if any."""
        ((audience, options),) = candidates.items()
        for name, construction in self._constructions(env, shown, audience):
            hits = [bool(construction(c) & self.hashes) for c in options]
            if any(hits) and not all(hits):
                return name
        return None

    def _constructions(self, env: Mapping[str, Any], shown: Mapping[str, Any], audience: str) -> Iterator[Any]:
        public = {k: v for k, v in shown["data"].items() if k != "private"}
        others = {a: _blind(p, self.known, "0" * 32) for a, p in env["private"].items()}
        salts = [*self.salts, ""]

        def parts_of(candidate: Any) -> dict[str, Any]:
            return dict(candidate) if audience == "@joint" else {audience: candidate}

        def format_1_chain(candidate: Any) -> set[str]:
            private = {**others, **parts_of(candidate)}
            body = {"seq": shown["seq"], "type": shown["type"], "data": public, "private": private, "at": shown["at"]}
            return {chain_hash(shown["prev"], body)}

        def plain(candidate: Any) -> set[str]:
            return {sha256_hex(canonical_json(p)) for p in parts_of(candidate).values()}

        def part_commitments(candidate: Any) -> set[str]:
            return {
                h
                for a, p in parts_of(candidate).items()
                for h in salted({"audience": a, "part": p}, salts, lambda s, a=a, p=p: part_commitment(a, p, s))
            }

        def choice_commitments(candidate: Any) -> set[str]:
            if env["type"] != CHOICE_COMMITTED:
                return set()
            seat, step = public.get("seat"), public.get("step")
            return {
                h
                for part in parts_of(candidate).values()
                for i, p in enumerate(part.get("parts", ()))
                if (step, seat, i) not in self.revealed
                for h in salted(
                    {"game": self.game_id, "seat": seat, "step": step, "part": i, "action": p},
                    salts,
                    lambda s, i=i, p=p: commitment(self.game_id, seat, step, i, p, s),
                )
            }

        yield "format-1 chain hash", format_1_chain
        yield "plain hash of the part", plain
        yield "part commitment with a known salt", part_commitments
        yield "choice commitment with a known salt", choice_commitments
