"""The server's Ed25519 signing key: kept in a file, published in Redis as a JWK set (``GET /v1/keys``).

The key file is PKCS#8 PEM, created on first use with mode 0600 in a directory of mode 0700 (the data
directory's ``signing-key.pem``, or ``KIFU_SIGNING_KEY_FILE``). Every process that seals games signs
with it, so a deployment of several machines gives them all the same file. The private key is never
logged, served or written anywhere else.

Rotation (``kifu keys rotate``) writes a new key over the file, atomically. A process notices at its
next signature (one ``stat`` and one publish per sealed game: the command that seals it takes the
current signer once, for the seal's signature and the transparency log's heads) and, before it signs
with the new key, publishes it: the registry marks it active from now and every other key retired,
with ``valid_until`` now. A retired key stays published for good, so what it signed still verifies
(``domain.signatures.valid_at``: up to ``ROTATION_GRACE`` after its retirement).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from adapters.redis_client import AnyRedis
from domain.record import rfc3339
from domain.signatures import Signer

KEY_FILE_ENV, DATA_DIR_ENV = "KIFU_SIGNING_KEY_FILE", "KIFU_DATA_DIR"
KEY_FILE_NAME = "signing-key.pem"
REGISTRY_KEY = "kifu:{trust}:keys"
ACTIVE, RETIRED = "active", "retired"
log = logging.getLogger(__name__)

# Publish a key: a no-op if it is published already; else every active key retires now and it is active.
_PUBLISH = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
for _, raw in ipairs(redis.call('HVALS', KEYS[1])) do
  local key = cjson.decode(raw)
  if key['status'] == 'active' then
    key['status'] = 'retired'
    key['valid_until'] = ARGV[3]
    redis.call('HSET', KEYS[1], key['kid'], cjson.encode(key))
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


def key_file(data_dir: Path | None = None) -> Path:
    """``KIFU_SIGNING_KEY_FILE``, else ``signing-key.pem`` in ``data_dir`` (or ``KIFU_DATA_DIR``, or .run)."""
    given = os.environ.get(KEY_FILE_ENV)
    if given:
        return Path(given)
    return (data_dir or Path(os.environ.get(DATA_DIR_ENV) or ".run")) / KEY_FILE_NAME


def load_or_create(path: Path) -> Ed25519PrivateKey:
    """The key in ``path``; a new one written there (mode 0600) if there is none yet. Two processes
    starting at once agree: the file is created exclusively and the loser reads the winner's."""
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # another process created it first: read theirs
            write_key(path, Ed25519PrivateKey.generate(), exclusive=True)
    return read_key(path)


def read_key(path: Path) -> Ed25519PrivateKey:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("the signing key file %s is readable by others (mode %o): chmod 600 it", path, mode)
    key = load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} does not hold an Ed25519 private key")
    return key


def write_key(path: Path, key: Ed25519PrivateKey, exclusive: bool = False) -> None:
    """Write ``key`` to ``path`` as PKCS#8 PEM, mode 0600; replacing a file atomically unless ``exclusive``."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    target = path if exclusive else path.with_name(f".{path.name}.{os.getpid()}.new")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
        out.flush()
        os.fsync(out.fileno())
    if not exclusive:
        os.replace(target, path)


class KeyRegistry:
    """The published keys, in Redis: kid -> JWK with ``status``, ``valid_from`` and ``valid_until``."""

    def __init__(self, client: AnyRedis) -> None:
        self.client = client
        self._publish = client.register_script(_PUBLISH)

    def publish(self, jwk: Mapping[str, str], now: datetime) -> bool:
        """Publish ``jwk`` as the active key from ``now`` (False: it was published before)."""
        at = rfc3339(now)
        entry = {**jwk, "status": ACTIVE, "valid_from": at, "valid_until": None}
        return bool(self._publish(keys=[REGISTRY_KEY], args=[jwk["kid"], json.dumps(entry), at]))

    def keys(self) -> dict[str, Any]:
        """The JWK set: every key ever published, the oldest first."""
        found = [json.loads(raw) for raw in self.client.hvals(REGISTRY_KEY)]
        for key in found:
            key.setdefault("valid_until", None)  # Lua's cjson drops a null member
        return {"keys": sorted(found, key=lambda k: (k["valid_from"], k["kid"]))}


class FileSigning:
    """Signs with the key in ``path`` as it is now (``Signing``): reloaded when the file changes,
    published before its first use."""

    def __init__(self, path: Path, registry: KeyRegistry, clock: Callable[[], datetime]) -> None:
        self.path = path
        self.registry = registry
        self.clock = clock
        self._lock = threading.Lock()
        self._signer: Signer | None = None
        self._seen: tuple[int, int, int] | None = None

    def sign(self, statement: Mapping[str, Any]) -> dict[str, Any]:
        return self.current().sign(statement)

    def keys(self) -> dict[str, Any]:
        """The published keys, this process's own among them (published now if it was not yet)."""
        self.current()
        return self.registry.keys()

    def current(self) -> Signer:
        """The signer for the key file as it is now, published (again: a no-op in one round trip, so that
        no signature is ever made by a key missing from ``GET /v1/keys``, even after a Redis was lost)."""
        with self._lock:
            if self._signer is None:
                load_or_create(self.path)
            info = self.path.stat()
            seen = (info.st_ino, info.st_mtime_ns, info.st_size)
            if self._signer is None or seen != self._seen:
                self._signer, self._seen = Signer(read_key(self.path)), seen
            signer = self._signer
        self.registry.publish(signer.jwk, self.clock())
        return signer


def rotate(path: Path, registry: KeyRegistry, now: datetime) -> Signer:
    """A new key in ``path`` (the old one is gone), published now; the old one retires."""
    signer = Signer(Ed25519PrivateKey.generate())
    write_key(path, signer.private_key)
    registry.publish(signer.jwk, now)
    return signer
