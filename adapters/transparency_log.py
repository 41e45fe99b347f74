"""The transparency log of sealed games, in Redis: RFC 9162's Merkle tree, append-only, every head signed.

Leaf ``i`` is the canonical JSON of one sealed game's signed statement (``domain.signatures``); the
tree is ``domain.merkle``'s. All keys share one hash tag (``{tlog}``), so on a Redis Cluster they live
on one node and one script writes them together:

* ``leaves``: a list, entry ``i`` = ``{"game", "signature"}`` (the signature carries its statement);
* ``index``: a hash, game id -> its leaf index (a game is logged once);
* ``nodes``: a hash, ``"level:index"`` -> the hex hash of every perfect subtree so far (about two per
  leaf), from which any proof takes O(log n) reads (``domain.merkle.subtree_from_nodes``);
* ``frontier``: the hashes of the perfect subtrees that make up the current tree (one per bit of its
  size), all an append needs to compute the new nodes and the new root;
* ``heads``: a hash, size -> the signed tree head of that size.

An append reads the size, frontier and the game's index (one round trip), computes the new leaf's
nodes, root and signed head in Python, and writes them with a script that refuses if the size moved
(another process appended first: read again) or the game is already logged (its index is the
answer). Nothing ever deletes or rewrites an entry: rebuilding the read models does not touch the log.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

import redis

from adapters.redis_client import AnyRedis
from domain.canonical import canonical_json
from domain.merkle import (
    EMPTY_ROOT,
    consistency_ranges,
    frontier_root,
    grow,
    inclusion_ranges,
    leaf_hash,
    nodes_needed,
    subtree_from_nodes,
)
from domain.signatures import log_head_statement
from service.ports import BadTreeSize, NotLogged, Signing, WriteUnconfirmed

PREFIX = "kifu:{tlog}"
MAX_ENTRIES = 256  # per GET /v1/log/entries
MAX_RETRIES = 64

# KEYS: leaves, index, nodes, frontier, heads. ARGV: expected size, game, entry, frontier, head, then
# field/value pairs of the new nodes. Answers {0, index} (appended), {1, index} (logged before) or
# {2, size} (the size moved).
_APPEND = """
local known = redis.call('HGET', KEYS[2], ARGV[2])
if known then return {1, tonumber(known)} end
local size = redis.call('LLEN', KEYS[1])
if size ~= tonumber(ARGV[1]) then return {2, size} end
redis.call('RPUSH', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], size)
redis.call('HSET', KEYS[3], unpack(ARGV, 6))
redis.call('SET', KEYS[4], ARGV[4])
redis.call('HSET', KEYS[5], size + 1, ARGV[5])
return {0, size}
"""


class TransparencyLog:
    """The log on ``client`` (one Redis or a cluster); tree heads signed by ``signing`` (``Notary``)."""

    def __init__(
        self, client: AnyRedis, signing: Signing, prefix: str = PREFIX, wait_replicas: int = 0, wait_ms: int = 1000
    ) -> None:
        """``wait_replicas``: as the game logs' appends (``adapters.redis_store``), an append is confirmed by
        that many replicas (``WAIT`` on the connection that wrote it) within ``wait_ms``, else
        ``WriteUnconfirmed``: a log entry lost in a failover would make the log shrink, which every
        monitor takes for a forgery."""
        self.client = client
        self.signing = signing
        self.keys = [f"{prefix}:{name}" for name in ("leaves", "index", "nodes", "frontier", "heads")]
        self.wait_replicas, self.wait_ms = wait_replicas, wait_ms
        self._append = client.register_script(_APPEND)

    # -- the one write --------------------------------------------------------------

    def add(self, signature: Mapping[str, Any]) -> int:
        """Log a sealed game's signature (``statement["game"]`` names it); its leaf index, the first one
        if it was logged before."""
        game = signature["statement"]["game"]
        entry = json.dumps({"game": game, "signature": dict(signature)}, separators=(",", ":"))
        leaf = leaf_hash(canonical_json(signature["statement"]))
        leaves, index, _nodes, frontier_key, _heads = self.keys
        for _attempt in range(MAX_RETRIES):
            pipe = self.client.pipeline(transaction=False)
            pipe.llen(leaves)
            pipe.get(frontier_key)
            pipe.hget(index, game)
            size, raw_frontier, known = pipe.execute()
            if known is not None:
                return int(known)
            frontier = [bytes.fromhex(h) for h in json.loads(raw_frontier)] if raw_frontier else []
            new_nodes, new_frontier = grow(size, frontier, leaf)
            root = frontier_root(new_frontier)
            head = self._signed_head(size + 1, root.hex())
            pairs = [x for (level, i), h in new_nodes for x in (f"{level}:{i}", h.hex())]
            args = [size, game, entry, json.dumps([h.hex() for h in new_frontier]), json.dumps(head), *pairs]
            status, value = self._write(args)
            if status in (0, 1):
                return int(value)
        raise RuntimeError(f"the transparency log kept moving: {MAX_RETRIES} tries to log {game}")

    def _write(self, args: list[Any]) -> tuple[int, int]:
        """The append script; with ``wait_replicas``, then ``WAIT`` on the same connection (one pipeline
        to the server that holds the log: on a cluster, the master of its slot)."""
        if not self.wait_replicas:
            status, value = self._append(keys=self.keys, args=args)
            return int(status), int(value)
        server: Any = self.client
        if isinstance(self.client, redis.RedisCluster):
            server = cast(Any, self.client).get_node_from_key(self.keys[0]).redis_connection
        pipe = server.pipeline(transaction=False)
        self._append(keys=self.keys, args=args, client=pipe)
        pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms)
        (status, value), confirmed = pipe.execute()
        if int(status) == 0 and int(confirmed) < self.wait_replicas:
            raise WriteUnconfirmed(f"log entry {value}: {confirmed} of {self.wait_replicas} replicas confirmed it")
        return int(status), int(value)

    def _signed_head(self, size: int, root: str) -> dict[str, Any]:
        return {"size": size, "root": root, "signature": self.signing.sign(log_head_statement(size, root))}

    # -- reads ----------------------------------------------------------------------

    def size(self) -> int:
        return int(self.client.llen(self.keys[0]))

    def head(self, size: int | None = None) -> dict[str, Any]:
        """The signed tree head of ``size`` (default: the latest); the empty tree's is signed on demand."""
        current = self.size()
        size = current if size is None else size
        if not 0 <= size <= current:
            raise BadTreeSize(f"the log has {current} entries: no tree of size {size}")
        if size == 0:
            return self._signed_head(0, EMPTY_ROOT.hex())
        raw = self.client.hget(self.keys[4], size)
        if raw is None:
            raise BadTreeSize(f"no head of size {size}")
        head: dict[str, Any] = json.loads(raw)
        return head

    def index_of(self, game_id: str) -> int | None:
        found = self.client.hget(self.keys[1], game_id)
        return None if found is None else int(found)

    def inclusion(self, game_id: str, size: int | None = None) -> dict[str, Any]:
        """``{"index", "size", "path"}``: the game's audit path in the tree of ``size`` (default: now)."""
        index = self.index_of(game_id)
        current = self.size()
        size = current if size is None else size
        if not 0 < size <= current:
            raise BadTreeSize(f"the log has {current} entries: no tree of size {size}")
        if index is None or index >= size:
            where = "is not in the log" if index is None else f"was logged at {index}, after the tree of {size}"
            raise NotLogged(f"game {game_id} {where}")
        return {"index": index, "size": size, "path": self._hashes(inclusion_ranges(index, size))}

    def consistency(self, first: int, second: int) -> dict[str, Any]:
        """``{"first", "second", "path"}``: the proof that the tree of ``second`` extends that of ``first``."""
        current = self.size()
        if not 0 <= first <= second <= current:
            raise BadTreeSize(f"the log has {current} entries: no proof from {first} to {second}")
        return {"first": first, "second": second, "path": self._hashes(consistency_ranges(first, second))}

    def entries(self, start: int, end: int) -> list[dict[str, Any]]:
        """Leaves ``start`` to ``end - 1`` (at most ``MAX_ENTRIES``), each ``{"index", "game", "signature"}``."""
        end = min(end, start + MAX_ENTRIES)  # none when end <= start
        raw = self.client.lrange(self.keys[0], start, end - 1) if end > start else []
        return [{"index": start + i, **json.loads(r)} for i, r in enumerate(raw)]

    def _hashes(self, ranges: Sequence[tuple[int, int]]) -> list[str]:
        needed = sorted(set(nodes_needed(ranges)))
        values = self.client.hmget(self.keys[2], [f"{level}:{i}" for level, i in needed]) if needed else []
        if any(v is None for v in values):
            raise RuntimeError("the transparency log lacks a node it wrote: its keys were tampered with")
        stored = {
            n: bytes.fromhex(v.decode() if isinstance(v, bytes) else str(v))
            for n, v in zip(needed, values, strict=True)
        }
        subtree = subtree_from_nodes(lambda level, i: stored[(level, i)])
        return [subtree(a, b).hex() for a, b in ranges]
