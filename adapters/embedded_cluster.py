"""Start a real Redis Cluster on loopback: masters and their replicas, from the embedded server's binary.

For the tests and the benchmarks (``KIFU_EVENTS_URL=redis+cluster://127.0.0.1:PORT``), never for
production. Each node is an ``EmbeddedRedis`` with ``cluster-enabled``; the cluster is formed as
``valkey-cli --cluster create`` forms one (that tool is not shipped with the embedded server): every
node meets the first, the 16,384 slots are split into equal ranges over the masters, each replica is
told its master, and the cluster is ready once every node reports ``cluster_state:ok`` and knows every
other and each replica's link to its master is up.
"""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import redis

from adapters.embedded_redis import EmbeddedRedis

SLOTS = 16384
FIRST_PORT = 10000  # the lowest port a node takes
BUS_OFFSET = 10000  # a node's cluster bus listens on its port + 10,000
NODE_TIMEOUT_MS = 2000  # how long a master may be unreachable before its replica is promoted


class EmbeddedCluster:
    """``masters`` masters with ``replicas`` replicas each, their data under ``directory``."""

    def __init__(self, directory: Path, masters: int = 3, replicas: int = 1, fsync: str = "always") -> None:
        self.directory = Path(directory)
        extra = ["--cluster-enabled", "yes", "--cluster-node-timeout", str(NODE_TIMEOUT_MS)]
        ports = _node_ports(masters * (1 + replicas))
        self.nodes = [
            EmbeddedRedis(self.directory / f"node-{i}", port, fsync=fsync, extra=extra) for i, port in enumerate(ports)
        ]
        self.masters = self.nodes[:masters]
        self.replicas = self.nodes[masters:]

    @property
    def url(self) -> str:
        """What ``KIFU_EVENTS_URL`` takes: any node; the client discovers the rest."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def start(self, timeout_s: float = 30.0) -> EmbeddedCluster:
        for node in self.nodes:
            node.start()
        clients = [redis.Redis(port=node.port, decode_responses=True) for node in self.nodes]
        try:
            self._form(clients, timeout_s)
        finally:
            for client in clients:
                client.close()
        return self

    def _form(self, clients: list[redis.Redis], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        first = self.nodes[0]
        for client in clients[1:]:
            _command(client, "CLUSTER", "MEET", "127.0.0.1", first.port)
        per = SLOTS // len(self.masters)
        for i, client in enumerate(clients[: len(self.masters)]):
            last = SLOTS - 1 if i == len(self.masters) - 1 else (i + 1) * per - 1
            _command(client, "CLUSTER", "ADDSLOTSRANGE", i * per, last)
        ids = [_command(client, "CLUSTER", "MYID") for client in clients]
        _until(lambda: all(_known(c) >= len(clients) for c in clients), deadline, "every node to know every other")
        for j, client in enumerate(clients[len(self.masters) :]):
            _command(client, "CLUSTER", "REPLICATE", ids[j % len(self.masters)])
        _until(lambda: all(_ok(c) for c in clients), deadline, "cluster_state:ok on every node")
        replicas = clients[len(self.masters) :]
        _until(lambda: all(_linked(c) for c in replicas), deadline, "every replica linked to its master")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _command(client: redis.Redis, *args: object) -> Any:
    """A command redis-py types loosely (``execute_command``)."""
    return cast(Any, client).execute_command(*args)


def _node_ports(count: int) -> list[int]:
    """``count`` distinct ports free a moment ago, each with its cluster bus port (the port + 10,000) free
    too, all below the range the system hands out to outgoing connections: a node restarted on its
    port (a test's failover) must not find it taken by some client's socket meanwhile."""
    chosen: list[int] = []
    while len(chosen) < count:
        port = random.randrange(FIRST_PORT, _ephemeral_start() - BUS_OFFSET)
        if port not in chosen and _free(port) and _free(port + BUS_OFFSET):
            chosen.append(port)
    return chosen


def steady_port() -> int:
    """A port free a moment ago, below the system's range for outgoing connections (a server that will
    be restarted on it), and with no cluster bus port in the way."""
    return _node_ports(1)[0]


def _ephemeral_start() -> int:
    """The first port of the system's range for outgoing connections (32,768 when it cannot be read)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _known(client: redis.Redis) -> int:
    return len(str(_command(client, "CLUSTER", "NODES")).strip().splitlines())


def _ok(client: redis.Redis) -> bool:
    return "cluster_state:ok" in str(_command(client, "CLUSTER", "INFO"))


def _linked(client: redis.Redis) -> bool:
    return client.info("replication").get("master_link_status") == "up"


def _until(ready: Callable[[], bool], deadline: float, what: str) -> None:
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the cluster did not form: waited for {what}")
        time.sleep(0.05)
