"""The transparency log of sealed games, in Redis: RFC 9162's Merkle tree, append-only, every head signed.

Leaf ``i`` is the canonical JSON of one sealed game's signed statement (``domain.signatures``); the
tree is ``domain.merkle``'s. All keys share one hash tag (``{tlog}``), so on a Redis Cluster they live
on one node and each of its scripts writes them together:

* ``leaves``: a list, entry ``i`` = ``{"game", "signature"}`` (the signature carries its statement);
* ``index``: a hash, game id -> its leaf index (a game is logged once);
* ``nodes``: a hash, ``"level:index"`` -> the hex hash of every perfect subtree so far (about two per
  leaf), from which any proof takes O(log n) reads (``domain.merkle.subtree_from_nodes``);
* ``frontier``: the hashes of the perfect subtrees that make up the current tree (one per bit of its
  size), all an append needs to compute the new nodes and the new root;
* ``heads``: a hash, size -> the signed tree head of that size;
* ``size``: how many leaves the tree holds (the leaves past it are queued, not yet in the tree; a log
  written before this key existed holds all its leaves);
* ``confirmations``: a counter, written only so that ``WAIT`` has a write of its own to wait for
  (``wait_replicas``: an append whose leaf another process integrated confirms that process's write).

An append has two steps. **Queue** (one script, one round trip): a game not logged yet gets the next
leaf (``RPUSH``, its index in ``index``); the answer is its index, and when the tree does not hold it
yet, the tree's size, its frontier and the leaves queued after it. **Integrate**: compute the nodes,
the frontier and a signed head for every size up to the last queued leaf (one signature per size, so
every size keeps its signed head), and write them with a script that refuses if the tree's size moved
meanwhile. Whoever integrates takes every queued leaf, its own and the others': a process that lost
the race reads again and finds, almost always, its leaf in the tree already. (The earlier design
computed one leaf's head and wrote leaf and tree together, refused whenever the size moved: under a
load of some 150 sealed games a second from two API workers, only 31% of the appends got through at
the first try and some took 26, each retry a read, a signature and a write.) A process that dies
between the two steps leaves its leaf queued; the next append integrates it, and an append of a
game queued already (the projector's, when it meets the seal) integrates up to it.

Nothing ever deletes or rewrites an entry: rebuilding the read models does not touch the log.
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
from domain.signatures import Signer, log_head_statement
from service.ports import BadTreeSize, NotLogged, Signing, WriteUnconfirmed

PREFIX = "kifu:{tlog}"
MAX_ENTRIES = 256  # per GET /v1/log/entries
MAX_BATCH = 256  # queued leaves integrated in one write
MAX_RETRIES = 64

# Queue a game's leaf unless logged before. KEYS: leaves, index, size, frontier. ARGV: game, entry.
# Answers {index, size} when the tree holds the leaf, else {index, size, frontier, leaves from size on}.
_QUEUE = """
local integrated = redis.call('GET', KEYS[3])
if not integrated then
  integrated = redis.call('LLEN', KEYS[1])
  redis.call('SET', KEYS[3], integrated)
end
integrated = tonumber(integrated)
local index = redis.call('HGET', KEYS[2], ARGV[1])
if index then
  index = tonumber(index)
else
  index = redis.call('RPUSH', KEYS[1], ARGV[2]) - 1
  redis.call('HSET', KEYS[2], ARGV[1], index)
end
if index < integrated then return {index, integrated} end
local queued = redis.call('LRANGE', KEYS[1], integrated, integrated + tonumber(ARGV[3]) - 1)
return {index, integrated, redis.call('GET', KEYS[4]) or '', unpack(queued)}
"""

# The tree as it is. KEYS: leaves, size, frontier. ARGV: batch. Answers {size, frontier, queued leaves}.
_READ = """
local integrated = tonumber(redis.call('GET', KEYS[2]) or redis.call('LLEN', KEYS[1]))
local queued = redis.call('LRANGE', KEYS[1], integrated, integrated + tonumber(ARGV[1]) - 1)
return {integrated, redis.call('GET', KEYS[3]) or '', unpack(queued)}
"""

# Integrate queued leaves. KEYS: size, nodes, frontier, heads. ARGV: expected size, new size, frontier,
# number of heads, then size/head pairs, then field/value pairs of the new nodes. Answers {0, new size}
# (written) or {1, size} (the size moved: nothing written).
_INTEGRATE = """
local integrated = tonumber(redis.call('GET', KEYS[1]))
if integrated ~= tonumber(ARGV[1]) then return {1, integrated or -1} end
local heads = tonumber(ARGV[4])
redis.call('HSET', KEYS[4], unpack(ARGV, 5, 4 + 2 * heads))
redis.call('HSET', KEYS[2], unpack(ARGV, 5 + 2 * heads))
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SET', KEYS[1], ARGV[2])
return {0, tonumber(ARGV[2])}
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
        self.prefix = prefix
        self.keys = [f"{prefix}:{name}" for name in ("leaves", "index", "nodes", "frontier", "heads", "size")]
        self.wait_replicas, self.wait_ms = wait_replicas, wait_ms
        self._queue = client.register_script(_QUEUE)
        self._read = client.register_script(_READ)
        self._integrate = client.register_script(_INTEGRATE)

    # -- the one write --------------------------------------------------------------

    def add(self, signature: Mapping[str, Any], signer: Signer | None = None) -> int:
        """Log a sealed game's signature (``statement["game"]`` names it); its leaf index, the first one
        if it was logged before. Returns once the tree holds it, with a signed head for every size.

        ``signer`` signs the heads: the one the command that sealed the game had published and signed
        the seal with a moment before (one round trip fewer per sealed game); else ``signing``'s."""
        game = signature["statement"]["game"]
        entry = json.dumps({"game": game, "signature": dict(signature)}, separators=(",", ":"))
        leaves, index_key, _nodes, frontier_key, _heads, size_key = self.keys
        queue_keys = [leaves, index_key, size_key, frontier_key]
        tree: list[Any] = []  # [size, frontier, queued leaves...] while the tree does not hold the leaf
        index = -1
        for _attempt in range(MAX_RETRIES):
            if not tree:
                queued_at, *tree = self._queue(keys=queue_keys, args=[game, entry, MAX_BATCH])
                index = int(queued_at)
                if len(tree) == 1:
                    return index  # in the tree already: logged before
            if int(tree[0]) > index:
                self._confirm()  # another process integrated it: its write, too, must reach the replicas
                return index
            size, raw_frontier, queued = int(tree[0]), tree[1], tree[2:]
            if index >= size + len(queued) and len(queued) < MAX_BATCH:
                tree = []  # the leaf is gone (a failover lost the queue's write): queue it again
                continue
            status, now = self._write(self._integration(size, raw_frontier, queued, signer))
            if status == 0 and index < now:
                return index  # integrated by this write (confirmed by the replicas in it)
            tree = self._tree()  # refused: another process integrated first
        raise RuntimeError(f"the transparency log kept moving: {MAX_RETRIES} tries to log {game}")

    def _tree(self) -> list[Any]:
        """``[size, frontier, queued leaves...]`` as the log holds them now."""
        leaves, _index, _nodes, frontier_key, _heads, size_key = self.keys
        return list(self._read(keys=[leaves, size_key, frontier_key], args=[MAX_BATCH]))

    def _integration(self, size: int, raw_frontier: Any, queued: Sequence[Any], signer: Signer | None) -> list[Any]:
        """The integrate script's arguments: ``queued`` leaves added to the tree of ``size``."""
        frontier = [bytes.fromhex(h) for h in json.loads(raw_frontier)] if raw_frontier else []
        nodes: list[str] = []
        roots: list[tuple[int, str]] = []
        for offset, raw in enumerate(queued):
            statement = json.loads(raw)["signature"]["statement"]
            grown, frontier = grow(size + offset, frontier, leaf_hash(canonical_json(statement)))
            nodes += [x for (level, i), h in grown for x in (f"{level}:{i}", h.hex())]
            roots.append((size + offset + 1, frontier_root(frontier).hex()))
        signer = signer or self.signing.current()  # one key check for the batch
        signatures = [signer.sign(log_head_statement(n, root)) for n, root in roots]
        heads = [
            x
            for (n, root), signed in zip(roots, signatures, strict=True)
            for x in (n, json.dumps({"size": n, "root": root, "signature": signed}))
        ]
        end = size + len(queued)
        return [size, end, json.dumps([h.hex() for h in frontier]), len(roots), *heads, *nodes]

    def _write(self, args: list[Any]) -> tuple[int, int]:
        """The integrate script; with ``wait_replicas``, then ``WAIT`` on the same connection (one pipeline
        to the server that holds the log: on a cluster, the master of its slot). Its replicas then hold
        the leaves it integrated too: they were written before it, on the same server."""
        _leaves, _index, nodes, frontier, heads, size = self.keys
        keys = [size, nodes, frontier, heads]
        if not self.wait_replicas:
            status, value = self._integrate(keys=keys, args=args)
            return int(status), int(value)
        pipe = self._master().pipeline(transaction=False)
        self._integrate(keys=keys, args=args, client=pipe)
        pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms)
        (status, value), confirmed = pipe.execute()
        if int(status) == 0 and int(confirmed) < self.wait_replicas:
            raise WriteUnconfirmed(
                f"log entries to {value}: {confirmed} of {self.wait_replicas} replicas confirmed them"
            )
        return int(status), int(value)

    def _confirm(self) -> None:
        """With ``wait_replicas``: once the replicas hold every write made to the log so far (a write of
        this connection's, then ``WAIT``: the replication stream is in order), else ``WriteUnconfirmed``."""
        if not self.wait_replicas:
            return
        pipe = self._master().pipeline(transaction=False)
        pipe.incr(f"{self.prefix}:confirmations")
        pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms)
        _count, confirmed = pipe.execute()
        if int(confirmed) < self.wait_replicas:
            raise WriteUnconfirmed(f"the log: {confirmed} of {self.wait_replicas} replicas confirmed it")

    def _master(self) -> Any:
        """The server that holds the log (on a cluster, the master of its slot)."""
        if isinstance(self.client, redis.RedisCluster):
            return cast(Any, self.client).get_node_from_key(self.keys[0]).redis_connection
        return self.client

    def _signed_head(self, size: int, root: str) -> dict[str, Any]:
        return {"size": size, "root": root, "signature": self.signing.sign(log_head_statement(size, root))}

    # -- reads ----------------------------------------------------------------------

    def size(self) -> int:
        """The leaves the tree holds (queued ones are not in it yet)."""
        integrated = self.client.get(self.keys[5])
        return int(integrated) if integrated is not None else int(self.client.llen(self.keys[0]))

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

    def missing(self, games: Sequence[str]) -> list[str]:
        """Those of ``games`` the tree does not hold (never logged, or queued and not integrated yet), in
        one round trip: what the projector still has to log of a batch of sealed games."""
        if not games:
            return []
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(self.keys[1], list(games))
        pipe.get(self.keys[5])
        pipe.llen(self.keys[0])
        found, size, length = pipe.execute()
        held = int(size) if size is not None else int(length)
        return [game for game, index in zip(games, found, strict=True) if index is None or int(index) >= held]

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
        end = min(end, start + MAX_ENTRIES, self.size())  # none when end <= start; none queued
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
