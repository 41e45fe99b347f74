"""A slow audit does not hold up anybody else under the real server, ``kifu serve`` (gunicorn, one
gevent worker): ``POST /v1/audits`` verifies in a process of its own (``entrypoints/audit_pool.py``)
while the worker's event loop goes on serving.

The record is the largest real one, a Kiri-ai game played to its 1,000-round limit (5.4 MB,
about a second to verify). Nothing here is timed; what is checked is an order of events:

1. the whole record is sent, and the test waits until the server has read every byte of it: the
   kernel's own counts in ``/proc/net/tcp`` (the client's unacknowledged bytes, then the server's
   unread ones) reach zero. From then on the worker holds the whole body, and an in-loop
   verification would run without yielding until its answer is written;
2. three ``GET /v1/catalog`` are then sent one after the other on a new connection, and each must
   be answered while the audit's connection still has no answer. A worker that verifies in its
   event loop answers the audit first: no request of another connection is even read until the
   verification is done (at most one could slip into a pause after it, while the request's metrics
   are flushed to Redis; the next ones find the audit answered). This test failed so.
3. the audit's answer then arrives: 200, the record verified.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from adapters.embedded_redis import EmbeddedRedis
from bench.audit_stall import long_record
from tests.integration.test_limits import read_answer
from tests.support.kifu_run import kifu_serve_one_worker, wait_until

CATALOGS = 3
REQUEST = "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"


@dataclass(frozen=True)
class Server:
    address: tuple[str, int]
    pid: int  # gunicorn's arbiter (``kifu serve`` execs into it)

    def verifiers(self) -> list[int]:
        """The audit verifiers now running: the children of the children of the arbiter (its worker)."""
        return [pid for worker in children(self.pid) for pid in children(worker)]


@contextlib.contextmanager
def kifu_serve(redis_server: EmbeddedRedis, log_dir: Path, **settings: str) -> Iterator[Server]:
    """``kifu serve`` with one gevent worker on a free port (limits off: this is not about them)."""
    with kifu_serve_one_worker(redis_server.url, log_dir / "serve.log", KIFU_RATE_LIMITS="false", **settings) as (
        proc,
        port,
    ):
        yield Server(("127.0.0.1", port), proc.pid)


@pytest.fixture(scope="module")
def server(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with kifu_serve(redis_server, tmp_path_factory.mktemp("serve")) as running:
        yield running


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def request(method: str, path: str, body: bytes = b"") -> bytes:
    return REQUEST.format(method=method, path=path, length=len(body)).encode() + body


def _proc_address(address: tuple[str, int]) -> str:
    """An IPv4 address and port as ``/proc/net/tcp`` writes them (the address in host byte order)."""
    host, port = address
    return f"{struct.unpack('=I', socket.inet_aton(host))[0]:08X}:{port:04X}"


def queues(local: tuple[str, int], remote: tuple[str, int]) -> tuple[int, int] | None:
    """The kernel's ``(tx_queue, rx_queue)`` of the TCP socket from ``local`` to ``remote``: bytes sent
    but not acknowledged, and bytes received but not yet read by the process holding it."""
    wanted = (_proc_address(local), _proc_address(remote))
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if (fields[1], fields[2]) == wanted:
            tx, rx = fields[4].split(":")
            return int(tx, 16), int(rx, 16)
    return None


def read_whole_by_the_server(sock: socket.socket) -> None:
    """Wait until every byte sent on ``sock`` has been read by the server's process."""
    mine, theirs = sock.getsockname(), sock.getpeername()
    wait_until(lambda: queues(mine, theirs) == (0, 0), "the body to leave this side")
    wait_until(lambda: queues(theirs, mine) == (0, 0), "the server to read the whole body")


def answered(sock: socket.socket) -> bool:
    """Whether anything of an answer has arrived on ``sock`` (not waiting at all)."""
    return bool(select.select([sock], [], [], 0)[0])


def test_a_slow_audit_does_not_hold_up_other_requests(server: Server) -> None:
    body = long_record()
    with socket.create_connection(server.address, timeout=60) as audit:
        audit.sendall(request("POST", "/v1/audits", body))
        read_whole_by_the_server(audit)
        with socket.create_connection(server.address, timeout=60) as other:
            for n in range(CATALOGS):
                other.sendall(request("GET", "/v1/catalog"))
                catalog = read_answer(other)
                assert catalog.startswith(b"HTTP/1.1 200"), catalog[:300]
                assert not answered(audit), f"the audit was answered before catalog request {n + 1}"
        answer = read_answer(audit)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    report = json.loads(answer.partition(b"\r\n\r\n")[2])
    assert report["verified"] is True, report


def test_under_gevent_a_stuck_or_dead_verifier_is_replaced_and_nobody_waits(
    redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The pool's waits, its time limit (``KIFU_AUDIT_SECONDS``), its kill and its restarts, inside a
    gevent worker: a verifier stopped (``SIGSTOP``) with a record in hand does not stop the worker
    from serving; past the limit it is killed, the audit answered 422 and a new verifier started;
    one killed while idle is replaced before the next record."""
    record = long_record(rounds=3)
    with kifu_serve(redis_server, tmp_path_factory.mktemp("serve"), KIFU_AUDIT_SECONDS="1") as server:
        audits, json_type = f"http://127.0.0.1:{server.address[1]}/v1/audits", {"Content-Type": "application/json"}
        first = requests.post(audits, data=record, headers=json_type, timeout=30)
        assert first.status_code == 200 and first.json()["verified"] is True
        [stuck] = server.verifiers()
        os.kill(stuck, signal.SIGSTOP)
        with socket.create_connection(server.address, timeout=60) as audit:
            audit.sendall(request("POST", "/v1/audits", record))
            read_whole_by_the_server(audit)
            with socket.create_connection(server.address, timeout=60) as other:
                other.sendall(request("GET", "/v1/catalog"))
                assert read_answer(other).startswith(b"HTTP/1.1 200")
                assert not answered(audit)
            answer = read_answer(audit)  # once the limit is past
        assert answer.startswith(b"HTTP/1.1 422") and b'"/problems/audit-too-long"' in answer, answer[:300]
        wait_until(lambda: stuck not in server.verifiers() and server.verifiers(), "the verifier to be replaced")
        [fresh] = server.verifiers()
        os.kill(fresh, signal.SIGKILL)
        wait_until(lambda: fresh not in server.verifiers(), "the killed verifier to be reaped")
        again = requests.post(audits, data=record, headers=json_type, timeout=30)
        assert again.status_code == 200 and again.json()["verified"] is True
        assert server.verifiers() and fresh not in server.verifiers()
