"""The tournament service: creation, organiser commands, the runner, and queries.

A tournament is a log of its own in the event store (id ``t...``; the games'
envelope format: hash chain, salted commitments), next to the ordinary games it
creates through ``GameService``. Its server-only facts live in its meta hash:
the hashes of the organiser's and entrants' tokens, the fixed deals, and each
duplicate round's seed (or deal salt) until the round is revealed.

``advance`` is the runner (an RQ job; see ``workers.jobs``): it records the
results of finished games, then asks the domain what comes next
(``commands.next_step``) and does it (pair a round, create a table's game,
release and reveal a duplicate round, finish), until nothing more can happen
now. Every step is one conditional append, and a game is created with an
idempotency key of its table, so two runners at once, or a runner that dies
half-way, neither skip nor repeat anything.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from domain import engine
from domain.canonical import canonical_json, sha256_hex
from domain.errors import GameOver
from domain.events import Event
from domain.record import GENESIS, envelopes, public_envelope, rfc3339, to_event, withheld_envelope
from domain.rng import seed_hash
from domain.signatures import tournament_statement
from domain.tournament import commands
from domain.tournament.archive import ARCHIVE_FORMAT, ARCHIVE_IN_PROGRESS_NOTE, COMPLETE_CHECK, verify_archive
from domain.tournament.model import FINISHED, RUNNING, Table, Tournament, evolve
from domain.tournament.standings import for_view
from service.commands import Answer, Placement, fresh_salt, utc_now
from service.errors import Forbidden, IdempotencyKeyReused, ServiceError, Unauthorized
from service.games import GameService
from service.memory import token_hash
from service.ports import Append, EventLog, Head, LogRead, NoScheduler, Scheduler, VersionConflict
from service.reader import GameReader

TOURNAMENT_ID_PREFIX = "t"
ORGANISER = "organiser"
MAX_RETRIES = 8
MAX_STEPS = 10_000
SWEEP_MS = 10_000  # a running tournament's runner is asked for at least this often (a safety net)
FORFEIT_REPAIR_S = 10.0  # a forfeit resignation whose game_forfeited never came is recorded by the runner


class TournamentNotFound(ServiceError):
    kind = "tournament-not-found"


class TournamentConflict(ServiceError):
    """A command the tournament's state does not allow now (starting twice, forfeiting a finished game)."""

    kind = "tournament-state"


@dataclass(frozen=True)
class Role:
    """Who calls: the organiser, an entrant (its number), or nobody in particular (None, None)."""

    organiser: bool
    entrant: int | None


@dataclass
class TournamentService:
    """Creates and runs tournaments; answers their queries."""

    store: EventLog
    games: GameService
    reader: GameReader  # the games' tables, read for their results
    scheduler: Scheduler = field(default_factory=NoScheduler)
    clock: Callable[[], datetime] = utc_now
    cache_size: int = 1024  # tournaments whose state this process keeps (least recently used dropped first)
    _cache: OrderedDict[str, Tournament] = field(default_factory=OrderedDict, repr=False)

    # -- creation -----------------------------------------------------------------

    def create(self, settings: Mapping[str, Any], idempotency_key: str | None = None) -> Answer:
        """Create a tournament; the answer holds the organiser's token and each human entrant's, shown once."""
        fingerprint = sha256_hex(canonical_json({"tournament": dict(settings)}))
        tid = self._new_id(idempotency_key, fingerprint)
        if self.store.head(tid).version:
            return Answer(self._creation_answer(tid, None, {}), replayed=True)
        events = commands.create(
            tid,
            settings["game"],
            settings.get("options"),
            settings["entrants"],
            settings["format"],
            settings.get("rounds"),
            settings.get("table_size"),
            settings.get("scoring"),
            settings.get("deals"),
        )
        organiser = secrets.token_urlsafe(32)
        people = events[0].data["entrants"]
        tokens = {e["entrant"]: secrets.token_urlsafe(32) for e in people if e["bot"] is None}
        meta = {f"tok:{token_hash(organiser)}": ORGANISER}
        meta |= {f"tok:{token_hash(tok)}": str(n) for n, tok in tokens.items()}
        meta |= {f"ent:{n}": token_hash(tok) for n, tok in tokens.items()}
        if settings.get("deals") is not None:
            meta["deals"] = json.dumps(settings["deals"])
        try:
            self._append(tid, None, events, Head(0, GENESIS), meta)
        except VersionConflict:
            return Answer(self._creation_answer(tid, None, {}), replayed=True)
        return Answer(self._creation_answer(tid, organiser, tokens))

    def _new_id(self, key: str | None, fingerprint: str) -> str:
        fresh = TOURNAMENT_ID_PREFIX + secrets.token_hex(8)
        if key is None:
            return fresh
        tid = self.store.reserve_creation(sha256_hex(f"tournament:{key}".encode()), fingerprint, fresh)
        if tid is None:
            raise IdempotencyKeyReused()
        return tid

    def _creation_answer(self, tid: str, organiser: str | None, tokens: Mapping[int, str]) -> dict[str, Any]:
        view = self.view(tid)
        entrants = [{**e, "token": tokens.get(e["entrant"])} for e in view["entrants"]]
        return {**view, "organiser_token": organiser, "entrants": entrants}

    # -- identity and loading -------------------------------------------------------

    def identify(self, tid: str, token: str | None) -> Role:
        """The caller's role; 404 for an unknown tournament, 401 for a token that is not one of it."""
        field_name = f"tok:{token_hash(token)}" if token is not None else "-"
        seen = self.store.look(tid, [field_name]) if _is_tournament(tid) else LogRead(Head(0, ""), [None], [])
        head, role = seen.head, seen.fields[0]
        if head.version == 0:
            raise TournamentNotFound(f"no tournament {tid!r}")
        if token is not None and role is None:
            raise Unauthorized("this token is neither the organiser's nor an entrant's of this tournament")
        if role == ORGANISER:
            return Role(True, None)
        return Role(False, int(role) if role is not None else None)

    def load(self, tid: str) -> tuple[Tournament, Head]:
        """The tournament now (from the cached state plus the log's tail)."""
        head = self.store.head(tid) if _is_tournament(tid) else Head(0, "")
        if head.version == 0:
            raise TournamentNotFound(f"no tournament {tid!r}")
        state = self._cache.get(tid)
        if state is None or state.version > head.version:
            state = None
        after = state.version if state is not None else 0
        for env in self.store.read(tid, after, head.version - after):
            state = evolve(state, to_event(env))
        assert state is not None
        self._cache[tid] = state
        self._cache.move_to_end(tid)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return state, head

    def _append(
        self,
        tid: str,
        before: Tournament | None,
        events: Sequence[Event],
        head: Head,
        meta: Mapping[str, str] | None = None,
    ) -> None:
        """Append ``events``; while the tournament runs, the outbox asks the sweeper to look at it later."""
        envs = envelopes(list(events), head.version + 1, head.hash, rfc3339(self.clock()), fresh_salt)
        after = before
        for ev in events:
            after = evolve(after, ev)
        due = self._next_look() if after is not None and after.status == RUNNING else None
        self.store.append(tid, Append(envs, head, meta=meta, due=due))

    def _next_look(self) -> int:
        return int(self.clock().timestamp() * 1000) + SWEEP_MS

    def recover(self, tid: str) -> None:
        """The sweeper's look at a tournament: a running one gets a runner (cheap when there is nothing
        to do) and another look later; one not running is not looked at again."""
        state, _head = self.load(tid)
        if state.status == RUNNING:
            self.scheduler.tournament_step(tid)
        self.store.set_due(tid, self._next_look() if state.status == RUNNING else None)

    # -- organiser commands -----------------------------------------------------------

    def command(
        self, tid: str, token: str | None, decide: Callable[[Tournament], list[Event]], advance: bool = True
    ) -> dict[str, Any]:
        """Run an organiser command (``decide`` gives its events) and answer the tournament's view."""
        self._organiser(tid, token)
        for _attempt in range(MAX_RETRIES):
            state, head = self.load(tid)
            with state_errors():
                events = decide(state)
            try:
                self._append(tid, state, events, head)
            except VersionConflict:
                continue
            if advance:
                self.scheduler.tournament_step(tid)
            return self.view(tid)
        raise TournamentConflict("the tournament kept changing; try again")

    def forfeit(self, tid: str, token: str | None, game_id: str, seat: int, reason: str) -> dict[str, Any]:
        """End a stalled game: ``seat`` resigns it (recorded ``by: forfeit``), then the log records why."""
        self._organiser(tid, token)
        state, _head = self.load(tid)
        with state_errors():
            commands.check_forfeit(state, game_id, seat)
        try:
            self.games.act(game_id, seat, {"type": engine.RESIGN}, by="forfeit")
        except GameOver:
            raise TournamentConflict(f"game {game_id} ended before it could be forfeited") from None
        return self.command(tid, token, lambda t: commands.forfeited(t, game_id, seat, reason))

    def _organiser(self, tid: str, token: str | None) -> None:
        if token is None:
            raise Unauthorized("organiser commands need the organiser's token (Authorization: Bearer <token>)")
        if not self.identify(tid, token).organiser:
            raise Forbidden("only the organiser may do this")

    # -- the runner -------------------------------------------------------------------

    def advance(self, tid: str) -> int:
        """Move the tournament along as far as it can go now; the number of events recorded."""
        recorded = 0
        for _step in range(MAX_STEPS):
            state, head = self.load(tid)
            events, meta = self._results(state) or self._next(state)
            if not events:
                return recorded
            try:
                self._append(tid, state, events, head, meta)
            except VersionConflict:
                continue  # another runner moved it: look again
            recorded += len(events)
        return recorded

    def _results(self, t: Tournament) -> tuple[list[Event], dict[str, str]] | None:
        """``game_finished`` for the first game of the round that ended but is not recorded yet.

        A game the organiser forfeited is recorded once its ``game_forfeited`` is (the forfeit
        command appends it right after the resignation); if that never came (a crash in between),
        after ``FORFEIT_REPAIR_S`` the runner records the forfeit itself, its reason unknown.
        """
        for table in t.round_tables(t.round):
            if table.game is None or table.finished:
                continue
            game, head = self.reader.load(table.game)
            if game.result is None:
                continue
            tail = self.store.read(table.game, max(0, head.version - 3), 3)
            ended = next(e for e in reversed(tail) if e["type"] == engine.GAME_ENDED)
            forfeit = self._unlogged_forfeit(table, tail)
            if forfeit is not None and self._recent(ended["at"]):
                continue
            events = commands.forfeited(t, table.game, forfeit, None) if forfeit is not None else []
            return [*events, *commands.game_finished(t, table.game, game.result, ended["hash"])], {}
        return None

    @staticmethod
    def _unlogged_forfeit(table: Table, tail: Sequence[Mapping[str, Any]]) -> int | None:
        """The seat a game's resignation ``by: forfeit`` gave up, when the tournament's log lacks it."""
        taken = next((e for e in reversed(tail) if e["type"] == engine.ACTION_TAKEN), None)
        if table.forfeited or taken is None or taken["data"].get("by") != "forfeit":
            return None
        seat: int = taken["data"]["seat"]
        return seat

    def _recent(self, at: str) -> bool:
        age = self.clock() - datetime.fromisoformat(at.replace("Z", "+00:00"))
        return age.total_seconds() < FORFEIT_REPAIR_S

    def _next(self, t: Tournament) -> tuple[list[Event], dict[str, str]]:
        step = commands.next_step(t)
        if step is None:
            return [], {}
        if step.kind == "pair":
            deal, meta = self._commit_deal(t)
            with state_errors():
                return commands.pair(t, deal), meta
        if step.kind == "start_game":
            assert step.table is not None
            return commands.game_started(t, step.table, self._start_game(t, step.table)), {}
        if step.kind == "close":
            return commands.close_round(t, self._reveal_round(t)), {}
        return commands.finish(t), {}

    def _commit_deal(self, t: Tournament) -> tuple[dict[str, str] | None, dict[str, str]]:
        """A duplicate round's commitment (published now) and the secret behind it (kept in meta)."""
        if t.settings.format != "duplicate":
            return None, {}
        rnd = t.round + 1
        if t.settings.fixed_deals:
            salt = fresh_salt()
            deal = self._fixed_deal(t.id, rnd)
            return {"commitment": commands.deal_commitment(deal, salt)}, {f"round:{rnd}:salt": salt}
        seed = secrets.token_bytes(32)
        return {"seed_hash": seed_hash(seed)}, {f"round:{rnd}:seed": seed.hex()}

    def _fixed_deal(self, tid: str, rnd: int) -> dict[str, Any]:
        deal: dict[str, Any] = json.loads(self.store.meta(tid)["deals"])[rnd - 1]
        return deal

    def _start_game(self, t: Tournament, table: Table) -> str:
        """Create the game of ``table`` (idempotent: the same table always gets the same game)."""
        s, meta = t.settings, self.store.meta(t.id)
        people = [s.entrants[e] for e in table.entrants]
        duplicate = s.format == "duplicate"
        seed_hex = meta.get(f"round:{table.round}:seed") if duplicate else None
        placement = Placement(
            tournament={"id": t.id, "round": table.round, "table": table.table},
            token_hashes={seat: meta[f"ent:{p['entrant']}"] for seat, p in enumerate(people) if p["bot"] is None},
            seed=bytes.fromhex(seed_hex) if seed_hex else None,
            hold=duplicate,
        )
        deal = self._fixed_deal(t.id, table.round) if duplicate and s.fixed_deals else None
        players = [{"name": p["name"], "bot": p["bot"]} for p in people]
        answer = self.games.create_game(
            s.game, players, s.options, deal, f"{t.id}:{table.round}:{table.table}", placement=placement
        )
        game_id: str = answer.body["id"]
        return game_id

    def _reveal_round(self, t: Tournament) -> dict[str, Any] | None:
        """Seal every game of a duplicate round (their private parts become public), then its deal's secret."""
        if t.settings.format != "duplicate":
            return None
        for table in t.round_tables(t.round):
            if table.game is not None:
                self.games.release(table.game)
        meta = self.store.meta(t.id)
        if t.settings.fixed_deals:
            return {"deal": self._fixed_deal(t.id, t.round), "salt": meta[f"round:{t.round}:salt"]}
        return {"seed": meta[f"round:{t.round}:seed"]}

    # -- queries ------------------------------------------------------------------------

    def view(self, tid: str) -> dict[str, Any]:
        """The tournament now: settings, status, the current round's tables and byes, final standings."""
        t, _head = self.load(tid)
        s = t.settings
        return {
            "id": t.id,
            "game": s.game,
            "options": dict(s.options),
            "format": s.format,
            "rounds": s.rounds,
            "table_size": s.table_size,
            "scoring": list(s.scoring),
            "status": t.status,
            "round": t.round,
            "version": t.version,
            "entrants": [{**e, "withdrawn": e["entrant"] in t.withdrawn} for e in s.entrants],
            "tables": [_table_view(tb) for tb in t.round_tables(t.round)],
            "byes": list(t.byes.get(t.round, ())),
            "deal": t.deals.get(t.round),
            "standings": [for_view(row) for row in t.standings] if t.standings is not None else None,
        }

    def games_page(self, tid: str, limit: int, cursor: str | None) -> dict[str, Any]:
        """The tournament's tables that have a game, in round then table order: ``{"items", "next"}``."""
        t, _head = self.load(tid)
        started = [tb for tb in t.tables if tb.game is not None]
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = started[start : start + limit]
        more = start + limit < len(started)
        return {"items": [_table_view(tb) for tb in page], "next": str(start + limit) if more else None}

    def events(self, tid: str, after: int, limit: int) -> dict[str, Any]:
        """A page of the tournament's log (its hidden parts withheld until it is over)."""
        t, _head = self.load(tid)
        envs = self.store.read(tid, after, limit)
        items = [public_envelope(e, None, t.status == FINISHED) for e in envs]
        more = bool(envs) and envs[-1]["seq"] < t.version
        return {"items": items, "next": envs[-1]["seq"] if more else None}

    def log_complete(self, tid: str, after: int) -> bool:
        """Whether a reader who has every event up to ``after`` has the whole log, for good (it is over)."""
        t, _head = self.load(tid)
        return t.status == FINISHED and after >= t.version

    def wait_events(self, tid: str, after: int, block_ms: int) -> list[dict[str, Any]]:
        """The events after ``after``, waiting up to ``block_ms`` for the first."""
        envs = self.store.read(tid, after, 500) or self.store.wait_for(tid, after, block_ms)
        if not envs:
            return []
        t, _head = self.load(tid)
        return [public_envelope(e, None, t.status == FINISHED) for e in envs]

    def archive(self, tid: str) -> dict[str, Any]:
        """The portable archive: the tournament's log and every game's record (see ``domain.tournament.archive``).

        While the tournament runs its hidden parts are withheld, and so are those of
        every game not yet sealed, as ``GET /v1/games/{id}/record`` withholds them.
        """
        t, head = self.load(tid)
        envs = list(self.store.read_all(tid))
        complete = t.status == FINISHED
        if not complete:
            envs = [withheld_envelope(e) for e in envs]
        started = [tb.game for tb in t.tables if tb.game is not None]
        shown = [g for g in started if complete or not self.games.held(g)]
        return self._archive(tid, head, complete, envs, shown, self.games.record)

    def _archive(
        self,
        tid: str,
        head: Head,
        complete: bool,
        envs: list[dict[str, Any]],
        game_ids: list[str],
        record: Callable[[str, Mapping[str, Any] | None], dict[str, Any]],
    ) -> dict[str, Any]:
        """An archive of the log ``envs`` at ``head`` and the games' ``record`` (as served, or whole for the
        audit): signed, with one signed tree head that every sealed game among them is proven in."""
        log_head = self.games.log_all(game_ids)
        log = {"id": tid, "head": head.hash, "events": envs}
        archive: dict[str, Any] = {"format": ARCHIVE_FORMAT, "complete": complete, "tournament": log}
        if not complete:
            archive["note"] = ARCHIVE_IN_PROGRESS_NOTE
        if self.games.signing is not None:
            archive["signature"] = self.games.signing.sign(tournament_statement(tid, head.version, head.hash, complete))
        if log_head is not None:
            archive["log_head"] = log_head
        archive["games"] = [record(g, log_head) for g in game_ids]
        return archive

    def audit(self, tid: str) -> dict[str, Any]:
        """Verify the stored tournament and its games server-side (it sees everything; while the
        tournament runs it reports only pass or fail, like a game's audit)."""
        t, head = self.load(tid)
        envs = list(self.store.read_all(tid))
        started = [tb.game for tb in t.tables if tb.game is not None]
        archive = self._archive(tid, head, t.status == FINISHED, envs, started, self.games.full_record)
        keys = self.games.keys() if self.games.signing else None
        report = verify_archive(archive, unfinished_ok=True, keys=keys, unsigned_ok=True)
        if t.status != FINISHED:
            for check in report["checks"]:
                if not check["ok"] and check["name"] != COMPLETE_CHECK:
                    check["detail"] = "failed (details withheld while the tournament is in progress)"
        return report


@contextmanager
def state_errors() -> Iterator[None]:
    """The domain's ``TournamentStateError`` as the service's ``TournamentConflict`` (409)."""
    try:
        yield
    except commands.TournamentStateError as exc:
        raise TournamentConflict(str(exc)) from None


def _table_view(tb: Table) -> dict[str, Any]:
    status = "finished" if tb.finished else "playing" if tb.game is not None else "waiting"
    return {
        "round": tb.round,
        "table": tb.table,
        "entrants": list(tb.entrants),
        "game": tb.game,
        "status": status,
        "ranks": list(tb.ranks) if tb.ranks is not None else None,
        "forfeit": tb.forfeit,
        "forfeit_seat": tb.forfeit_seat,
    }


def _is_tournament(tid: str) -> bool:
    return tid.startswith(TOURNAMENT_ID_PREFIX)
