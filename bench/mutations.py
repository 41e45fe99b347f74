"""The mutation suite: both record verifiers reject every single forged change to a signed, logged record,
and agree on where it goes wrong.

    python -m bench.mutations --count 10000 [--seed N]

What it proves, for the mutations it draws (``tests/integration/test_mutations.py`` runs a sample):

* **Genuine records.** Every game in every configuration (each San Ban mode, Nin Nal with 2-5 seats,
  Kiri-ai on both battlefields, San, Ni, Ichi! with 3-6 seats, teams and both rules versions, Front Line
  with 2-4 seats; some from a fixed deal, some with bot seats, one ended by a resignation) is played
  from a fixed seed, sealed as the server seals it, signed with a fixed Ed25519 key and appended, in
  order, to one RFC 9162 transparency log; each record carries its ``signature`` and its ``inclusion``
  proof, and both verifiers call each ``verified`` given the key set.
* **Single mutations.** A seeded ``random.Random`` draws one change per mutation, applied to a deep copy
  of one genuine record with no hash recomputed: any scalar anywhere (each changed in value and in
  type), an event dropped, duplicated or swapped with the next, the log cut short (raw, or honestly:
  a genuine prefix with the header of a running game), the seed, a revealed choice, the result, a
  field removed, an unknown field added. Scalars, fields and objects are drawn *by place* (the header
  field, the envelope member, the event type's data or private part, each member of the signature and
  the proof), so that every kind of place is hit across the suite, not only the thousands of cards.
* **Both verifiers.** Every mutated record goes through Python's ``domain.audit.verify_record`` (in
  process) and the JavaScript ``verifier/kifu-verify.mjs`` (one long-lived ``--batch`` node process),
  both with the key set. Each must say ``failed`` (an honest truncation: ``in_progress``), and both must
  name the same ``first_bad_event``; the spec's own position for it (docs/record-format.md) is counted
  too. A mutation both accept is allowed only when it is semantically null: its class is in
  ``NULL_CLASSES``, with the reason it changes nothing the record vouches for.

Prints per game and in total: tried, rejected by each verifier, agreeing ``first_bad_event``, named
where the spec says, accepted (null, by class), holes (accepted or misjudged, not null) and
disagreements, each hole, disagreement and misnamed event with its mutation and path; then, grouped,
where the two agree on the verdict and the event but not on ``bad_field`` or the failed checks (not
failures: reported so the two can converge); and each verifier's wall time. ``--seed`` changes the
draws, not the genuine records.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench.forgeries import get_path, set_path
from domain import engine
from domain.audit import FAILED, IN_PROGRESS, VERIFIED, verify_record
from domain.bots import choose_action
from domain.canonical import canonical_json
from domain.engine import Seat
from domain.events import Event
from domain.merkle import inclusion_path, leaf_hash, root_of
from domain.record import GENESIS, build_record, envelope, rfc3339, withheld_envelope
from domain.signatures import Signer, log_head_statement, sealed_game_statement

Record = dict[str, Any]
JsonPath = tuple[str | int, ...]
MAX_ACTIONS = 3000
ROOT = Path(__file__).resolve().parent.parent
JS_VERIFIER = ROOT / "verifier" / "kifu-verify.mjs"
MIN_NODE = 20
NODE_MISSING = "the JavaScript verifier needs node: install Node 20 (e.g. apt-get install nodejs)"
KEY_SEED = hashlib.sha256(b"kifu mutation suite: the signing key").digest()
KEY_VALID_FROM = "2026-01-01T00:00:00.000Z"
FIRST_GAME_AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


# ---------------------------------------------------------------- the configurations


@dataclass(frozen=True)
class Config:
    """One way to set up a game: its seats (a bot level or None per seat), options and deal."""

    game: str
    label: str
    bots: tuple[str | None, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    fixed_deal: bool = False
    rules_version: str | None = None
    resign_after: int | None = None  # seat 0 resigns after this many actions
    names: tuple[str, ...] = ()  # seat names (default p0, p1, ...)


H, R, G = None, "random", "greedy"
CONFIGS: tuple[Config, ...] = (
    Config("san-ban", "standard", (H, G), {"mode": "standard"}),
    Config("san-ban", "gamer", (H, H), {"mode": "gamer"}),
    Config("san-ban", "advanced", (R, H), {"mode": "advanced"}),
    Config("san-ban", "hardcore", (H, G), {"mode": "hardcore", "tier": 4}),
    Config("san-ban", "standard, first 1, fixed deal", (H, H), {"mode": "standard", "first": 1}, fixed_deal=True),
    Config("san-ban", "advanced, fixed deal", (H, R), {"mode": "advanced"}, fixed_deal=True),
    Config("kiri-ai", "standard", (H, G), {"battlefield": "standard"}),
    Config("kiri-ai", "advanced", (H, H), {"battlefield": "advanced", "max_rounds": 30}),
    Config("kiri-ai", "standard, fixed deal", (R, H), fixed_deal=True),
    Config("nin-nal", "2 seats", (H, G), names=("Łukasz", "美咲")),
    Config("nin-nal", "3 seats, fixed deal", (H, H, R), fixed_deal=True),
    Config("nin-nal", "4 seats", (H, R, H, G)),
    Config("nin-nal", "5 seats", (H, H, H, H, H)),
    Config("san-ni-ichi", "3 seats", (H, G, H)),
    Config("san-ni-ichi", "3 seats, fixed deal", (H, H, H), fixed_deal=True),
    Config("san-ni-ichi", "4 seats, teams", (H, H, G, H), {"teams": True}),
    Config("san-ni-ichi", "4 seats, alt-1, rules 1", (H, R, H, H), {"deck": "alt-1"}, rules_version="1"),
    Config("san-ni-ichi", "5 seats, cards scoring", (H, H, H, R, H), {"scoring": "cards"}),
    Config("san-ni-ichi", "6 seats, teams", (H, H, H, H, G, H), {"teams": True}),
    Config("san-ni-ichi", "6 seats, teams, resigned", (H, H, H, H, H, H), {"teams": True}, resign_after=4),
    Config("front-line", "2 seats", (H, G), names=("Zoë 🎴", "p1")),
    Config("front-line", "2 seats, fixed deal", (H, H), fixed_deal=True),
    Config("front-line", "3 seats, jokers", (H, R, H), {"jokers": True}),
    Config("front-line", "4 seats, per-player decks", (H, H, G, H), {"deck": "per-player"}),
)
GAMES = tuple(dict.fromkeys(c.game for c in CONFIGS))


def fixed_deal_of(game: str, setup: Sequence[Event]) -> dict[str, Any]:
    """The deal a seed gave (the game's setup events), written as that game's fixed deal."""
    dealt = setup[0]
    seats = sorted((k for k in dealt.private if k.isdigit()), key=int)
    if game == "san-ban":
        return {"decks": [dealt.private[s]["deck"] for s in seats]}
    if game == "kiri-ai":
        return {"specials": [dealt.private[s]["special"] for s in seats]}
    if game == "nin-nal":
        return {"piles": dealt.data["piles"], "hands": [dealt.private[s]["hand"] for s in seats]}
    if game == "san-ni-ichi":
        return {"weapons": dealt.data["weapons_in_play"], "hands": [dealt.private[s]["hand"] for s in seats]}
    if game == "front-line":
        fronts, reserves, draws = dealt.data["front"], dealt.data["reinforcements"], dealt.private["hidden"]["draw"]
        return {"piles": [f + r + d for f, r, d in zip(fronts, reserves, draws)]}
    raise ValueError(f"no fixed deal for {game}")


# ---------------------------------------------------------------- playing and sealing


def seeded_salts(rnd: random.Random) -> Callable[[], str]:
    """Salts as the server draws them (128 bits, 32 lowercase hex digits), from ``rnd``."""
    return lambda: f"{rnd.getrandbits(128):032x}"


def seats_of(config: Config) -> list[Seat]:
    """The seats of ``config``, named p0, p1, ... unless it names them."""
    names = config.names or tuple(f"p{i}" for i in range(len(config.bots)))
    return [Seat(i, names[i], bot) for i, bot in enumerate(config.bots)]


def play(config: Config, game_id: str, seed: int) -> tuple[list[Event], bytes]:
    """A finished game of ``config``: its events and seed. Bot seats play their bot, the others at random."""
    rnd, salts = random.Random(seed), seeded_salts(random.Random(~seed))
    seed_bytes = hashlib.sha256(f"{game_id}:{seed}".encode()).digest()[:16]
    deal = None
    if config.fixed_deal:
        dealt, _ = engine.start(config.game, game_id, seats_of(config), seed_bytes[::-1], config.options)
        deal = fixed_deal_of(config.game, dealt[1:])
    events, table = engine.start(
        config.game, game_id, seats_of(config), seed_bytes, config.options, deal, rules_version=config.rules_version
    )
    for n_actions in range(MAX_ACTIONS):
        if table.finished:
            return events, seed_bytes
        if n_actions == config.resign_after:
            new, table = engine.step(table, 0, {"type": engine.RESIGN})
        else:
            seat = rnd.choice(table.to_act)
            bot = config.bots[seat]
            action = choose_action(table, seat, bot, rnd) if bot else engine.sample_action(table, seat, rnd)
            new, table = engine.step(table, seat, action, salts=salts)
        events += new
    raise RuntimeError(f"{config.game} ({config.label}): no end after {MAX_ACTIONS} actions")


def seal(events: list[Event], seed: bytes, start: datetime, salts: Callable[[], str]) -> list[dict[str, Any]]:
    """The stored log: each event chained a second after the one before, then ``game_sealed``."""
    envs: list[dict[str, Any]] = []
    for ev in events:
        envs.append(_next_envelope(ev, envs, start, salts))
    envs.append(_next_envelope(engine.seal(seed, envs[-1]["hash"]), envs, start, salts))
    return envs


def _next_envelope(ev: Event, envs: list[dict[str, Any]], start: datetime, salts: Callable[[], str]) -> dict[str, Any]:
    prev = envs[-1]["hash"] if envs else GENESIS
    return envelope(ev, len(envs) + 1, prev, rfc3339(start + timedelta(seconds=len(envs))), salts)


def statement_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the record's signature vouches for: game id, number of events, head, the seal's time."""
    events = record["events"]
    return sealed_game_statement(record["game_id"], len(events), events[-1]["hash"], events[-1]["at"])


# ---------------------------------------------------------------- the signed, logged suite


@dataclass(frozen=True)
class Genuine:
    """One genuine record of the suite and its configuration."""

    config: Config
    record: Record


@dataclass(frozen=True)
class Suite:
    """Every genuine record, signed and logged, and the key set that verifies them."""

    records: tuple[Genuine, ...]
    keys: dict[str, Any]


def signer() -> Signer:
    """The suite's fixed signing key (so the records are the same on every run)."""
    return Signer(Ed25519PrivateKey.from_private_bytes(KEY_SEED))


def key_set(key: Signer) -> dict[str, Any]:
    """The JWK set a server publishes for ``key``: active since before every seal of the suite."""
    return {"keys": [key.jwk | {"status": "active", "valid_from": KEY_VALID_FROM, "valid_until": None}]}


def genuine_suite(seed: int = 0) -> Suite:
    """Every configuration played (game ``i`` from ``seed`` and ``i``), sealed, signed and logged in order."""
    key, records = signer(), []
    for i, config in enumerate(CONFIGS):
        game_id = f"g{seed}-{i:02d}"
        events, seed_bytes = play(config, game_id, seed * 1000 + i)
        start = FIRST_GAME_AT + timedelta(hours=i)
        envs = seal(events, seed_bytes, start, seeded_salts(random.Random(f"{seed}:{i}")))
        record: Record = orjson.loads(orjson.dumps(build_record(envs)))
        record["signature"] = key.sign(statement_of(record))
        records.append(Genuine(config, record))
    log([g.record for g in records], key)
    return Suite(tuple(records), key_set(key))


def log(records: Sequence[Record], key: Signer) -> None:
    """Append every record's signed statement, in order, to one RFC 9162 tree; give each its proof."""
    leaves = [leaf_hash(canonical_json(r["signature"]["statement"])) for r in records]
    size, root = len(leaves), root_of(leaves).hex()
    head = {"size": size, "root": root, "signature": key.sign(log_head_statement(size, root))}

    def subtree(start: int, end: int) -> bytes:
        return root_of(leaves[start:end])

    for index, record in enumerate(records):
        path = [p.hex() for p in inclusion_path(subtree, index, size)]
        record["inclusion"] = {"index": index, "size": size, "path": path, "head": json.loads(json.dumps(head))}


# ---------------------------------------------------------------- places in a record


FROM_CREATION = frozenset(
    {"format", "game_id", "game", "rules_version", "engine_version", "options", "seats", "seed_hash"}
)
FROM_THE_END = frozenset({"seed", "complete", "head", "note", "signature", "inclusion"})
OPTIONAL_FIELDS = frozenset(
    {"game_id", "game", "rules_version", "engine_version", "options", "seats", "seed_hash", "seed", "complete", "head"}
)


def place_of(record: Mapping[str, Any], path: JsonPath) -> str:
    """The kind of place ``path`` points at: a header field, an envelope member, an event type's data or
    private parts, a member of the signature or the proof (list indexes as ``[]``)."""
    if len(path) >= 4 and path[0] == "events" and path[2] in ("data", "private"):
        return f"events[{record['events'][path[1]]['type']}].{path[2]}"
    return path_text(path, generic=True) or "record"


def path_text(path: JsonPath, generic: bool = False) -> str:
    """``events[3].data.action.card`` (``generic``: ``events[].data.action.card``)."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += "[]" if generic else f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out


@dataclass(frozen=True)
class Places:
    """Every path of a record by kind of place: to a scalar, to an object's member, to an object."""

    scalars: dict[str, list[JsonPath]]
    members: dict[str, list[JsonPath]]
    objects: dict[str, list[JsonPath]]


def places(record: Mapping[str, Any]) -> Places:
    """Every scalar, member and object of ``record``, filed by kind of place."""
    found = Places(defaultdict(list), defaultdict(list), defaultdict(list))
    for path, value in walk(record):
        where = place_of(record, path)
        if isinstance(value, dict):
            found.objects[where].append(path)
        elif not isinstance(value, list):
            found.scalars[where].append(path)
        if path and isinstance(path[-1], str):
            found.members[where].append(path)
    return Places(dict(found.scalars), dict(found.members), dict(found.objects))


def walk(value: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    """Every value inside a JSON value (itself included) with its path."""
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from walk(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from walk(child, (*path, i))


def spec_position(path: JsonPath, n_events: int) -> int | None:
    """The event docs/record-format.md says a change at ``path`` is named at: the event itself, event 1
    for a field copied from it, the last event for the end of the log and its attestations, none for
    the record as a whole (an unknown field, no events)."""
    if len(path) >= 2 and path[0] == "events":
        return int(path[1]) + 1
    if path and path[0] in FROM_CREATION:
        return 1
    if path and path[0] in FROM_THE_END:
        return n_events
    return None


# ---------------------------------------------------------------- the mutations


NULL_CLASSES: dict[str, str] = {
    "optional header field": (
        "every field but format and events is optional, a copy of what the events commit to: without it the "
        "record claims less, and the events still prove all of it"
    ),
    "no inclusion proof": (
        "inclusion is optional (checked only when present): without it the record claims nothing about the log, "
        "and its signature still vouches for the same head"
    ),
}


@dataclass(frozen=True)
class Change:
    """What a mutation changed, and what both verifiers must say of the record it made."""

    game: str
    config: str
    kind: str  # int+1, str-char, drop-event, ...
    place: str  # the kind of place (place_of), or the part of the game changed
    path: str  # where, as a JSON path
    detail: str  # the change itself
    expect: str  # FAILED, or IN_PROGRESS for an honest truncation
    spec_event: int | None  # the first bad event the spec gives (None: none, or not predicted)
    null_class: str | None = None  # a key of NULL_CLASSES: both verifiers may accept it

    def describe(self) -> str:
        return f"{self.game} ({self.config}): {self.kind} at {self.path}: {self.detail}"


@dataclass(frozen=True)
class Mutation:
    """One mutated record and its change."""

    change: Change
    record: Record


Maker = Callable[["Draw"], Mutation | None]


@dataclass(frozen=True)
class Draw:
    """One genuine record to mutate, its places, and the generator drawing the change."""

    genuine: Genuine
    places: Places
    rnd: random.Random

    def copy(self) -> Record:
        """A deep copy of the genuine record (through JSON: it is nothing but JSON)."""
        out: Record = orjson.loads(orjson.dumps(self.genuine.record))
        return out

    @property
    def n_events(self) -> int:
        return len(self.genuine.record["events"])

    def mutation(
        self,
        kind: str,
        place: str,
        path: JsonPath,
        detail: str,
        record: Record,
        expect: str = FAILED,
        spec_event: int | None = None,
        null_class: str | None = None,
    ) -> Mutation:
        config = self.genuine.config
        where = path_text(path) or "record"
        change = Change(config.game, config.label, kind, place, where, detail, expect, spec_event, null_class)
        return Mutation(change, record)

    def path_at(self, table: Mapping[str, list[JsonPath]]) -> tuple[str, JsonPath]:
        """A kind of place drawn uniformly, then one of its paths."""
        place = self.rnd.choice(sorted(table))
        return place, self.rnd.choice(table[place])


# -- scalars


def altered_char(text: str, rnd: random.Random) -> str:
    """``text`` with one character changed (an empty string gains one), staying in its alphabet: a hex
    string stays hex, a letter stays a letter of its case, a digit a digit."""
    if not text:
        return "x"
    i = rnd.randrange(len(text))
    alphabet = next(
        (a for a in (HEX, DIGITS, LOWER, UPPER) if text[i] in a and (a != HEX or set(text) <= set(HEX))), "xy"
    )
    new = rnd.choice([c for c in alphabet if c != text[i]])
    return text[:i] + new + text[i + 1 :]


HEX, DIGITS = "0123456789abcdef", "0123456789"
LOWER, UPPER = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def scalar_edits(value: Any, rnd: random.Random) -> list[tuple[str, Any]]:
    """Every edit of a scalar, in value and in type: ``(kind, new value)``."""
    if isinstance(value, bool):
        return [("bool-flip", not value), ("bool->int", int(value))]
    if isinstance(value, int):
        return [
            ("int+1", value + 1),
            ("int->float", float(value)),
            ("int->bool", bool(value)),
            ("int->str", str(value)),
        ]
    if isinstance(value, float):
        return [("float+1", value + 1), ("float->int", int(value))]
    if isinstance(value, str):
        return [("str-char", altered_char(value, rnd)), ("str->null", None)]
    return [("null->0", 0), ("null->false", False)]


def scalar(draw: Draw) -> Mutation:
    """A scalar anywhere in the record, changed in value or in type (``scalar_edits``)."""
    place, path = draw.path_at(draw.places.scalars)
    old = get_path(draw.genuine.record, path)
    kind, new = draw.rnd.choice(scalar_edits(old, draw.rnd))
    record = draw.copy()
    set_path(record, path, new)
    return draw.mutation(kind, place, path, f"{_short(old)} -> {_short(new)}", record, spec_event=_spec(draw, path))


def remove_field(draw: Draw) -> Mutation:
    """A member of any object removed (a header field, an envelope's, a part's, the signature's...)."""
    place, path = draw.path_at(draw.places.members)
    record = draw.copy()
    del get_path(record, path[:-1])[path[-1]]
    null = None
    if len(path) == 1 and path[0] in OPTIONAL_FIELDS:
        null = "optional header field"
    elif path == ("inclusion",):
        null = "no inclusion proof"
    return draw.mutation("remove-field", place, path, "removed", record, spec_event=_spec(draw, path), null_class=null)


def unknown_field(draw: Draw) -> Mutation:
    """A member no format has, added to any object (the record itself included)."""
    place, path = draw.path_at(draw.places.objects)
    record = draw.copy()
    name = draw.rnd.choice(("forged", "x", "extra_field", "_"))
    value: Any = draw.rnd.choice((1, True, None, "forged", {}))
    get_path(record, path)[name] = value
    spec = _spec(draw, path) if path else None
    return draw.mutation("unknown-field", place, (*path, name), f"added = {_short(value)}", record, spec_event=spec)


def _spec(draw: Draw, path: JsonPath) -> int | None:
    return spec_position(path, draw.n_events)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


# -- the events as a sequence


def drop_event(draw: Draw) -> Mutation:
    """Event k removed; the events after it keep their numbers and hashes."""
    n = draw.n_events
    k = draw.rnd.randint(1, n)
    record = draw.copy()
    dropped = record["events"].pop(k - 1)
    # a dropped last event leaves a log that ends early while the header, seal and signature say otherwise
    spec = k if k < n else n - 1
    return draw.mutation(
        "drop-event", "events", ("events", k - 1), f"{dropped['type']} dropped", record, spec_event=spec
    )


def duplicate_event(draw: Draw) -> Mutation:
    """A copy of event k inserted right after it."""
    k = draw.rnd.randint(1, draw.n_events)
    record = draw.copy()
    events = record["events"]
    events.insert(k, orjson.loads(orjson.dumps(events[k - 1])))
    # the copy stands after the original: the record departs from the game at the copy
    detail = f"{events[k - 1]['type']} duplicated"
    return draw.mutation("duplicate-event", "events", ("events", k - 1), detail, record, spec_event=k + 1)


def swap_events(draw: Draw) -> Mutation:
    """Events k and k + 1 swapped."""
    k = draw.rnd.randint(1, draw.n_events - 1)
    record = draw.copy()
    events = record["events"]
    events[k - 1], events[k] = events[k], events[k - 1]
    detail = f"{events[k]['type']} and {events[k - 1]['type']} swapped"
    return draw.mutation("swap-events", "events", ("events", k - 1), detail, record, spec_event=k)


def truncate(draw: Draw) -> Mutation:
    """The log cut after event k, the rest of the record as it was (still claiming the seal)."""
    k = draw.rnd.randint(1, draw.n_events - 1)
    record = draw.copy()
    del record["events"][k:]
    return draw.mutation("truncate", "events", ("events", k), f"cut to {k} events", record, spec_event=k)


def truncate_honestly(draw: Draw) -> Mutation:
    """A genuine prefix, published as the server publishes a running game (parts withheld, or all shown
    as in its own audit): no seed, no seal, no signature; the verdict is ``in_progress``."""
    k = draw.rnd.randint(1, draw.n_events - 1)
    withheld = draw.rnd.random() < 0.5
    envs = draw.copy()["events"][:k]
    record = build_record([withheld_envelope(e) for e in envs] if withheld else envs)
    detail = f"cut to {k} events, {'parts withheld' if withheld else 'parts shown'}, header of a running game"
    return draw.mutation("truncate-honest", "events", ("events", k), detail, record, expect=IN_PROGRESS)


# -- what the game says


def event_positions(record: Mapping[str, Any], kind: str) -> list[int]:
    """The indexes (from 0) of the events of type ``kind``."""
    return [i for i, e in enumerate(record["events"]) if e["type"] == kind]


def change_seed(draw: Draw) -> Mutation:
    """Another seed, in the seal and in the header alike."""
    record = draw.copy()
    old = record["seed"]
    new = hashlib.sha256(f"{old}:{draw.rnd.random()}".encode()).hexdigest()[: len(old)]
    record["seed"] = record["events"][-1]["data"]["seed"] = new
    path: JsonPath = ("events", draw.n_events - 1, "data", "seed")
    return draw.mutation("seed", "seed", path, f"{old} -> {new} (seal and header)", record, spec_event=draw.n_events)


def change_revealed_choice(draw: Draw) -> Mutation | None:
    """A revealed choice (public, or a private reveal's part): two seats' actions swapped, or its salt."""
    choices = [
        (i, container)
        for i in event_positions(draw.genuine.record, engine.CHOICES_REVEALED)
        for container in (("data", "choices"), ("private",))
        if _lookup(draw.genuine.record["events"][i], container)
    ]
    if not choices:
        return None
    i, container = draw.rnd.choice(choices)
    record = draw.copy()
    revealed = get_path(record["events"][i], container)
    seats = sorted(revealed)
    a, b = draw.rnd.sample(seats, 2) if len(seats) > 1 else (seats[0], seats[0])
    path: JsonPath = ("events", i, *container, a)
    if a != b and revealed[a]["action"] != revealed[b]["action"] and draw.rnd.random() < 0.5:
        revealed[a]["action"], revealed[b]["action"] = revealed[b]["action"], revealed[a]["action"]
        detail = f"seats {a} and {b} swapped their actions"
    else:
        old = revealed[a]["salt"]
        revealed[a]["salt"] = altered_char(old, draw.rnd)
        path, detail = (*path, "salt"), f"salt {old} -> {revealed[a]['salt']}"
    place = "choices (public)" if container[0] == "data" else "choices (private reveal)"
    return draw.mutation("revealed-choice", place, path, detail, record, spec_event=i + 1)


def _lookup(value: Any, path: JsonPath) -> Any:
    """The value at ``path``, or None where there is none."""
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def change_result(draw: Draw) -> Mutation:
    """The result: two different entries of one of its lists swapped (scores, ranks...), else a winner."""
    i = event_positions(draw.genuine.record, engine.GAME_ENDED)[-1]
    record = draw.copy()
    result = record["events"][i]["data"]["result"]
    lists = [k for k, v in result.items() if isinstance(v, list) and len({json.dumps(x) for x in v}) > 1]
    if lists:
        key = draw.rnd.choice(sorted(lists))
        values = result[key]
        a = draw.rnd.randrange(len(values))
        b = draw.rnd.choice([j for j in range(len(values)) if values[j] != values[a]])
        values[a], values[b] = values[b], values[a]
        detail = f"{key}[{a}] and [{b}] swapped"
    else:
        key, old = "winners", result["winners"]
        result[key] = [s for s in range(len(record["seats"])) if s not in old][:1]
        detail = f"winners {old} -> {result[key]}"
    path: JsonPath = ("events", i, "data", "result", key)
    return draw.mutation("result", "result", path, detail, record, spec_event=i + 1)


MAKERS: dict[str, tuple[int, Maker]] = {  # kind of change: (weight, maker)
    "scalar": (50, scalar),
    "remove-field": (10, remove_field),
    "unknown-field": (8, unknown_field),
    "drop-event": (5, drop_event),
    "duplicate-event": (5, duplicate_event),
    "swap-events": (5, swap_events),
    "truncate": (4, truncate),
    "truncate-honest": (4, truncate_honestly),
    "seed": (3, change_seed),
    "revealed-choice": (3, change_revealed_choice),
    "result": (3, change_result),
}


def mutations(suite: Suite, count: int, seed: int = 0) -> Iterator[Mutation]:
    """``count`` single mutations, drawn by ``random.Random(seed)``: the records in turn, each change's
    kind by its weight (a kind a record has no place for falls back to a scalar)."""
    rnd = random.Random(seed)
    indexed = [(g, places(g.record)) for g in suite.records]
    kinds, weights = zip(*((k, w) for k, (w, _) in MAKERS.items()))
    for n in range(count):
        genuine, where = indexed[n % len(indexed)]
        draw = Draw(genuine, where, rnd)
        made = MAKERS[rnd.choices(kinds, weights)[0]][1](draw)
        yield made if made is not None else scalar(draw)


# ---------------------------------------------------------------- the two verifiers


@dataclass(frozen=True)
class Verdict:
    """What one verifier says of one record."""

    verdict: str
    first_bad_event: int | None
    bad_field: str | None
    failed: tuple[str, ...]

    def brief(self) -> str:
        where = f" at {self.first_bad_event}" if self.first_bad_event is not None else ""
        field_ = f" ({self.bad_field})" if self.bad_field else ""
        return f"{self.verdict}{where}{field_} [{', '.join(self.failed)}]"


def python_verdict(record: Record, keys: Mapping[str, Any]) -> Verdict:
    """``domain.audit.verify_record`` with the key set."""
    report = verify_record(record, keys=keys)
    failed = tuple(c["name"] for c in report["checks"] if not c["ok"] and c["name"] != "sealed")
    return Verdict(report["verdict"], report["first_bad_event"], report["bad_field"], failed)


class JsVerifierError(RuntimeError):
    """The JavaScript verifier cannot be run, or stopped answering."""


def js_verdicts(texts: Iterable[bytes], keys: Mapping[str, Any], script: Path = JS_VERIFIER) -> list[Verdict]:
    """The JavaScript verifier's verdicts on ``texts`` (each one record's JSON on one line), in order, from
    one ``node verifier/kifu-verify.mjs --batch --keys KEYS`` process fed the whole stream.

    The records are fed by a thread (``texts`` may be a generator) while this one reads the answers: the
    batch mode answers in order but may hold back a window of answers until it reads more (or the end).
    """
    node = node_for(script)
    with tempfile.TemporaryDirectory(prefix="kifu-mutations-") as tmp, open(Path(tmp) / "stderr", "w+b") as stderr:
        keys_file = Path(tmp) / "keys.json"
        keys_file.write_text(json.dumps(keys))
        command = [node, str(script), "--batch", "--keys", str(keys_file)]
        with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT) as node_:
            assert node_.stdin is not None and node_.stdout is not None
            feeder = Feeder(texts, node_.stdin)
            feeder.start()
            answers = [_verdict_of(line) for line in node_.stdout]
            feeder.join()
            node_.wait()
        if feeder.error is not None:
            raise feeder.error
        if node_.returncode != 0 or len(answers) != feeder.sent:
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace")[-2000:]
            raise JsVerifierError(
                f"the JavaScript verifier answered {len(answers)} of {feeder.sent} records and exited with "
                f"{node_.returncode}: {tail}"
            )
    return answers


def node_for(script: Path = JS_VERIFIER) -> str:
    """The path of ``node`` (Node 20 or later) to run ``script`` with; ``JsVerifierError`` saying what to
    install where there is none, or where the script is not there."""
    node = shutil.which("node")
    if node is None:
        raise JsVerifierError(NODE_MISSING)
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = version[1:].split(".")[0]
    if not (version.startswith("v") and major.isdigit() and int(major) >= MIN_NODE):
        raise JsVerifierError(f"node {version or '(unknown version)'} is too old: {NODE_MISSING}")
    if not script.exists():
        raise JsVerifierError(f"{script} is missing: the JavaScript verifier is not there yet")
    return node


class Feeder(threading.Thread):
    """Writes each text and a newline to the verifier's stdin, then closes it."""

    def __init__(self, texts: Iterable[bytes], stdin: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.texts, self.stdin = texts, stdin
        self.sent = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for text in self.texts:
                self.stdin.write(text + b"\n")
                self.sent += 1
        except BrokenPipeError:  # the verifier died: its exit status and stderr tell why
            pass
        except BaseException as exc:  # the generator failed: re-raised by the reader
            self.error = exc
        finally:
            with contextlib.suppress(BrokenPipeError):
                self.stdin.close()


def _verdict_of(line: bytes) -> Verdict:
    answer = json.loads(line)
    failed = tuple(str(name) for name in answer.get("failed") or ())
    return Verdict(answer["verdict"], answer.get("first_bad_event"), answer.get("bad_field"), failed)


# ---------------------------------------------------------------- judging and counting


AGREED, NULL, HOLE, DISAGREE = "as expected", "null", "hole", "disagreement"


def judge(change: Change, py: Verdict, js: Verdict | None) -> str:
    """``disagreement`` (verdicts, or the first bad event, differ), ``as expected`` (both rejected it, or
    call an honest truncation in progress), ``null`` (both accept a mutation of a null class), or ``hole``
    (both agree on a wrong verdict: a forgery accepted or only in progress, or an honest truncation failed)."""
    if js is not None and (py.verdict != js.verdict or py.first_bad_event != js.first_bad_event):
        return DISAGREE
    if py.verdict == change.expect:
        return AGREED
    if change.null_class is not None and py.verdict in (VERIFIED, FAILED):
        return NULL if py.verdict == VERIFIED else AGREED  # a null change may be refused too, by both alike
    return HOLE


@dataclass
class Tally:
    """The counts of one game (or all), and the null mutations by class."""

    counts: Counter[str] = field(default_factory=Counter)
    nulls: Counter[str] = field(default_factory=Counter)

    def add(self, change: Change, py: Verdict, js: Verdict | None, outcome: str) -> None:
        c = self.counts
        c["tried"] += 1
        c["py rejected"] += py.verdict == FAILED
        c["js rejected"] += js is not None and js.verdict == FAILED
        c["in progress"] += change.expect == IN_PROGRESS and outcome == AGREED
        c["same first bad"] += js is not None and py.first_bad_event == js.first_bad_event
        c["same bad field"] += js is not None and py.bad_field == js.bad_field
        c["named as spec"] += change.spec_event is not None and py.first_bad_event == change.spec_event
        c[outcome] += 1
        if outcome == NULL:
            self.nulls[change.null_class or ""] += 1


@dataclass
class Report:
    """A run's tallies per game and in all, the holes and disagreements found, and the wall times."""

    games: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    total: Tally = field(default_factory=Tally)
    kinds: Counter[str] = field(default_factory=Counter)
    places: Counter[str] = field(default_factory=Counter)
    holes: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    misnamed: list[str] = field(default_factory=list)  # rejected, but not where the spec says
    # agreeing on the verdict and the event, yet not on the rest: (place, python's, js's) -> how many
    other_bad_field: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    other_checks: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, change: Change, py: Verdict, js: Verdict | None) -> None:
        outcome = judge(change, py, js)
        self.games[change.game].add(change, py, js, outcome)
        self.total.add(change, py, js, outcome)
        self.kinds[change.kind] += 1
        self.places[change.place] += 1
        answers = f"python: {py.brief()}" + (f"; js: {js.brief()}" if js is not None else "")
        case = f"{change.describe()} -> {answers}"
        if outcome == HOLE:
            self.holes.append(f"{case} (expected {change.expect})")
        elif outcome == DISAGREE:
            self.disagreements.append(case)
        for name, verdict in (("python", py), ("js", js)):
            if verdict is not None and _misnamed(change, verdict):
                self.misnamed.append(f"{case} ({name}; the spec names event {change.spec_event})")
        if js is not None and outcome != DISAGREE:
            self._other_answers(change, py, js)

    def _other_answers(self, change: Change, py: Verdict, js: Verdict) -> None:
        """Count where the two agree on the verdict and the event but name another field or other checks."""
        place = "events[...]" if change.place.startswith("events[") else change.place
        if py.bad_field != js.bad_field:
            self.other_bad_field[(place, _generic(py.bad_field), _generic(js.bad_field))] += 1
        only_py, only_js = sorted(set(py.failed) - set(js.failed)), sorted(set(js.failed) - set(py.failed))
        if only_py or only_js:
            self.other_checks[(change.kind, ", ".join(only_py) or "-", ", ".join(only_js) or "-")] += 1


def _generic(bad_field: str | None) -> str:
    return "null" if bad_field is None else re.sub(r"\[\d+\]", "[]", bad_field)


def _misnamed(change: Change, verdict: Verdict) -> bool:
    return verdict.verdict == FAILED and change.spec_event is not None and verdict.first_bad_event != change.spec_event


def run(count: int, seed: int = 0, with_js: bool = True, suite: Suite | None = None) -> Report:
    """Draw ``count`` mutations of the suite (``seed``) and put each through Python's verifier, then (with
    ``with_js``) the same mutations, drawn again, through the JavaScript one; judge each pair."""
    if with_js:
        node_for()  # before the Python pass: a missing node is said at once
    report = Report()
    started = time.perf_counter()
    suite = suite or genuine_suite()
    report.seconds["genuine records"] = time.perf_counter() - started
    changes, py = python_pass(suite, count, seed, report.seconds)
    js: Sequence[Verdict | None] = [None] * len(changes)
    if with_js:
        started = time.perf_counter()
        js = js_pass(suite, count, seed, changes)
        report.seconds["js"] = time.perf_counter() - started
    for change, p, j in zip(changes, py, js):
        report.add(change, p, j)
    return report


def python_pass(
    suite: Suite, count: int, seed: int, seconds: defaultdict[str, float]
) -> tuple[list[Change], list[Verdict]]:
    """Python's verdicts on the genuine records (each must verify) and on each mutation."""
    for genuine in suite.records:
        _must_verify(genuine, python_verdict(genuine.record, suite.keys), "python")
    changes, verdicts = [], []
    started = time.perf_counter()
    for mutation in mutations(suite, count, seed):
        before = time.perf_counter()
        verdicts.append(python_verdict(mutation.record, suite.keys))
        seconds["python"] += time.perf_counter() - before
        changes.append(mutation.change)
    seconds["mutating"] += time.perf_counter() - started - seconds["python"]
    return changes, verdicts


def js_pass(suite: Suite, count: int, seed: int, changes: Sequence[Change]) -> list[Verdict]:
    """The JavaScript verdicts on the genuine records (each must verify) and on the same mutations, drawn
    again from the same seed, all through one process."""
    verdicts = js_verdicts(_texts(suite, mutations(suite, count, seed), changes), suite.keys)
    for genuine, verdict in zip(suite.records, verdicts):
        _must_verify(genuine, verdict, "js")
    return verdicts[len(suite.records) :]


def _texts(suite: Suite, drawn: Iterable[Mutation], changes: Sequence[Change]) -> Iterator[bytes]:
    """The JSON texts of the genuine records, then of each mutation (shown to be the one Python judged)."""
    for genuine in suite.records:
        yield orjson.dumps(genuine.record)
    for mutation, change in zip(drawn, changes, strict=True):
        if mutation.change != change:
            raise AssertionError(f"drawn again, mutation {change.describe()} came out as {mutation.change.describe()}")
        yield orjson.dumps(mutation.record)


def _must_verify(genuine: Genuine, verdict: Verdict, verifier: str) -> None:
    """A genuine record that does not verify makes its mutations meaningless: stop there."""
    if verdict.verdict != VERIFIED:
        what = f"{genuine.config.game} ({genuine.config.label})"
        raise AssertionError(f"the genuine record of {what} does not verify by {verifier}: {verdict.brief()}")


# ---------------------------------------------------------------- the bench


COLUMNS = (
    "tried",
    "py rejected",
    "js rejected",
    "same first bad",
    "named as spec",
    "in progress",
    NULL,
    HOLE,
    DISAGREE,
)


def table(report: Report) -> list[str]:
    """One line per game and one for all: the counts, then the null mutations by class."""
    lines = [f"{'game':12}" + "".join(f"{c:>15}" for c in COLUMNS)]
    for name, tally in [*sorted(report.games.items()), ("all", report.total)]:
        lines.append(f"{name:12}" + "".join(f"{tally.counts[c]:>15}" for c in COLUMNS))
    for game, tally in [*sorted(report.games.items()), ("all", report.total)]:
        for null_class, n in sorted(tally.nulls.items()):
            lines.append(f"  {game}: {n} accepted as null: {null_class}")
    return lines


def details(report: Report, show: int) -> list[str]:
    """The holes, disagreements and misnamed events, each case in full; then, grouped, what the verifiers
    answer differently though they agree on the verdict and the event (bad_field, the failed checks)."""
    lines = []
    for title, cases in (
        ("HOLES (accepted or misjudged, not null)", report.holes),
        ("DISAGREEMENTS (verdict or first bad event)", report.disagreements),
        ("rejected, but named elsewhere than the spec says", report.misnamed),
    ):
        if cases:
            lines.append(f"\n{title}: {len(cases)}")
            lines += [f"  {case}" for case in cases[:show]]
            lines += [f"  ... and {len(cases) - show} more"] if len(cases) > show else []
    for title, groups in (
        ("same verdict and event, another bad_field: (place, python, js)", report.other_bad_field),
        ("same verdict and event, other failed checks: (mutation, only python, only js)", report.other_checks),
    ):
        if groups:
            lines.append(f"\n{title}: {sum(groups.values())}")
            lines += [f"  {n:6} {group}" for group, n in groups.most_common(show)]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10000, help="mutations to draw")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the draws")
    parser.add_argument("--python-only", action="store_true", help="leave the JavaScript verifier out")
    parser.add_argument("--show", type=int, default=20, help="cases listed per kind of finding")
    args = parser.parse_args()
    started = time.perf_counter()
    report = run(args.count, args.seed, with_js=not args.python_only)
    for line in [*table(report), *details(report, args.show)]:
        print(line)
    print(f"\nkinds: {dict(sorted(report.kinds.items()))}")
    print(f"kinds of place hit: {len(report.places)}")
    seconds = report.seconds
    print(
        f"wall time: python verifier {seconds['python']:.1f} s (in process, on the parsed records); "
        f"js verifier {seconds['js']:.1f} s (one node process over the NDJSON stream: its JSON parsing included, "
        f"and the mutations drawn again alongside); genuine records {seconds['genuine records']:.1f} s, "
        f"drawing the mutations {seconds['mutating']:.1f} s; in all {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
