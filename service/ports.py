"""What the service layer needs from the outside, as protocols (adapters implement them).

The service layer imports these, never an adapter: ``adapters.redis_store``
implements ``EventLog`` on Redis Streams, ``adapters.rq_scheduler`` implements
``Scheduler`` on RQ, and ``bootstrap`` wires them together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from domain.engine import Table
from domain.signatures import Signer


class VersionConflict(Exception):
    """The game moved on: ``current`` is its version now; ``tail``, when the store could tell them in
    the same answer, the envelopes after the version the caller expected (else empty)."""

    def __init__(self, current: int, tail: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(f"version conflict: the game is at version {current}")
        self.current = current
        self.tail = list(tail)


class HolderRefused(Exception):
    """An append's ``holder`` check failed: that meta field does not hold that value (nothing written)."""


class DuplicateCommand(Exception):
    """The idempotency key was used before: ``record`` is what the first call stored."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        super().__init__("duplicate command")
        self.record = record


class Keep(Enum):
    """``Keep.KEEP``: an append leaves the game's due time as it was (a secret commitment)."""

    KEEP = "keep"


Due = int | None | Keep  # when a game next needs a job: ms since the epoch, None for never, or keep


@dataclass(frozen=True)
class Head:
    """A game's last event number and hash (version 0: no such game)."""

    version: int
    hash: str


@dataclass(frozen=True, slots=True)
class Announcement:
    """One append as another process announced it (``adapters.announcements``): ``envelopes`` is their
    JSON array, still encoded (most announcements a process hears are of games it does not hold, or its
    own); ``seats``: the token hash fields the append named, with their seats (a creation, a join);
    ``origin``: the store that appended (``EventStore.origin``)."""

    game_id: str
    first: int
    envelopes: bytes
    seats: Mapping[str, int]
    origin: str = ""


@dataclass(frozen=True, slots=True)
class Quota:
    """One rate limit as a fixed window: counter ``name`` (kept with the game's keys) may reach
    ``limit`` in a window of ``period_s`` seconds that starts at its first count."""

    name: str
    limit: int
    period_s: int


class Quotas:
    """The windows a command counts against, counted once: by its first append, which refuses to write
    past any of them (``QuotaExceeded``), or, when the command appends nothing (refused, replayed), by
    whoever asked for the count afterwards (``sent`` tells which)."""

    def __init__(self, windows: Sequence[Quota]) -> None:
        self.windows = tuple(windows)
        self.sent = False


class WriteUnconfirmed(Exception):
    """An append was written but its replicas did not confirm it in time (``WAIT``): it may or may not
    survive a failover. A retry with the same idempotency key finds out which."""


class QuotaExceeded(Exception):
    """A command went past ``windows[index]`` of its quotas (nothing written); that window ends in
    ``retry_after_s`` seconds."""

    def __init__(self, index: int, retry_after_s: int) -> None:
        super().__init__(f"quota {index} exceeded: retry in {retry_after_s} s")
        self.index = index
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class Append:
    """One command's events, to be appended to a game's log only if the log is still at ``after`` (its
    version and hash), with what the same write carries: an idempotency key and the record kept under
    it, meta fields to set, when the game next needs a job (the outbox), a ``holder`` (a meta field and
    the value it must hold: a seat's token hash and its seat, when the caller took the seat from its own
    memory) and rate-limit ``quotas`` to count first."""

    envelopes: Sequence[Mapping[str, Any]]
    after: Head
    idempotency: tuple[str, Mapping[str, Any]] | None = None
    meta: Mapping[str, str] | None = None
    due: Due = Keep.KEEP
    holder: tuple[str, str] | None = None
    quotas: Quotas | None = None


@dataclass(frozen=True, slots=True)
class LogRead:
    """One look at a game's log: its head, the meta fields asked for (None: not set), and the envelopes
    asked for (never past that head)."""

    head: Head
    fields: list[str | None]
    envelopes: list[dict[str, Any]]


class GameLog(Protocol):
    """Each game's append-only log, with its server-only facts (the meta hash) and idempotency records.

    Every method is one round trip to the store. ``append`` is the only write and is conditional: it
    writes only if the log is still at the head the caller decided on (else ``VersionConflict``, with
    the events since when they are few), the idempotency key is new (else ``DuplicateCommand``),
    ``holder`` holds (else ``HolderRefused``) and no quota is exceeded (else ``QuotaExceeded``); it
    writes the events, the head, the meta fields and when the game next needs a job (the outbox)
    together, or nothing.
    """

    def append(self, game_id: str, entry: Append) -> int:
        """Append ``entry`` (all of it, or nothing); the log's new version."""
        ...

    def look(self, game_id: str, fields: Sequence[str] = (), after: int = 0, limit: int = 0) -> LogRead:
        """The head, meta ``fields`` and up to ``limit`` envelopes after ``after``, all at once."""
        ...

    def head(self, game_id: str) -> Head: ...
    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]: ...
    def read_all(self, game_id: str, batch: int = 1000) -> Iterator[dict[str, Any]]: ...
    def meta(self, game_id: str) -> dict[str, str]: ...
    def idempotency_record(self, game_id: str, key: str) -> dict[str, Any] | None: ...
    def wait_for(self, game_id: str, after: int, block_ms: int) -> list[dict[str, Any]]: ...
    def wait_many(self, after: Mapping[str, int], block_ms: int) -> set[str]: ...


class Outbox(Protocol):
    """When each game (or tournament) next needs a job; ``append`` writes it with the events, the
    sweeper reads what is overdue and notes when to look again."""

    def overdue(self, now_ms: int, limit: int = 200) -> list[str]: ...
    def set_due(self, stream_id: str, due_ms: int | None) -> None: ...


class CreationKeys(Protocol):
    """Idempotency keys of creations, which have no log yet to keep them in."""

    def reserve_creation(self, key_hash: str, fingerprint: str, fresh_id: str) -> str | None:
        """The id of a creation key: ``fresh_id`` if the key is new, the first id if the same request
        (``fingerprint``) used it before, None if a different request did."""
        ...


class EventLog(GameLog, Outbox, CreationKeys, Protocol):
    """Everything the service keeps in the store (``adapters.redis_store``, ``adapters.memory_log``)."""


class Signing(Protocol):
    """The server's signing key (``adapters.signing_keys``): signs a statement, ``{"kid", "alg",
    "statement", "sig"}`` (``domain.signatures``), and publishes its public key before its first use."""

    def sign(self, statement: Mapping[str, Any]) -> dict[str, Any]: ...
    def current(self) -> Signer:
        """The signer of the key as it is now, published (once more) before it is handed out."""
        ...

    def keys(self) -> dict[str, Any]: ...


class NotLogged(LookupError):
    """A game the transparency log does not hold (or not within the tree size asked for)."""


class BadTreeSize(ValueError):
    """A tree size or range the transparency log cannot answer for (beyond its size, or out of order)."""


class Notary(Protocol):
    """The transparency log of sealed games (``adapters.transparency_log``): ``add`` appends a sealed
    game's signature once (a second add of the same game answers its first index)."""

    def add(self, signature: Mapping[str, Any], signer: Signer | None = None) -> int:
        """``signer``: signs the tree heads (one the caller had published for this command), else
        the log's own ``Signing``."""
        ...

    def missing(self, games: Sequence[str]) -> list[str]: ...
    def head(self, size: int | None = None) -> dict[str, Any]: ...
    def inclusion(self, game_id: str, size: int | None = None) -> dict[str, Any]: ...
    def consistency(self, first: int, second: int) -> dict[str, Any]: ...
    def entries(self, start: int, end: int) -> list[dict[str, Any]]: ...


class TicketStore(Protocol):
    """Short-lived stream tickets, kept by their hash until they expire."""

    def put(self, ticket_hash: str, grants: Mapping[str, Any], ttl_s: int) -> None: ...
    def get(self, ticket_hash: str) -> dict[str, Any] | None: ...


class Analyses(Protocol):
    """Where analyses of finished games are kept (a read model: rebuilt by analysing again) and queued.

    An analysis: ``{"status": "queued" | "running" | "done" | "failed", "progress": 0..1, "decisions":
    [...], "level", "requested_at", "finished_at", "error"}`` (``domain.analysis``)."""

    def get(self, game_id: str) -> dict[str, Any] | None: ...
    def request(self, game_id: str, level: str, at: str) -> bool:
        """Queue the game's analysis unless one is queued, running or done (True when queued now; a
        failed one, or one whose job was lost, is queued again)."""
        ...

    def started(self, game_id: str) -> None: ...
    def progress(self, game_id: str, done: int, total: int) -> None: ...
    def finish(self, game_id: str, decisions: Sequence[Mapping[str, Any]], at: str) -> None: ...
    def fail(self, game_id: str, error: str, at: str) -> None: ...


class Scheduler(Protocol):
    """Where the service asks for bot turns and move timeouts (RQ in production)."""

    def bot_turn(self, game_id: str, seat: int, version: int, urgent: bool = False) -> None: ...
    def move_timeout(self, game_id: str, seat: int, version: int, delay_s: int) -> None: ...
    def tournament_step(self, tournament_id: str) -> None: ...
    def job_pending(self, kind: str, game_id: str, seat: int, version: int) -> bool: ...


class NoScheduler:
    """Schedules nothing (a service with no workers, e.g. some tests)."""

    def bot_turn(self, game_id: str, seat: int, version: int, urgent: bool = False) -> None:
        pass

    def move_timeout(self, game_id: str, seat: int, version: int, delay_s: int) -> None:
        pass

    def tournament_step(self, tournament_id: str) -> None:
        pass

    def job_pending(self, kind: str, game_id: str, seat: int, version: int) -> bool:
        return False


SnapshotLoader = Callable[[str], Table | None]
