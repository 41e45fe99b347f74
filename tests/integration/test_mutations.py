"""The mutation suite (``bench/mutations.py``) on a sample: both record verifiers, Python's and the JavaScript
``verifier/kifu-verify.mjs``, reject every single change to a signed, logged record of every game and
configuration, and name the same first bad event.

The sample (1,000 mutations, ``slow``) takes about 12 s on a 2-core machine; ``python -m bench.mutations
--count 10000`` runs more, with the counts per game. Hand-picked edges (an unknown member of the log's tree
head, a seal without its seed, a proof's index or a hashed integer typed otherwise) run through both in
``make test-fast`` too. Node 20 is required (the JavaScript verifier is half the point): the tests that
need it fail, saying what to install, where it is missing; none is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from bench.forgeries import get_path, set_path
from bench.mutations import (
    CONFIGS,
    DISAGREE,
    GAMES,
    HOLE,
    NULL,
    NULL_CLASSES,
    Change,
    JsonPath,
    JsVerifierError,
    Record,
    Report,
    Verdict,
    genuine_suite,
    js_verdicts,
    judge,
    python_verdict,
    run,
)
from domain.audit import FAILED, IN_PROGRESS, VERIFIED
from domain.canonical import canonical_json
from domain.games.san_ban.state import MODES
from domain.merkle import leaf_hash, verify_inclusion

COUNT, SEED = 1000, 0
SCALAR_EDITS = {"int+1", "int->float", "int->bool", "int->str", "str-char", "str->null", "bool-flip", "bool->int"}
OTHER_KINDS = {"null->0", "null->false", "remove-field", "unknown-field", "drop-event", "duplicate-event"}
EVENT_KINDS = {"swap-events", "truncate", "truncate-honest", "seed", "revealed-choice", "result"}
PLACES = (  # prefixes of the kinds of place (bench.mutations.place_of) the sample must hit
    *("format", "game_id", "game", "rules_version", "engine_version", "options", "seats[]", "seed_hash"),
    *("seed", "complete", "head", "record"),
    *(f"events[].{member}" for member in ("v", "seq", "type", "at", "prev", "hash")),
    *("events[].private_commitments", "events[].private_salts", "events[].data", "events[].private"),
    *(f"events[{kind}].data" for kind in ("game_created", "choices_revealed", "game_ended", "game_sealed")),
    "events[choice_committed].private",
    *("choices", "result", "events"),
    *(f"signature.{member}" for member in ("kid", "alg", "sig")),
    *(f"signature.statement.{member}" for member in ("kind", "game", "version", "hash", "sealed_at")),
    *("inclusion.index", "inclusion.size", "inclusion.path[]", "inclusion.head.size", "inclusion.head.root"),
    *(f"inclusion.head.signature.{member}" for member in ("kid", "alg", "sig", "statement.size", "statement.root")),
)


@pytest.mark.slow  # about 12 s on 2 cores
def test_both_verifiers_reject_every_mutation_alike() -> None:
    """The sample through both verifiers (Node 20 required). One test draws it and checks all it shows:
    split over several tests, each of make test's two processes could draw it again."""
    try:
        report = run(COUNT, SEED)
    except JsVerifierError as exc:
        pytest.fail(str(exc))
    problems = [*_rejections(report), *_coverage(report), *_positions(report)]
    assert problems == [], "\n".join(problems)


def _rejections(report: Report) -> list[str]:
    """Each mutation rejected by both (an honest truncation in progress, a null one maybe accepted by both),
    both naming the same first bad event: no disagreement, no hole."""
    counts, rejected = report.total.counts, COUNT - report.total.counts["in progress"] - report.total.counts[NULL]
    problems = [f"disagreement: {case}" for case in report.disagreements]
    problems += [f"hole: {case}" for case in report.holes]
    if not counts["py rejected"] == counts["js rejected"] == rejected or counts["same first bad"] != COUNT:
        problems.append(f"counts do not add up: {dict(counts)}")
    if not set(report.total.nulls) <= set(NULL_CLASSES) or set(report.games) != set(GAMES):
        problems.append(f"null classes {dict(report.total.nulls)}, games {sorted(report.games)}")
    if counts["in progress"] == 0:
        problems.append("no honest truncation was drawn")
    if counts["same bad field"] != COUNT:  # and the same field at fault, where one is named
        problems.append(f"bad_field differs: {dict(report.other_bad_field)}")
    return problems


def _coverage(report: Report) -> list[str]:
    """Every kind of change, and every kind of place, hit."""
    kinds = SCALAR_EDITS | OTHER_KINDS | EVENT_KINDS
    problems = [f"no mutation of kind {kind}" for kind in sorted(kinds - set(report.kinds))]
    hit = report.places
    problems += [f"no mutation at {p}" for p in PLACES if not any(place.startswith(p) for place in hit)]
    return problems


def _positions(report: Report) -> list[str]:
    """docs/record-format.md: a change in event k is named k; a field copied from event 1 names 1; the end
    of the log (seed, head, complete, the signature and the proof) names the last event."""
    return [f"misnamed: {case}" for case in report.misnamed]


def _set(path: JsonPath, value: Any) -> Callable[[Record], None]:
    return lambda record: set_path(record, path, value)


def _remove(path: JsonPath) -> Callable[[Record], None]:
    return lambda record: get_path(record, path[:-1]).pop(path[-1])


LAST = -1  # the last event (the seal), in the paths below
HAND_PICKED: dict[str, tuple[Callable[[Record], None], str, int | None]] = {  # change, verdict, first bad event
    "an unknown member in the log's tree head": (_set(("inclusion", "head", "x"), 1), FAILED, LAST),
    "an unknown member in the proof": (_set(("inclusion", "x"), 1), FAILED, LAST),
    "the seal without its seed": (_remove(("events", LAST, "data", "seed")), FAILED, LAST),
    "the proof's index as a float": (_set(("inclusion", "index"), 3.0), FAILED, LAST),
    "the proof's index as a boolean": (_set(("inclusion", "index"), True), FAILED, LAST),
    "the signed version as a string": (_set(("signature", "statement", "version"), "31"), FAILED, LAST),
    "an integer of event 5's data as a float": (_set(("events", 4, "data", "seat"), 0.0), FAILED, 5),
    "the proof removed (null)": (_remove(("inclusion",)), VERIFIED, None),
}


def _changed(genuine: Record, change: Callable[[Record], None]) -> Record:
    record: Record = orjson.loads(orjson.dumps(genuine))
    change(record)
    return record


def test_hand_picked_mutations_are_judged_alike_by_both() -> None:
    """Known edges, each through both verifiers: an unknown member of the tree head, a seal without its seed,
    a proof's index typed otherwise, a signed statement's member typed otherwise, a float in hashed data."""
    suite = genuine_suite()
    genuine = suite.records[0].record  # San Ban, standard: event 5 is an action_taken
    assert genuine["events"][4]["type"] == "action_taken" and genuine["events"][4]["data"]["seat"] in (0, 1)
    records = [_changed(genuine, change) for change, _, _ in HAND_PICKED.values()]
    try:
        js = js_verdicts([orjson.dumps(r) for r in records], suite.keys)
    except JsVerifierError as exc:
        pytest.fail(str(exc))
    wrong = []
    for (name, (_, verdict, at)), record, js_verdict in zip(HAND_PICKED.items(), records, js):
        expected = (verdict, len(record["events"]) if at == LAST else at)
        py_verdict = python_verdict(record, suite.keys)
        if {(v.verdict, v.first_bad_event) for v in (py_verdict, js_verdict)} != {expected}:
            wrong.append(f"{name}: expected {expected}; python {py_verdict.brief()}; js {js_verdict.brief()}")
    assert wrong == [], "\n".join(wrong)


def test_the_genuine_records_cover_every_game_and_configuration() -> None:
    by_game: dict[str, list[Any]] = {game: [c for c in CONFIGS if c.game == game] for game in GAMES}
    assert set(by_game) == {"san-ban", "kiri-ai", "nin-nal", "san-ni-ichi", "front-line"}
    assert {c.options.get("mode") for c in by_game["san-ban"]} == set(MODES)
    assert {c.options.get("battlefield", "standard") for c in by_game["kiri-ai"]} == {"standard", "advanced"}
    assert {len(c.bots) for c in by_game["nin-nal"]} == {2, 3, 4, 5}
    assert {len(c.bots) for c in by_game["san-ni-ichi"]} == {3, 4, 5, 6}
    assert {len(c.bots) for c in by_game["san-ni-ichi"] if c.options.get("teams")} == {4, 6}
    assert {len(c.bots) for c in by_game["front-line"]} == {2, 3, 4}
    assert all(any(c.fixed_deal for c in configs) for configs in by_game.values())
    assert all(any(any(c.bots) for c in configs) for configs in by_game.values())


def test_the_genuine_records_are_signed_and_logged_in_one_tree() -> None:
    suite = genuine_suite()
    heads = {canonical_json(g.record["inclusion"]["head"]) for g in suite.records}
    assert len(heads) == 1
    for index, genuine in enumerate(suite.records):
        record, proof = genuine.record, genuine.record["inclusion"]
        assert python_verdict(record, suite.keys).verdict == VERIFIED
        assert (proof["index"], proof["size"]) == (index, len(suite.records))
        leaf = leaf_hash(canonical_json(record["signature"]["statement"]))
        path = [bytes.fromhex(h) for h in proof["path"]]
        assert verify_inclusion(leaf, index, proof["size"], path, bytes.fromhex(proof["head"]["root"]))
    assert genuine_suite().records[3].record == suite.records[3].record  # reproducible


def _change(expect: str = FAILED, null_class: str | None = None) -> Change:
    return Change("san-ban", "standard", "int+1", "events[].seq", "events[4].seq", "5 -> 6", expect, 5, null_class)


def _verdict(verdict: str, first_bad: int | None = None) -> Verdict:
    return Verdict(verdict, first_bad, None, ("hash_chain",) if verdict == FAILED else ())


@pytest.mark.parametrize(
    ("change", "py", "js", "outcome"),
    [
        (_change(), _verdict(FAILED, 5), _verdict(FAILED, 5), "as expected"),
        (_change(), _verdict(FAILED, 5), _verdict(FAILED, 6), DISAGREE),
        (_change(), _verdict(FAILED, 5), _verdict(VERIFIED), DISAGREE),
        (_change(), _verdict(VERIFIED), _verdict(VERIFIED), HOLE),
        (_change(), _verdict(IN_PROGRESS), _verdict(IN_PROGRESS), HOLE),
        (_change(IN_PROGRESS), _verdict(IN_PROGRESS), _verdict(IN_PROGRESS), "as expected"),
        (_change(IN_PROGRESS), _verdict(FAILED, 3), _verdict(FAILED, 3), HOLE),
        (_change(null_class="no inclusion proof"), _verdict(VERIFIED), _verdict(VERIFIED), NULL),
        (_change(null_class="no inclusion proof"), _verdict(VERIFIED), _verdict(FAILED, 5), DISAGREE),
    ],
)
def test_the_judge_tells_holes_and_disagreements_from_rejections(
    change: Change, py: Verdict, js: Verdict, outcome: str
) -> None:
    """A positive control: the judge itself calls an accepted forgery a hole and a split verdict a disagreement."""
    assert judge(change, py, js) == outcome


def test_every_null_class_has_its_reason() -> None:
    assert all(isinstance(reason, str) and len(reason) > 40 for reason in NULL_CLASSES.values())
