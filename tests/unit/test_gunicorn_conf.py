"""The gunicorn settings module of ``kifu serve`` (its behaviour under load: tests/e2e/test_slow_clients.py)."""

from __future__ import annotations

import os
import subprocess
import sys


def setting(name: str, **env: str) -> str:
    """``entrypoints.gunicorn_conf.<name>`` as a fresh interpreter reads it with ``env``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KIFU_")} | env
    code = f"import entrypoints.gunicorn_conf as c; print(c.{name})"
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True).stdout


def test_connections_per_client_are_capped_unless_behind_a_proxy() -> None:
    assert setting("MAX_CONNECTIONS_PER_CLIENT").strip() == "256"
    assert setting("MAX_CONNECTIONS_PER_CLIENT", KIFU_MAX_CONNECTIONS_PER_CLIENT="10").strip() == "10"
    # behind a proxy every connection is the proxy's: the cap would refuse everybody at once
    assert setting("MAX_CONNECTIONS_PER_CLIENT", KIFU_TRUSTED_PROXIES="1").strip() == "0"


def test_the_open_files_limit_fits_the_connections() -> None:
    code = (
        "import resource, entrypoints.gunicorn_conf as c;"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE);"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1024), hard));"
        "print(c.raise_open_files_limit(min(hard, 4096)), min(hard, 4096))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == out[1]


def test_a_worker_freezes_what_exists_once_the_app_is_loaded() -> None:
    code = (
        "import gc, entrypoints.gunicorn_conf as c;"
        "from entrypoints.api import create_app; app = create_app();"
        "before = (gc.get_freeze_count(), gc.get_threshold());"
        "c.post_worker_init(object());"
        "print(before, gc.get_freeze_count() > 10_000, gc.get_threshold() == c.GC_THRESHOLDS, gc.is_tracked(app))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["(0,", "(700,", "10,", "10))", "True", "True", "True"]


def test_request_heads_are_parsed_by_gunicorns_c_parser() -> None:
    from gunicorn.config import Config
    from gunicorn.http.message import _check_fast_parser

    assert _check_fast_parser(Config())  # gunicorn-h1c installed, and no setting turns it off


class Socket:
    def __init__(self) -> None:
        self.sends: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.sends.append(bytes(data))

    send = sendall


def gunicorn_response(length: int | None, method: str = "POST") -> object:
    """A real gunicorn ``Response`` for a request of ``method``, headers set as a WSGI app would."""
    from types import SimpleNamespace

    from gunicorn.config import Config
    from gunicorn.http.wsgi import Response

    import entrypoints.gunicorn_conf  # noqa: F401  (patches Response.write)

    req = SimpleNamespace(version=(1, 1), method=method, should_close=lambda: False, uri="/")
    resp = Response(req, Socket(), Config())
    headers = [("Content-Type", "application/json")] + ([("Content-Length", str(length))] if length is not None else [])
    resp.start_response("201 CREATED", headers)
    return resp


def test_a_whole_answer_goes_out_in_one_send_with_its_head() -> None:
    resp = gunicorn_response(5)
    resp.write(b"hello")  # type: ignore[attr-defined]
    resp.close()  # type: ignore[attr-defined]
    sends = resp.sock.sends  # type: ignore[attr-defined]
    assert len(sends) == 1
    head, _, body = sends[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 201 CREATED\r\n") and b"Content-Length: 5" in head and body == b"hello"


def test_streamed_partial_and_bodiless_answers_are_gunicorns_own() -> None:
    streamed = gunicorn_response(None)  # no length: chunked, like an SSE stream
    streamed.write(b"data: 1\n\n")  # type: ignore[attr-defined]
    streamed.close()  # type: ignore[attr-defined]
    assert len(streamed.sock.sends) >= 2 and b"Transfer-Encoding: chunked" in streamed.sock.sends[0]  # type: ignore[attr-defined]
    partial = gunicorn_response(10)
    partial.write(b"hello")  # type: ignore[attr-defined]
    partial.write(b"world")  # type: ignore[attr-defined]
    assert b"".join(partial.sock.sends).endswith(b"\r\n\r\nhelloworld")  # type: ignore[attr-defined]
    head = gunicorn_response(5, method="HEAD")
    head.write(b"hello")  # type: ignore[attr-defined]
    head.close()  # type: ignore[attr-defined]
    assert b"".join(head.sock.sends).endswith(b"\r\n\r\n")  # type: ignore[attr-defined]
