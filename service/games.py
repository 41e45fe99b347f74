"""The service layer: commands and queries on games, free of HTTP.

Checks here are existence and permission (404/401/403/409); shape checks
belong to the API schemas and rule checks to ``domain``.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from threading import Lock
from typing import Any

from domain import engine
from domain.audit import SEALED_CHECK, verify_record
from domain.canonical import canonical_json, sha256_hex
from domain.engine import Seat, Table
from domain.errors import KifuError
from domain.events import Event
from domain.record import (
    GENESIS,
    SALT_BYTES,
    build_record,
    envelopes,
    is_sealed,
    public_envelope,
    to_event,
    withheld_envelope,
)
from service.errors import Conflict, Forbidden, GameNotFound, IdempotencyKeyReused, InvalidRequest, Unauthorized
from service.ports import (
    Announcement,
    Due,
    DuplicateCommand,
    EventLog,
    Head,
    HolderRefused,
    Keep,
    NoScheduler,
    Quotas,
    Scheduler,
    VersionConflict,
)
from service.tables import TableLoader

MAX_RETRIES = 8
TOKEN_BYTES = 32
GAME_ID_PREFIX = "g"
HOLD, TOURNAMENT = "hold", "tournament"  # meta fields of a tournament's game
JOB_GRACE_MS = 3000  # a job asked for and not done this long after it was due is asked for again
RETRY_MS = 5000  # after asking again, how long before the sweeper looks at the game once more
FIRST_READ = 64  # events read with a command's identification of a game this process does not hold


def fresh_salt() -> str:
    """A new random salt for a private part or a secret choice (128 bits, hex)."""
    return secrets.token_hex(SALT_BYTES)


def utc_now() -> datetime:
    return datetime.now(UTC)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Caller:
    """An identified caller: their seat (None: spectator) and the head seen while identifying."""

    seat: int | None
    head: Head


@dataclass(frozen=True)
class Actor:
    """A seat about to act: ``head`` when it was read while identifying (None: the seat came from this
    process's memory of the token, and the append checks ``holder``, the token's meta field and seat)."""

    seat: int | None
    head: Head | None = None
    holder: tuple[str, str] | None = None


@dataclass(frozen=True)
class Facts:
    """What a game's meta hash says that never changes once the game exists: its seed (secret until the
    seal), its tournament, and whether a tournament created it held (unsealed until released)."""

    seed: str
    tournament: str | None
    held: bool


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
class Placement:
    """A game created for a tournament's table: its link, its seats' tokens, and how it is dealt.

    ``token_hashes`` maps seats to the hashes of their entrants' tokens (valid in
    every game of the event; no new token is made for those seats). ``seed``
    deals every table of a duplicate round alike; ``hold`` keeps the game
    unsealed, its private parts withheld, until the tournament releases it
    (``release``) once every table of the round has played the deal.
    """

    tournament: Mapping[str, Any]  # {"id", "round", "table"}
    token_hashes: Mapping[int, str]
    seed: bytes | None = None
    hold: bool = False


@dataclass
class GameService:
    """Creates games, takes actions and answers queries."""

    store: EventLog
    tables: TableLoader
    scheduler: Scheduler = field(default_factory=NoScheduler)
    clock: Callable[[], datetime] = utc_now
    seats_known: OrderedDict[tuple[str, str], int] = field(default_factory=OrderedDict, repr=False)
    # seats other processes announced (``hear``): apart, so that the whole cluster's creations never
    # push out the seats this process met itself
    seats_heard: OrderedDict[tuple[str, str], int] = field(default_factory=OrderedDict, repr=False)
    facts_known: OrderedDict[str, Facts] = field(default_factory=OrderedDict, repr=False)
    _memory_lock: Lock = field(default_factory=Lock, repr=False)

    # -- creation -----------------------------------------------------------------

    def create_game(
        self,
        game: str,
        players: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any] | None,
        deal: Mapping[str, Any] | None,
        idempotency_key: str | None = None,
        placement: Placement | None = None,
    ) -> Answer:
        """Create a game; the answer holds each human seat's token.

        Tokens are random and stored only as hashes, so they are shown once: a
        retry with the same ``Idempotency-Key`` answers the same game with every
        token ``null`` (``replayed``), and nobody can obtain them again.
        """
        request = {"game": game, "players": list(players), "options": options, "deal": deal}
        game_id = self._creation_id(idempotency_key, request)
        if idempotency_key is not None and self.store.head(game_id).version:  # a fresh random id is new
            return Answer(self._creation_answer(game_id, {}), replayed=True)
        seats = [Seat(i, p.get("name"), p.get("bot"), bool(p.get("open"))) for i, p in enumerate(players)]
        seed = (placement.seed if placement else None) or secrets.token_bytes(32)
        link = placement.tournament if placement else None
        events, table = engine.start(game, game_id, seats, seed, options, deal, link)  # InvalidOptions: the API's 422
        envs = envelopes(events, 1, GENESIS, rfc3339(self.clock()), fresh_salt)
        known = placement.token_hashes if placement else {}
        tokens = {
            s.seat: secrets.token_urlsafe(TOKEN_BYTES)
            for s in seats
            if s.bot is None and not s.open and s.seat not in known
        }
        meta = {"seed": seed.hex(), "created_at": envs[0]["at"]}
        meta |= {f"tok:{token_hash(token)}": str(seat) for seat, token in tokens.items()}
        meta |= {f"tok:{digest}": str(seat) for seat, digest in known.items()}
        if placement is not None:
            meta |= {TOURNAMENT: placement.tournament["id"], **({HOLD: "1"} if placement.hold else {})}
        try:
            self.store.append(game_id, envs, 0, GENESIS, meta=meta, due=self._due(table, events))
        except VersionConflict:  # a concurrent retry with the same key created it first
            return Answer(self._creation_answer(game_id, {}), replayed=True)
        self.tables.remember(game_id, table, envs[-1]["hash"])
        self._remember(self.facts_known, game_id, Facts(seed.hex(), meta.get(TOURNAMENT), HOLD in meta))
        for seat, token in tokens.items():
            self._remember(self.seats_known, (game_id, token_hash(token)), seat)
        self._schedule(game_id, table, events)
        return Answer(self._creation_answer(game_id, tokens, (table, Head(table.version, envs[-1]["hash"]))))

    def _creation_id(self, key: str | None, request: Mapping[str, Any]) -> str:
        if key is None:
            return GAME_ID_PREFIX + secrets.token_hex(8)
        fingerprint = sha256_hex(canonical_json(request))
        game_id = self.store.reserve_creation(
            sha256_hex(key.encode()), fingerprint, GAME_ID_PREFIX + secrets.token_hex(8)
        )
        if game_id is None:
            raise IdempotencyKeyReused()
        return game_id

    def _creation_answer(
        self, game_id: str, tokens: Mapping[int, str], created: tuple[Table, Head] | None = None
    ) -> dict[str, Any]:
        table, head = created or self.tables.load(game_id)
        seats = [{**s.to_dict(), "token": tokens.get(s.seat)} for s in table.seats]
        return {**self.full_view(table, None), "id": game_id, "seats": seats, "version": head.version}

    # -- identity -----------------------------------------------------------------

    def identify(
        self,
        game_id: str,
        token: str | None,
        read_log: bool = False,
        ticket_seat: Callable[[], int] | None = None,
    ) -> Caller:
        """Who is calling (a seat, or None for a spectator) and the game's head, in one round trip;
        ``read_log``: with the start of the log too, so that a short game this process does not hold
        is held once the caller is known (no second read before a command). ``ticket_seat``: the seat
        a stream ticket opens (it raises ``Unauthorized`` for a bad ticket), asked only once the game
        is known to exist and the token names no seat; that seat reads a held game as its token does."""
        if not game_id.startswith(GAME_ID_PREFIX):  # the store also holds tournaments' logs
            raise GameNotFound(f"no game {game_id!r}")
        token_field = f"tok:{token_hash(token)}" if token is not None else "-"
        fields = [token_field, HOLD, TOURNAMENT]
        if read_log:
            head, (seat, hold, tournament), envs = self.store.head_fields_and_log(game_id, fields, FIRST_READ)
        else:
            (head, (seat, hold, tournament)), envs = self.store.head_and_fields(game_id, fields), []
        if head.version == 0:
            raise GameNotFound(f"no game {game_id!r}")
        if token is not None and seat is None and not (tournament and self._entrant_of(tournament, token)):
            raise Unauthorized("this token is not a seat of this game")
        by_ticket = ticket_seat() if seat is None and ticket_seat is not None else None
        if hold == "1" and seat is None and by_ticket is None:
            raise Forbidden(
                "this game belongs to a duplicate tournament round whose deal other tables are still playing: "
                "only its own seats may read it until the round is over"
            )
        if seat is not None and token is not None:
            self._remember(self.seats_known, (game_id, token_hash(token)), int(seat))
        self.tables.adopt(game_id, envs, head)
        return Caller(int(seat) if seat is not None else by_ticket, head)

    def identify_actor(self, game_id: str, token: str | None) -> Actor:
        """``identify`` for a command: a token this process has seen as a seat of a game whose table it
        holds, or was told of (``hear``), costs no round trip (the append checks it: ``holder``); any
        other is identified now."""
        if token is not None:
            digest = token_hash(token)
            seat = self.seats_known.get((game_id, digest), self.seats_heard.get((game_id, digest)))
            if seat is not None and self.tables.held_or_heard(game_id) is not None:
                return Actor(seat, None, (f"tok:{digest}", str(seat)))
        caller = self.identify(game_id, token, read_log=self.tables.known(game_id) is None)
        return Actor(caller.seat, caller.head)

    def hear(self, heard: Announcement) -> None:
        """What another process appended, as it announced it: the game's events (``TableLoader.hear``)
        and the seats whose token hashes the append named. Only a shortcut, never taken on trust: each
        command's append checks the head hash and the token's seat."""
        self.tables.hear(heard.game_id, heard.first, heard.envelopes)
        for field_name, seat in heard.seats.items():
            self._remember(self.seats_heard, (heard.game_id, field_name.removeprefix("tok:")), seat)

    def _remember(self, memory: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        """Keep ``value`` in a bounded memory of this process (least recently stored dropped first)."""
        with self._memory_lock:
            memory[key] = value
            memory.move_to_end(key)
            while len(memory) > self.tables.size * 4:
                memory.popitem(last=False)

    def _facts(self, game_id: str) -> Facts:
        """The game's unchanging meta facts, from this process's memory or read once."""
        known = self.facts_known.get(game_id)
        if known is None:
            meta = self.store.meta(game_id)
            known = Facts(meta["seed"], meta.get(TOURNAMENT), meta.get(HOLD) is not None)
            self._remember(self.facts_known, game_id, known)
        return known

    def _entrant_of(self, tournament: str, token: str) -> bool:
        """Whether ``token`` is an entrant's (or the organiser's) of ``tournament``: in another table's
        game of the same event it reads as a spectator, not as an unknown token."""
        head, role = self.store.head_and_field(tournament, f"tok:{token_hash(token)}")
        return head.version > 0 and role is not None

    # -- commands -----------------------------------------------------------------

    def act(
        self,
        game_id: str,
        seat: int | None,
        action: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        by: str | None = None,
        head: Head | None = None,
        holder: tuple[str, str] | None = None,
        quotas: Quotas | None = None,
    ) -> Answer:
        """Take ``action`` for ``seat``; retries internally on a race unless a version was expected.

        ``head``: the head read while identifying the seat; ``holder``: the seat came from this
        process's memory instead (``identify_actor``), and the append checks it; ``quotas``: rate-limit
        windows the action counts against, counted by its append if it makes one (``QuotaExceeded``).
        """
        if seat is None:
            raise Unauthorized("acting needs a seat token (Authorization: Bearer <token>)")
        idem_key = f"{seat}:{idempotency_key}" if idempotency_key else None
        fingerprint = (
            sha256_hex(canonical_json({"action": action, "expected_version": expected_version})) if idem_key else ""
        )
        done = self._commit(
            game_id,
            seat,
            lambda table: self._step(table, seat, action, by),
            fingerprint,
            idem_key,
            expected_version,
            head,
            holder=holder,
            quotas=quotas,
        )
        if isinstance(done, Committed):
            return Answer(self._action_answer(done.table, seat, done.version, done.envs))
        return Answer(self._replayed_answer(game_id, seat, done, fingerprint), replayed=True)

    def act_as(
        self,
        game_id: str,
        token: str | None,
        actor: Actor,
        action: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        quotas: Quotas | None = None,
    ) -> Answer:
        """``act`` for the seat of ``token``, identified as ``actor`` (``identify_actor``)."""
        try:
            return self.act(
                game_id,
                actor.seat,
                action,
                expected_version,
                idempotency_key,
                head=actor.head,
                holder=actor.holder,
                quotas=quotas,
            )
        except HolderRefused:  # this process remembered the token wrongly (the game is gone): ask Redis
            if token is not None:
                self.seats_known.pop((game_id, token_hash(token)), None)
                self.seats_heard.pop((game_id, token_hash(token)), None)
            self.tables.forget(game_id)
            caller = self.identify(game_id, token)
            return self.act(game_id, caller.seat, action, expected_version, idempotency_key, head=caller.head)

    def join(self, game_id: str, seat: int, name: str, idempotency_key: str | None = None) -> Answer:
        """Take open seat ``seat`` as ``name``; the answer holds the seat's token, shown only here."""
        fingerprint = sha256_hex(canonical_json({"join": seat, "name": name}))
        idem_key = f"join:{seat}:{idempotency_key}" if idempotency_key else None
        token = secrets.token_urlsafe(TOKEN_BYTES)

        def command(table: Table) -> tuple[list[Event], Table]:
            events = engine.join(table, seat, name)
            return events, engine.replay(events, table)

        done = self._commit(game_id, seat, command, fingerprint, idem_key, meta={f"tok:{token_hash(token)}": str(seat)})
        if isinstance(done, Committed):
            return Answer({"id": game_id, "seat": seat, "name": name, "token": token, "version": done.version})
        if done.get("fingerprint") != fingerprint:
            raise IdempotencyKeyReused()
        return Answer({"id": game_id, "seat": seat, "name": name, "token": None, "version": done["last"]}, True)

    def _commit(
        self,
        game_id: str,
        seat: int,
        command: Callable[[Table], tuple[list[Event], Table]],
        fingerprint: str,
        idem_key: str | None,
        expected_version: int | None = None,
        head: Head | None = None,
        meta: Mapping[str, str] | None = None,
        holder: tuple[str, str] | None = None,
        quotas: Quotas | None = None,
    ) -> Committed | Mapping[str, Any]:
        """Decide ``command`` on the game and append its events (with the seal when it ends the game).

        Returns what was committed, or the idempotency record of an earlier
        command with the same key. One round trip when this process holds the
        game's table and no ``head`` was read (``TableLoader.known``): the
        command is decided on that table and the conditional append checks it
        was the game's latest. A refused append carries the events since, so
        the command is decided again on the game as it is (retried on a race
        unless a version was expected). A refusal by the rules, or a stale
        expected version, judged on a table that may be behind is judged again
        before it is answered: on the table with what other processes have
        announced since, if it moved (``TableLoader.newer``; a judgement on
        announced events is still checked by the append), else on the game read
        now. An idempotency key is
        checked by the append; a refused command looks up its key first, so a
        retry of a command that was done is answered as it was.
        """
        known = self.tables.known(game_id) if head is None else None
        table, head = known or self.tables.load(game_id, head)
        maybe_behind, waited = known is not None, False
        for _attempt in range(MAX_RETRIES):
            try:
                if expected_version is not None and expected_version != head.version:
                    raise Conflict(head.version)
                events, new_table = command(table)
            except (KifuError, Conflict):
                if maybe_behind:  # first as other processes announced it, then as read now
                    newer = None if waited else self.tables.newer(game_id, head)
                    table, head = newer or self.tables.load(game_id)
                    maybe_behind, waited = newer is not None, True
                    continue
                prior = self.store.idempotency_record(game_id, idem_key) if idem_key else None
                if prior is not None:
                    return prior
                raise
            envs = self._envelopes(game_id, events, head.version, head.hash)
            last = head.version + len(envs)
            record = {"seat": seat, "first": head.version + 1, "last": last, "fingerprint": fingerprint}
            try:
                version = self.store.append(
                    game_id,
                    envs,
                    head.version,
                    head.hash,
                    idempotency=(idem_key, record) if idem_key else None,
                    meta=meta,
                    due=self._due(new_table, events),
                    holder=holder,
                    quotas=quotas,
                )
            except VersionConflict as conflict:
                if expected_version is not None and not maybe_behind:
                    raise Conflict(conflict.current) from None
                table, head = self.tables.caught_up(game_id, table, head, conflict.tail) or self.tables.load(game_id)
                maybe_behind = False
                continue
            except DuplicateCommand as dup:
                return dup.record
            if len(envs) > len(events):
                new_table = engine.evolve(new_table, to_event(envs[-1]))  # the seal
            self.tables.remember(game_id, new_table, envs[-1]["hash"])
            self._schedule(game_id, new_table, events)
            return Committed(new_table, version, envs)
        raise Conflict(self.store.head(game_id).version)

    @staticmethod
    def _step(table: Table, seat: int, action: Mapping[str, Any], by: str | None) -> tuple[list[Event], Table]:
        return engine.step(table, seat, action, salts=fresh_salt, by=by)

    def _envelopes(self, game_id: str, events: list[Event], version: int, prev: str) -> list[dict[str, Any]]:
        at = rfc3339(self.clock())
        envs = envelopes(events, version + 1, prev, at, fresh_salt)
        if events and events[-1].type == engine.GAME_ENDED:
            facts = self._facts(game_id)
            if not facts.held:
                envs += self._seal(facts.seed, version + len(envs), envs[-1]["hash"], at)
        return envs

    @staticmethod
    def _seal(seed: str, version: int, head: str, at: str) -> list[dict[str, Any]]:
        return envelopes([engine.seal(bytes.fromhex(seed), head)], version + 1, head, at, fresh_salt)

    def release(self, game_id: str) -> bool:
        """Seal a finished game that a tournament held back (its private parts become public); True once sealed."""
        for _attempt in range(MAX_RETRIES):
            table, head = self.tables.load(game_id)
            if table.sealed or not table.finished:
                return table.sealed
            envs = self._seal(self._facts(game_id).seed, head.version, head.hash, rfc3339(self.clock()))
            try:
                self.store.append(game_id, envs, head.version, head.hash, meta={HOLD: "0"}, due=None)
            except VersionConflict:
                continue
            self.tables.remember(game_id, engine.evolve(table, to_event(envs[0])), envs[0]["hash"])
            return True
        raise Conflict(self.store.head(game_id).version)

    def _replayed_answer(self, game_id: str, seat: int, record: Mapping[str, Any], fingerprint: str) -> dict[str, Any]:
        if record.get("fingerprint") != fingerprint:
            raise IdempotencyKeyReused()
        table, _head = self.tables.load(game_id)
        envs = self.store.read(game_id, record["first"] - 1, record["last"] - record["first"] + 1)
        return self._action_answer(table, seat, record["last"], envs)

    def _action_answer(
        self, table: Table, seat: int, version: int, envs: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        return {
            "version": version,
            "status": "finished" if table.finished else "active",
            "to_act": table.to_act,
            "events": [public_envelope(e, seat, table.sealed) for e in envs],
        }

    def turn_still_due(self, game_id: str, seat: int, version: int) -> tuple[Table, Head] | None:
        """The table and head when ``seat`` must still act on the turn that was current at
        ``version`` (only other seats' secret commitments happened since), else None."""
        table, head = self.tables.load(game_id)
        if seat not in table.to_act or table.version < version:
            return None
        since = self.store.read(game_id, version, table.version - version)
        if all(e["type"] == engine.CHOICE_COMMITTED and e["data"]["seat"] != seat for e in since):
            return table, head
        return None

    def _due(self, table: Table, events: Sequence[Event]) -> Due:
        """When the game next needs a job, written by the append itself (the outbox the sweeper reads):
        a bot to act (now, plus a grace for the job asked for at once), a timed human's deadline."""
        if len(events) == 1 and events[0].type == engine.CHOICE_COMMITTED:
            return Keep.KEEP  # the seats to act and their clock are as before
        if table.finished:
            return None
        now = _ms(self.clock())
        if any(table.seats[s].bot for s in table.to_act):
            return now + JOB_GRACE_MS
        timeout = table.options.get("move_timeout_s")
        return now + 1000 * timeout + JOB_GRACE_MS if timeout and table.to_act else None

    def recover(self, game_id: str) -> None:
        """Ask again for the jobs a game waits on (the sweeper, for an overdue outbox entry): its bots'
        turns, its expired move timeouts; then note when to look again (never, once nothing is due).

        The jobs are idempotent (the turn's version is their key), so asking twice changes nothing;
        a job still queued or running (a deep queue under load) is not asked for again, or a busy
        queue would fill with copies of itself.
        """
        table, _head = self.tables.load(game_id)
        now = _ms(self.clock())
        asked, later = False, []
        version = table.turn_version
        for seat, deadline in enumerate(self.deadlines(table)):
            if seat in table.to_act and table.seats[seat].bot:
                if not self.scheduler.job_pending("bot", game_id, seat, version):
                    self.scheduler.bot_turn(game_id, seat, version, urgent=True)
                asked = True
            elif deadline is not None and _ms(datetime.fromisoformat(deadline)) <= now:
                if not self.scheduler.job_pending("timeout", game_id, seat, version):
                    self.scheduler.move_timeout(game_id, seat, version, 0)
                asked = True
            elif deadline is not None:
                later.append(_ms(datetime.fromisoformat(deadline)) + JOB_GRACE_MS)
        self.store.set_due(game_id, now + RETRY_MS if asked else min(later, default=None))

    def _schedule(self, game_id: str, table: Table, events: Sequence[Event]) -> None:
        """Ask for bot turns and move timeouts for seats that just became to act."""
        only_a_commitment = len(events) == 1 and events[0].type == engine.CHOICE_COMMITTED
        if table.finished:
            tournament = self._facts(game_id).tournament
            if tournament:
                self.scheduler.tournament_step(tournament)
            return
        if only_a_commitment:
            return
        timeout = table.options.get("move_timeout_s")
        for seat in table.to_act:
            if table.seats[seat].bot:
                self.scheduler.bot_turn(game_id, seat, table.version)
            elif timeout:
                self.scheduler.move_timeout(game_id, seat, table.version, timeout)

    # -- queries ------------------------------------------------------------------

    def view(self, game_id: str, viewer: int | None, head: Head | None = None) -> dict[str, Any]:
        """The caller's view of the game now."""
        table, _head = self.tables.load(game_id, head)
        return self.full_view(table, viewer)

    def full_view(self, table: Table, viewer: int | None, log: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """``game_view`` with each seat's deadline (the one fact of a view that the log's times decide);
        ``log``: the game's envelopes from its first, already read (``deadlines``)."""
        return {**self.game_view(table, viewer), "deadlines": self.deadlines(table, log)}

    def deadlines(self, table: Table, log: Sequence[Mapping[str, Any]] = ()) -> list[str | None]:
        """Per seat: when its move timeout plays for it (a human seat to act in a timed game), else None.
        The turn's start is read from ``log`` (envelopes from the first) when it holds it, else from the store."""
        timeout = table.options.get("move_timeout_s")
        timed = [s for s in table.to_act if not table.seats[s].bot] if timeout and not table.finished else []
        if not timed or timeout is None:
            return [None] * len(table.seats)
        known = len(log) >= table.turn_version
        turn = log[table.turn_version - 1] if known else self.store.read(table.game_id, table.turn_version - 1, 1)[0]
        started = datetime.fromisoformat(turn["at"])
        due = rfc3339(started + timedelta(seconds=timeout))
        return [due if s in timed else None for s in range(len(table.seats))]

    @staticmethod
    def game_view(table: Table, viewer: int | None) -> dict[str, Any]:
        generic = engine.view(table, viewer, reveal=table.sealed)
        return {
            "id": table.game_id,
            "game": table.kind,
            "options": dict(table.options),
            "version": table.version,
            "seats": [s.to_dict() for s in table.seats],
            "you": viewer,
            **generic,
        }

    def legal_actions(self, game_id: str, seat: int | None, head: Head | None = None) -> dict[str, Any]:
        """The caller's legal actions now (empty for spectators and seats not to act), with the game's
        compact description of the rest where there are too many to list."""
        table, _head = self.tables.load(game_id, head)
        space = engine.action_space(table, seat) if seat is not None else {"actions": []}
        return {"seat": seat, "version": table.version, **space}

    def events(self, game_id: str, viewer: int | None, after: int, limit: int) -> dict[str, Any]:
        """A page of the log as the caller may see it."""
        table, _head = self.tables.load(game_id)
        envs = self.store.read(game_id, after, limit)
        items = [public_envelope(e, viewer, table.sealed) for e in envs]
        more = bool(envs) and envs[-1]["seq"] < table.version
        return {"items": items, "next": envs[-1]["seq"] if more else None}

    def wait_events(self, game_id: str, viewer: int | None, after: int, block_ms: int) -> list[dict[str, Any]]:
        """The events after ``after`` as ``viewer`` may see them, waiting up to ``block_ms`` for the first."""
        envs = self.store.read(game_id, after, 500) or self.store.wait_for(game_id, after, block_ms)
        if not envs:
            return []
        table, _head = self.tables.load(game_id)
        return [public_envelope(e, viewer, table.sealed) for e in envs]

    def replay(self, game_id: str, step: int, as_seat: int | None, viewer: int | None) -> dict[str, Any]:
        """The view after event ``step``, as a spectator, or as ``as_seat`` saw it."""
        table, head = self.tables.load(game_id)
        self._check_replay(table, head, step, as_seat, viewer, "step")
        envs = self.store.read(game_id, 0, step)
        past = engine.replay([to_event(e) for e in envs])
        return {"step": step, "last": head.version, **self._step_view(past, envs, as_seat, table.sealed)}

    def steps(self, game_id: str, first: int, limit: int, as_seat: int | None, viewer: int | None) -> dict[str, Any]:
        """``replay`` of steps ``first`` to ``first + limit - 1`` (at most the last), in one pass: the log is
        read once up to the page's last step and folded event by event, each step's view taken as the
        fold passes it (O(steps), where a ``replay`` per step would fold the log from the start each time).
        ``next``: the next page's ``first``, None when this page reaches the last step."""
        table, head = self.tables.load(game_id)
        self._check_replay(table, head, first, as_seat, viewer, "from")
        last = min(head.version, first + limit - 1)
        envs = self.store.read(game_id, 0, last)
        past = engine.replay([to_event(e) for e in envs[: first - 1]]) if first > 1 else None
        items = []
        for step in range(first, last + 1):
            past = engine.evolve(past, to_event(envs[step - 1]))
            items.append({"step": step, **self._step_view(past, envs, as_seat, table.sealed)})
        return {"first": first, "last": head.version, "items": items, "next": last + 1 if last < head.version else None}

    @staticmethod
    def _check_replay(table: Table, head: Head, step: int, as_seat: int | None, viewer: int | None, at: str) -> None:
        """Who may see a replay from ``step`` as ``as_seat`` (docs/api.md "Replays"): a step of the log, a seat of
        the game, and while the game runs only the caller's own seat (``at``: the step's query parameter)."""
        if not 1 <= step <= head.version:
            raise InvalidRequest(f"{at} must be between 1 and {head.version}", (at,))
        if as_seat is not None and not 0 <= as_seat < len(table.seats):
            raise InvalidRequest(f"there is no seat {as_seat}", ("as",))
        if as_seat is not None and not table.sealed and as_seat != viewer:
            raise Forbidden("while the game runs, a replay can only be seen as your own seat")

    def _step_view(
        self, past: Table, envs: Sequence[Mapping[str, Any]], as_seat: int | None, sealed: bool
    ) -> dict[str, Any]:
        """One replay step: the event ``past`` ends with (``envs`` holds the log from its first to at least
        that event) and the view after it, as ``as_seat`` saw it, or the spectator's; everything once the
        game is ``sealed`` and no seat is named."""
        who = as_seat  # docs/api.md: the spectator view while in progress, unless as=your own seat
        everything = sealed and as_seat is None
        shown = self.full_view(past, who, envs)
        if everything:
            shown["state"] = past.game.view(past.state, None, True)
        return {"event": public_envelope(envs[past.version - 1], who, everything), "view": shown}

    def record(self, game_id: str) -> dict[str, Any]:
        """The portable record; complete (with private parts, their salts and the seed) once the game is over.

        While the game runs the private parts and their salts are withheld; the
        chain and the commitments are public, so the record can be checked that far.
        """
        envs = list(self.store.read_all(game_id))
        if not is_sealed(envs):  # judged on what was read: a seal appended since a load shows it all
            envs = [withheld_envelope(e) for e in envs]
        return build_record(envs)

    def log_complete(self, game_id: str) -> bool:
        """Whether the game's log is complete (sealed): no event will ever follow its last."""
        return self.tables.load(game_id)[0].sealed

    def held(self, game_id: str) -> bool:
        """Whether a tournament still holds the game unsealed (its round's deal is still in play elsewhere)."""
        return self.store.meta(game_id).get(HOLD) == "1"

    def full_record(self, game_id: str) -> dict[str, Any]:
        """The record with every private part and salt, even while the game runs (server-side audits only)."""
        return build_record(list(self.store.read_all(game_id)))

    def audit(self, game_id: str) -> dict[str, Any]:
        """Verify the stored log server-side (it sees the private parts; while the game runs it reports
        only pass or fail of each check, and the verdict ``in_progress`` at best)."""
        report = verify_record(self.full_record(game_id))
        if not report["sealed"]:
            for check in report["checks"]:
                if not check["ok"] and check["name"] != SEALED_CHECK:
                    check["detail"] = "failed (details withheld while the game is in progress)"
        return report


def token_hash(token: str) -> str:
    """How a seat token is stored: its SHA-256 (the token itself is never kept)."""
    return sha256_hex(token.encode())
