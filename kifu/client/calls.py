"""What every group of the client's calls shares: the transport, and how a stream is followed."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from kifu.client.streams import Judge, Renew, ServerEvent, Stream, follow
from kifu.client.transport import Transport


class Calls:
    def __init__(self, http: Transport, stream_timeout: float, stream_failures: int) -> None:
        self.http = http
        self.stream_timeout = stream_timeout  # the longest silence before a stream is taken for dropped
        self.stream_failures = stream_failures  # failed reconnections in a row before a stream gives up

    def _follow(
        self, opened: Stream, judge: Judge, renew: Renew | None = None
    ) -> Generator[ServerEvent[Any], None, None]:
        return follow(self.http, opened, judge, renew, self.stream_timeout, self.stream_failures)
