"""Signed statements and RFC 9162's Merkle tree: the worked vectors of docs/record-format.md, the
algorithms against a tree built by brute force for every small size, and the attacks that must fail
(a tampered statement, another key, a kid that is not the key's, a proof step changed)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from domain.canonical import canonical_json
from domain.merkle import (
    consistency_path,
    frontier_root,
    grow,
    inclusion_path,
    leaf_hash,
    root_of,
    subtree_from_nodes,
    verify_consistency,
    verify_inclusion,
)
from domain.signatures import (
    SignatureError,
    Signer,
    b64url,
    check_signature,
    from_b64url,
    log_head_statement,
    sealed_game_statement,
    thumbprint,
    valid_at,
)

RFC8032_SECRET = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
RFC8032_PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
VECTOR_KEY = Signer(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(RFC8032_SECRET)))
KEYS = {"keys": [VECTOR_KEY.jwk]}
HEX = {
    "leaf0": "f0c15c05c18c9ca3cdba9ea7c78b32fc315e1176035f4227921a204a4fa8f9a2",
    "leaf1": "b33b2d35eec337fb610b3769c46b6759c36c1784427142bea8dd64294f66806c",
    "leaf2": "4ca3927f5e90a5b71fb09a5ac61b217605c3e081fe01d58dd49152cd05e62b5b",
    "root2": "3b7e4c0f9415437e025c30eedbaf842606b40ab9e8ef21d0846aadff444108ce",
    "root3": "21174eb97f532548b3a72ee2dbafb2b083555cf7e97d646150640db428834435",
}


def vector_leaves() -> list[bytes]:
    return [
        canonical_json(sealed_game_statement(f"g-vector-{i}", 40 + i, f"{i:x}" * 64, f"2026-01-01T00:1{i}:00.000Z"))
        for i in (1, 2, 3)
    ]


def test_the_worked_vector_of_a_sealed_games_signature() -> None:
    assert VECTOR_KEY.jwk["x"] == b64url(bytes.fromhex(RFC8032_PUBLIC)) == "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    assert VECTOR_KEY.kid == thumbprint(VECTOR_KEY.jwk["x"]) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    statement = sealed_game_statement(
        "g-vector-1", 42, "c9dc94990d7950a09c6e919da0db0d5bc88cef2769fcd633dacb26e5d1189e7f", "2026-01-01T00:10:00.000Z"
    )
    assert canonical_json(statement) == (
        b'{"game":"g-vector-1","hash":"c9dc94990d7950a09c6e919da0db0d5bc88cef2769fcd633dacb26e5d1189e7f",'
        b'"kind":"kifu-sealed-game/1","sealed_at":"2026-01-01T00:10:00.000Z","version":42}'
    )
    signature = VECTOR_KEY.sign(statement)
    assert signature["sig"] == (
        "iTNL5ofVY-BLqkuSZmzvk6Rl7BkHQDUfjXHDHXMReXoeIGsqemBa3q5Zcnn-OSEcpz69eJtERzXwSC-mqMzxDw"
    )
    assert check_signature(signature, KEYS)["kid"] == VECTOR_KEY.kid


def test_the_worked_vectors_of_a_three_leaf_tree() -> None:
    leaves = [leaf_hash(leaf) for leaf in vector_leaves()]
    assert [h.hex() for h in leaves] == [HEX["leaf0"], HEX["leaf1"], HEX["leaf2"]]
    assert [root_of(leaves[:n]).hex() for n in (1, 2, 3)] == [HEX["leaf0"], HEX["root2"], HEX["root3"]]
    subtree = lambda a, b: root_of(leaves[a:b])  # noqa: E731
    assert [h.hex() for h in inclusion_path(subtree, 0, 3)] == [HEX["leaf1"], HEX["leaf2"]]
    assert [h.hex() for h in inclusion_path(subtree, 2, 3)] == [HEX["root2"]]
    assert [h.hex() for h in consistency_path(subtree, 1, 3)] == [HEX["leaf1"], HEX["leaf2"]]
    assert [h.hex() for h in consistency_path(subtree, 2, 3)] == [HEX["leaf2"]]
    head = VECTOR_KEY.sign(log_head_statement(3, HEX["root3"]))
    assert head["sig"] == "iU6M3BqVedyHNFT61EP7FjWPeoteP8OvLDNk4FvGuj82yXWzKE7mneS_ygzMr2QPrJzRswwPWTPwdbOtp0HgDA"


def test_every_inclusion_and_consistency_proof_of_every_small_tree_verifies_and_no_changed_one_does() -> None:
    for size in range(1, 34):
        leaves = [leaf_hash(bytes([i])) for i in range(size)]
        nodes = lambda level, i, ls=leaves: root_of(ls[i << level : (i + 1) << level])  # noqa: E731
        subtree = subtree_from_nodes(nodes)
        root = root_of(leaves)
        for m in range(size):
            path = inclusion_path(subtree, m, size)
            assert path == inclusion_path(lambda a, b, ls=leaves: root_of(ls[a:b]), m, size)
            assert verify_inclusion(leaves[m], m, size, path, root)
            assert not verify_inclusion(leaf_hash(b"x"), m, size, path, root)
            for k in range(len(path)):
                changed = [*path[:k], leaf_hash(b"y"), *path[k + 1 :]]
                assert not verify_inclusion(leaves[m], m, size, changed, root)
            if path:
                assert not verify_inclusion(leaves[m], m, size, path[:-1], root)
                assert not verify_inclusion(leaves[m], m, size, [*path, path[0]], root)
        for first in range(size + 1):
            path = consistency_path(subtree, first, size)
            old = root_of(leaves[:first])
            assert verify_consistency(first, size, old, root, path)
            if 0 < first < size:
                assert not verify_consistency(first, size, leaf_hash(b"forked"), root, path)
                assert not verify_consistency(first, size, old, leaf_hash(b"forked"), path)
                for k in range(len(path)):
                    changed = [*path[:k], leaf_hash(b"y"), *path[k + 1 :]]
                    assert not verify_consistency(first, size, old, root, changed)


@given(st.lists(st.binary(max_size=8), min_size=1, max_size=300))
def test_the_frontier_an_append_keeps_always_gives_the_trees_root(leaves: list[bytes]) -> None:
    frontier: list[bytes] = []
    stored: dict[tuple[int, int], bytes] = {}
    hashes = [leaf_hash(leaf) for leaf in leaves]
    for size, leaf in enumerate(hashes):
        nodes, frontier = grow(size, frontier, leaf)
        stored.update(nodes)
        assert len(frontier) == bin(size + 1).count("1")
    assert frontier_root(frontier) == root_of(hashes)
    subtree = subtree_from_nodes(lambda level, i: stored[(level, i)])
    last = len(hashes) - 1
    assert verify_inclusion(
        hashes[last], last, len(hashes), inclusion_path(subtree, last, len(hashes)), root_of(hashes)
    )


def signed() -> dict[str, Any]:
    return VECTOR_KEY.sign(sealed_game_statement("g1", 9, "a" * 64, "2026-01-01T00:00:00.000Z"))


@pytest.mark.parametrize(
    ("attack", "says"),
    [
        (lambda s, k: s["statement"].update(version=10), "not key"),
        (lambda s, k: s["statement"].update(version=9.0), "not key"),  # the same number, another JSON
        (lambda s, k: s.update(sig=b64url(bytes(64))), "not key"),
        (lambda s, k: s.update(sig=s["sig"][:-2] + ("B" if s["sig"][-2] == "A" else "A") + s["sig"][-1]), "not key"),
        (lambda s, k: s.update(sig=s["sig"] + "="), "base64url"),
        (lambda s, k: s.update(kid="someone-else"), "not among the keys"),
        (lambda s, k: s.update(alg="ES256"), "alg"),
        (lambda s, k: s.update(extra=1), "exactly the keys"),
        (lambda s, k: k["keys"][0].update(kid=s["kid"], x=Signer(Ed25519PrivateKey.generate()).jwk["x"]), "thumbprint"),
        (lambda s, k: k["keys"][0].update(crv="X25519"), "not an Ed25519 key"),
    ],
)
def test_a_signature_tampered_with_or_made_by_another_key_does_not_hold(attack: Any, says: str) -> None:
    signature, keys = signed(), copy.deepcopy(KEYS)
    attack(signature, keys)
    with pytest.raises(SignatureError, match=says):
        check_signature(signature, keys)


def test_another_keys_signature_of_the_very_same_statement_does_not_hold() -> None:
    forger = Signer(Ed25519PrivateKey.generate())
    forged = forger.sign(signed()["statement"])
    with pytest.raises(SignatureError, match="not among the keys"):
        check_signature(forged, KEYS)
    with pytest.raises(SignatureError, match="not key"):
        check_signature({**forged, "kid": VECTOR_KEY.kid}, KEYS)


def test_base64url_has_one_spelling_per_value() -> None:
    assert from_b64url(b64url(b"\xff\xfe")) == b"\xff\xfe"
    assert from_b64url("_-8") == b"\xff\xef"
    for bad in ("//79", "__79=", "_-9", "A", "a b"):  # the +/ alphabet, padding, stray bits, a length, a space
        with pytest.raises(SignatureError):
            from_b64url(bad)


def test_a_retired_key_vouches_for_games_sealed_until_ten_minutes_after_its_retirement() -> None:
    retired = {**VECTOR_KEY.jwk, "valid_from": "2026-01-01T00:00:00.000Z", "valid_until": "2026-02-01T00:00:00.000Z"}
    assert valid_at(retired, "2026-02-01T00:09:59.999Z")
    assert not valid_at(retired, "2026-02-01T00:10:00.001Z")
    assert valid_at({**retired, "valid_until": None}, "2099-01-01T00:00:00.000Z")
    assert not valid_at(retired, "not a time")
