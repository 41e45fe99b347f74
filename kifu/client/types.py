"""The shapes the API answers, as ``TypedDict``s (``openapi.yaml``'s schemas of the same names).

They describe and do not check: the client hands on the JSON it received. Fields the
contract may add later are simply there too (clients must ignore what they do not
know). A game's own parts (an action, a view's ``state``, an event's ``data``) are
plain dicts: each game's page in ``docs/rules/`` describes them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Action = dict[str, Any]  # {"type": ..., ...}: exactly as GET .../actions lists it (docs/rules/<game>.md)
GameStatus = Literal["active", "finished"]


class Problem(TypedDict):
    """An RFC 9457 problem (``application/problem+json``)."""

    type: str
    title: str
    status: int
    detail: str
    errors: NotRequired[dict[str, list[str]]]
    current_version: NotRequired[int]


class Player(TypedDict, total=False):
    """A seat of a new game: a human (``name``), a bot (``name``, ``bot``) or an open seat (``open``)."""

    name: str
    bot: str
    open: bool


class Entrant(TypedDict, total=False):
    """A tournament entrant: a human (``name``) or a bot (``name``, ``bot``)."""

    name: str
    bot: str


class CatalogPlayers(TypedDict):
    min: int
    max: int


class BotSettings(TypedDict):
    """A tree search level's budget (``algorithm`` ``so-ismcts``; the catalog's ``bot_settings``), as a
    search seat records it."""

    algorithm: str
    iterations: int
    exploration: float
    rollout_depth: int
    opponents: Literal["untried", "policy", "bots"]


class ExpectimaxSettings(TypedDict):
    """An expectimax level's budget (``algorithm`` ``expectimax``: San Ban's advanced mode)."""

    algorithm: str
    depth: int
    exact: int
    samples: int


SearchSettings = BotSettings | ExpectimaxSettings  # told apart by "algorithm"


class SettingsByOptions(TypedDict):
    """Options under which the search levels play with other settings, and those settings by level."""

    options: dict[str, Any]
    bot_settings: dict[str, SearchSettings]


class CatalogGame(TypedDict):
    id: str
    name: str
    rules_version: str
    players: CatalogPlayers
    options: dict[str, dict[str, Any]]  # each a JSON Schema fragment with "default" and "description"
    bots: list[str]
    bot_settings: dict[str, SearchSettings]  # by search level
    bot_settings_by_options: NotRequired[list[SettingsByOptions]]


class Catalog(TypedDict):
    games: list[CatalogGame]


class Seat(TypedDict):
    seat: int
    name: str | None
    bot: str | None
    open: NotRequired[bool]
    bot_settings: NotRequired[SearchSettings]  # a search level's seat: the budget it plays the game with


class SeatWithToken(Seat):
    token: str | None  # shown once, in the creation's answer; None for bots, open seats and replays


class Result(TypedDict):
    scores: list[float]
    ranks: list[int]
    winners: list[int]


class GameView(TypedDict):
    id: str
    game: str
    options: dict[str, Any]
    status: GameStatus
    version: int
    phase: str
    seats: list[Seat]
    to_act: list[int]
    committed: list[int]
    my_choice: Action | None
    you: int | None
    state: dict[str, Any]
    result: Result | None
    deadlines: list[str | None]


class CreatedGame(TypedDict):
    id: str
    game: str
    options: dict[str, Any]
    status: GameStatus
    version: int
    phase: str
    seats: list[SeatWithToken]
    to_act: list[int]
    committed: list[int]
    my_choice: None
    you: None
    state: dict[str, Any]
    result: Result | None
    deadlines: list[str | None]


class GameSummary(TypedDict):
    id: str
    game: str
    status: GameStatus
    seats: list[Seat]
    version: int
    created_at: str
    updated_at: str
    result: Result | None
    tournament: str | None


class GameList(TypedDict):
    items: list[GameSummary]
    next: str | None


class Joined(TypedDict):
    id: str
    seat: int
    name: str
    token: str | None  # None when an Idempotency-Key replayed the join
    version: int


# "from" is a Python keyword: the functional form.
Refill = TypedDict("Refill", {"count": int, "from": list[str]})


class LegalActions(TypedDict):
    seat: int | None
    version: int
    actions: list[Action]
    attack: NotRequired[dict[str, Any]]  # Front Line: every legal declaration (openapi.yaml FrontLineAttackSpace)
    refill: NotRequired[Refill]


class Event(TypedDict):
    """One event of a log as the caller may see it (``docs/record-format.md``)."""

    seq: int
    type: str
    data: dict[str, Any]
    at: str
    prev: str
    hash: str
    v: NotRequired[int]
    private_commitments: NotRequired[dict[str, str]]
    private_salts: NotRequired[dict[str, str]]


class ActionAnswer(TypedDict):
    version: int
    status: GameStatus
    to_act: list[int]
    events: list[Event]


class EventPage(TypedDict):
    items: list[Event]
    next: int | None


class WatchedSeat(TypedDict):
    game: str
    seat: int


class StreamTicket(TypedDict):
    ticket: str
    expires_at: str
    stream: str  # the path to open, the ticket in its query
    game: NotRequired[str]
    seat: NotRequired[int]
    seats: NotRequired[list[WatchedSeat]]


class TakenSeat(TypedDict):
    seat: int
    name: str


class SeatStatus(TypedDict):
    """What a player stream says of one watched seat."""

    game: str
    seat: int
    version: int
    turn: int
    status: GameStatus
    your_turn: bool
    deadline: str | None
    result: Result | None
    open_seats: list[int]  # the game's seats still open
    taken: NotRequired[TakenSeat]  # a seat_taken event's: the seat just joined and its player's name


class ReplayStep(TypedDict):
    step: int
    last: int
    event: Event
    view: GameView


class ReplayItem(TypedDict):
    """One step of a ``Steps`` page: what ``replay`` answers for that step, without ``last``."""

    step: int
    event: Event
    view: GameView


class Steps(TypedDict):
    """A page of replay steps (``Client.steps``); ``next`` is the next page's ``from_`` (None: the last page)."""

    first: int
    last: int
    items: list[ReplayItem]
    next: int | None


class Record(TypedDict):
    """The portable record (``kifu verify`` checks it offline); its events carry their private parts."""

    format: str
    game_id: str
    game: str
    rules_version: str
    engine_version: str
    options: dict[str, Any]
    seats: list[dict[str, Any]]
    seed_hash: str
    seed: str | None
    complete: bool
    head: str
    events: list[dict[str, Any]]
    note: NotRequired[str]


class AuditCheck(TypedDict):
    name: str
    ok: bool
    detail: str
    seq: int | None


class AuditReport(TypedDict):
    verified: bool
    verdict: Literal["verified", "in_progress", "failed"]
    sealed: bool
    format: str | None
    checks: list[AuditCheck]
    head: str | None
    first_bad_event: int | None
    bad_field: str | None


class TournamentEntrant(TypedDict):
    entrant: int
    name: str
    bot: str | None
    withdrawn: bool
    token: NotRequired[str | None]  # in the creation's answer only


class TournamentTable(TypedDict):
    round: int
    table: int
    entrants: list[int]  # in seat order
    game: str | None
    status: Literal["waiting", "playing", "finished"]
    ranks: list[int] | None
    forfeit: str | None
    forfeit_seat: NotRequired[int | None]


class Standing(TypedDict):
    place: int
    entrant: int
    name: str
    bot: str | None
    points: float
    buchholz: float
    mean_rank: float | None
    games: int
    byes: int
    withdrawn: bool


TournamentStatus = Literal["created", "running", "paused", "finished"]


class TournamentSummary(TypedDict):
    """A tournament in the list (``GET /v1/tournaments``); ``entrants`` is how many it was created with."""

    id: str
    game: str
    format: Literal["round-robin", "swiss", "duplicate"]
    rounds: int
    table_size: int
    status: TournamentStatus
    round: int
    entrants: int
    created_at: str
    version: int


class TournamentList(TypedDict):
    items: list[TournamentSummary]
    next: str | None


class TournamentView(TypedDict):
    id: str
    game: str
    options: dict[str, Any]
    format: Literal["round-robin", "swiss", "duplicate"]
    rounds: int
    table_size: int
    scoring: list[float]
    status: Literal["created", "running", "paused", "finished"]
    round: int
    version: int
    entrants: list[TournamentEntrant]
    tables: list[TournamentTable]
    byes: list[int]
    deal: dict[str, Any] | None
    standings: list[Standing] | None


class CreatedTournament(TournamentView):
    organiser_token: str | None  # shown once; None when an Idempotency-Key replayed the creation


class Standings(TypedDict):
    tournament: str
    version: int
    status: Literal["created", "running", "paused", "finished"] | None
    round: int
    standings: list[Standing]


class TournamentGamesPage(TypedDict):
    items: list[TournamentTable]
    next: str | None


class TournamentArchive(TypedDict):
    """One JSON archive of a tournament's log and every game's record (``kifu verify-tournament``)."""

    format: str
    complete: bool
    tournament: dict[str, Any]
    games: list[Record]
    note: NotRequired[str]


class TournamentAuditReport(TypedDict):
    verified: bool
    verdict: Literal["verified", "in_progress", "failed"]
    format: str
    checks: list[AuditCheck]
    games: int | None
    head: str | None
