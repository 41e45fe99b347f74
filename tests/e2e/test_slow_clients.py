"""Slow and oversized requests against the real server, ``kifu serve`` (gunicorn, gevent workers):
every way a client could hold a connection without working is cut short (README, "Limits").

* a body must arrive within ``KIFU_BODY_READ_SECONDS`` (0.5 s here; each request's deadline is
  drawn between 1 and 2 times it), else 408, however steadily it trickles;
* a body over the limit is refused from its ``Content-Length`` (413) and the connection closed at
  once, its rest never read: gunicorn would otherwise drain it for up to ``keepalive`` seconds;
* a chunked body is cut off at the limit (413; one that stops just past the
  limit without ending waits for its deadline, 408: the server's reader asks
  for 1 KiB at a time);
* a request's head must arrive within gunicorn's ``keepalive`` (2 s, up to 1.5 times that);
* one client address holds at most ``KIFU_MAX_CONNECTIONS_PER_CLIENT`` connections at once (4 here,
  one worker): the next is answered 429 before anything of it is read; other addresses are served.

Time here is waited for on the socket (a receive with a timeout), never slept.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from adapters.embedded_redis import EmbeddedRedis
from tests.integration.test_limits import read_answer
from tests.support.kifu_run import kifu_serve_one_worker, wait_until

BODY_SECONDS = 0.5
MAX_BODY = 10_000
MAX_CONNECTIONS = 4
KEEPALIVE = 2.0  # entrypoints/gunicorn_conf.py
TRICKLE = 0.1  # seconds between two bytes of a slow client
CREATE = json.dumps({"game": "san-ban", "players": [{"name": "a"}, {"name": "b"}]}).encode()


@pytest.fixture(scope="module")
def server(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``kifu serve`` (one gevent worker) on a free port, with a short body deadline and a small limit."""
    settings = {
        "KIFU_BODY_READ_SECONDS": str(BODY_SECONDS),
        "KIFU_MAX_BODY_BYTES": str(MAX_BODY),
        "KIFU_RATE_LIMITS": "false",
        "KIFU_MAX_CONNECTIONS_PER_CLIENT": str(MAX_CONNECTIONS),
    }
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with kifu_serve_one_worker(redis_server.url, log, **settings) as (_proc, port):
        yield "127.0.0.1", port


def post_head(path: str, length: int) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}"
    return head.encode() + b"\r\n\r\n"


def trickle_until_answered(sock: socket.socket, give_up_s: float) -> tuple[bytes, float]:
    """Send a space every ``TRICKLE`` s (whenever the wait for an answer times out) until the server
    answers or closes; the answer's first bytes and the seconds it took."""
    began = time.monotonic()
    sock.settimeout(TRICKLE)
    while time.monotonic() - began < give_up_s:
        try:
            return sock.recv(65536), time.monotonic() - began
        except TimeoutError:
            sock.sendall(b" ")
    raise AssertionError(f"the server still waited for the body after {give_up_s} s")


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes the connection within ``seconds`` (sending nothing more)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_a_trickling_body_gets_408_at_its_deadline(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=5) as sock:
        sock.sendall(post_head("/v1/games", MAX_BODY) + b"{")
        first, took = trickle_until_answered(sock, give_up_s=10)
        sock.settimeout(5)
        answer = read_answer(sock, first)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
        assert b'"/problems/request-timeout"' in answer
        assert BODY_SECONDS <= took < 2 * BODY_SECONDS + 1.0, took  # at its deadline, bytes arriving or not
        assert closed_within(sock, 1.0)


def test_a_body_over_the_limit_is_refused_unread_and_the_connection_closed(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=5) as sock:
        sock.sendall(post_head("/v1/games", 10**9))  # and not a byte of the body
        answer = read_answer(sock)
        assert answer.startswith(b"HTTP/1.1 413") and b'"/problems/payload-too-large"' in answer, answer[:300]
        # closed at once: gunicorn would otherwise wait to drain the announced body for `keepalive` s
        assert closed_within(sock, KEEPALIVE / 2)


def test_a_chunked_body_is_cut_off_at_the_limit(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=5) as sock:
        sock.sendall(b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        sock.sendall(b"Transfer-Encoding: chunked\r\n\r\n")
        try:
            for _ in range(2 * MAX_BODY // 1000):  # well over the limit, and never finished
                sock.sendall(b"%x\r\n%s\r\n" % (1000, b" " * 1000))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the rest was sent: the cut-off itself
        answer = read_answer(sock)
        assert answer.startswith(b"HTTP/1.1 413") and b'"/problems/payload-too-large"' in answer, answer[:300]
    with socket.create_connection(server, timeout=5) as sock:  # a whole one within the limit is served
        sock.sendall(b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        sock.sendall(b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(CREATE), CREATE))
        assert read_answer(sock).startswith(b"HTTP/1.1 201")


def test_a_trickling_request_head_is_cut_off(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        answer, took = trickle_until_answered(sock, give_up_s=10)
        assert answer == b"" and took < KEEPALIVE * 1.5 + 1.0, (answer, took)  # closed, unanswered


def connect_from(server: tuple[str, int], source: str) -> socket.socket:
    """A connection from the loopback address ``source`` (the server sees another client per address)."""
    return socket.create_connection(server, timeout=5, source_address=(source, 0))


def test_one_address_holds_a_bounded_number_of_connections(server: tuple[str, int]) -> None:
    held = [connect_from(server, "127.0.0.3") for _ in range(MAX_CONNECTIONS)]  # idle: each holds a slot
    try:
        with connect_from(server, "127.0.0.3") as extra:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_answer(extra)
            assert answer.startswith(b"HTTP/1.1 429") and b"Retry-After: 1" in answer, answer[:300]
            assert b'"/problems/rate-limited"' in answer and b"too many connections" in answer
            assert closed_within(extra, 1.0)
        with connect_from(server, "127.0.0.4") as other:  # another client is served meanwhile
            other.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_answer(other).startswith(b"HTTP/1.1 200")
    finally:
        for sock in held:
            sock.close()

    def served_again() -> bool:  # the server frees the slots as it sees the connections close
        with connect_from(server, "127.0.0.3") as again:
            again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            return read_answer(again).startswith(b"HTTP/1.1 200")

    wait_until(served_again, "the address's connections to be freed", timeout_s=10)
