"""What signing and the transparency log cost (issue 24). Prints figures; asserts nothing.

    python -m bench.signing [--games 2000]

* per sealed game: building and signing its statement (Ed25519), and checking it against a key set;
* the transparency log on an embedded Redis (fsync every second, as ``make run``): appends per second
  from one process (each: one read round trip, the nodes and head computed and signed, one script),
  and the cost of an inclusion and a consistency proof;
* a record's verification with and without keys (the signature and inclusion checks' share).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.embedded_redis import EmbeddedRedis
from adapters.signing_keys import FileSigning, KeyRegistry
from adapters.transparency_log import TransparencyLog
from bench.forgeries import counter_salts, play, sealed
from domain.audit import verify_record
from domain.canonical import canonical_json
from domain.merkle import leaf_hash
from domain.signatures import Signer, check_signature, log_head_statement, sealed_game_statement
from service.commands import utc_now


def per_second(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f}/s ({1e6 * seconds / count:.0f} us each)"


def signing(games: int) -> None:
    signer = Signer(Ed25519PrivateKey.generate())
    keys = {"keys": [signer.jwk]}
    statements = [sealed_game_statement(f"g{i}", 60, f"{i:064x}", "2026-11-26T12:00:00.000Z") for i in range(games)]
    began = time.perf_counter()
    signatures = [signer.sign(s) for s in statements]
    signed = time.perf_counter() - began
    began = time.perf_counter()
    for signature in signatures:
        check_signature(signature, keys)
    checked = time.perf_counter() - began
    print(f"sign a sealed game's statement: {per_second(games, signed)}")
    print(f"check a signature against the key set: {per_second(games, checked)}")


def transparency_log(games: int) -> None:
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), fsync="everysec") as server:
        client = redis.Redis(port=server.port)
        keys = FileSigning(Path(data) / "key.pem", KeyRegistry(client), utc_now)
        log = TransparencyLog(client, keys)
        signatures = [
            keys.sign(sealed_game_statement(f"g{i}", 60, f"{i:064x}", "2026-11-26T12:00:00.000Z")) for i in range(games)
        ]
        began = time.perf_counter()
        for signature in signatures:
            log.add(signature)
        added = time.perf_counter() - began
        print(f"transparency log append (one process, signed head each): {per_second(games, added)}")
        began = time.perf_counter()
        for i in range(0, games, max(1, games // 500)):
            log.inclusion(f"g{i}")
        n = len(range(0, games, max(1, games // 500)))
        print(f"inclusion proof in a tree of {games}: {per_second(n, time.perf_counter() - began)}")
        began = time.perf_counter()
        for first in range(1, games, max(1, games // 500)):
            log.consistency(first, games)
        n = len(range(1, games, max(1, games // 500)))
        print(f"consistency proof to the tree of {games}: {per_second(n, time.perf_counter() - began)}")
        client.close()


def record_verification(rounds: int = 20) -> None:
    salts = counter_salts("bench")
    events, seed = play("san-ban", 1, salts)
    record = sealed(events, seed, salts)
    signer = Signer(Ed25519PrivateKey.generate())
    end = record["events"][-1]
    statement = sealed_game_statement(record["game_id"], len(record["events"]), end["hash"], end["at"])
    record["signature"] = signer.sign(statement)
    root = leaf_hash(canonical_json(statement)).hex()
    head = {"size": 1, "root": root, "signature": signer.sign(log_head_statement(1, root))}
    record["inclusion"] = {"index": 0, "size": 1, "path": [], "head": head}
    keys = {"keys": [signer.jwk]}
    for given in (None, keys):
        took = []
        for _ in range(rounds):
            began = time.perf_counter()
            assert verify_record(record, keys=given)["verified"]
            took.append(time.perf_counter() - began)
        how = "with keys" if given else "without keys"
        print(
            f"verify a San Ban record ({len(record['events'])} events) {how}: {1000 * statistics.median(took):.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000)
    args = parser.parse_args()
    signing(args.games)
    transparency_log(args.games)
    record_verification()


if __name__ == "__main__":
    main()
