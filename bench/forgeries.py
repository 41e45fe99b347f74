"""Forge game records every way one change can, and count what the verifier says of each.

    python -m bench.forgeries --games 3            # every game, 3 records each, every mutation
    python -m bench.forgeries --games 1 --sample 4 # 4 positions per class and record (quick)

For each of the five games, plays random games through the rules engine (one
seat a bot, so a bot's provenance is in the header), seals each record as the
server does, and applies every single change of each class below to it. Each
forgery has an expected verdict: ``failed`` for every class but the honest
truncation, which must be ``in_progress`` (a genuine prefix of a running game:
valid, result not proven). A ``failed`` verdict must name the first bad event:

* a change to event k's content (data, type, a private part, an integer's type)
  or a break of the chain at k (dropped, inserted, swapped without recomputing
  hashes) is named k;
* a structural forgery whose hashes were recomputed (an event dropped, inserted
  or swapped and the chain rebuilt) is named p where the first p - 1 events are
  a valid game in progress and the first p are not (checked by verifying both
  prefixes): "the first position at which the record stops being the game it
  claims to be";
* a header field is named by the event it copies (1 for event 1's fields, the
  last event for ``seed``, ``complete``, ``head``, ``note``) and ``bad_field``;
  an unknown field by ``bad_field`` alone.

Prints, per game and class: tried, rejected (``failed``), in progress (as
expected for honest truncations), **verified** (a hole), and of the rejected
ones how many name the expected first bad event, another one, or none. Nothing
is asserted here; ``tests/unit/test_forgeries.py`` asserts the same on a sample.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from domain import engine
from domain.audit import FAILED, IN_PROGRESS, verify_record
from domain.engine import Seat
from domain.record import (
    GENESIS,
    IN_PROGRESS_NOTE,
    build_record,
    chain_hash,
    envelopes,
    hashed_body,
    part_commitment,
    record_format,
)
from domain.registry import all_games, get_game

GAMES = ("san-ban", "nin-nal", "kiri-ai", "san-ni-ichi", "front-line")
MAX_ACTIONS = 3000
Record = dict[str, Any]


@dataclass(frozen=True)
class Forgery:
    """One forged record and what the verifier must say of it."""

    kind: str
    record: Record
    verdict: str  # FAILED or IN_PROGRESS
    first_bad: int | None  # the event it must name; None with ``prefix_rule``: judged by the prefixes
    bad_field: str | None = None
    prefix_rule: bool = False


# ---------------------------------------------------------------- genuine records


def play(game_id: str, seed: int, salts: Callable[[], str]) -> tuple[list[Any], bytes]:
    """A random finished game of ``game_id``: its events and seed (seat 1 is a bot)."""
    game = get_game(game_id)
    rnd = random.Random(seed)
    n = game.min_players + seed % (game.max_players - game.min_players + 1)
    seats = [Seat(i, f"p{i}", "random" if i == 1 else None) for i in range(n)]
    seed_bytes = seed.to_bytes(8, "big")
    events, table = engine.start(game_id, f"forge{seed}", seats, seed_bytes)
    for _ in range(MAX_ACTIONS):
        if table.finished:
            return events, seed_bytes
        seat = rnd.choice(table.to_act)
        new, table = engine.step(table, seat, engine.sample_action(table, seat, rnd), salts=salts)
        events += new
    raise RuntimeError(f"{game_id}: no end after {MAX_ACTIONS} actions")


def sealed(events: list[Any], seed: bytes, salts: Callable[[], str]) -> Record:
    """The record the server publishes once the game is over, read back from JSON."""
    at = "2026-01-01T00:00:00.000Z"
    envs = envelopes(events, 1, GENESIS, at, salts)
    envs += envelopes([engine.seal(seed, envs[-1]["hash"])], len(envs) + 1, envs[-1]["hash"], at, salts)
    out: Record = json.loads(json.dumps(build_record(envs)))
    return out


def counter_salts(tag: str) -> Callable[[], str]:
    count = iter(range(10**9))
    return lambda: f"{tag}:{next(count)}".encode().hex().ljust(32, "0")[:32]


# ---------------------------------------------------------------- a forger's tools


def rechain(record: Record, renumber: bool = False) -> None:
    """Recompute every hash (and the seal's head, and the record's head), as a forger who fixes the chain."""
    prev = GENESIS
    for pos, env in enumerate(record["events"], start=1):
        if renumber:
            env["seq"] = pos
        env["prev"] = prev
        if env["type"] == engine.GAME_SEALED:
            env["data"]["head"] = prev
        env["hash"] = prev = chain_hash(prev, hashed_body(env))
    record["head"] = prev


def recommit(env: dict[str, Any], audience: str) -> None:
    env["private_commitments"][audience] = part_commitment(
        audience, env["private"][audience], env["private_salts"][audience]
    )


def int_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to an integer (not a boolean) inside a JSON value."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from int_paths(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from int_paths(child, (*path, i))


def set_path(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def get_path(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


# ---------------------------------------------------------------- the classes of forgery


def forgeries(genuine: Record, positions: list[int]) -> Iterator[Forgery]:
    """Every single change of every class at the given positions (1-based) of ``genuine``."""
    n = len(genuine["events"])

    def fresh() -> Record:
        return copy.deepcopy(genuine)

    for k in positions:
        i = k - 1
        for rebuilt in (False, True):
            tag = "+rechain" if rebuilt else ""
            # content of event k
            rec = fresh()
            rec["events"][i]["data"]["forged"] = True
            if rebuilt:
                rechain(rec)
            yield Forgery(f"data{tag}", rec, FAILED, k)
            rec = fresh()
            rec["events"][i]["type"] += "_forged"
            if rebuilt:
                rechain(rec)
            yield Forgery(f"type{tag}", rec, FAILED, k)
            # the order of events
            if n > 1:
                rec = fresh()
                del rec["events"][i]
                if rebuilt:
                    rechain(rec, renumber=True)
                dropped_last = k == n
                yield Forgery(
                    f"drop{tag}",
                    rec,
                    FAILED,
                    n - 1 if dropped_last else (None if rebuilt else k),
                    bad_field="seed" if dropped_last else None,
                    prefix_rule=rebuilt and not dropped_last,
                )
            donor = random.Random(k).randrange(n)
            rec = fresh()
            rec["events"].insert(i, copy.deepcopy(genuine["events"][donor]))
            if rebuilt:
                rechain(rec, renumber=True)
            # a copy of event k inserted before it leaves event k as it was: the record breaks at k + 1
            at = k + 1 if donor == i else k
            yield Forgery(f"insert{tag}", rec, FAILED, None if rebuilt else at, prefix_rule=rebuilt)
            if k < n and genuine["events"][i]["type"] != genuine["events"][i + 1]["type"]:
                rec = fresh()
                rec["events"][i], rec["events"][i + 1] = rec["events"][i + 1], rec["events"][i]
                if rebuilt:
                    rechain(rec, renumber=True)
                yield Forgery(f"swap{tag}", rec, FAILED, None if rebuilt else k, prefix_rule=rebuilt)
        yield from _type_confusion(genuine, k)
        yield from _private_parts(genuine, k)
        if k < n:
            yield from _truncations(genuine, k)
    yield from _header(genuine)


def _type_confusion(genuine: Record, k: int) -> Iterator[Forgery]:
    """Each integer in event k's data as a float (and 0/1 as a boolean), the chain recomputed; and its seq."""
    env = genuine["events"][k - 1]
    for path in list(int_paths(env["data"]))[:6]:
        value = get_path(env["data"], path)
        for confused in (float(value), *([bool(value)] if value in (0, 1) else [])):
            rec = copy.deepcopy(genuine)
            set_path(rec["events"][k - 1]["data"], path, confused)
            rechain(rec)
            yield Forgery("type-confusion", rec, FAILED, k)
    rec = copy.deepcopy(genuine)
    rec["events"][k - 1]["seq"] = float(k)
    rechain(rec)
    yield Forgery("type-confusion", rec, FAILED, k)


def _private_parts(genuine: Record, k: int) -> Iterator[Forgery]:
    """Each private part of event k changed, then also recommitted and the chain recomputed; each salt."""
    env = genuine["events"][k - 1]
    for audience in env.get("private", {}):
        for recommitted in (False, True):
            rec = copy.deepcopy(genuine)
            forged = rec["events"][k - 1]
            forged["private"][audience]["forged"] = True
            if recommitted:
                recommit(forged, audience)
                rechain(rec)
            yield Forgery("private" + ("+recommit" if recommitted else ""), rec, FAILED, k)
        rec = copy.deepcopy(genuine)
        rec["events"][k - 1]["private_salts"][audience] = "f" * 32
        yield Forgery("salt", rec, FAILED, k)


def _truncations(genuine: Record, k: int) -> Iterator[Forgery]:
    """The first k events as a game in progress: honest (in progress), or still claiming the seed or the seal."""
    for withheld in (False, True):
        rec = copy.deepcopy(genuine)
        del rec["events"][k:]
        if withheld:
            for env in rec["events"]:
                env["private"], env["private_salts"] = {}, {}
        rec.update(seed=None, complete=False, head=rec["events"][-1]["hash"], note=IN_PROGRESS_NOTE)
        yield Forgery("truncate" + ("+withheld" if withheld else ""), rec, IN_PROGRESS, None)
        yield Forgery("truncate+seed", {**rec, "seed": genuine["seed"]}, FAILED, k, bad_field="seed")
        claim = {key: v for key, v in rec.items() if key != "note"}
        yield Forgery("truncate+complete", {**claim, "complete": True}, FAILED, k, bad_field="complete")


def _header(genuine: Record) -> Iterator[Forgery]:
    """Each header field changed (the events untouched), and an unknown field."""
    n = len(genuine["events"])
    bot_seat = next(s["seat"] for s in genuine["seats"] if s["bot"])
    changes: list[tuple[str, Callable[[Record], None], int | None]] = [
        ("engine_version", lambda r: r.update(engine_version="2"), 1),
        ("rules_version", lambda r: r.update(rules_version="0"), 1),
        ("game", lambda r: r.update(game="toy"), 1),
        ("game_id", lambda r: r.update(game_id="other"), 1),
        ("seed_hash", lambda r: r.update(seed_hash="0" * 64), 1),
        ("format", lambda r: r.update(format="kifu-record/1"), 1),
        (f"seats[{bot_seat}].bot_info.version", lambda r: r["seats"][bot_seat]["bot_info"].update(version="x/9"), 1),
        (
            f"seats[{bot_seat}].bot_info.settings.depth",
            lambda r: r["seats"][bot_seat]["bot_info"]["settings"].update(depth=9),
            1,
        ),
        ("seats[0].name", lambda r: r["seats"][0].update(name="mallory"), 1),
        ("seed", lambda r: r.update(seed="ff" * 8), n),
        ("complete", lambda r: r.update(complete=False), n),
        ("head", lambda r: r.update(head="0" * 64), n),
        ("note", lambda r: r.update(note=IN_PROGRESS_NOTE), n),
        ("extra", lambda r: r.update(extra=1), None),
    ]
    for path in list(int_paths(genuine["options"]))[:3]:
        changes.append(
            (
                "options." + ".".join(map(str, path)),
                lambda r, p=path: set_path(r["options"], p, float(get_path(r["options"], p))),  # type: ignore[misc]
                1,
            )
        )
    for field, change, bound in changes:
        rec = copy.deepcopy(genuine)
        change(rec)
        yield Forgery("header", rec, FAILED, bound, bad_field=field)


# ---------------------------------------------------------------- judging


def judge(forgery: Forgery) -> tuple[str, str]:
    """The verdict, and whether it and the first bad event it names are as expected: ``right``,
    ``wrong name``, ``no name``, or ``wrong verdict`` (``verified`` for a forgery is a hole)."""
    report = verify_record(forgery.record)
    verdict = report["verdict"]
    if verdict != forgery.verdict:
        return verdict, "wrong verdict"
    if verdict == IN_PROGRESS:
        return verdict, "right" if report["first_bad_event"] is None else "wrong name"
    if forgery.bad_field is not None and report["bad_field"] != forgery.bad_field:
        return verdict, "wrong name"
    got = report["first_bad_event"]
    if got is None:
        return verdict, "right" if forgery.first_bad is None and not forgery.prefix_rule else "no name"
    if forgery.prefix_rule:
        return verdict, "right" if _stops_at(forgery.record, got) else "wrong name"
    return verdict, "right" if got == forgery.first_bad else "wrong name"


def _stops_at(record: Record, pos: int) -> bool:
    """Whether the record's first ``pos - 1`` events are a valid game and its first ``pos`` are not.

    Each prefix is judged on its events alone, sealed with the genuine seed after them (so that its
    deal is re-derived: without the seed a prefix's deal cannot be judged), as the first bad event of
    that sealed prefix: nothing before ``pos`` in the shorter one, ``pos`` itself in the longer one.
    """
    seed = record["seed"] or ""

    def first_bad(upto: int) -> int | None:
        prefix = copy.deepcopy(record["events"][:upto])
        prev = prefix[-1]["hash"] if prefix else GENESIS
        seal: dict[str, Any] = {
            "v": 2,
            "seq": upto + 1,
            "type": engine.GAME_SEALED,
            "data": {"seed": seed, "head": prev},
            "private_commitments": {},
            "at": "2026-01-01T00:00:00.000Z",
            "prev": prev,
        }
        seal.update(hash=chain_hash(prev, hashed_body(seal)), private={}, private_salts={})
        events = [*prefix, seal]
        found = verify_record({"format": record_format(events), "events": events})["first_bad_event"]
        return found if found is None else int(found)

    shorter = first_bad(pos - 1) if pos > 1 else None
    return (shorter is None or shorter >= pos) and first_bad(pos) == pos


def run(games: int, sample: int | None, seed: int = 0) -> dict[str, dict[str, Counter[str]]]:
    """Per game and class: ``tried``, each verdict's count, each judgement's count."""
    table: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for game_id in GAMES:
        for g in range(games):
            events, seed_bytes = play(game_id, seed + g, counter_salts(f"{game_id}{g}"))
            genuine = sealed(events, seed_bytes, counter_salts(f"seal{game_id}{g}"))
            n = len(genuine["events"])
            positions = list(range(1, n + 1))
            if sample is not None:
                rnd = random.Random(f"{game_id}:{g}")
                positions = sorted({1, 2, n - 1, n, *rnd.sample(positions, min(sample, n))})
            for forgery in forgeries(genuine, positions):
                verdict, judgement = judge(forgery)
                table[game_id][forgery.kind].update(["tried", verdict, judgement])
    return table


COLUMNS = ("tried", FAILED, IN_PROGRESS, "verified", "right", "wrong name", "no name", "wrong verdict")


def report(table: dict[str, dict[str, Counter[str]]]) -> list[str]:
    """One line per game and class; ``failed`` is rejected, ``verified`` a forgery that passed (a hole)."""
    lines = [f"{'game':12} {'class':19}" + "".join(f"{c:>14}" for c in COLUMNS)]
    for game_id, classes in table.items():
        for kind, counts in sorted(classes.items()):
            lines.append(f"{game_id:12} {kind:19}" + "".join(f"{counts[c]:>14}" for c in COLUMNS))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3, help="records per game")
    parser.add_argument("--sample", type=int, default=None, help="positions per record and class (default: all)")
    args = parser.parse_args()
    assert {g.id for g in all_games()} >= set(GAMES)
    started = time.perf_counter()
    table = run(args.games, args.sample)
    for line in report(table):
        print(line)
    totals: Counter[str] = Counter()
    for classes in table.values():
        for counts in classes.values():
            totals.update(counts)
    print(
        f"\nall: {totals['tried']} forgeries: {totals[FAILED]} failed, {totals[IN_PROGRESS]} in progress "
        f"(honest truncations), {totals['verified']} verified; {totals['wrong verdict']} wrong verdicts, "
        f"{totals['wrong name']} wrong first bad event, {totals['no name']} unnamed "
        f"({time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
