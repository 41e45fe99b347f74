"""Rate limits, counted in the app's Redis so that every API process shares them.

The counting is the ``limits`` library's (the one under Flask-Limiter: its Redis
storage and fixed-window strategy); this module only says what is counted
and answers the refusals. Flask-Limiter itself was measured and left out: its
per-request bookkeeping cost more than the Redis hit (docs/performance.md,
"Rate limits without Flask-Limiter").

Five limits, each a rate string of the ``limits`` library (``60/minute``,
``10/second;300/hour``: several windows, all enforced):

* ``RATE_LIMIT_CREATE`` (``KIFU_RATE_LIMIT_CREATE``): games and tournaments
  created, per client address, the two counted together;
* ``RATE_LIMIT_AUDITS`` (``KIFU_RATE_LIMIT_AUDITS``): uploaded records audited
  (``POST /v1/audits``), per client address, every upload counted, malformed
  ones too. The largest real record costs a verifier process about a second
  of CPU (``entrypoints/audit_pool.py``, which also bounds how many run at once);
* ``RATE_LIMIT_ANALYSES`` (``KIFU_RATE_LIMIT_ANALYSES``): requests for a finished game's analysis
  (``POST /v1/games/{id}/analysis``), per client address, every request counted (one asking again
  for a game already analysed too: it costs a lookup, and the limit is about the worker's time);
* ``RATE_LIMIT_ACTIONS``: actions posted per seat (the game and the seat's
  token; a tournament entrant's token counts per game), refused ones too;
* ``RATE_LIMIT_BAD_TOKENS``: refused credentials (a token or a stream ticket
  answered 401), per client address. Past the limit, each further refused
  credential from that address is answered 429 instead of 401 until the window
  ends. Only refusals are counted, after the lookup that refuses them: a good
  token costs nothing and is always served, also from an address over the
  limit (clients behind the same NAT as a prober keep playing). Tokens are 256
  random bits, so no guess finds one; what the limit curbs is the stream of
  refused lookups, and it tells a misbehaving client when to come back.

A refusal is 429 ``/problems/rate-limited`` with ``Retry-After``: the seconds
until the window that refused it ends. Windows are fixed (one ``INCR`` per
limit and request): across a window's boundary a client can make up to twice
a limit in a short time.

An action costs no round trip of its own for its limit: its windows
(``Quotas``: a counter per rate, kept with the game's keys, whose window starts
at its first count) go to the service with the action, and the append script
counts them in the round trip that appends, before anything else, writing
nothing past a limit. An action that appends nothing (refused, replayed, a bad
body or token) is counted once it is answered, by a script counting the same
counters; past the limit its answer is replaced by the 429: that request wrote
nothing (a retry of an action that was done, past the limit, is answered 429
too, as it was when the counter came first: retry after ``Retry-After`` to get
its answer). Creations and refused credentials are counted by the ``limits``
library before the view (so are audits).

The client address is the connection's (``request.remote_addr``), or, with
``KIFU_TRUSTED_PROXIES`` = n, the one n proxies in front saw (werkzeug's
``ProxyFix``, installed by the app factory).

``RATE_LIMITS`` (``KIFU_RATE_LIMITS``, true or false): unset, limits are on,
except in an app created with Flask's ``TESTING`` flag (the test suite's, whose
tests create hundreds of games a second from one address; a test of the limits
turns them on in its own config).
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, Response, current_app, g, request
from flask.typing import ResponseReturnValue
from limits import RateLimitItem, parse_many
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from entrypoints.api.context import kifu
from entrypoints.api.problems import problem
from service.memory import token_hash
from service.ports import Quota, QuotaExceeded, Quotas

log = logging.getLogger(__name__)
View = TypeVar("View", bound=Callable[..., Any])
CREATE, AUDITS, ANALYSES, ACTIONS, BAD_TOKENS = "create", "audits", "analyses", "actions", "bad-tokens"
KEY_PREFIX = "kifu"
# Endpoints that read no credential: a token sent to them is never judged, so never refused.
NO_CREDENTIALS = frozenset(
    {
        "analysis.get_analysis",
        "analysis.request_analysis",
        "audits.verify_uploaded",
        "catalog.catalog",
        "games.create_game",
        "games.join_seat",
        "games.list_games",
        "ops.healthz",
        "ops.metrics",
        "ops.readyz",
        "problems.index",
        "problems.page",
        "static",
        "tournaments.create_tournament",
        "tournaments.tournament_stream",
    }
)
TOKENS_IN_BODY = "streams.player_ticket"  # its credentials are the seats' tokens in the body
WHAT = {
    CREATE: "games and tournaments created from this address",
    AUDITS: "uploaded records audited from this address",
    ANALYSES: "analyses asked for from this address",
    ACTIONS: "actions of this seat",
    BAD_TOKENS: "refused tokens or tickets from this address",
}


def creation(view: View) -> View:
    """Mark a view as a creation: limited per client address by ``RATE_LIMIT_CREATE``, with the other creations."""
    view.rate_limit = CREATE  # type: ignore[attr-defined]
    return view


def audit_upload(view: View) -> View:
    """Mark a view as an uploaded record's audit: limited per client address by ``RATE_LIMIT_AUDITS``."""
    view.rate_limit = AUDITS  # type: ignore[attr-defined]
    return view


def analysis_request(view: View) -> View:
    """Mark a view as a request for a game's analysis: limited per client address by ``RATE_LIMIT_ANALYSES``."""
    view.rate_limit = ANALYSES  # type: ignore[attr-defined]
    return view


def per_seat(view: View) -> View:
    """Mark a view as a seat's action: limited per seat by ``RATE_LIMIT_ACTIONS``."""
    view.rate_limit = ACTIONS  # type: ignore[attr-defined]
    return view


def client_address() -> str:
    return request.remote_addr or "unknown"


def seat() -> str:
    """The seat's key: its game and the hash of its token (as the store keeps it; never the token)."""
    game = (request.view_args or {}).get("game_id", "")
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return f"{game}/none/{client_address()}"  # refused as unauthorized anyway
    return f"{game}/{token_hash(token.strip())}"


def carries_credentials() -> bool:
    """Whether the request presents a token or a ticket to an endpoint that judges it."""
    if request.endpoint in NO_CREDENTIALS or request.endpoint is None:
        return False
    return "Authorization" in request.headers or "ticket" in request.args or request.endpoint == TOKENS_IN_BODY


@functools.lru_cache(maxsize=16)
def _rates(text: str) -> tuple[RateLimitItem, ...]:
    return tuple(parse_many(text))


def _retry_after(reset_at: float) -> int:
    return max(1, math.ceil(reset_at - time.time()))


def _rate_limited(what: str, rate: RateLimitItem, retry: int) -> Response:
    response = problem("rate-limited", f"too many {what}: at most {rate}; retry in {retry} s")
    response.headers["Retry-After"] = str(retry)
    return response


class Limits:
    """An app's limits: a fixed-window counter on its Redis (``REDIS_CLIENT``'s pool, else ``REDIS_URL``)."""

    def __init__(self, app: Flask) -> None:
        client = app.config.get("REDIS_CLIENT")
        options = {"connection_pool": client.connection_pool} if client is not None else {}
        self.config = app.config
        self.counter = FixedWindowRateLimiter(storage_from_string(app.config["REDIS_URL"], **options))

    def refusal(self, setting: str, scope: str, key: str) -> Response | None:
        """Count one request against the rates of ``setting``; the 429 if one of them is exceeded."""
        keys = (KEY_PREFIX, scope, key)
        for rate in _rates(str(self.config[setting])):
            if not self.counter.hit(rate, *keys):
                reset_at, _remaining = self.counter.get_window_stats(rate, *keys)
                return _rate_limited(WHAT[scope], rate, _retry_after(reset_at))
        return None


def quotas() -> Quotas | None:
    """This request's action quotas, for the service to count with its append (None: limits are off)."""
    found: Quotas | None = g.get("kifu_quotas")
    return found


def _windows(rates: tuple[RateLimitItem, ...], key: str) -> list[Quota]:
    """Each rate as a fixed window of its own (like the ``limits`` library's: from its first count)."""
    return [
        Quota(f"{ACTIONS}:{key}:{rate.amount}/{rate.get_expiry()}s", rate.amount, rate.get_expiry()) for rate in rates
    ]


def _per_seat(view: Callable[..., Any], setting: str) -> Callable[..., ResponseReturnValue]:
    """``view`` with its seat's quotas, counted by its append or, if it appended nothing, once answered."""

    @functools.wraps(view)
    def limited_view(*args: Any, **kwargs: Any) -> ResponseReturnValue:
        rates = _rates(str(current_app.config[setting]))
        counted = g.kifu_quotas = Quotas(_windows(rates, seat()))
        game_id = str((request.view_args or {}).get("game_id", ""))
        try:
            answer: ResponseReturnValue = view(*args, **kwargs)
        except QuotaExceeded as exceeded:
            return _rate_limited(WHAT[ACTIONS], rates[exceeded.index], exceeded.retry_after_s)
        except Exception:
            over = _counted_after(game_id, counted)  # a refusal counts too; past the limit, the 429 instead
            if over is not None:
                return _rate_limited(WHAT[ACTIONS], rates[over.index], over.retry_after_s)
            raise
        over = _counted_after(game_id, counted)  # nothing to count when the append counted it
        if over is not None:
            return _rate_limited(WHAT[ACTIONS], rates[over.index], over.retry_after_s)
        return answer

    return limited_view


def _counted_after(game_id: str, counted: Quotas) -> QuotaExceeded | None:
    """Count an action that appended nothing; what it went past, if anything. Should Redis fail here,
    the action's own answer stands (it wrote nothing), uncounted."""
    try:
        kifu().store.count(game_id, counted)
    except QuotaExceeded as past:
        return past
    except Exception:
        log.warning("an action could not be counted against its seat's rate limit", exc_info=True)
    return None


LIMITED = {
    CREATE: ("RATE_LIMIT_CREATE", client_address),
    AUDITS: ("RATE_LIMIT_AUDITS", client_address),
    ANALYSES: ("RATE_LIMIT_ANALYSES", client_address),
    ACTIONS: ("RATE_LIMIT_ACTIONS", seat),
}


def _limited(view: Callable[..., Any], scope: str) -> Callable[..., ResponseReturnValue]:
    """``view``, counted against its scope's limit first (a 429 instead of the view once over it)."""
    setting, key = LIMITED[scope]

    @functools.wraps(view)
    def limited_view(*args: Any, **kwargs: Any) -> ResponseReturnValue:
        limits: Limits = current_app.extensions["kifu_limits"]
        refused = limits.refusal(setting, scope, key())
        if refused is not None:
            return refused
        answer: ResponseReturnValue = view(*args, **kwargs)
        return answer

    return limited_view


def init_app(app: Flask) -> None:
    """Limit creations, audits, actions and refused credentials as configured (nothing when limits are off).

    Call it last in the factory: its ``after_request`` hook must run before the others (Flask runs them
    in reverse), so that the request metrics count a refused credential's 429, not its 401.
    """
    enabled = app.config["RATE_LIMITS"]
    if not (enabled if enabled is not None else not app.testing):
        return
    limits = app.extensions["kifu_limits"] = Limits(app)  # nothing connects before the first request
    for endpoint, view in list(app.view_functions.items()):
        scope = getattr(view, "rate_limit", None)
        if scope == ACTIONS:
            app.view_functions[endpoint] = _per_seat(view, LIMITED[ACTIONS][0])
        elif scope is not None:
            app.view_functions[endpoint] = _limited(view, scope)

    @app.after_request
    def _count_refused_credentials(response: Response) -> Response:
        """A 401 to a credential counts against its address; past the limit it is answered 429 instead."""
        if response.status_code != 401 or not carries_credentials():
            return response
        return limits.refusal("RATE_LIMIT_BAD_TOKENS", BAD_TOKENS, client_address()) or response
