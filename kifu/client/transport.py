"""HTTP for the client: one ``requests.Session``, the base URL, timeouts, safe retries and errors.

A request is retried only when doing it twice cannot do anything twice:

* an answer 503 (the event store unreachable, the verifiers busy: "nothing was written"),
  after its ``Retry-After`` when it gives one;
* a connection that failed before the request was sent;
* any connection failure or timeout of a request marked ``idempotent``: reads, and writes
  that carry an ``Idempotency-Key`` (the server answers a repeated key with the first answer).

A creation is not marked: its retry with the same key would answer the game without its tokens.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import requests
from urllib3.exceptions import NewConnectionError

from kifu.client.errors import TransportError, error_for

Timeout = float | tuple[float, float]
DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF_S = 0.2
MAX_WAIT_S = 30.0  # the longest a retry waits (a longer Retry-After is the caller's to honour)
UNAVAILABLE = 503


class Transport:
    """Sends requests to one server and turns error answers into ``ApiError``s."""

    def __init__(
        self,
        base_url: str,
        timeout: Timeout = DEFAULT_TIMEOUT,
        session: requests.Session | None = None,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.session = session or requests.Session()
        self.owns_session = session is None
        self.retries = retries
        self.backoff_s = backoff_s

    def url(self, path: str) -> str:
        return self.base_url + path

    def json(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        data: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool = False,
    ) -> Any:
        """Send, retrying what is safe to retry; the answer's JSON, or the ``ApiError`` it stands for."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        query = {k: v for k, v in (params or {}).items() if v is not None}
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self.session.request(
                    method, self.url(path), params=query, json=body, data=data, headers=sent, timeout=self.timeout
                )
            except requests.RequestException as exc:
                if last or not (idempotent or never_sent(exc)):
                    raise TransportError(f"{method} {path}: {exc}") from exc
                self.pause(attempt)
                continue
            if response.ok:
                return response.json()
            error = error_for(response)
            if response.status_code != UNAVAILABLE or last or not self.pause(attempt, error.retry_after):
                raise error
        raise AssertionError("unreachable: the last attempt returns or raises")

    def pause(self, attempt: int, asked: float | None = None) -> bool:
        """Wait before retry ``attempt + 1``: the ``Retry-After`` ``asked``, else a doubling back-off.
        False (and no wait) when the answer asks for longer than ``MAX_WAIT_S``."""
        wait = self.backoff_s * 2**attempt
        if asked is not None:
            if asked > MAX_WAIT_S:
                return False
            wait = max(wait, asked)
        time.sleep(min(wait, MAX_WAIT_S))
        return True

    def close(self) -> None:
        if self.owns_session:
            self.session.close()


def never_sent(exc: requests.RequestException) -> bool:
    """Whether the request failed before any of it reached the server (no connection was made)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    if not isinstance(exc, requests.ConnectionError):
        return False
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, NewConnectionError)
