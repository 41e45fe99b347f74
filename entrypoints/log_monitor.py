"""``kifu log-monitor URL``: follow a Kifu server's transparency log and say loudly if it ever forks or
shrinks, logs a game twice, or leaves a finished game out.

What one look checks (``Monitor.look``), against the keys it trusts (``--keys``, else the server's
``GET /v1/keys`` as first seen, pinned: a key that later disappears from the server's set is an alarm):

1. the signed tree head: its signature, and that its statement is its size and root;
2. against the last head it verified: never smaller; the same root at the same size; at a larger size a
   consistency proof (``GET /v1/log/consistency``) that holds (RFC 9162 2.1.4.2);
3. every new entry (``GET /v1/log/entries``): a sealed game's statement signed by a trusted key, for a
   game not logged before; and the entries, appended to the tree it keeps (its frontier: O(log n)
   hashes), give exactly the signed root, so no entry is hidden or changed;
4. each new game's inclusion proof (``GET /v1/log/inclusion``) against the head;
5. every finished game the server lists (``GET /v1/games?status=finished``) is in the log.

The state (the last head, the frontier, the games seen) is kept in a JSON file (``--state``), so a
monitor restarted later goes on from where it was and still catches a log rewritten in between.
An alarm prints ``ALERT: ...`` on stderr and ends the monitor with exit status 1.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from domain.canonical import canonical_json
from domain.merkle import frontier_root, grow, leaf_hash, verify_consistency, verify_inclusion
from domain.signatures import SEALED_GAME, SignatureError, check_signature, log_head_statement

PAGE = 256


class Alarm(Exception):
    """The log broke a promise: forked, shrank, hid or changed an entry, logged a game twice, lost one."""


@dataclass
class State:
    """What the monitor has verified so far."""

    size: int = 0
    root: str = frontier_root([]).hex()
    frontier: list[str] = field(default_factory=list)
    games: dict[str, int] = field(default_factory=dict)
    finished_checked: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    keys: dict[str, Any] | None = None

    @classmethod
    def load(cls, path: Path | None) -> State:
        if path is None or not path.exists():
            return cls()
        return cls(**json.loads(path.read_text()))

    def save(self, path: Path | None) -> None:
        if path is not None:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(json.dumps(self.__dict__))
            tmp.replace(path)


class Monitor:
    """Looks at one server's log, as often as asked, keeping ``state`` (saved to ``state_file``)."""

    def __init__(
        self,
        url: str,
        state: State,
        state_file: Path | None = None,
        keys: Mapping[str, Any] | None = None,
        say: Callable[[str], None] = print,
        session: requests.Session | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.state = state
        self.state_file = state_file
        self.trusted = dict(keys) if keys is not None else None
        self.say = say
        self.http = session or requests.Session()

    def get(self, path: str, **params: Any) -> Any:
        return fetch(self.http, self.url, path, **params)

    def keys(self) -> Mapping[str, Any]:
        """The keys to trust: given, else the server's as first seen (pinned in the state)."""
        if self.trusted is not None:
            return self.trusted
        served = self.get("/v1/keys")
        if self.state.keys is None:
            self.state.keys = dict(served)
        pinned = {k["kid"] for k in self.state.keys["keys"]}
        missing = pinned - {k["kid"] for k in served["keys"]}
        if missing:
            raise Alarm(f"the server no longer publishes key(s) {sorted(missing)}: what they signed cannot be checked")
        self.state.keys = dict(served)  # new keys are taken on (a rotation); none is ever dropped
        return self.state.keys

    def look(self) -> None:
        """One look at the log: the head, the proofs, the new entries, the finished games."""
        keys = self.keys()
        head = self.get("/v1/log/head")
        _check_head(head, keys)
        self._check_growth(head)
        self._take_entries(head, keys)
        self._check_finished_games(head)
        self.state.size, self.state.root = head["size"], head["root"]
        self.state.save(self.state_file)
        self.say(f"ok: tree of {head['size']}, root {head['root']}; games logged: {len(self.state.games)}")

    def _check_growth(self, head: Mapping[str, Any]) -> None:
        old_size, old_root = self.state.size, self.state.root
        if head["size"] < old_size:
            raise Alarm(f"the log SHRANK: from {old_size} entries to {head['size']}")
        if head["size"] == old_size:
            if head["root"] != old_root:
                raise Alarm(f"the log FORKED: two roots for size {old_size}: {old_root} and {head['root']}")
            return
        proof = self.get("/v1/log/consistency", first=old_size, second=head["size"])
        path = [bytes.fromhex(h) for h in proof["path"]]
        if not verify_consistency(old_size, head["size"], bytes.fromhex(old_root), bytes.fromhex(head["root"]), path):
            raise Alarm(f"the log FORKED: the tree of {head['size']} does not extend the tree of {old_size} it showed")

    def _take_entries(self, head: Mapping[str, Any], keys: Mapping[str, Any]) -> None:
        frontier = [bytes.fromhex(h) for h in self.state.frontier]
        size = self.state.size
        fresh: list[tuple[str, int, bytes]] = []
        while size < head["size"]:
            entries = self.get("/v1/log/entries", start=size, end=head["size"])["entries"]
            if not entries:
                raise Alarm(f"the log hid its entries from {size}: its head has {head['size']}")
            for entry in entries:
                if entry["index"] != size:
                    raise Alarm(f"entry {size} came back as index {entry['index']}")
                game = self._check_entry(entry, keys)
                leaf = leaf_hash(canonical_json(entry["signature"]["statement"]))
                _nodes, frontier = grow(size, frontier, leaf)
                self.state.games[game] = size
                fresh.append((game, size, leaf))
                size += 1
        if frontier_root(frontier).hex() != head["root"]:
            raise Alarm(f"the log's entries do not make its signed root {head['root']}: an entry was changed")
        self.state.frontier = [h.hex() for h in frontier]
        for game, index, leaf in fresh:
            self._check_inclusion(game, index, leaf, head)
        late = [g for g in self.state.pending if g not in self.state.games]
        if late:
            raise Alarm(f"game(s) {late} answered an inclusion proof, yet are NOT IN THE LOG's entries")
        self.state.pending = []

    def _check_entry(self, entry: Mapping[str, Any], keys: Mapping[str, Any]) -> str:
        signature = entry["signature"]
        try:
            check_signature(signature, keys)
        except SignatureError as exc:
            raise Alarm(f"entry {entry['index']}: {exc}") from None
        statement = signature["statement"]
        if statement.get("kind") != SEALED_GAME or statement.get("game") != entry["game"]:
            raise Alarm(f"entry {entry['index']} is not a sealed game's statement for {entry['game']!r}")
        game = str(entry["game"])
        if game in self.state.games:
            raise Alarm(f"game {game} is logged TWICE (entries {self.state.games[game]} and {entry['index']})")
        return game

    def _check_inclusion(self, game: str, index: int, leaf: bytes, head: Mapping[str, Any]) -> None:
        proof = self.get("/v1/log/inclusion", game=game, size=head["size"])
        path = [bytes.fromhex(h) for h in proof["path"]]
        if proof["index"] != index or not verify_inclusion(
            leaf, index, head["size"], path, bytes.fromhex(head["root"])
        ):
            raise Alarm(f"game {game}: its inclusion proof does not hold in the tree of {head['size']}")

    def _check_finished_games(self, head: Mapping[str, Any]) -> None:
        """Every finished game the server lists is in the log: one logged since this look's head must be
        among the entries of the next look; a signed one the log does not hold is an alarm."""
        checked = set(self.state.finished_checked)
        cursor: str | None = None
        while True:
            page = self.get("/v1/games", status="finished", limit=200, **({"cursor": cursor} if cursor else {}))
            for game in page["items"]:
                game_id = game["id"]
                if game_id in checked or game_id in self.state.games:
                    checked.add(game_id)
                    continue
                answer = self.http.get(f"{self.url}/v1/log/inclusion", params={"game": game_id}, timeout=30)
                if answer.status_code == 200 and answer.json()["size"] > head["size"]:
                    self.state.pending.append(game_id)  # logged since: its entry comes next time
                    continue
                record = self.get(f"/v1/games/{game_id}/record")
                if record.get("signature") is not None:
                    raise Alarm(f"finished game {game_id} is signed but NOT IN THE LOG (tree of {head['size']})")
                if record.get("complete"):
                    checked.add(game_id)  # sealed before records were signed: never logged
                # else a tournament still holds it unsealed: looked at again next time
            cursor = page.get("next")
            if not cursor:
                break
        self.state.finished_checked = sorted(checked)


def fetch(http: requests.Session, base: str, path: str, **params: Any) -> Any:
    """``GET base + path``'s JSON; any other answer than 200 is an ``Alarm`` (the log must answer)."""
    answer = http.get(f"{base}{path}", params=params, timeout=30)
    if answer.status_code != 200:
        raise Alarm(f"GET {path} {params or ''} answered {answer.status_code}: {answer.text[:300]}")
    return answer.json()


def _check_head(head: Mapping[str, Any], keys: Mapping[str, Any]) -> None:
    try:
        check_signature(head["signature"], keys)
    except SignatureError as exc:
        raise Alarm(f"the tree head's {exc}") from None
    if head["signature"]["statement"] != log_head_statement(head["size"], head["root"]):
        raise Alarm(f"the tree head's signature is not over its size and root: {head['signature']['statement']}")


def follow(monitor: Monitor, interval_s: float, once: bool) -> None:
    """Look now, then every ``interval_s`` seconds, until an alarm (raised) or, with ``once``, at once."""
    while True:
        monitor.look()
        if once:
            return
        time.sleep(interval_s)


def check_in_log(record: Mapping[str, Any], url: str, keys: Mapping[str, Any]) -> str:
    """``kifu verify --log URL``: the record's game is in the server's current signed tree head, and that
    head extends the one the record's inclusion proof is against. Raises ``Alarm`` saying what fails."""
    base, http = url.rstrip("/"), requests.Session()

    def get(path: str, **params: Any) -> Any:
        return fetch(http, base, path, **params)

    if "signature" not in record or "inclusion" not in record:
        raise Alarm("the record carries no signature or no inclusion proof to check against the log")
    head = get("/v1/log/head")
    _check_head(head, keys)
    game = record["signature"]["statement"]["game"]
    proof = get("/v1/log/inclusion", game=game, size=head["size"])
    leaf = leaf_hash(canonical_json(record["signature"]["statement"]))
    path = [bytes.fromhex(h) for h in proof["path"]]
    if not verify_inclusion(leaf, proof["index"], head["size"], path, bytes.fromhex(head["root"])):
        raise Alarm(f"the log's tree of {head['size']} does not hold this record's signed head")
    carried = record["inclusion"]["head"]
    if carried["size"] > head["size"]:
        raise Alarm(f"the log SHRANK: the record's head has {carried['size']} entries, the log's now {head['size']}")
    consistency = get("/v1/log/consistency", first=carried["size"], second=head["size"])
    hashes = [bytes.fromhex(h) for h in consistency["path"]]
    old, new = bytes.fromhex(carried["root"]), bytes.fromhex(head["root"])
    if not verify_consistency(carried["size"], head["size"], old, new, hashes):
        raise Alarm(f"the log FORKED: its tree of {head['size']} does not extend the record's of {carried['size']}")
    size, index = head["size"], proof["index"]
    return f"leaf {index} of the log's signed tree of {size}, which extends the record's tree of {carried['size']}"
