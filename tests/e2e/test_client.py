"""kifu.client against a real server over real HTTP: every call, the errors it raises, its safe retries,
and its streams across server-side closes, a network drop and an expired ticket."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
import redis
import requests
from click.testing import CliRunner

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis, free_port
from bootstrap import build
from entrypoints.api import create_app
from entrypoints.cli import main
from kifu.client import (
    ApiError,
    Client,
    ClientError,
    Conflict,
    Forbidden,
    GameOver,
    IllegalAction,
    InvalidRequest,
    NotFound,
    NotYourTurn,
    RateLimited,
    ServerEvent,
    TransportError,
    Unauthorized,
    VersionConflict,
    bot,
    human,
    open_seat,
)
from service.ports import NoScheduler
from tests.e2e.conftest import work
from tests.support.faulty_proxy import Fault, FaultyProxy, faulty_proxy
from tests.support.http import serving

WAIT_S = 15  # the longest a test waits for something to happen


class Seen:
    """Every answer a client's session received: (method, path, status, request headers); waits for some."""

    def __init__(self, client: Client) -> None:
        self.items: list[tuple[str, str, int, dict[str, str]]] = []
        self.changed = threading.Condition()
        client.http.session.hooks["response"].append(self._record)

    def _record(self, response: requests.Response, *_args: Any, **_kwargs: Any) -> None:
        request = response.request
        path = requests.utils.urlparse(request.url or "").path
        with self.changed:
            self.items.append((request.method or "", path, response.status_code, dict(request.headers)))
            self.changed.notify_all()

    def to(self, method: str, path_end: str) -> list[tuple[int, dict[str, str]]]:
        with self.changed:
            return [(status, headers) for m, p, status, headers in self.items if m == method and p.endswith(path_end)]

    def wait_for(self, what: Callable[[], bool]) -> None:
        with self.changed:
            assert self.changed.wait_for(what, timeout=WAIT_S), self.items


def toy(kifu: Client) -> tuple[str, str, str]:
    """A toy game of ann and bob (three rounds): its id and their tokens."""
    game = kifu.create_game("toy", [human("ann"), human("bob")])
    ann, bob = (seat["token"] for seat in game["seats"])
    assert ann is not None and bob is not None
    return game["id"], ann, bob


def play_round(kifu: Client, game_id: str, ann: str, bob: str) -> None:
    """Ann picks 2, bob 1: ann wins the round and bob acknowledges it."""
    kifu.act(game_id, {"type": "pick", "n": 2}, ann)
    kifu.act(game_id, {"type": "pick", "n": 1}, bob)
    kifu.act(game_id, {"type": "ack"}, bob)


def in_background(events: Iterable[ServerEvent[Any]]) -> tuple[queue.Queue[ServerEvent[Any] | None], threading.Thread]:
    """Read a stream in a thread: its events in a queue, then None when it ended by itself."""
    received: queue.Queue[ServerEvent[Any] | None] = queue.Queue()

    def read() -> None:
        for event in events:
            received.put(event)
        received.put(None)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return received, thread


def until_the_end(received: queue.Queue[ServerEvent[Any] | None]) -> list[ServerEvent[Any]]:
    out = []
    while (event := received.get(timeout=WAIT_S)) is not None:
        out.append(event)
    return out


def problem_answer(status: int, slug: str) -> bytes:
    body = json.dumps({"type": f"/problems/{slug}", "title": slug, "status": status, "detail": "try again"})
    return (
        f"HTTP/1.1 {status} Unavailable\r\nContent-Type: application/problem+json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}"
    ).encode()


@pytest.fixture
def kifu(base_url: str) -> Iterator[Client]:
    with Client(base_url, backoff_s=0.01) as client:
        yield client


@pytest.fixture
def short_streams(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    """A server whose streams end after 0.7 s, as a real one's do after a few minutes."""
    config = {"SSE_HEARTBEAT_SECONDS": 0.2, "SSE_MAX_SECONDS": 0.7}
    app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), **config})
    with serving(app) as url:
        yield url


@pytest.fixture
def proxy(base_url: str) -> Iterator[FaultyProxy]:
    with faulty_proxy(base_url) as proxy:
        yield proxy


def test_the_catalogue_and_a_whole_game_through_every_game_call(kifu: Client) -> None:
    toy_entry = next(g for g in kifu.catalog()["games"] if g["id"] == "toy")
    assert toy_entry["players"] == {"min": 2, "max": 2} and toy_entry["options"]["rounds"]["default"] == 3
    assert "move_timeout_s" in toy_entry["options"]
    game_id, ann, bob = toy(kifu)
    assert kifu.view(game_id, ann)["you"] == 0 and kifu.view(game_id)["you"] is None
    legal = kifu.legal_actions(game_id, ann)
    assert legal["seat"] == 0 and {"type": "pick", "n": 3} in legal["actions"]
    assert kifu.legal_actions(game_id)["actions"] == []  # a spectator has none
    answer = kifu.act(game_id, {"type": "pick", "n": 3}, ann, expected_version=legal["version"])
    assert answer["version"] == legal["version"] + 1 and [e["type"] for e in answer["events"]] == ["choice_committed"]
    assert kifu.view(game_id, ann)["my_choice"] == {"type": "pick", "n": 3}
    kifu.act(game_id, {"type": "pick", "n": 1}, bob)
    kifu.act(game_id, {"type": "ack"}, bob)  # bob lost the round
    play_round(kifu, game_id, ann, bob)
    play_round(kifu, game_id, ann, bob)  # the third and last
    final = kifu.view(game_id)
    assert final["status"] == "finished" and final["result"] is not None and final["result"]["winners"] == [0]
    page = kifu.events(game_id, limit=2)
    assert [e["seq"] for e in page["items"]] == [1, 2] and page["next"] == 2
    assert [e["seq"] for e in kifu.iter_events(game_id, after=1)] == list(range(2, final["version"] + 1))
    step = kifu.replay(game_id, 2, as_seat=1)
    assert step["step"] == 2 and step["last"] == final["version"] and step["view"]["you"] == 1
    record = kifu.record(game_id, ann)
    assert record["complete"] and record["game_id"] == game_id and len(record["events"]) == final["version"]
    assert kifu.audit(game_id)["verdict"] == "verified"
    assert kifu.audit_record(record)["verified"]
    record["events"][1]["data"]["count"] = 4  # a forged record, uploaded as bytes
    forged = kifu.audit_record(json.dumps(record).encode())
    assert forged["verdict"] == "failed" and forged["first_bad_event"] == 2
    assert kifu.ready()


def test_bots_open_seats_a_move_timeout_the_lobby_and_joining(kifu: Client, redis_client: redis.Redis) -> None:
    game = kifu.create_game("nin-nal", [human("ann"), bot("hal", "greedy"), open_seat()], move_timeout_s=300)
    game_id, seats = game["id"], game["seats"]
    assert seats[0]["token"] and seats[1] == {"seat": 1, "name": "hal", "bot": "greedy", "token": None}
    assert seats[2].get("open") is True and seats[2]["token"] is None
    assert game["options"]["move_timeout_s"] == 300 and game["deadlines"][0] is not None
    assert game["deadlines"][1] is None  # a bot has no clock
    build(redis_client).projector().run_until_idle()
    assert game_id in [g["id"] for g in kifu.list_games(open=True)["items"]]
    joined = kifu.join(game_id, 2, "cy", idempotency_key="cy-joins")
    assert joined["seat"] == 2 and joined["token"] and kifu.view(game_id, joined["token"])["you"] == 2
    assert kifu.join(game_id, 2, "cy", idempotency_key="cy-joins")["token"] is None  # a replay shows no token
    with pytest.raises(Conflict) as taken:
        kifu.join(game_id, 2, "dee")
    assert taken.value.kind == "seat-taken" and taken.value.status == 409
    build(redis_client).projector().run_until_idle()
    assert game_id not in [g["id"] for g in kifu.list_games(open=True)["items"]]
    assert game_id in [g["id"] for g in kifu.list_games(open=False)["items"]]
    assert [g["id"] for g in kifu.iter_games(player="cy", page_size=1)] == [game_id]
    assert [g["id"] for g in kifu.list_games(game="nin-nal", status="active")["items"]] == [game_id]


def test_a_creation_key_answers_the_same_game_without_its_tokens(kifu: Client) -> None:
    first = kifu.create_game("toy", [human("ann"), human("bob")], idempotency_key="one-game")
    again = kifu.create_game("toy", [human("ann"), human("bob")], idempotency_key="one-game")
    assert again["id"] == first["id"] and all(s["token"] for s in first["seats"])
    assert [s["token"] for s in again["seats"]] == [None, None]


def test_error_answers_raise_their_problem_kinds(kifu: Client) -> None:
    game_id, ann, bob = toy(kifu)
    with pytest.raises(NotFound) as missing:
        kifu.view("g-nope")
    assert missing.value.kind == "game-not-found" and missing.value.type == "/problems/game-not-found"
    with pytest.raises(Unauthorized):
        kifu.view(game_id, "not-a-token")
    with pytest.raises(Unauthorized):
        next(kifu.stream(game_id, "not-a-token"))  # refused, not retried
    with pytest.raises(InvalidRequest) as invalid:
        kifu.create_game("toy", [human("ann"), bot("hal", "genius")])
    assert invalid.value.kind == "invalid-game-settings" and "players[1].bot" in invalid.value.errors
    with pytest.raises(IllegalAction) as illegal:
        kifu.act(game_id, {"type": "ack"}, ann)
    assert illegal.value.status == 422 and "pick a number" in illegal.value.detail
    version = kifu.view(game_id)["version"]
    kifu.act(game_id, {"type": "pick", "n": 3}, ann, expected_version=version)
    with pytest.raises(VersionConflict) as stale:
        kifu.act(game_id, {"type": "pick", "n": 1}, bob, expected_version=version)
    assert stale.value.current_version == version + 1 and stale.value.problem["current_version"] == version + 1
    with pytest.raises(NotYourTurn):
        kifu.act(game_id, {"type": "pick", "n": 2}, ann)  # her choice is in
    kifu.resign(game_id, bob)
    with pytest.raises(GameOver) as over:
        kifu.act(game_id, {"type": "pick", "n": 1}, ann)
    assert (
        isinstance(over.value, Forbidden) and isinstance(over.value, ApiError) and isinstance(over.value, ClientError)
    )


def test_a_rate_limit_is_raised_with_its_retry_after_and_not_retried(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    config = {"RATE_LIMITS": True, "RATE_LIMIT_CREATE": "2/minute"}
    app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), **config})
    with serving(app) as url, Client(url) as kifu:
        seen = Seen(kifu)
        toy(kifu), toy(kifu)
        with pytest.raises(RateLimited) as limited:
            toy(kifu)
    assert limited.value.kind == "rate-limited" and limited.value.retry_after is not None
    assert 1 <= limited.value.retry_after <= 60 and [s for s, _h in seen.to("POST", "/v1/games")] == [201, 201, 429]


def test_an_action_whose_answer_is_lost_is_sent_again_with_its_key_and_acts_once(
    kifu: Client, proxy: FaultyProxy
) -> None:
    game_id, ann, _bob = toy(kifu)
    through = Client(proxy.url, backoff_s=0.01)
    proxy.break_next(f"POST /v1/games/{game_id}/actions".encode(), Fault("lose_answer"))
    answer = through.act(game_id, {"type": "pick", "n": 3}, ann)
    assert [e["type"] for e in answer["events"]] == ["choice_committed"]
    sent = proxy.heads_with(b"/actions")
    assert len(sent) == 2 and len({idempotency_key(head) for head in sent}) == 1
    assert [e["type"] for e in kifu.iter_events(game_id)].count("choice_committed") == 1
    with pytest.raises(NotYourTurn):  # what a second try with another key would have got
        through.act(game_id, {"type": "pick", "n": 3}, ann)


def test_a_503_is_retried_with_the_same_key(kifu: Client, proxy: FaultyProxy) -> None:
    game_id, ann, _bob = toy(kifu)
    through = Client(proxy.url, backoff_s=0.01)
    proxy.break_next(f"POST /v1/games/{game_id}/actions".encode(), Fault("answer", problem_answer(503, "x")))
    assert through.act(game_id, {"type": "pick", "n": 2}, ann)["version"] == 3
    sent = proxy.heads_with(b"/actions")
    assert len(sent) == 2 and len({idempotency_key(head) for head in sent}) == 1


def test_a_creation_whose_answer_is_lost_is_not_sent_again(proxy: FaultyProxy) -> None:
    """Its retry would answer the game without its tokens (they are shown once): the caller decides."""
    through = Client(proxy.url, backoff_s=0.01)
    proxy.break_next(b"POST /v1/games ", Fault("lose_answer"))
    with pytest.raises(TransportError):
        through.create_game("toy", [human("ann"), human("bob")], idempotency_key="lost")
    assert len(proxy.heads_with(b"POST /v1/games ")) == 1


def idempotency_key(head: bytes) -> bytes:
    return next(line for line in head.split(b"\r\n") if line.lower().startswith(b"idempotency-key:"))


def test_a_seat_stream_resumes_across_server_closes_to_the_seal(short_streams: str) -> None:
    kifu, streamer = Client(short_streams), Client(short_streams)
    seen = Seen(streamer)
    game_id, ann, bob = toy(kifu)
    received, thread = in_background(streamer.stream(game_id, bob))  # bob's token in Authorization
    opens = lambda: seen.to("GET", "/events/stream")  # noqa: E731
    for played in range(3):
        seen.wait_for(lambda played=played: len(opens()) >= played + 2)  # the server closed, the client came back
        play_round(kifu, game_id, ann, bob)
    got = until_the_end(received)
    thread.join(WAIT_S)
    assert [e.id for e in got] == [str(seq) for seq in range(1, len(got) + 1)]  # each once, in order
    assert [e.event for e in got] == [e["type"] for e in kifu.iter_events(game_id)] and got[-1].event == "game_sealed"
    assert all(e.data["seq"] == int(e.id or 0) and e.data["type"] == e.event for e in got)
    assert "private" not in got[1].data["data"]  # ann's hand, dealt while the game ran
    bobs_first_pick = next(e for e in got if e.event == "choice_committed" and e.data["data"].get("private"))
    assert set(bobs_first_pick.data["data"]["private"]) == {"1"}  # as bob: his own choice
    assert all(status == 200 and headers["Authorization"] == f"Bearer {bob}" for status, headers in opens())
    resumed_after = [headers.get("Last-Event-ID") for _status, headers in opens()]
    assert resumed_after[0] is None and all(i is not None for i in resumed_after[1:])
    assert [int(i) for i in resumed_after[1:] if i] == sorted(int(i) for i in resumed_after[1:] if i)
    assert list(kifu.stream(game_id, bob, last_event_id=got[-1].id)) == []  # 204: nothing more will ever come
    assert [e.id for e in kifu.stream(game_id)] == [e.id for e in got]  # from the start, sealed: all, then done


def test_a_stream_cut_in_the_middle_resumes_after_its_last_whole_event(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), "SSE_HEARTBEAT_SECONDS": 0.2})
    with serving(app, keep_alive=True) as url, faulty_proxy(url) as proxy:  # HTTP/1.1: a chunked stream
        kifu = Client(url)
        game_id, ann, bob = toy(kifu)
        for _ in range(3):
            play_round(kifu, game_id, ann, bob)
        proxy.break_next(b"/events/stream", Fault("cut_after", cut_after=3000))
        got = list(Client(proxy.url).stream(game_id))
        opens = proxy.heads_with(b"/events/stream")
    assert [e.id for e in got] == [str(seq) for seq in range(1, len(got) + 1)] and got[-1].event == "game_sealed"
    assert len(opens) == 2 and b"last-event-id" not in opens[0].lower()
    resumed = next(line for line in opens[1].split(b"\r\n") if line.lower().startswith(b"last-event-id:"))
    assert 1 <= int(resumed.split(b":")[1]) < len(got) - 1  # it had some events, not all


def test_a_stream_ticket_opens_the_seat_stream(kifu: Client) -> None:
    game_id, ann, _bob = toy(kifu)
    ticket = kifu.stream_ticket(game_id, ann)
    assert ticket["seat"] == 0 and ann not in ticket["stream"] and ticket["ticket"] in ticket["stream"]
    stream = kifu.stream(game_id, ticket=ticket["ticket"])
    _created, dealt = next(stream), next(stream)
    stream.close()
    assert dealt.event == "toy_dealt" and dealt.data["data"]["private"]["0"]["cards"]  # ann's own hand
    with pytest.raises(Unauthorized):
        next(kifu.stream(game_id, ticket="forged"))


def test_a_player_stream_follows_seats_across_games_and_renews_its_ticket(
    short_streams: str, redis_client: redis.Redis
) -> None:
    kifu, watcher = Client(short_streams), Client(short_streams)
    seen = Seen(watcher)
    (first, ann_1, bob_1), (second, _ann_2, bob_2) = toy(kifu), toy(kifu)
    received, thread = in_background(watcher.player_stream([(first, bob_1), (second, bob_2)]))
    opening = [received.get(timeout=WAIT_S) for _ in range(4)]
    assert [(e.event, e.data["game"]) for e in opening if e] == [
        ("status", first),
        ("your_turn", first),
        ("status", second),
        ("your_turn", second),
    ]
    for key in redis_client.scan_iter(match="kifu:ticket:*"):
        redis_client.delete(key)  # what a ticket's expiry does
    streams = lambda: [status for status, _h in seen.to("GET", "/v1/stream")]  # noqa: E731
    seen.wait_for(lambda: 401 in streams() and streams()[-1] == 200)  # refused, a new ticket, back again
    kifu.act(first, {"type": "pick", "n": 3}, ann_1)
    kifu.act(first, {"type": "pick", "n": 1}, bob_1)  # bob lost the round: his turn to ack
    told = [received.get(timeout=WAIT_S)]
    while told[-1] is not None and told[-1].event == "status":
        told.append(received.get(timeout=WAIT_S))
    kifu.resign(first, bob_1)
    kifu.resign(second, bob_2)
    rest = [*told, *until_the_end(received)]
    thread.join(WAIT_S)
    news = [(e.event, e.data["game"]) for e in rest if e and e.event != "status"]
    assert news == [("your_turn", first), ("game_over", first), ("game_over", second)]
    turns = [e.data["turn"] for e in [*opening, *rest] if e and e.event == "your_turn" and e.data["game"] == first]
    assert len(turns) == len(set(turns)) == 2  # each turn told once, across the reconnections
    assert [s for s, _h in seen.to("POST", "/v1/stream-tickets")] == [201, 201]


def test_tournament_calls_over_http(bot_server: str, redis_client: redis.Redis) -> None:
    kifu = Client(bot_server)
    entrants = [{"name": "ann"}, {"name": "bob"}, {"name": "hal", "bot": "greedy"}, {"name": "rob", "bot": "random"}]
    made = kifu.create_tournament("san-ban", entrants, "swiss", rounds=2, idempotency_key="cup")
    tid, organiser = made["id"], made["organiser_token"]
    assert organiser is not None and made["status"] == "created"
    tokens = {e["entrant"]: e["token"] for e in made["entrants"] if e.get("token")}
    assert sorted(tokens) == [0, 1]
    again = kifu.create_tournament("san-ban", entrants, "swiss", rounds=2, idempotency_key="cup")
    assert again["id"] == tid and again["organiser_token"] is None
    with pytest.raises(Forbidden):
        kifu.start_tournament(tid, tokens[0] or "")
    assert kifu.start_tournament(tid, organiser)["status"] == "running"
    with pytest.raises(Conflict) as twice:
        kifu.start_tournament(tid, organiser)
    assert twice.value.kind == "tournament-state"
    work(redis_client)  # the first round's games
    table = next(t for t in kifu.tournament(tid)["tables"] if 0 in t["entrants"])
    game_id, seat = table["game"], table["entrants"].index(0)
    assert game_id is not None and kifu.view(game_id, tokens[0])["you"] == seat  # her entrant token seats her
    assert kifu.pause_tournament(tid, organiser, "lunch")["status"] == "paused"
    assert kifu.resume_tournament(tid, organiser)["status"] == "running"
    kifu.forfeit(tid, game_id, seat, "no show", organiser)
    assert kifu.view(game_id)["status"] == "finished"
    assert kifu.withdraw(tid, 1, organiser, "left early")["entrants"][1]["withdrawn"]
    work(redis_client)
    assert game_id in [t["game"] for t in kifu.iter_tournament_games(tid, page_size=1)]
    page = kifu.tournament_events(tid, limit=2)
    assert [e["type"] for e in page["items"]] == ["tournament_created", "tournament_started"] and page["next"] == 2
    build(redis_client).projector().run_until_idle()
    standings = kifu.standings(tid)
    assert standings["tournament"] == tid and len(standings["standings"]) == 4
    # Round 2 pairs ann, hal and rob (bob withdrew): when hal and rob drew in round 1, ann sits it out and
    # the two bots finish the event; otherwise it waits for her.
    over = kifu.tournament(tid)["status"] == "finished"
    archive = kifu.tournament_record(tid)
    assert archive["tournament"]["id"] == tid and archive["complete"] is over
    verdict = "verified" if over else "in_progress"
    assert kifu.tournament_audit(tid)["verdict"] == verdict
    uploaded = kifu.audit_archive(archive)  # POST /v1/audits: the same checks on the archive
    assert uploaded["verdict"] == verdict and uploaded["format"] == "kifu-tournament/1"
    status, other = ("finished", "running") if over else ("running", "finished")
    listed = kifu.list_tournaments(game="san-ban", status=status)["items"]
    assert [(t["id"], t["entrants"], t["format"]) for t in listed] == [(tid, 4, "swiss")]
    assert kifu.list_tournaments(status=other)["items"] == kifu.list_tournaments(game="toy")["items"] == []
    assert [t["id"] for t in kifu.iter_tournaments(page_size=1)] == [tid]


def test_the_tournament_benchmark_drives_a_real_stack_through_the_client(
    kifu_run: tuple[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m bench.tournament`` as the README runs it, small: bots play it out under ``kifu run``."""
    from bench import tournament

    base, _proc = kifu_run
    archive, took = tournament.run(base, entrants=4, rounds=2, game="san-ban")
    tournament.verify(archive)
    assert archive["complete"] and len(archive["games"]) == 4 and took > 0
    assert "verified=True" in capsys.readouterr().out


class CountingSession(requests.Session):
    """A session that counts the requests it sends (whether or not any answer comes)."""

    sent = 0

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.sent += 1
        return super().send(request, **kwargs)


def test_a_request_that_never_reached_a_server_is_sent_again_then_given_up() -> None:
    session = CountingSession()
    nobody = Client(f"http://127.0.0.1:{free_port()}", session=session, retries=2, backoff_s=0.01)
    with pytest.raises(TransportError) as refused:
        nobody.create_game("toy", [human("ann"), human("bob")])  # no connection: nothing was created
    assert session.sent == 3 and isinstance(refused.value.__cause__, requests.ConnectionError)


def test_kifu_play_plays_a_game_against_a_bot_in_the_terminal(kifu_run: tuple[str, Any]) -> None:
    base, _proc = kifu_run
    moves = "nonsense\n" + "1\n" * 40  # a word that is no move is asked again; then always the first action
    result = CliRunner().invoke(main, ["play", "san-ban", "--url", base, "--bot", "random"], input=moves)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    game_id = lines[0].split()[1].rstrip(":")
    assert lines[0] == f"game {game_id}: san-ban, you are seat 0 (you)"
    assert "  1. {" in result.output and result.output.count("your move (1-") > 2
    final = Client(base).view(game_id)
    assert final["status"] == "finished" and lines[-1] == f"result: {json.dumps(final['result'])}"
    assert [s["bot"] for s in final["seats"]] == [None, "random"]
