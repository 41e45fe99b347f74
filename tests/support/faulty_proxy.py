"""A TCP proxy in front of a test server that breaks the connections it is told to break.

Each connection's first request head is recorded (``heads``); a fault registered for a
request line (``break_next``) applies to the next connection whose head contains it, once:

* ``lose_answer``: the request reaches the server, which answers; the client gets nothing
  (the connection closes): an answer lost on the way back;
* ``answer``: the proxy answers these bytes itself, as a gateway in front of a server may;
* ``cut_after``: the answer is passed on up to that many bytes, then the connection closes
  (a network drop in the middle of a stream).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from urllib.parse import urlsplit

HEAD_END = b"\r\n\r\n"


@dataclass
class Fault:
    kind: str  # "lose_answer", "answer" or "cut_after"
    answer: bytes = b""
    cut_after: int = 0


class FaultyProxy:
    def __init__(self, upstream: str) -> None:
        target = urlsplit(upstream)
        self.upstream = (target.hostname or "127.0.0.1", target.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.heads: list[bytes] = []
        self.faults: list[tuple[bytes, Fault]] = []
        self.lock = threading.Lock()

    def break_next(self, request_line_part: bytes, fault: Fault) -> None:
        with self.lock:
            self.faults.append((request_line_part, fault))

    def heads_with(self, part: bytes) -> list[bytes]:
        with self.lock:
            return [head for head in self.heads if part in head.split(b"\r\n", 1)[0]]

    def serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._connection, args=(client,), daemon=True).start()

    def _connection(self, client: socket.socket) -> None:
        with client:
            buffered = b""
            while HEAD_END not in buffered:
                data = client.recv(65536)
                if not data:
                    return
                buffered += data
            head = buffered.split(HEAD_END, 1)[0]
            fault = self._fault_for(head)
            if fault is not None and fault.kind == "answer":
                client.sendall(fault.answer)
                return
            with socket.create_connection(self.upstream) as server:
                server.sendall(buffered)
                threading.Thread(target=_pump, args=(client, server), daemon=True).start()
                if fault is not None and fault.kind == "lose_answer":
                    server.recv(65536)  # the server has answered: the client never hears it
                    _close(client, server)
                    return
                _pump(server, client, fault.cut_after if fault is not None else None)

    def _fault_for(self, head: bytes) -> Fault | None:
        with self.lock:
            self.heads.append(head)
            line = head.split(b"\r\n", 1)[0]
            for i, (part, fault) in enumerate(self.faults):
                if part in line:
                    del self.faults[i]
                    return fault
        return None


def _pump(source: socket.socket, sink: socket.socket, limit: int | None = None) -> None:
    """Copy ``source`` to ``sink`` until either closes (or ``limit`` bytes have passed: then close both)."""
    passed = 0
    try:
        while limit is None or passed < limit:
            data = source.recv(65536 if limit is None else min(65536, limit - passed))
            if not data:
                break
            sink.sendall(data)
            passed += len(data)
    except OSError:
        pass
    _close(source, sink)


def _close(*sockets: socket.socket) -> None:
    """End the connections now (a shutdown also wakes a thread blocked reading them; a close would not)."""
    for sock in sockets:
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


@contextmanager
def faulty_proxy(upstream: str) -> Iterator[FaultyProxy]:
    proxy = FaultyProxy(upstream)
    thread = threading.Thread(target=proxy.serve, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        with suppress(OSError):
            proxy.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone does not, on Linux)
        proxy.listener.close()
        thread.join(timeout=5)
