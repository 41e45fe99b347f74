"""Signed statements: what the server signs (a sealed game's head, a tournament's head, the transparency
log's tree heads), how, and how anyone checks it against the server's published keys.

A signature travels as ``{"kid", "alg": "EdDSA", "statement": {...}, "sig"}``: the signed bytes are the
canonical JSON of ``statement`` (``domain.canonical``), ``sig`` is the 64-byte Ed25519 signature
(RFC 8032) in unpadded base64url, and ``kid`` names the key: the RFC 7638 thumbprint of its public
JWK (unpadded base64url of SHA-256 over ``{"crv":"Ed25519","kty":"OKP","x":"..."}``). Each statement
names its ``kind`` first, so a signature over one kind can never pass for another. The server's keys
are published as a JWK set (``GET /v1/keys``); a retired key stays in it with its validity.

Pure: no I/O. The private key is held by whoever builds a ``Signer`` (``adapters.signing_keys``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from domain.canonical import canonical_json

ALG = "EdDSA"
SEALED_GAME, LOG_HEAD, TOURNAMENT_HEAD = "kifu-sealed-game/1", "kifu-log-head/1", "kifu-tournament-head/1"
SIGNATURE_KEYS = frozenset({"kid", "alg", "statement", "sig"})
# A key retired at T still vouches for games sealed up to T + this: processes that started with the old
# key may still be sealing while the new one is rolled out (docs/record-format.md, key rotation).
ROTATION_GRACE = timedelta(minutes=10)
B64URL = re.compile(r"[A-Za-z0-9_-]*")


class SignatureError(ValueError):
    """A signature that does not hold: malformed, by an unknown key, or not over its statement."""


def b64url(data: bytes) -> str:
    """Unpadded base64url (RFC 7515)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def from_b64url(text: Any) -> bytes:
    """The bytes of an unpadded base64url string; ``SignatureError`` for anything else."""
    if not isinstance(text, str) or not B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise SignatureError(f"not unpadded base64url: {text!r}")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url(data) != text:  # one spelling per value: no stray bits in the last character
        raise SignatureError(f"not the canonical base64url of its bytes: {text!r}")
    return data


def public_jwk(public_key: Ed25519PublicKey) -> dict[str, str]:
    """The key as an RFC 8037 JWK, with its RFC 7638 thumbprint as ``kid``."""
    x = b64url(public_key.public_bytes(Encoding.Raw, PublicFormat.Raw))
    return {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": thumbprint(x), "alg": ALG, "use": "sig"}


def thumbprint(x: str) -> str:
    """RFC 7638's thumbprint of an Ed25519 public key given by its JWK ``x``."""
    return b64url(hashlib.sha256(canonical_json({"crv": "Ed25519", "kty": "OKP", "x": x})).digest())


def sealed_game_statement(game_id: str, version: int, head: str, sealed_at: str) -> dict[str, Any]:
    """What a sealed game's signature vouches for: its id, its length, its head hash and its seal's time."""
    return {"kind": SEALED_GAME, "game": game_id, "version": version, "hash": head, "sealed_at": sealed_at}


def log_head_statement(size: int, root: str) -> dict[str, Any]:
    """A transparency log's tree head: its size and root (hex)."""
    return {"kind": LOG_HEAD, "size": size, "root": root}


def tournament_statement(tournament_id: str, version: int, head: str, complete: bool) -> dict[str, Any]:
    """A tournament archive's head: its log's length and head hash, and whether the event is over."""
    return {
        "kind": TOURNAMENT_HEAD,
        "tournament": tournament_id,
        "version": version,
        "hash": head,
        "complete": complete,
    }


@dataclass(frozen=True)
class Signer:
    """Signs statements with one Ed25519 key."""

    private_key: Ed25519PrivateKey

    @cached_property
    def _public(self) -> dict[str, str]:
        """The public JWK, computed once: a signature names its kid, a SHA-256 thumbprint of the key."""
        return public_jwk(self.private_key.public_key())

    @property
    def jwk(self) -> dict[str, str]:
        return dict(self._public)

    @property
    def kid(self) -> str:
        return self._public["kid"]

    def sign(self, statement: Mapping[str, Any]) -> dict[str, Any]:
        """``{"kid", "alg", "statement", "sig"}`` over the canonical JSON of ``statement``."""
        sig = self.private_key.sign(canonical_json(statement))
        return {"kid": self.kid, "alg": ALG, "statement": dict(statement), "sig": b64url(sig)}


def check_signature(signature: Any, keys: Mapping[str, Any]) -> dict[str, Any]:
    """The key (a JWK of the set ``keys``) that made ``signature``; ``SignatureError`` saying what is wrong
    when it is malformed, by a key not in the set, or not a signature of its statement's canonical JSON."""
    check_shape(signature)
    jwk = next((k for k in keys.get("keys", []) if isinstance(k, Mapping) and k.get("kid") == signature["kid"]), None)
    if jwk is None:
        raise SignatureError(f"signed by key {signature['kid']!r}, which is not among the keys given")
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise SignatureError(f"key {signature['kid']!r} is not an Ed25519 key")
    raw = from_b64url(jwk.get("x"))
    if len(raw) != 32 or thumbprint(jwk["x"]) != signature["kid"]:
        raise SignatureError(f"key {signature['kid']!r}: its kid is not the thumbprint of its x")
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(
            from_b64url(signature["sig"]), canonical_json(signature["statement"])
        )
    except InvalidSignature:
        raise SignatureError(f"the signature is not key {signature['kid']!r}'s over its statement") from None
    except ValueError as exc:  # canonical_json of a value that is no JSON (a lone surrogate)
        raise SignatureError(f"the statement is not JSON: {exc}") from None
    return dict(jwk)


def check_shape(signature: Any) -> None:
    """``{"kid", "alg": "EdDSA", "statement": {...}, "sig"}`` exactly, ``sig`` 64 bytes of base64url."""
    if not isinstance(signature, Mapping) or set(signature) != SIGNATURE_KEYS:
        keys = sorted(signature) if isinstance(signature, Mapping) else type(signature).__name__
        raise SignatureError(f"a signature has exactly the keys {sorted(SIGNATURE_KEYS)}, not {keys}")
    if signature["alg"] != ALG:
        raise SignatureError(f"alg is {signature['alg']!r}, not {ALG!r}")
    if not isinstance(signature["kid"], str) or not isinstance(signature["statement"], Mapping):
        raise SignatureError("kid is a string and statement an object")
    if len(from_b64url(signature["sig"])) != 64:
        raise SignatureError("sig is not 64 bytes")


def valid_at(jwk: Mapping[str, Any], moment: str) -> bool:
    """Whether a key vouches for a statement made at ``moment`` (RFC 3339): up to its ``valid_until`` plus
    ``ROTATION_GRACE`` (always, while it has none).

    Only the end is enforced: a retired key must not vouch for games sealed after it was replaced. Its
    ``valid_from`` is when it was first published, by one process's clock; another machine's clock a few
    milliseconds behind may seal a game "before" it, which is no forgery."""
    when, until = _parse(moment), _parse(jwk.get("valid_until"))
    if when is None:
        return False
    return until is None or when <= until + ROTATION_GRACE


def _parse(moment: Any) -> datetime | None:
    if not isinstance(moment, str):
        return None
    try:
        parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
