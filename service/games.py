"""Games as the API and the workers see them: the commands (``service.commands``) behind the methods
the callers have always used, and the queries (views, the log, replays, the record, the audit).

Checks here are existence and permission (404/401/403/409); shape checks belong to the API schemas and
rule checks to ``domain``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from domain import bots, engine
from domain.audit import SEALED_CHECK, verify_record
from domain.engine import Table
from domain.record import build_record, is_sealed, public_envelope, to_event, withheld_envelope
from service.commands import (
    JOB_GRACE_MS,
    Answer,
    Commands,
    CreateGame,
    JoinSeat,
    Placement,
    ReleaseGame,
    TakeAction,
    utc_now,
)
from service.errors import Forbidden, InvalidRequest, Unauthorized
from service.memory import GameMemory
from service.ports import EventLog, Head, NoScheduler, Notary, Scheduler, Signing, SnapshotLoader
from service.reader import HOLD, SIGNATURE, GameReader, log_missing
from service.views import deadlines, full_view, game_view, turn_start_in

RETRY_MS = 5000  # after asking again for a job, how long before the sweeper looks at the game once more


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class GameService:
    """Creates games, takes actions and answers queries, on one log and one process's memory."""

    def __init__(
        self,
        store: EventLog,
        memory: GameMemory | None = None,
        snapshots: SnapshotLoader | None = None,
        scheduler: Scheduler | None = None,
        clock: Callable[[], datetime] = utc_now,
        random_bytes: Callable[[int], bytes] | None = None,
        signing: Signing | None = None,
        notary: Notary | None = None,
    ) -> None:
        self.store = store
        self.signing = signing
        self.notary = notary
        self.memory = memory or GameMemory()
        self.reader = GameReader(store, self.memory, snapshots)
        self.scheduler = scheduler or NoScheduler()
        self.clock = clock
        self.commands = Commands(
            store, store, self.memory, self.reader, self.scheduler, clock, random_bytes, signing, notary
        )
        self.identify = self.reader.identify  # who calls, and the game's head
        self.hear = self.memory.hear  # what another process appended, as it announced it

    # -- commands (``service.commands``) -------------------------------------------

    def create_game(
        self,
        game: str,
        players: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any] | None,
        deal: Mapping[str, Any] | None,
        idempotency_key: str | None = None,
        placement: Placement | None = None,
    ) -> Answer:
        """``CreateGame``: the answer holds each human seat's token, shown once."""
        return self.commands.create_game(CreateGame(game, players, options, deal, idempotency_key, placement))

    def act(
        self,
        game_id: str,
        seat: int | None,
        action: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        by: str | None = None,
        head: Head | None = None,
    ) -> Answer:
        """``TakeAction`` for ``seat`` without its token (bots, timeouts, forfeits, tests); ``head``: the
        head the caller read (the action is then decided on the game at that head)."""
        if seat is None:
            raise Unauthorized("acting needs a seat token (Authorization: Bearer <token>)")
        actor = self.commands.seat_actor(game_id, seat, head)
        return self.commands.take_action(TakeAction(game_id, actor, action, expected_version, idempotency_key, by=by))

    def join(self, game_id: str, seat: int, name: str, idempotency_key: str | None = None) -> Answer:
        """``JoinSeat``: the answer holds the seat's token, shown only here."""
        return self.commands.join_seat(JoinSeat(game_id, seat, name, idempotency_key))

    def release(self, game_id: str) -> bool:
        """``ReleaseGame``: True once the game is sealed."""
        return self.commands.release(ReleaseGame(game_id))

    # -- jobs ------------------------------------------------------------------------

    def turn_still_due(self, game_id: str, seat: int, version: int) -> tuple[Table, Head] | None:
        """The table and head when ``seat`` must still act on the turn that was current at
        ``version`` (only other seats' secret commitments happened since), else None."""
        table, head = self.reader.load(game_id)
        if seat not in table.to_act or table.version < version:
            return None
        since = self.store.read(game_id, version, table.version - version)
        if all(e["type"] == engine.CHOICE_COMMITTED and e["data"]["seat"] != seat for e in since):
            return table, head
        return None

    def bot_random(self, game_id: str, table: Table, seat: int, why: str) -> random.Random:
        """The random stream of ``seat``'s bot (``why == "bot"``) or timeout on ``table``'s turn (the one
        that began at its ``turn_version``): ``domain.bots``, the search levels' from the game's seed,
        the others' public."""
        level = table.seats[seat].bot
        if why == "bot" and bots.searches(level):
            return bots.turn_stream(
                level, bytes.fromhex(self.reader.facts(game_id).seed), game_id, seat, table.turn_version
            )
        return bots.public_stream(why, game_id, seat, table.turn_version)

    def recover(self, game_id: str) -> None:
        """Ask again for the jobs a game waits on (the sweeper, for an overdue outbox entry): its bots'
        turns, its expired move timeouts; then note when to look again (never, once nothing is due).

        The jobs are idempotent (the turn's version is their key), so asking twice changes nothing;
        a job still queued or running (a deep queue under load) is not asked for again, or a busy
        queue would fill with copies of itself.
        """
        table, _head = self.reader.load(game_id)
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

    # -- queries ------------------------------------------------------------------

    def view(self, game_id: str, viewer: int | None, head: Head | None = None) -> dict[str, Any]:
        """The caller's view of the game now."""
        table, _head = self.reader.load(game_id, head)
        return self.full_view(table, viewer)

    def full_view(self, table: Table, viewer: int | None, log: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """``views.full_view``; ``log``: the game's envelopes from its first, when already read."""
        return full_view(table, viewer, _turn_start(self.store, table, log))

    def deadlines(self, table: Table, log: Sequence[Mapping[str, Any]] = ()) -> list[str | None]:
        """Per seat: when its move timeout plays for it (``views.deadlines``)."""
        return deadlines(table, _turn_start(self.store, table, log))

    game_view = staticmethod(game_view)

    def legal_actions(self, game_id: str, seat: int | None, head: Head | None = None) -> dict[str, Any]:
        """The caller's legal actions now (empty for spectators and seats not to act), with the game's
        compact description of the rest where there are too many to list."""
        table, _head = self.reader.load(game_id, head)
        space = engine.action_space(table, seat) if seat is not None else {"actions": []}
        return {"seat": seat, "version": table.version, **space}

    def events(self, game_id: str, viewer: int | None, after: int, limit: int) -> dict[str, Any]:
        """A page of the log as the caller may see it."""
        table, _head = self.reader.load(game_id)
        envs = self.store.read(game_id, after, limit)
        items = [public_envelope(e, viewer, table.sealed) for e in envs]
        more = bool(envs) and envs[-1]["seq"] < table.version
        return {"items": items, "next": envs[-1]["seq"] if more else None}

    def wait_events(self, game_id: str, viewer: int | None, after: int, block_ms: int) -> list[dict[str, Any]]:
        """The events after ``after`` as ``viewer`` may see them, waiting up to ``block_ms`` for the first."""
        envs = self.store.read(game_id, after, 500) or self.store.wait_for(game_id, after, block_ms)
        if not envs:
            return []
        table, _head = self.reader.load(game_id)
        return [public_envelope(e, viewer, table.sealed) for e in envs]

    def replay(self, game_id: str, step: int, as_seat: int | None, viewer: int | None) -> dict[str, Any]:
        """The view after event ``step``, as a spectator, or as ``as_seat`` saw it."""
        table, head = self.reader.load(game_id)
        self._check_replay(table, head, step, as_seat, viewer, "step")
        envs = self.store.read(game_id, 0, step)
        past = engine.replay([to_event(e) for e in envs])
        return {"step": step, "last": head.version, **self._step_view(past, envs, as_seat, table.sealed)}

    def steps(self, game_id: str, first: int, limit: int, as_seat: int | None, viewer: int | None) -> dict[str, Any]:
        """``replay`` of steps ``first`` to ``first + limit - 1`` (at most the last), in one pass: the log is
        read once up to the page's last step and folded event by event, each step's view taken as the
        fold passes it (O(steps), where a ``replay`` per step would fold the log from the start each time).
        ``next``: the next page's ``first``, None when this page reaches the last step."""
        table, head = self.reader.load(game_id)
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

    def record(self, game_id: str, log_head: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The portable record; complete (with private parts, their salts and the seed) once the game is over.

        While the game runs the private parts and their salts are withheld; the
        chain and the commitments are public, so the record can be checked that far. Once sealed, its
        inclusion proof is against ``log_head`` when given (a signed tree head the game is in), else the
        log's head now.
        """
        envs = list(self.store.read_all(game_id))
        if not is_sealed(envs):  # judged on what was read: a seal appended since a load shows it all
            return build_record([withheld_envelope(e) for e in envs])
        return self._attested(game_id, build_record(envs), log_head)

    def log_complete(self, game_id: str) -> bool:
        """Whether the game's log is complete (sealed): no event will ever follow its last."""
        return self.reader.load(game_id)[0].sealed

    def held(self, game_id: str) -> bool:
        """Whether a tournament still holds the game unsealed (its round's deal is still in play elsewhere)."""
        return self.store.meta(game_id).get(HOLD) == "1"

    def full_record(self, game_id: str, log_head: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The record with every private part and salt, even while the game runs (server-side audits only)."""
        envs = list(self.store.read_all(game_id))
        return self._attested(game_id, build_record(envs), log_head) if is_sealed(envs) else build_record(envs)

    def _attested(self, game_id: str, record: dict[str, Any], log_head: Mapping[str, Any] | None) -> dict[str, Any]:
        """A sealed game's record with its signature (written with the seal) and its inclusion proof in the
        transparency log (a game not logged yet is logged first: the log is only ever late). Reading the
        record of a game the log holds writes nothing: the log is asked first (``Notary.missing``)."""
        signature = self._signature(game_id)
        if signature is None:
            return record  # sealed before records were signed, or by a server without a key
        events = record.pop("events")
        record["signature"] = signature
        if self.notary is not None:
            if self.notary.missing([game_id]):
                self.notary.add(signature)
            head = log_head or self.notary.head()
            record["inclusion"] = {**self.notary.inclusion(game_id, head["size"]), "head": dict(head)}
        record["events"] = events
        return record

    def _signature(self, game_id: str) -> dict[str, Any] | None:
        raw = self.store.look(game_id, [SIGNATURE]).fields[0]
        return None if raw is None else dict(json.loads(raw))

    def log_all(self, game_ids: Sequence[str]) -> dict[str, Any] | None:
        """Log every sealed game of ``game_ids`` not logged yet; the log's signed head, which holds them all
        (None without a transparency log)."""
        if self.notary is None:
            return None
        log_missing(self.notary, self.store, game_ids)
        return self.notary.head()

    def keys(self) -> dict[str, Any]:
        """The JWK set of every key this server signed with (``GET /v1/keys``); empty without a key."""
        return self.signing.keys() if self.signing is not None else {"keys": []}

    def audit(self, game_id: str) -> dict[str, Any]:
        """Verify the stored log server-side (it sees the private parts; while the game runs it reports
        only pass or fail of each check, and the verdict ``in_progress`` at best), its signature against
        this server's keys."""
        keys = self.keys() if self.signing is not None else None
        report = verify_record(self.full_record(game_id), keys=keys, unsigned_ok=True)  # a game sealed before signing
        if not report["sealed"]:
            for check in report["checks"]:
                if not check["ok"] and check["name"] != SEALED_CHECK:
                    check["detail"] = "failed (details withheld while the game is in progress)"
        return report


def _turn_start(store: EventLog, table: Table, log: Sequence[Mapping[str, Any]] = ()) -> Callable[[], str]:
    """When ``table``'s turn began: from ``log`` (envelopes from the first) when it holds it, else read."""
    return turn_start_in(log, table) or (lambda: str(store.read(table.game_id, table.turn_version - 1, 1)[0]["at"]))
