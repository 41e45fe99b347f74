"""The write path: commands on games, each decided on a table and committed by one conditional append.

Every command reads top to bottom: decide on the table, commit (envelopes, the seal when the game ends,
when the game next needs a job), append, remember. ``Commands._commit`` is the one retry loop. It starts
from the table the caller could get most cheaply, and says how far it trusts it (``Trust``):

* ``CACHED``: the table this process last saw. The append is the check: if the game moved meanwhile it
  is refused with the events since (``VersionConflict.tail``), and the command is decided again on the
  game as it is, still without another round trip.
* ``ANNOUNCED``: the table with what other processes announced since (``GameMemory.newer``).
* ``READ``: the game as read from the log now.

A refusal by the rules, or a stale expected version, is final only on a table ``READ``: judged on a
table that may be behind, it is judged again, first with what was announced, then as read. A command
with an idempotency key that the rules refuse looks its key up first, so that a retry of a command
that was done is answered as it was.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from domain import engine
from domain.canonical import canonical_json, sha256_hex
from domain.engine import Table
from domain.errors import KifuError
from domain.events import Event
from domain.record import GENESIS, SALT_BYTES, envelopes, public_envelope, rfc3339, to_event
from domain.signatures import Signer, sealed_game_statement
from service.errors import Conflict, IdempotencyKeyReused, Unauthorized
from service.memory import Facts, GameMemory, token_hash
from service.ports import (
    Append,
    CreationKeys,
    Due,
    DuplicateCommand,
    GameLog,
    Head,
    HolderRefused,
    Keep,
    Notary,
    Quotas,
    Scheduler,
    Signing,
    VersionConflict,
)
from service.reader import GAME_ID_PREFIX, HOLD, SIGNATURE, TOURNAMENT, GameReader
from service.views import full_view, turn_start_in

MAX_RETRIES = 8
logger = logging.getLogger(__name__)
TOKEN_BYTES = 32
JOB_GRACE_MS = 3000  # a job asked for and not done this long after it was due is asked for again

Decide = Callable[[Table, Head], tuple[list[Event], Table]]


def utc_now() -> datetime:
    return datetime.now(UTC)


def fresh_salt() -> str:
    """A new random salt for a private part or a secret choice (128 bits, hex)."""
    return secrets.token_hex(SALT_BYTES)


class Trust(Enum):
    """How far a command trusts the table it decides on (the module's docstring)."""

    CACHED = "cached"
    ANNOUNCED = "announced"
    READ = "read"


@dataclass(frozen=True)
class Actor:
    """A seat about to act, with the table to start from: ``holder`` when the seat came from this
    process's memory (the append checks it: the token's meta field and its seat)."""

    seat: int | None
    table: Table
    head: Head
    trust: Trust
    holder: tuple[str, str] | None = None


@dataclass(frozen=True)
class TakeAction:
    """Take ``action`` for ``actor`` (``token``: the caller's, when it came with one); ``by``: a forfeit or
    a timeout acting for the seat; ``quotas``: rate-limit windows the action counts against."""

    game_id: str
    actor: Actor
    action: Mapping[str, Any]
    expected_version: int | None = None
    idempotency_key: str | None = None
    token: str | None = None
    by: str | None = None
    quotas: Quotas | None = None


@dataclass(frozen=True)
class JoinSeat:
    """Take open seat ``seat`` of the game as ``name`` (the answer holds the seat's token, shown only
    here)."""

    game_id: str
    seat: int
    name: str
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Placement:
    """A game created for a tournament's table: its link, its seats' tokens, and how it is dealt.

    ``token_hashes`` maps seats to the hashes of their entrants' tokens (valid in
    every game of the event; no new token is made for those seats). ``seed``
    deals every table of a duplicate round alike; ``hold`` keeps the game
    unsealed, its private parts withheld, until the tournament releases it
    (``ReleaseGame``) once every table of the round has played the deal.
    """

    tournament: Mapping[str, Any]  # {"id", "round", "table"}
    token_hashes: Mapping[int, str]
    seed: bytes | None = None
    hold: bool = False


@dataclass(frozen=True)
class CreateGame:
    """Create a game of ``game`` for ``players`` (their names, bots and open seats)."""

    game: str
    players: Sequence[Mapping[str, Any]]
    options: Mapping[str, Any] | None = None
    deal: Mapping[str, Any] | None = None
    idempotency_key: str | None = None
    placement: Placement | None = None


@dataclass(frozen=True)
class ReleaseGame:
    """Seal a finished game that a tournament held back (its private parts become public)."""

    game_id: str


@dataclass(frozen=True)
class Answer:
    """A command's answer; ``replayed`` when an idempotency key returned an earlier one."""

    body: dict[str, Any]
    replayed: bool = False


@dataclass(frozen=True)
class Committed:
    """What a command appended: the table after it, the new version, the envelopes."""

    table: Table
    version: int
    envs: list[dict[str, Any]]


@dataclass(frozen=True)
class _Write:
    """One command as ``_commit`` appends it: how to decide it, and what its append carries besides."""

    game_id: str
    seat: int | None
    decide: Decide
    fingerprint: str = ""
    idem_key: str | None = None
    expected_version: int | None = None
    meta: Mapping[str, str] | None = None
    holder: tuple[str, str] | None = None
    quotas: Quotas | None = None
    schedules: bool = True  # ask for the jobs the new table needs (bots, timeouts, the tournament's step)


class Commands:
    """Handles the commands on games (``TakeAction``, ``JoinSeat``, ``CreateGame``, ``ReleaseGame``)."""

    def __init__(
        self,
        log: GameLog,
        creation_keys: CreationKeys,
        memory: GameMemory,
        reader: GameReader,
        scheduler: Scheduler,
        clock: Callable[[], datetime],
        random_bytes: Callable[[int], bytes] | None = None,
        signing: Signing | None = None,
        notary: Notary | None = None,
    ) -> None:
        self.log = log
        self.creation_keys = creation_keys
        self.memory = memory
        self.reader = reader
        self.scheduler = scheduler
        self.clock = clock
        # every id, seed, token and salt: ``secrets.token_bytes`` (looked up at each call) unless given
        self.random_bytes = random_bytes or (lambda n: secrets.token_bytes(n))  # noqa: PLW0108 (late)
        self.signing = signing  # signs each sealed head, in the seal's own write (None: records unsigned)
        self.notary = notary  # the transparency log each signed head goes to once written

    # -- who acts ---------------------------------------------------------------------

    def identify_actor(self, game_id: str, token: str | None) -> Actor:
        """The seat of ``token`` and the table to start from: a token this process has met as a seat of a
        game it holds, or was told of, costs no round trip (the append checks it: ``holder``); any other
        is identified now (``GameReader.identify``, with the start of the log when the game is not held)."""
        recalled = self.memory.recall(game_id, token)
        seat, table, head = recalled.seat, recalled.table, recalled.head
        if seat is not None and table is not None and head is not None:
            return Actor(seat, table, head, Trust.CACHED, recalled.holder)
        caller = self.reader.identify(game_id, token, read_log=recalled.table is None, digest=recalled.digest)
        if caller.table is not None:
            return Actor(caller.seat, caller.table, caller.head, Trust.READ)
        return Actor(caller.seat, *self.reader.load(game_id, caller.head), Trust.READ)

    def seat_actor(self, game_id: str, seat: int, head: Head | None = None) -> Actor:
        """Seat ``seat`` acting without a token (a bot, a timeout, a forfeit): from the table held, else
        read (at ``head`` when given)."""
        held = self.memory.known(game_id) if head is None else None
        if held is not None:
            return Actor(seat, *held, Trust.CACHED)
        return Actor(seat, *self.reader.load(game_id, head), Trust.READ)

    # -- commands ---------------------------------------------------------------------

    def take_action(self, command: TakeAction) -> Answer:
        """Take the action; retried on a race unless a version was expected."""
        actor, action = command.actor, command.action
        if actor.seat is None:
            raise Unauthorized("acting needs a seat token (Authorization: Bearer <token>)")
        seat, by = actor.seat, command.by
        idem_key = f"{seat}:{command.idempotency_key}" if command.idempotency_key else None
        expected = command.expected_version
        fingerprint = sha256_hex(canonical_json({"action": action, "expected_version": expected})) if idem_key else ""
        write = _Write(
            command.game_id,
            seat,
            lambda table, _head: engine.step(table, seat, action, salts=self.salt, by=by),
            fingerprint,
            idem_key,
            expected,
            holder=actor.holder,
            quotas=command.quotas,
        )
        try:
            done = self._commit(write, actor)
        except HolderRefused:  # this process remembered the token wrongly (the game is gone): ask the log
            self.memory.forget(command.game_id, command.token)
            again = self.identify_actor(command.game_id, command.token)  # (the refused append counted the quotas)
            return self.take_action(TakeAction(command.game_id, again, action, expected, command.idempotency_key))
        if isinstance(done, Committed):
            return Answer(self._action_answer(done.table, seat, done.version, done.envs))
        if done.get("fingerprint") != fingerprint:
            raise IdempotencyKeyReused()
        table, _head = self.reader.load(command.game_id)
        envs = self.log.read(command.game_id, done["first"] - 1, done["last"] - done["first"] + 1)
        return Answer(self._action_answer(table, seat, done["last"], envs), replayed=True)

    def join_seat(self, command: JoinSeat) -> Answer:
        """Take the open seat; the answer holds the seat's token, shown only here."""
        game_id, seat, name = command.game_id, command.seat, command.name
        fingerprint = sha256_hex(canonical_json({"join": seat, "name": name}))
        idem_key = f"join:{seat}:{command.idempotency_key}" if command.idempotency_key else None
        token = self.token()

        def decide(table: Table, _head: Head) -> tuple[list[Event], Table]:
            events = engine.join(table, seat, name)
            return events, engine.replay(events, table)

        meta = {f"tok:{token_hash(token)}": str(seat)}
        write = _Write(game_id, seat, decide, fingerprint, idem_key, meta=meta)
        done = self._commit(write, self.seat_actor(game_id, seat))
        if isinstance(done, Committed):
            return Answer({"id": game_id, "seat": seat, "name": name, "token": token, "version": done.version})
        if done.get("fingerprint") != fingerprint:
            raise IdempotencyKeyReused()
        return Answer({"id": game_id, "seat": seat, "name": name, "token": None, "version": done["last"]}, True)

    def release(self, command: ReleaseGame) -> bool:
        """Seal the finished game a tournament held; True once it is sealed (False: not finished yet)."""
        game_id = command.game_id

        def decide(table: Table, head: Head) -> tuple[list[Event], Table]:
            if table.sealed or not table.finished:
                return [], table  # nothing to do
            seal = engine.seal(bytes.fromhex(self.reader.facts(game_id).seed), head.hash)
            return [seal], engine.evolve(table, seal)

        write = _Write(game_id, None, decide, meta={HOLD: "0"}, schedules=False)
        done = self._commit(write, Actor(None, *self.reader.load(game_id), Trust.READ))
        return isinstance(done, Committed) and done.table.sealed

    def create_game(self, command: CreateGame) -> Answer:
        """Create a game; the answer holds each human seat's token.

        Tokens are random and stored only as hashes, so they are shown once: a retry with the same
        ``Idempotency-Key`` answers the same game with every token ``null`` (``replayed``), and nobody
        can obtain them again.
        """
        players, placement = command.players, command.placement
        request = {"game": command.game, "players": list(players), "options": command.options, "deal": command.deal}
        game_id = self._creation_id(command.idempotency_key, request)
        if command.idempotency_key is not None and self.log.head(game_id).version:  # a fresh random id is new
            return Answer(self._creation_answer(game_id, {}), replayed=True)
        seats = [
            engine.new_seat(command.game, i, p.get("name"), p.get("bot"), bool(p.get("open")), command.options)
            for i, p in enumerate(players)
        ]
        seed = (placement.seed if placement else None) or self.random_bytes(32)
        link = placement.tournament if placement else None
        events, table = engine.start(command.game, game_id, seats, seed, command.options, command.deal, link)
        envs = envelopes(events, 1, GENESIS, rfc3339(self.clock()), self.salt)
        known = placement.token_hashes if placement else {}
        tokens = {s.seat: self.token() for s in seats if s.bot is None and not s.open and s.seat not in known}
        meta = {"seed": seed.hex(), "created_at": envs[0]["at"]}
        meta |= {f"tok:{token_hash(token)}": str(seat) for seat, token in tokens.items()}
        meta |= {f"tok:{digest}": str(seat) for seat, digest in known.items()}
        if placement is not None:
            meta |= {TOURNAMENT: placement.tournament["id"], **({HOLD: "1"} if placement.hold else {})}
        try:
            self.log.append(game_id, Append(envs, Head(0, GENESIS), meta=meta, due=self._due(table, events)))
        except VersionConflict:  # a concurrent retry with the same key created it first
            return Answer(self._creation_answer(game_id, {}), replayed=True)
        self.memory.remember(game_id, table, envs[-1]["hash"])
        self.memory.remember_facts(game_id, Facts(seed.hex(), meta.get(TOURNAMENT), HOLD in meta))
        for seat, token in tokens.items():
            self.memory.remember_seat(game_id, token_hash(token), seat)
        self._schedule(game_id, table, events)
        return Answer(self._creation_answer(game_id, tokens, (table, Head(table.version, envs[-1]["hash"]), envs)))

    # -- the one retry loop -------------------------------------------------------------

    def _commit(self, write: _Write, start: Actor) -> Committed | Mapping[str, Any]:
        """Decide ``write`` on the game and append its events (with the seal when it ends the game):
        what was committed, or the idempotency record of an earlier command with the same key."""
        game_id, expected = write.game_id, write.expected_version
        table, head, trust = start.table, start.head, start.trust
        for _attempt in range(MAX_RETRIES):
            try:
                if expected is not None and expected != head.version:
                    raise Conflict(head.version)
                events, new_table = write.decide(table, head)
            except (KifuError, Conflict):
                if trust is not Trust.READ:  # judged again: as other processes announced it, then as read
                    newer = self.memory.newer(game_id, head) if trust is Trust.CACHED else None
                    table, head = newer or self.reader.caught_up(game_id, table, head)
                    trust = Trust.ANNOUNCED if newer is not None else Trust.READ
                    continue
                prior = self.log.idempotency_record(game_id, write.idem_key) if write.idem_key else None
                if prior is not None:
                    return prior
                raise
            if not events:
                return Committed(table, head.version, [])
            envs = self._envelopes(game_id, events, head)
            signer, signature = self._signature(game_id, envs[-1], head.version + len(envs))
            meta = {**(write.meta or {}), SIGNATURE: json.dumps(signature)} if signature else write.meta
            last = head.version + len(envs)
            record = {"seat": write.seat, "first": head.version + 1, "last": last, "fingerprint": write.fingerprint}
            try:
                version = self.log.append(
                    game_id,
                    Append(
                        envs,
                        head,
                        idempotency=(write.idem_key, record) if write.idem_key else None,
                        meta=meta,
                        due=self._due(new_table, events),
                        holder=write.holder,
                        quotas=write.quotas,
                    ),
                )
            except VersionConflict as conflict:
                if expected is not None and trust is Trust.READ:
                    raise Conflict(conflict.current) from None
                caught_up = self.memory.caught_up(game_id, table, head, conflict.tail)
                table, head = caught_up or self.reader.load(game_id)
                trust = Trust.READ
                continue
            except DuplicateCommand as dup:
                return dup.record
            if len(envs) > len(events):
                new_table = engine.evolve(new_table, to_event(envs[-1]))  # the seal
            if signature:
                self._notarise(signature, signer)
            self.memory.remember(game_id, new_table, envs[-1]["hash"])
            if write.schedules:
                self._schedule(game_id, new_table, events)
            return Committed(new_table, version, envs)
        raise Conflict(self.log.head(game_id).version)

    def _envelopes(self, game_id: str, events: list[Event], head: Head) -> list[dict[str, Any]]:
        """The command's events as envelopes after ``head``; with the seal when they end a game that no
        tournament holds."""
        at = rfc3339(self.clock())
        envs = envelopes(events, head.version + 1, head.hash, at, self.salt)
        if events[-1].type == engine.GAME_ENDED:
            facts = self.reader.facts(game_id)
            if not facts.held:
                seal = engine.seal(bytes.fromhex(facts.seed), envs[-1]["hash"])
                envs += envelopes([seal], head.version + len(envs) + 1, envs[-1]["hash"], at, self.salt)
        return envs

    def _signature(
        self, game_id: str, last: Mapping[str, Any], version: int
    ) -> tuple[Signer | None, dict[str, Any] | None]:
        """When ``last`` is the seal: the signer (its key published just now) and its signature of the
        sealed head (``domain.signatures``); the log's heads are signed by the same signer next."""
        if self.signing is None or last["type"] != engine.GAME_SEALED:
            return None, None
        signer = self.signing.current()
        return signer, signer.sign(sealed_game_statement(game_id, version, last["hash"], last["at"]))

    def _notarise(self, signature: Mapping[str, Any], signer: Signer | None) -> None:
        """Log a sealed game's signed head at once. The seal is written already: should this fail, the
        projector logs the game when it meets the seal (``projections.projector``), so it is only late."""
        if self.notary is None:
            return
        try:
            self.notary.add(signature, signer)
        except Exception:
            logger.warning(
                "could not log sealed game %s now; the projector will", signature["statement"]["game"], exc_info=True
            )

    # -- jobs -------------------------------------------------------------------------

    def _due(self, table: Table, events: Sequence[Event]) -> Due:
        """When the game next needs a job, written by the append itself (the outbox the sweeper reads):
        a bot to act (now, plus a grace for the job asked for at once), a timed human's deadline."""
        if len(events) == 1 and events[0].type == engine.CHOICE_COMMITTED:
            return Keep.KEEP  # the seats to act and their clock are as before
        if table.finished:
            return None
        now = int(self.clock().timestamp() * 1000)
        if any(table.seats[s].bot for s in table.to_act):
            return now + JOB_GRACE_MS
        timeout = table.options.get("move_timeout_s")
        return now + 1000 * timeout + JOB_GRACE_MS if timeout and table.to_act else None

    def _schedule(self, game_id: str, table: Table, events: Sequence[Event]) -> None:
        """Ask for bot turns and move timeouts for seats that just became to act; a tournament's step
        when its game is over."""
        if table.finished:
            tournament = self.reader.facts(game_id).tournament
            if tournament:
                self.scheduler.tournament_step(tournament)
            return
        if len(events) == 1 and events[0].type == engine.CHOICE_COMMITTED:
            return
        timeout = table.options.get("move_timeout_s")
        for seat in table.to_act:
            if table.seats[seat].bot:
                self.scheduler.bot_turn(game_id, seat, table.version)
            elif timeout:
                self.scheduler.move_timeout(game_id, seat, table.version, timeout)

    # -- answers and randomness -----------------------------------------------------------

    def _creation_id(self, key: str | None, request: Mapping[str, Any]) -> str:
        fresh = GAME_ID_PREFIX + self.random_bytes(8).hex()
        if key is None:
            return fresh
        fingerprint = sha256_hex(canonical_json(request))
        game_id = self.creation_keys.reserve_creation(sha256_hex(key.encode()), fingerprint, fresh)
        if game_id is None:
            raise IdempotencyKeyReused()
        return game_id

    def _creation_answer(
        self,
        game_id: str,
        tokens: Mapping[int, str],
        created: tuple[Table, Head, Sequence[Mapping[str, Any]]] | None = None,
    ) -> dict[str, Any]:
        table, head, log = created or (*self.reader.load(game_id), ())
        turn_start = turn_start_in(log, table) or (lambda: self.log.read(game_id, table.turn_version - 1, 1)[0]["at"])
        seats = [{**s.to_dict(), "token": tokens.get(s.seat)} for s in table.seats]
        return {**full_view(table, None, turn_start), "id": game_id, "seats": seats, "version": head.version}

    @staticmethod
    def _action_answer(table: Table, seat: int, version: int, envs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {
            "version": version,
            "status": "finished" if table.finished else "active",
            "to_act": table.to_act,
            "events": [public_envelope(e, seat, table.sealed) for e in envs],
        }

    def salt(self) -> str:
        """A new random salt for a private part or a secret choice (128 bits, hex)."""
        return self.random_bytes(SALT_BYTES).hex()

    def token(self) -> str:
        """A new seat token (256 bits, URL-safe)."""
        return base64.urlsafe_b64encode(self.random_bytes(TOKEN_BYTES)).rstrip(b"=").decode("ascii")
