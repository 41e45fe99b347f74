"""What ``kifu serve`` (gunicorn, a gevent worker) refuses, over a real socket, as the documented problems:
414 and 431 from gunicorn itself, before the app (``entrypoints/gunicorn_conf.py`` writes them as
problem+json), and the app's 415 for a body not sent as JSON, after which the connection goes on."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from adapters.embedded_redis import EmbeddedRedis
from tests.integration.test_limits import read_answer
from tests.support.kifu_run import kifu_serve_one_worker

CREATE = json.dumps({"game": "san-ban", "players": [{"name": "a"}, {"name": "b"}]}).encode()


@pytest.fixture(scope="module")
def server(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with kifu_serve_one_worker(redis_server.url, log, KIFU_RATE_LIMITS="false") as (_proc, port):
        yield "127.0.0.1", port


def exchange(address: tuple[str, int], *requests: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Send each request on one connection, each after the previous answer: (status, headers, body) of each."""
    answers = []
    with socket.create_connection(address, timeout=10) as sock:
        for raw in requests:
            sock.sendall(raw)
            head, _, body = read_answer(sock).partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            answers.append((int(lines[0].split()[1]), headers, body))
    return answers


def post(content_type: str | None, body: bytes = CREATE) -> bytes:
    typed = f"Content-Type: {content_type}\r\n" if content_type else ""
    return f"POST /v1/games HTTP/1.1\r\nHost: x\r\n{typed}Content-Length: {len(body)}\r\n\r\n".encode() + body


def assert_problem(answer: tuple[int, dict[str, str], bytes], status: int, slug: str) -> dict[str, object]:
    got, headers, body = answer
    assert got == status, body
    assert headers["content-type"] == "application/problem+json", headers
    problem: dict[str, object] = json.loads(body)
    assert problem["status"] == status and problem["type"] == f"/problems/{slug}", problem
    return problem


def test_a_request_line_too_long_is_a_414_problem(server: tuple[str, int]) -> None:
    request = f"GET /v1/games/{'x' * 5000} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    assert_problem(exchange(server, request)[0], 414, "uri-too-long")


@pytest.mark.parametrize("headers", ["many", "long"])
def test_headers_too_large_are_a_431_problem(server: tuple[str, int], headers: str) -> None:
    """Over 100 header fields, or one over 8,190 bytes (gunicorn's limits)."""
    extra = "".join(f"X-Many-{i}: {i}\r\n" for i in range(101)) if headers == "many" else f"X-Long: {'y' * 9000}\r\n"
    request = f"GET /healthz HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode()
    assert_problem(exchange(server, request)[0], 431, "request-header-fields-too-large")


def test_a_body_not_sent_as_json_is_415_and_the_connection_goes_on(server: tuple[str, int]) -> None:
    plain, untyped, created = exchange(server, post("text/plain"), post(None), post("application/json"))
    problem = assert_problem(plain, 415, "unsupported-media-type")
    assert "application/json" in str(problem["detail"])
    assert_problem(untyped, 415, "unsupported-media-type")
    assert created[0] == 201 and json.loads(created[2])["game"] == "san-ban"  # same connection, after two 415s
