"""Shared fixtures: a real server (Valkey, the embedded one) on a free port for the whole session, and a
real Redis Cluster (3 masters, 3 replicas, the same binary) started the first time a test asks for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from adapters.embedded_cluster import EmbeddedCluster
from adapters.embedded_redis import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), fsync="everysec").start()
    yield server
    server.stop()


@pytest.fixture
def redis_client(redis_server: EmbeddedRedis) -> Iterator[redis.Redis]:
    client = redis.Redis(port=redis_server.port)
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedCluster]:
    cluster = EmbeddedCluster(tmp_path_factory.mktemp("cluster"), masters=3, replicas=1, fsync="everysec").start()
    yield cluster
    cluster.stop()


@pytest.fixture
def cluster_client(redis_cluster: EmbeddedCluster) -> Iterator[redis.RedisCluster]:
    """A client of the test cluster, every master emptied first."""
    client = redis.RedisCluster(host="127.0.0.1", port=redis_cluster.nodes[0].port)
    client.flushall(target_nodes=redis.RedisCluster.PRIMARIES)
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def signing_key_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every process the tests build signs with one key kept out of the checkout (not ``.run/``)."""
    path = tmp_path_factory.mktemp("signing") / "signing-key.pem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KIFU_SIGNING_KEY_FILE", str(path))
        yield


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--dist loadgroup`` (make test) sends the tests of one ``xdist_group`` to one process by a
    ``@group`` suffix of their node ids, which pytest-xdist 3.8 writes to ``item._nodeid``; pytest 9
    keeps the id in ``item._id`` (a ``NodeId``) and ignores that, so no group held (measured: a
    module's six grouped tests ran on both processes). This writes the suffix where pytest 9 reads
    it; on a pytest that still reads ``_nodeid`` it does nothing (xdist's own suffix is there)."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")
        }
        if not names or "@" in item.nodeid or not hasattr(item, "_id"):
            continue
        from _pytest.nodeid import NodeId  # pytest 9's structured id (only reached there)

        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(sorted(names))}")
