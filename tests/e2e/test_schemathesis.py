"""Schemathesis against the live server: every operation of ``openapi.yaml``, then its links.

The real app is served over real HTTP (``tests.support.http.serving``) on the
session's real Redis, with ``NoScheduler`` (every seat is human; nothing moves
behind the tests' backs) and ``SSE_MAX_SECONDS`` = 0.5 so that the stream of a
running game ends (after the log, and a heartbeat or two). The schema is
``openapi.yaml`` with the test-only toy game added to its unions of games
(``tests.support.spec``), loaded with ``schemathesis.openapi.from_dict`` and a config built here (base URL,
seed, budgets, checks, dictionaries); no ``schemathesis.toml`` is read. Each
test runs schemathesis's engine (``schemathesis.engine.from_schema``, what
``st run`` runs) and fails on any failed check or error, printing each with
its ``curl`` reproduction.

* ``test_every_operation_conforms``: every operation, first in the
  ``examples`` and ``coverage`` phases (the spec's examples, then boundary,
  missing and wrong values, positive and negative), then in the ``fuzzing``
  phase (Hypothesis, positive and negative data).
* ``test_linked_workflows_conform``: the ``stateful`` phase, i.e. the state
  machine ``schema.as_state_machine()`` builds from the OpenAPI ``links`` of
  ``openapi.yaml`` (only those: ``inference`` is off, it guessed that catalogue
  ids such as ``san-ban`` are game ids): ``createGame`` -> views, legal
  actions, actions, joins, events, streams and stream tickets, replays, records,
  audits, player tickets -> player streams, ...
* ``test_games_are_played_through_links``: the same over the operations that
  play a game only (``PLAY_OPERATIONS``), so that more of its steps follow
  ``getLegalActions`` -> ``takeAction`` (link ``TakeLegalAction``: the first
  legal action at the listed version) and games advance: actions accepted (201),
  out of turn (403), refused by the rules (422), stale (409).
  The engine, not a bare Hypothesis run, drives the state machines: a stateful
  server answers a replayed step differently, which Hypothesis alone reports as
  ``FlakyStrategyDefinition``; the engine then ends the phase there, a success
  (schemathesis 4 retries only after a new failure), so how many requests a
  run makes depends on when the server's own moves (a bot's) first make a
  replay differ: 131 to 2,007 in six runs of the play test. That test
  therefore runs the state machine again, with the next seed, until its floor
  of answered requests is reached (at most ``PLAY_RUNS`` runs), and every run
  must conform.

Game ids. Before the runs a pool of games is created (toy games fresh,
mid-step, finished, with an open seat and with a move timeout; San Ban, Nin
Nal, Kiri-ai, and San Ban against a bot), with a game stream ticket and a
player stream ticket. In the ``coverage`` phase each game operation's ``id`` is
fixed to a game of the pool (``coverage_games``; that phase takes fixed
values, not dictionaries); in ``fuzzing`` ids and tickets are drawn from
dictionaries of the pool (otherwise generated, so unknown ids and tickets are
fuzzed too); the state machines take ids from the links (and, by design,
sometimes a generated or a pool one). For half of the schema-valid
``createGame`` cases of the state machines a ``flatmap_case`` hook sends one of
``SETUPS`` instead: a generated body rarely names a game, a player count and
options that go together, and the links need real games to lead anywhere.

Seat tokens. A seat's token is only in the answer that created the game
(``seats[i].token``) or joined the seat (``token``), and travels as
``Authorization: Bearer``, a security scheme rather than a parameter, so no
link can carry it. A schema-level ``after_call`` hook (``Seats.learn``)
remembers the tokens of every such answer (the pool's and every game the runs
create), keyed by game id, and each game's ``to_act`` from every view and
action answer. A schema-level auth provider (``@schema.auth()``, not cached)
signs each case for a known game with a seat's token: a seat to act, or for
about one case in four (by a hash of the case, so that runs repeat) another
seat. Cases for unknown games go unsigned; schemathesis's own negative auth
cases (missing or garbled credentials) are left as generated.

Checks: every check schemathesis has (v4's default set), negative and
stateful ones included:

* ``not_a_server_error``, ``status_code_conformance``,
  ``content_type_conformance``, ``response_headers_conformance``,
  ``response_schema_conformance`` (SSE events against ``itemSchema`` too);
* ``negative_data_rejection``: a request the schema forbids must be refused;
* ``positive_data_acceptance``: a request the schema allows must not be
  refused. The contract answers 422 to some schema-valid requests, where the
  rules or the game's state decide (``RULE_LEVEL_422``), so this check accepts
  422 and the custom check ``refused_by_the_rules_not_the_schema`` judges
  every such 422 instead: only those problem types, from those operations,
  pass; a schema refusal (``invalid-request``) of schema-valid data fails
  (it passes over a case whose body a link filled with what the schema
  forbids, such as a null token (a bot's, or a replayed creation's), though it
  is labelled valid);
* ``missing_required_header``, ``unsupported_method``, ``allow_header_conformance``;
* ``ignored_auth`` (seat-only operations must refuse missing and bad tokens),
  ``use_after_free``, ``ensure_resource_availability``; and
  ``object_level_authorization``, which has nothing to judge here (it needs
  several configured identities, and every Kifu game is readable by anyone,
  redacted per seat).

``max_response_time`` stays off: it would measure the machine. The fuzzer's
``error-feedback`` is off: it reads the field paths of our 422s
(``players[0].name``) as property names and sends them back in cases it
labels schema-valid; it only steers generation, no check depends on it. The
persistent cache is off too (it would keep state in ``./.schemathesis`` and
replay it in later runs). Two links in ``openapi.yaml`` carry
``x-schemathesis: {merge_body: false}`` so that schemathesis sends their
``requestBody`` as it is (OpenAPI's meaning) rather than merged into a generated one.

Budget: seeded and derandomized (``SEED``), ``MAX_EXAMPLES`` cases per
operation in ``fuzzing`` (``STREAM_EXAMPLES`` for the streams), and
``WORKFLOW_*`` / ``PLAY_*`` scenarios and steps for the state machines: over
5,000 requests in the fuzzing test alone (``FLOORS``; 6,688 in a run with 240 cases per operation,
which took it 109 s alone, 221 s next to the rest of ``make test`` with 360; 200 since the five
transparency-log operations joined, 107 s next to the rest; 150 since the analysis and export
operations joined: 6,266 answers, 111 s next to the rest), none answered with a server error;
nothing sleeps. A run repeats what it generates as
far as the server lets it: ids, tokens and salts are random, and schemathesis
reuses values from earlier answers.

Excluded: nothing. The engine's phases select every operation; the state
machine of ``test_linked_workflows_conform`` selects every operation too
(those no link leads to, such as ``/healthz``, are not steps of it);
``test_games_are_played_through_links`` narrows to ``PLAY_OPERATIONS`` on purpose.
"""

from __future__ import annotations

import copy
import functools
import json
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest
import redis
import requests
import schemathesis
from hypothesis import strategies as st
from schemathesis import Case
from schemathesis.core import NotSet
from schemathesis.core.transport import Response
from schemathesis.engine import Status, events, from_schema

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from bootstrap import build
from entrypoints.api import create_app
from service.ports import NoScheduler
from service.tournaments import TournamentService
from tests.support.http import serving
from tests.support.spec import spec_with_toy_game

TIMEOUT = 10
SEED = 20260523
MAX_EXAMPLES = 150  # generated cases per operation in the fuzzing phase
STREAM_EXAMPLES = 8  # ... for the streams, whose cases on a running game last SSE_MAX_SECONDS
WORKFLOW_SCENARIOS, WORKFLOW_STEPS = 60, 10  # the state machine over every link
PLAY_SCENARIOS, PLAY_STEPS = 150, 15  # the state machine over the links that play a game
PLAY_RUNS = 6  # runs of it at most (seeds SEED, SEED + 1, ...) to reach its floor
# Requests each test makes at least, none answered with a server error. The fuzzing phase gives the volume
# (5,100 at 320 examples on a fresh clone); the state machines' counts swing with what Hypothesis tries.
FLOORS = {"operations": 5000, "workflows": 50, "play": 200}
SSE_MAX_SECONDS = 0.5
# The pool's games in the order the fuzzer's dictionary offers them (it draws the first ones most):
# a step with a secret choice in (a seat to act, a seat that is not), a finished game (game over),
# a fresh one, then the real games.
FUZZED_GAMES = (
    "committed",
    "finished",
    "active",
    "timed",
    "san-ban",
    "nin-nal",
    "kiri-ai",
    "san-ni-ichi",
    "front-line",
    "bot",
    "open",
)
# The pool's tournaments, likewise: not started (organiser commands apply), running, over.
FUZZED_TOURNAMENTS = ("created", "running", "finished")
PLAY_OPERATIONS = ["createGame", "joinSeat", "getGame", "getLegalActions", "takeAction", "replayStep"]

# 422 answers the contract gives to schema-valid requests, because the rules or the game's state
# decide (problem type -> the operations that answer it so). positive_data_acceptance accepts 422;
# `refused_by_the_rules_not_the_schema` then accepts only these.
RULE_LEVEL_422 = {
    "/problems/unknown-game": {"createGame", "createTournament"},  # a game id the catalogue does not have
    # players, options or deal the game refuses; entrants, table size, scoring or rounds the event refuses
    "/problems/invalid-game-settings": {"createGame", "createTournament"},
    "/problems/illegal-action": {"takeAction"},  # an action the rules refuse
    # a key used before for another request
    "/problems/idempotency-key-reused": {"createGame", "takeAction", "joinSeat", "createTournament"},
    "/problems/invalid-request": {"replayStep", "getSteps", "forfeitGame"},  # beyond the game: a step, a seat
    "/problems/audit-too-long": {"auditRecord"},  # a record slower to verify than the server allows
}
# the fields an `invalid-request` 422 may name where the game's state judges them
BEYOND_THE_GAME = {"replayStep": {"step", "as"}, "getSteps": {"from", "as"}, "forfeitGame": {"seat"}}
POSITIVE_DATA_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]


@schemathesis.check
def refused_by_the_rules_not_the_schema(ctx: schemathesis.CheckContext, response: Response, case: Case) -> bool | None:
    """A 422 to schema-valid data must be one the rules or the game's state give (``RULE_LEVEL_422``).

    Anything else, above all ``invalid-request`` (the server's own request schema refusing what the
    spec allows), is a disagreement between the spec and the server.
    """
    meta = case.meta
    if response.status_code != 422 or meta is None or not meta.generation.mode.is_positive:
        return None
    if not body_is_valid(case):
        return None  # a link sent a value of an earlier answer as it was (a null token): not schema-valid
    problem = response.json()
    kind = problem.get("type")
    allowed = operation_id(case) in RULE_LEVEL_422.get(kind, set())
    if allowed and kind == "/problems/invalid-request":
        allowed = bool(problem.get("errors")) and set(problem["errors"]) <= BEYOND_THE_GAME[operation_id(case)]
    if not allowed:
        raise AssertionError(f"A schema-valid request was refused as invalid: {problem}")
    return True


@functools.cache
def _spec() -> dict[str, Any]:
    """The spec with the test-only toy game in its unions of games (``tests/support/spec.py``)."""
    return spec_with_toy_game()


def body_is_valid(case: Case) -> bool:
    """Whether the case's JSON body is one the spec allows (true when it sends none)."""
    operation = _spec()["paths"][case.operation.path].get(case.method.lower(), {})
    if isinstance(case.body, NotSet) or "requestBody" not in operation:
        return True
    pointer = "/".join(
        part.replace("~", "~0").replace("/", "~1") for part in (case.operation.path, case.method.lower())
    )
    schema = f"#/paths/{pointer}/requestBody/content/application~1json/schema"
    root = {"$ref": schema, "paths": _spec()["paths"], "components": _spec()["components"]}
    return bool(jsonschema.Draft202012Validator(root).is_valid(case.body))


# -- seat tokens --------------------------------------------------------------------------


def operation_id(case: Case) -> str:
    return str(case.operation.definition.raw.get("operationId", case.operation.label))


@dataclass
class Seats:
    """Seat tokens from creation and join answers, keyed by game id, and each game's ``to_act``."""

    tokens: dict[str, dict[int, str]] = field(default_factory=dict)
    organisers: dict[str, str] = field(default_factory=dict)  # tournament id -> its organiser's token
    to_act: dict[str, list[int]] = field(default_factory=dict)
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    # operation id -> the game id the config fixes for it (the coverage phase signs a case before
    # the fixed id replaces the generated one, so the provider looks the game up here first)
    fixed: dict[str, str] = field(default_factory=dict)
    fixed_tournaments: dict[str, str] = field(default_factory=dict)  # the same for tournament ids

    def learn(self, case: Case, response: Response) -> None:
        """The ``after_call`` hook: count the answer; keep what it says about seats."""
        operation = operation_id(case)
        self.statuses[(operation, response.status_code)] += 1
        if response.status_code not in (200, 201):
            return
        try:
            body = response.json()
        except ValueError:
            return  # an event stream, a page, the metrics
        if not isinstance(body, dict):
            return
        if operation == "createGame":
            self.remember(body)
        elif operation == "createTournament" and body.get("organiser_token"):
            self.organisers[body["id"]] = body["organiser_token"]
        elif operation == "joinSeat" and body.get("token"):
            self.tokens.setdefault(body["id"], {})[body["seat"]] = body["token"]
        elif isinstance(body.get("to_act"), list) and case.path_parameters and "id" in case.path_parameters:
            self.to_act[str(case.path_parameters["id"])] = list(body["to_act"])

    def remember(self, created: dict[str, Any]) -> None:
        game_tokens = self.tokens.setdefault(created["id"], {})
        game_tokens.update({s["seat"]: s["token"] for s in created["seats"] if s.get("token")})
        self.to_act[created["id"]] = list(created["to_act"])

    def token_for(self, case: Case) -> str | None:
        """A token of the case's game: a seat to act, or for about one case in four another seat;
        for a tournament's operations, its organiser's."""
        if "tid" in (case.path_parameters or {}) or operation_id(case) in self.fixed_tournaments:
            tid = self.fixed_tournaments.get(operation_id(case)) or str((case.path_parameters or {})["tid"])
            return self.organisers.get(tid)
        game_id = self.fixed.get(operation_id(case)) or str((case.path_parameters or {}).get("id"))
        tokens = self.tokens.get(game_id)
        if not tokens:
            return None
        acting = [s for s in self.to_act.get(game_id, []) if s in tokens]
        others = [s for s in sorted(tokens) if s not in acting]
        headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
        key = json.dumps([case.method, case.body, case.query, headers], sort_keys=True, default=repr)
        another = zlib.crc32(key.encode()) % 4 == 0
        if acting and not (another and others):
            return tokens[acting[0]]
        return tokens[(others or sorted(tokens))[0]]


# -- the live server and its games ------------------------------------------------------------


@dataclass
class Live:
    url: str
    games: dict[str, str]  # role -> game id
    tournaments: dict[str, str]  # role -> tournament id; "game": a running game of "running"
    tickets: dict[str, str]  # "game": a seat's ticket for a game stream; "player": a player stream's
    seats: Seats


def _post(url: str, path: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = requests.post(f"{url}{path}", json=body, headers=headers, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    answer: dict[str, Any] = r.json()
    return answer


def _pool(url: str, seats: Seats) -> tuple[dict[str, str], dict[str, str]]:
    """Games in several states for the engine's phases to address, and stream tickets for them."""
    two = [{"name": "ann"}, {"name": "bob"}]

    def create(body: dict[str, Any]) -> tuple[str, dict[int, str]]:
        created = _post(url, "/v1/games", body)
        seats.remember(created)
        return created["id"], seats.tokens[created["id"]]

    def act(game_id: str, token: str, action: dict[str, Any]) -> None:
        seats.to_act[game_id] = _post(url, f"/v1/games/{game_id}/actions", {"action": action}, token)["to_act"]

    active, _ = create({"game": "toy", "players": two})
    committed, tokens = create({"game": "toy", "players": two})
    act(committed, tokens[0], {"type": "pick", "n": 2})
    game_ticket = _post(url, f"/v1/games/{committed}/stream-tickets", {}, tokens[0])["ticket"]
    waiting = {"game": committed, "token": tokens[1]}  # seat 1's turn
    finished, tokens = create({"game": "toy", "players": two})
    for _round in range(3):
        act(finished, tokens[0], {"type": "pick", "n": 2})
        act(finished, tokens[1], {"type": "pick", "n": 1})
        act(finished, tokens[1], {"type": "ack"})
    watched = [waiting, {"game": finished, "token": tokens[0]}]
    player_ticket = _post(url, "/v1/stream-tickets", {"seats": watched})["ticket"]
    open_seat, _ = create({"game": "toy", "players": [{"name": "ann"}, {"open": True}]})
    timed, _ = create({"game": "toy", "players": two, "options": {"move_timeout_s": 60}})
    san_ban, _ = create({"game": "san-ban", "players": two, "options": {"mode": "standard"}})
    nin_nal, _ = create({"game": "nin-nal", "players": [*two, {"name": "cy"}]})
    kiri_ai, _ = create({"game": "kiri-ai", "players": two})
    san_ni_ichi, _ = create({"game": "san-ni-ichi", "players": [*two, {"name": "cy"}]})
    front_line, _ = create({"game": "front-line", "players": two, "options": {"jokers": True}})
    with_bot, _ = create({"game": "san-ban", "players": [{"name": "ann"}, {"name": "hal", "bot": "greedy"}]})
    games = {
        "active": active,
        "committed": committed,
        "finished": finished,
        "open": open_seat,
        "timed": timed,
        "san-ban": san_ban,
        "nin-nal": nin_nal,
        "kiri-ai": kiri_ai,
        "san-ni-ichi": san_ni_ichi,
        "front-line": front_line,
        "bot": with_bot,
    }
    return games, {"game": game_ticket, "player": player_ticket}


def _tournaments(url: str, seats: Seats, runner: TournamentService) -> dict[str, str]:
    """Toy tournaments of two humans: one not started, one running (its game under way), one over."""
    two = [{"name": "ann"}, {"name": "bob"}]

    def create(fmt: str) -> tuple[str, dict[int, str]]:
        made = _post(url, "/v1/tournaments", {"game": "toy", "entrants": two, "format": fmt})
        seats.organisers[made["id"]] = made["organiser_token"]
        return made["id"], {e["entrant"]: e["token"] for e in made["entrants"]}

    def start(tid: str) -> str:
        r = requests.post(f"{url}/v1/tournaments/{tid}/start", headers=_bearer(seats.organisers[tid]), timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        runner.advance(tid)
        game: str = requests.get(f"{url}/v1/tournaments/{tid}", timeout=TIMEOUT).json()["tables"][0]["game"]
        return game

    created, _ = create("swiss")
    running, _ = create("swiss")
    running_game = start(running)
    finished, tokens = create("round-robin")
    game = start(finished)
    for _round in range(3):
        _post(url, f"/v1/games/{game}/actions", {"action": {"type": "pick", "n": 2}}, tokens[0])
        _post(url, f"/v1/games/{game}/actions", {"action": {"type": "pick", "n": 1}}, tokens[1])
        _post(url, f"/v1/games/{game}/actions", {"action": {"type": "ack"}}, tokens[1])
    runner.advance(finished)
    return {"created": created, "running": running, "finished": finished, "game": running_game}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def live(redis_server: EmbeddedRedis) -> Iterator[Live]:
    client = redis.Redis(port=redis_server.port)
    client.flushall()
    app = create_app(
        {
            "REDIS_URL": redis_server.url,
            "SCHEDULER": NoScheduler(),
            "SSE_HEARTBEAT_SECONDS": 0.2,
            "SSE_MAX_SECONDS": SSE_MAX_SECONDS,
            "STREAM_TICKET_SECONDS": 3600,  # the pool's tickets outlive the run
            # hundreds of games and bad tokens from one address in a minute: the fuzzer checks the contract,
            # not the rate limits (tests/integration/test_limits.py does; their 429s are in openapi.yaml)
            "RATE_LIMITS": False,
        }
    )
    seats = Seats()
    with serving(app) as url:
        games, tickets = _pool(url, seats)
        tournaments = _tournaments(url, seats, build(client, scheduler=NoScheduler()).tournaments)
        yield Live(url, games, tournaments, tickets, seats)
    client.flushall()  # hundreds of games: none of them is another test's business
    client.close()


# -- schemathesis -------------------------------------------------------------------------


def _problem_slugs() -> list[str]:
    kinds = _spec()["components"]["schemas"]["Problem"]["properties"]["type"]["enum"]
    return [kind.rsplit("/", 1)[1] for kind in kinds]


def coverage_games(live: Live) -> dict[str, str]:
    """The coverage phase's game per operation, chosen for what the operation can show there."""
    games = live.games
    return {
        "getGame": games["committed"],  # a secret choice is in
        "getLegalActions": games["active"],
        "takeAction": games["active"],
        "joinSeat": games["open"],
        "listEvents": games["finished"],  # every private part shown
        "streamEvents": games["finished"],  # a sealed game's stream ends at once
        "createStreamTicket": games["active"],
        "replayStep": games["finished"],  # `as` any seat
        "getSteps": games["finished"],  # every step, `as` any seat
        "getRecord": games["finished"],  # the complete record
        "auditGame": games["committed"],  # details withheld while it runs
    }


def coverage_tournaments(live: Live) -> dict[str, str]:
    """The coverage phase's tournament per operation."""
    t = live.tournaments
    return {
        "getTournament": t["running"],
        "startTournament": t["created"],  # starts it (later cases: 409)
        "pauseTournament": t["running"],
        "resumeTournament": t["running"],
        "withdrawEntrant": t["created"],
        "forfeitGame": t["running"],
        "getStandings": t["finished"],
        "listTournamentGames": t["finished"],
        "listTournamentEvents": t["finished"],
        "streamTournamentEvents": t["finished"],  # a finished tournament's stream ends at once
        "getTournamentRecord": t["finished"],
        "auditTournament": t["running"],  # details withheld while it runs
    }


def _operations(live: Live, phase: str) -> list[dict[str, Any]]:
    """Per-operation config: the coverage phase's fixed ids; the streams' ids, tickets and budget in fuzzing."""
    if phase == "coverage":
        games = [{"include-operation-id": op, "parameters": {"path.id": g}} for op, g in coverage_games(live).items()]
        game = {"path.game_id": live.tournaments["game"], "path.entrant": 1}
        events = [
            {"include-operation-id": op, "parameters": {"path.tid": tid, **game}}
            for op, tid in coverage_tournaments(live).items()
        ]
        return games + events
    if phase == "fuzzing":
        game_stream = {
            "path.id": {"dictionary": "streams", "probability": 0.9},
            "query.ticket": {"dictionary": "game-tickets", "probability": 0.5},
        }
        player_stream = {"query.ticket": {"dictionary": "player-tickets", "probability": 0.8}}
        tournament_stream = {"path.tid": {"dictionary": "tournaments", "probability": 0.9}}
        few = {"max-examples": STREAM_EXAMPLES}
        return [
            {"include-operation-id": "streamEvents", "parameters": game_stream, "generation": few},
            {"include-operation-id": "playerStream", "parameters": player_stream, "generation": few},
            {"include-operation-id": "streamTournamentEvents", "parameters": tournament_stream, "generation": few},
        ]
    return []


def load_schema(live: Live, phases: list[str], scenarios: int = 0, steps: int = 0, seed: int = SEED) -> Any:
    """``openapi.yaml`` with the live base URL, the budget, the checks, the ids and the seat tokens."""
    config = schemathesis.Config.from_dict(
        {
            "seed": seed,
            "cache": {"enabled": False},  # no state kept between runs (it would live in ./.schemathesis)
            "base-url": live.url,
            "workers": 1,
            "generation": {"deterministic": True, "max-examples": MAX_EXAMPLES, "unique-inputs": True},
            "phases": {
                "examples": {"enabled": "examples" in phases},
                "coverage": {"enabled": "coverage" in phases},
                # error feedback reads field paths (`players[0].name`) as property names and sends them
                # back as "schema-valid" data; it steers generation only, no check depends on it
                "fuzzing": {"enabled": "fuzzing" in phases, "error-feedback": {"enabled": False}},
                # the links of openapi.yaml only: inference guesses that a catalogue's game ids
                # (`san-ban`) are game ids (`g...`), which only spends the budget on 404s
                "stateful": {
                    "enabled": "stateful" in phases,
                    "inference": {"algorithms": []},
                    "max-steps": max(steps, 2),
                    "generation": {"max-examples": max(scenarios, 1)},
                },
            },
            "checks": {"positive_data_acceptance": {"expected-statuses": POSITIVE_DATA_STATUSES}},
            "max-stream-events": 20,
            "request-timeout": TIMEOUT,
            "dictionaries": {
                "games": {"values": [live.games[role] for role in FUZZED_GAMES]},
                "tournaments": {"values": [live.tournaments[role] for role in FUZZED_TOURNAMENTS]},
                "tournament-games": {"values": [live.tournaments["game"]]},
                "streams": {"values": [live.games["finished"], live.games["active"]]},
                "slugs": {"values": _problem_slugs()},
                "game-tickets": {"values": [live.tickets["game"]]},
                "player-tickets": {"values": [live.tickets["player"]]},
            },
            "parameters": {
                "path.id": {"dictionary": "games", "probability": 0.9},
                "path.tid": {"dictionary": "tournaments", "probability": 0.9},
                "path.game_id": {"dictionary": "tournament-games", "probability": 0.8},
                "path.slug": {"dictionary": "slugs", "probability": 0.7},
            },
            "operations": [entry for phase in phases for entry in _operations(live, phase)],
        }
    )
    schema = schemathesis.openapi.from_dict(spec_with_toy_game(), config=config)
    seats = live.seats
    seats.fixed = coverage_games(live) if "coverage" in phases else {}
    seats.fixed_tournaments = coverage_tournaments(live) if "coverage" in phases else {}

    @schema.auth(refresh_interval=None)
    class SeatToken:
        """The bearer token of a seat of the case's game (see the module docstring)."""

        def get(self, case: Case, ctx: Any) -> str | None:
            return seats.token_for(case)

        def set(self, case: Case, data: str, ctx: Any) -> None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}

    @schema.hook
    def after_call(context: Any, case: Case, response: Response) -> None:
        seats.learn(case, response)

    if "stateful" in phases:

        @schema.hook
        def flatmap_case(context: Any, case: Case) -> st.SearchStrategy[Case]:
            """Half of the schema-valid ``createGame`` cases create one of the ``SETUPS``."""
            if operation_id(case) != "createGame" or case.meta is None or not case.meta.generation.mode.is_positive:
                return st.just(case)
            return st.one_of(st.just(case), st.sampled_from(SETUPS).map(lambda body: _with_body(case, body)))

    return schema


# Games the state machines start from: for half of the schema-valid `createGame` cases a real setup
# replaces the generated body (a generated one rarely names a game, its player count and its options
# right), so that the links lead into running games; the other half stays as generated.
SETUPS: tuple[dict[str, Any], ...] = (
    {"game": "toy", "players": [{"name": "ann"}, {"name": "bob"}]},
    {"game": "toy", "players": [{"name": "ann"}, {"open": True}]},
    {"game": "toy", "players": [{"name": "ann"}, {"name": "bob"}], "options": {"move_timeout_s": 60}},
    {"game": "san-ban", "players": [{"name": "ann"}, {"name": "bob"}], "options": {"mode": "standard"}},
    {"game": "nin-nal", "players": [{"name": "ann"}, {"name": "bob"}, {"name": "cy"}]},
    {"game": "kiri-ai", "players": [{"name": "ann"}, {"name": "bob"}]},
    {"game": "san-ni-ichi", "players": [{"name": "ann"}, {"name": "bob"}, {"name": "cy"}, {"name": "di"}]},
    {"game": "front-line", "players": [{"name": "ann"}, {"name": "bob"}], "options": {"jokers": True}},
)


def _with_body(case: Case, body: dict[str, Any]) -> Case:
    case.body = copy.deepcopy(body)
    return case


@dataclass
class Report:
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    phases: dict[str, str] = field(default_factory=dict)


def run_engine(schema: Any) -> Report:
    """Run the engine's phases; collect every failed check and every error."""
    report = Report()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for checks in event.recorder.checks.values():
                for check in checks:
                    if check.failure_info is not None:
                        failure = check.failure_info.failure
                        report.failures.append(
                            f"{event.recorder.label} [{event.phase.value}] {check.name}: {failure.title}\n"
                            f"{failure.message}\n{check.failure_info.code_sample}"
                        )
            if event.status == Status.ERROR:
                report.errors.append(f"{event.recorder.label}: error in {event.phase.value}")
        elif isinstance(event, events.NonFatalError):
            report.errors.append(f"{event.label}: {event.info.format()}")
        elif isinstance(event, events.FatalError):
            raise event.exception
        elif isinstance(event, events.PhaseFinished):
            report.phases[event.phase.name.value] = event.status.value
    return report


def assert_conforms(*reports: Report) -> None:
    """No failed check, no error, and no phase that ended otherwise than in success (or was not run)."""
    failures = list(dict.fromkeys(failure for report in reports for failure in report.failures))
    assert not failures, f"{len(failures)} schemathesis failure(s):\n\n" + "\n\n".join(failures)
    errors = [error for report in reports for error in report.errors]
    assert not errors, errors
    for report in reports:
        assert set(report.phases.values()) <= {"success", "skip"}, report.phases


def spec_operations() -> set[str]:
    paths = _spec()["paths"].values()
    return {op["operationId"] for item in paths for op in item.values() if isinstance(op, dict) and "operationId" in op}


def test_every_operation_conforms(live: Live) -> None:
    before = Counter(live.seats.statuses)
    explicit = run_engine(load_schema(live, ["examples", "coverage"]))
    fuzzed = run_engine(load_schema(live, ["fuzzing"]))
    assert_conforms(explicit, fuzzed)
    assert explicit.phases["examples"] == explicit.phases["coverage"] == fuzzed.phases["fuzzing"] == "success"
    seen = live.seats.statuses - before
    assert {op for op, _status in seen} == spec_operations()
    # the game operations reached real games, and actions were judged (409 stale, 422 by the rules)
    for operation in ("getGame", "getLegalActions", "listEvents", "streamEvents", "replayStep", "getRecord"):
        assert seen[(operation, 200)] > 0, (operation, sorted(seen.items()))
    assert seen[("playerStream", 200)] > 0 and seen[("createStreamTicket", 201)] > 0, sorted(seen.items())
    assert seen[("takeAction", 409)] > 0 and seen[("takeAction", 422)] > 0, sorted(seen.items())
    assert_many_answered(seen, FLOORS["operations"])


def assert_many_answered(seen: Counter[tuple[str, int]], floor: int) -> None:
    """At least ``floor`` requests answered, and not one with a server error."""
    assert sum(seen.values()) >= floor, sum(seen.values())
    assert not [key for key in seen if key[1] >= 500], sorted(seen.items())


def test_linked_workflows_conform(live: Live) -> None:
    before = Counter(live.seats.statuses)
    report = run_engine(load_schema(live, ["stateful"], WORKFLOW_SCENARIOS, WORKFLOW_STEPS))
    assert_conforms(report)
    assert report.phases["stateful"] == "success"
    seen = live.seats.statuses - before
    for reached in (("createGame", 201), ("getGame", 200), ("createStreamTicket", 201), ("streamEvents", 200)):
        assert seen[reached] > 0, (reached, sorted(seen.items()))
    assert_many_answered(seen, FLOORS["workflows"])


def test_games_are_played_through_links(live: Live) -> None:
    before = Counter(live.seats.statuses)
    reports = []
    for seed in range(SEED, SEED + PLAY_RUNS):  # a run ends at its first replay the server answered otherwise
        schema = load_schema(live, ["stateful"], PLAY_SCENARIOS, PLAY_STEPS, seed)
        reports.append(run_engine(schema.include(operation_id=PLAY_OPERATIONS)))
        if (live.seats.statuses - before).total() >= FLOORS["play"]:
            break
    assert_conforms(*reports)
    assert all(report.phases["stateful"] == "success" for report in reports)
    seen = live.seats.statuses - before
    for status in (201, 403, 422):  # accepted, not this seat's turn, refused by the rules
        assert seen[("takeAction", status)] > 0, (status, sorted(seen.items()))
    assert_many_answered(seen, FLOORS["play"])
