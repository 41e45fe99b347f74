"""RFC 9162's Merkle tree (Certificate Transparency 2.0, section 2.1): hashes, proofs and their checks.

A tree over leaves ``D[0:n]`` (byte strings)::

    MTH({})     = SHA-256()
    MTH({d0})   = SHA-256(0x00 || d0)                           (the leaf hash)
    MTH(D[0:n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n]))    k: the largest power of two below n

Proofs are built from ``subtree(start, end)``, a function giving ``MTH(D[start:end])`` for the
ranges the RFC's recursions ask for; every such range is a perfect subtree aligned to its size
(``end - start`` a power of two, ``start`` a multiple of it) or ends at the tree's size. A store
that keeps each perfect subtree's hash (``node(level, index)``) answers every proof from O(log n)
of them (``subtree_from_nodes``). The checks are the RFC's algorithms (2.1.3.2, 2.1.4.2) word
for word, so any implementation of the RFC verifies what this one proves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

LEAF_PREFIX, NODE_PREFIX = b"\x00", b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()

Subtree = Callable[[int, int], bytes]  # (start, end) -> MTH(D[start:end])


def leaf_hash(leaf: bytes) -> bytes:
    """``SHA-256(0x00 || leaf)``."""
    return hashlib.sha256(LEAF_PREFIX + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """``MTH`` of a whole list of leaf hashes (for checks and tests; a store keeps its nodes instead)."""
    if not leaf_hashes:
        return EMPTY_ROOT
    if len(leaf_hashes) == 1:
        return leaf_hashes[0]
    k = split(len(leaf_hashes))
    return node_hash(root_of(leaf_hashes[:k]), root_of(leaf_hashes[k:]))


def subtree_from_nodes(node: Callable[[int, int], bytes]) -> Subtree:
    """``subtree(start, end)`` from the stored perfect subtrees: ``node(level, index)`` is the hash of
    leaves ``index * 2**level`` to ``(index + 1) * 2**level``."""

    def subtree(start: int, end: int) -> bytes:
        size = end - start
        if size & (size - 1) == 0 and start % size == 0:
            level = size.bit_length() - 1
            return node(level, start >> level)
        k = split(size)
        return node_hash(subtree(start, start + k), subtree(start + k, end))

    return subtree


def nodes_needed(subtree_ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stored nodes ``(level, index)`` that ``subtree_from_nodes`` reads for these ranges."""
    out: list[tuple[int, int]] = []

    def visit(start: int, end: int) -> None:
        size = end - start
        if size & (size - 1) == 0 and start % size == 0:
            level = size.bit_length() - 1
            out.append((level, start >> level))
            return
        k = split(size)
        visit(start, start + k)
        visit(start + k, end)

    for start, end in subtree_ranges:
        visit(start, end)
    return out


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make the audit path of leaf ``index`` in a tree of ``size`` (RFC 9162
    2.1.3.1, ``PATH(m, D[n])``), nearest the leaf first."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    out: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = split(end - start)
        if index < start + k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start += k
    return out[::-1]


def consistency_ranges(first: int, second: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make the consistency proof from size ``first`` to ``second`` (RFC 9162
    2.1.4.1, ``PROOF(m, D[n])``); none when ``first`` is 0 or equals ``second``."""
    if not 0 <= first <= second:
        raise ValueError(f"no consistency proof from {first} to {second}")
    if first in (0, second):
        return []
    out: list[tuple[int, int]] = []
    start, end, m, complete = 0, second, first, True
    while True:
        if m == end - start:
            if not complete:
                out.append((start, end))
            break
        k = split(end - start)
        if m <= k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start, m, complete = start + k, m - k, False
    return out[::-1]


def inclusion_path(subtree: Subtree, index: int, size: int) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of ``size``."""
    return [subtree(a, b) for a, b in inclusion_ranges(index, size)]


def consistency_path(subtree: Subtree, first: int, second: int) -> list[bytes]:
    """The consistency proof between the trees of sizes ``first`` and ``second``."""
    return [subtree(a, b) for a, b in consistency_ranges(first, second)]


def verify_inclusion(leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes) -> bool:
    """RFC 9162 2.1.3.2: whether ``path`` proves the leaf hash ``leaf`` at ``index`` in the tree of
    ``size`` whose root is ``root``."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, path: Sequence[bytes]) -> bool:
    """RFC 9162 2.1.4.2: whether ``path`` proves the tree of ``second`` extends the tree of ``first``.

    From size 0 every tree is consistent (the proof is empty); between equal sizes the proof is empty
    and the roots are equal."""
    if not 0 <= first <= second:
        return False
    if first == 0:
        return not path and first_root == EMPTY_ROOT
    if first == second:
        return not path and first_root == second_root
    if not path:
        return False
    nodes = list(path)
    if first & (first - 1) == 0:
        nodes.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = nodes[0]
    for c in nodes[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


def grow(size: int, frontier: Sequence[bytes], leaf: bytes) -> tuple[list[tuple[tuple[int, int], bytes]], list[bytes]]:
    """Append the leaf hash ``leaf`` as leaf ``size``: the perfect subtrees it completes, as
    ``((level, index), hash)`` (the leaf itself first), and the new frontier.

    The frontier of a tree lists its perfect subtrees, largest (leftmost) first, one per set bit of its
    size: all an append needs, and all the root needs (``frontier_root``). A new leaf merges with the
    smallest ones while they are its size."""
    nodes = [((0, size), leaf)]
    out = [*frontier, leaf]
    level, index = 0, size
    while index & 1:
        right, left = out.pop(), out.pop()
        merged = node_hash(left, right)
        level, index = level + 1, index >> 1
        nodes.append(((level, index), merged))
        out.append(merged)
    return nodes, out


def frontier_root(frontier: Sequence[bytes]) -> bytes:
    """The root of the tree whose perfect subtrees (largest first) are ``frontier``: ``MTH`` of it all."""
    if not frontier:
        return EMPTY_ROOT
    root = frontier[-1]
    for subtree in reversed(frontier[:-1]):
        root = node_hash(subtree, root)
    return root
