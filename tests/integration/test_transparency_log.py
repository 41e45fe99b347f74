"""The transparency log and the signing keys on a real Redis (and a real Redis Cluster): every head,
inclusion proof and consistency proof the log answers verifies by RFC 9162's algorithms against a tree
rebuilt from its entries; an append is idempotent and safe from several processes at once; every head
is signed by a published key; a rotated key stays published, retired, and what it signed verifies."""

from __future__ import annotations

import os
import stat
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from adapters.signing_keys import FileSigning, KeyRegistry, load_or_create, rotate
from adapters.transparency_log import TransparencyLog
from domain.canonical import canonical_json
from domain.merkle import leaf_hash, root_of, verify_consistency, verify_inclusion
from domain.signatures import check_signature, log_head_statement, sealed_game_statement, valid_at
from service.ports import BadTreeSize, NotLogged, WriteUnconfirmed

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["redis", "cluster"])
def client(request: pytest.FixtureRequest) -> Any:
    if request.param == "cluster":
        request.applymarker(pytest.mark.cluster)
        return request.getfixturevalue("cluster_client")
    return request.getfixturevalue("redis_client")


def signing(client: Any, tmp_path: Path, clock: Any = lambda: NOW) -> FileSigning:
    return FileSigning(tmp_path / "key.pem", KeyRegistry(client), clock)


def sealed(signer: FileSigning, n: int) -> dict[str, Any]:
    statement = sealed_game_statement(f"g{n}", 40 + n, f"{n:064x}", "2026-11-26T12:00:00.000Z")
    return signer.sign(statement)


def test_every_head_and_proof_verifies_against_the_tree_of_its_entries(client: Any, tmp_path: Path) -> None:
    keys = signing(client, tmp_path)
    log = TransparencyLog(client, keys)
    signatures = [sealed(keys, n) for n in range(13)]
    assert [log.add(s) for s in signatures] == list(range(13))
    leaves = [leaf_hash(canonical_json(e["signature"]["statement"])) for e in log.entries(0, 100)]
    assert len(leaves) == 13
    jwks = keys.keys()
    for size in range(14):
        head = log.head(size)
        root = root_of(leaves[:size])
        assert head["size"] == size and head["root"] == root.hex()
        assert head["signature"]["statement"] == log_head_statement(size, root.hex())
        check_signature(head["signature"], jwks)
        for first in range(size + 1):
            proof = log.consistency(first, size)
            path = [bytes.fromhex(h) for h in proof["path"]]
            assert verify_consistency(first, size, root_of(leaves[:first]), root, path)
        for n in range(size):
            proof = log.inclusion(f"g{n}", size)
            path = [bytes.fromhex(h) for h in proof["path"]]
            assert proof["index"] == n and verify_inclusion(leaves[n], n, size, path, root)
            assert not verify_inclusion(leaf_hash(b"another game"), n, size, path, root)


def test_a_game_is_logged_once_and_the_log_refuses_what_it_cannot_prove(client: Any, tmp_path: Path) -> None:
    keys = signing(client, tmp_path)
    log = TransparencyLog(client, keys)
    first = sealed(keys, 1)
    assert log.add(first) == 0
    assert log.add(sealed(keys, 2)) == 1
    assert log.add(first) == 0  # again: its first index, nothing appended
    assert log.size() == 2
    with pytest.raises(NotLogged):
        log.inclusion("g9")
    with pytest.raises(NotLogged):
        log.inclusion("g2", size=1)  # logged after the tree of 1
    for bad in ((0, 3), (2, 1), (-1, 2)):
        with pytest.raises(BadTreeSize):
            log.consistency(*bad)
    with pytest.raises(BadTreeSize):
        log.head(3)


def test_appends_from_several_processes_at_once_lose_nothing_and_log_nothing_twice(client: Any, tmp_path: Path) -> None:
    keys = signing(client, tmp_path)
    signatures = [sealed(keys, n) for n in range(40)]
    logs = [TransparencyLog(client, keys) for _ in range(4)]

    def add_all(log: TransparencyLog, order: list[dict[str, Any]]) -> None:
        for s in order:
            log.add(s)

    threads = [
        threading.Thread(target=add_all, args=(log, signatures[i::2] + signatures)) for i, log in enumerate(logs)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = logs[0].entries(0, 100)
    assert sorted(e["game"] for e in entries) == sorted(f"g{n}" for n in range(40))
    leaves = [leaf_hash(canonical_json(e["signature"]["statement"])) for e in entries]
    assert logs[0].head()["root"] == root_of(leaves).hex()
    published = keys.keys()
    for size in range(1, 41):  # whoever integrated a batch signed a head for every size in it
        head = logs[0].head(size)
        assert head["root"] == root_of(leaves[:size]).hex()
        assert check_signature(head["signature"], published) and head["signature"]["statement"]["size"] == size


def test_a_leaf_queued_by_a_process_that_died_is_integrated_by_the_next_append(client: Any, tmp_path: Path) -> None:
    """The append's two steps apart: queued (the game has its index) but not in the tree, because the
    process died before it integrated. The tree, its proofs and its entries do not show the leaf; the
    next append of any game integrates it, with a signed head for each size; the projector's append of
    the same game (when it meets the seal) integrates it too, at its first index."""
    keys = signing(client, tmp_path)
    log = TransparencyLog(client, keys)
    log.add(sealed(keys, 0))
    dying = TransparencyLog(client, keys)

    def dies(_args: list[Any]) -> tuple[int, int]:
        raise redis.ConnectionError("the process died between queueing and integrating")

    dying._write = dies  # type: ignore[method-assign]
    for n in (1, 2):
        with pytest.raises(redis.ConnectionError):
            dying.add(sealed(keys, n))
    assert log.size() == 1 and log.index_of("g1") == 1 and log.index_of("g2") == 2
    assert [e["game"] for e in log.entries(0, 10)] == ["g0"]  # queued leaves are not entries yet
    with pytest.raises(NotLogged):
        log.inclusion("g1")
    with pytest.raises(BadTreeSize):
        log.head(2)
    assert log.add(sealed(keys, 1)) == 1  # the projector's append: the index it was queued at
    assert log.size() == 3  # ...and the leaf queued after it came along
    assert log.add(sealed(keys, 3)) == 3
    leaves = [leaf_hash(canonical_json(e["signature"]["statement"])) for e in log.entries(0, 10)]
    assert [e["game"] for e in log.entries(0, 10)] == ["g0", "g1", "g2", "g3"]
    for size in range(1, 5):
        assert log.head(size)["root"] == root_of(leaves[:size]).hex()
    assert verify_inclusion(leaves[2], 2, 4, [bytes.fromhex(h) for h in log.inclusion("g2")["path"]], root_of(leaves))


def test_a_log_written_before_its_size_key_goes_on_where_it_was(client: Any, tmp_path: Path) -> None:
    """A log written by the earlier design has no ``size`` key: every leaf it holds is in its tree."""
    keys = signing(client, tmp_path)
    log = TransparencyLog(client, keys)
    for n in range(5):
        log.add(sealed(keys, n))
    client.delete(log.keys[5])
    assert log.size() == 5 and log.head()["size"] == 5
    assert log.add(sealed(keys, 5)) == 5 and log.add(sealed(keys, 2)) == 2
    leaves = [leaf_hash(canonical_json(e["signature"]["statement"])) for e in log.entries(0, 10)]
    assert len(leaves) == 6 and log.head()["root"] == root_of(leaves).hex()


def test_the_key_file_is_private_and_two_processes_agree_on_it(tmp_path: Path) -> None:
    path = tmp_path / "data" / "signing-key.pem"
    keys = [load_or_create(path), load_or_create(path)]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert keys[0].private_bytes_raw() == keys[1].private_bytes_raw()


def test_a_rotated_key_stays_published_retired_and_what_it_signed_still_verifies(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    clock = [NOW]
    keys = FileSigning(tmp_path / "key.pem", KeyRegistry(redis_client), lambda: clock[0])
    old = keys.sign(sealed_game_statement("g1", 9, "a" * 64, "2026-11-26T12:00:00.000Z"))
    clock[0] = NOW + timedelta(days=30)
    rotate(keys.path, keys.registry, clock[0])
    os.utime(keys.path, ns=(1, 1))  # whatever the file system's timestamp resolution, the file changed
    new = keys.sign(sealed_game_statement("g2", 9, "b" * 64, "2026-12-26T12:00:00.000Z"))
    assert new["kid"] != old["kid"]
    jwks = keys.keys()
    by_kid = {k["kid"]: k for k in jwks["keys"]}
    assert by_kid[old["kid"]]["status"] == "retired" and by_kid[old["kid"]]["valid_until"] == "2026-12-26T12:00:00.000Z"
    assert by_kid[new["kid"]]["status"] == "active" and by_kid[new["kid"]]["valid_until"] is None
    assert check_signature(old, jwks)["kid"] == old["kid"]  # the old record verifies against the retired key
    assert check_signature(new, jwks)["kid"] == new["kid"]
    retired = by_kid[old["kid"]]
    assert valid_at(retired, "2026-12-26T12:09:59.000Z")  # sealed within the grace: a process not restarted yet
    assert not valid_at(retired, "2026-12-26T12:10:01.000Z")  # after it: the retired key vouches for nothing
    assert valid_at(by_kid[new["kid"]], "2036-11-26T12:00:00.000Z")  # the active key: no end yet


@pytest.mark.cluster
def test_on_a_cluster_an_append_waits_for_a_replica_and_without_one_it_is_unconfirmed(
    cluster_client: redis.RedisCluster, redis_client: redis.Redis, tmp_path: Path
) -> None:
    keys = signing(cluster_client, tmp_path)
    log = TransparencyLog(cluster_client, keys, wait_replicas=1, wait_ms=2000)
    assert [log.add(sealed(keys, n)) for n in range(3)] == [0, 1, 2]  # each confirmed by the slot's replica
    alone = TransparencyLog(redis_client, signing(redis_client, tmp_path), wait_replicas=1, wait_ms=50)
    with pytest.raises(WriteUnconfirmed):
        alone.add(sealed(keys, 9))  # written, but no replica to confirm it
    assert alone.add(sealed(keys, 9)) == 0  # asked again: it is there, logged once


@pytest.mark.parametrize("replicated", [True, False], ids=["cluster", "alone"])
def test_an_append_whose_leaf_another_process_integrated_still_waits_for_the_replicas(
    replicated: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The race the two-step append allows: between this process's queueing and its integration, another
    process integrates the leaf. Its write may not have reached a replica yet, so this append confirms
    before it answers: on a cluster it waits for the slot's replica; alone, with no replica, it is
    unconfirmed."""
    if replicated:
        request.applymarker(pytest.mark.cluster)
    client = request.getfixturevalue("cluster_client" if replicated else "redis_client")
    keys = signing(client, tmp_path)
    first, other = TransparencyLog(client, keys), TransparencyLog(client, keys)
    log = TransparencyLog(client, keys, wait_replicas=1, wait_ms=2000 if replicated else 50)
    first.add(sealed(keys, 0))
    real_write = log._write
    overtaken: list[int] = []

    def overtaken_write(args: list[Any]) -> tuple[int, int]:
        overtaken.append(other.add(sealed(keys, 2)))  # integrates every queued leaf, ours included
        return real_write(args)  # refused: the size moved

    log._write = overtaken_write  # type: ignore[method-assign]
    if replicated:
        assert log.add(sealed(keys, 1)) == 1
    else:
        with pytest.raises(WriteUnconfirmed):
            log.add(sealed(keys, 1))
    assert overtaken == [2] and first.size() == 3 and first.index_of("g1") == 1


def test_the_heads_are_signed_by_the_signer_given_else_by_the_logs_own(client: Any, tmp_path: Path) -> None:
    """The command that seals a game hands the log the signer it signed the seal with (published a moment
    before); without one, the log takes its own ``Signing``'s current key."""
    keys = signing(client, tmp_path / "own")
    sealing = signing(client, tmp_path / "sealing")
    log = TransparencyLog(client, keys)
    log.add(sealed(keys, 0))
    signer = sealing.current()
    log.add(sealed(sealing, 1), signer)
    assert log.head(1)["signature"]["kid"] == keys.current().kid
    assert log.head(2)["signature"]["kid"] == signer.kid != keys.current().kid
    published = keys.keys()
    assert check_signature(log.head(2)["signature"], published)
