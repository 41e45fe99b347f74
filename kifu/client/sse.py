"""Server-Sent Events read as the HTML standard's ``EventSource`` reads them ("Interpreting an
event stream"): lines end with CRLF, LF or CR; ``:`` starts a comment (Kifu's heartbeats);
``data`` lines are joined with newlines; an event is dispatched at a blank line, only if it
has data; ``id`` sets the last event id (kept as an opaque string) and ``retry`` the
reconnection delay. Pure: bytes in, events out.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class RawEvent:
    """One dispatched event: its type (``message`` when the stream named none), its data, and the
    stream's last event id at that point (None while the stream has sent no id)."""

    event: str
    data: str
    id: str | None


class SseParser:
    """Feed it the stream's bytes as they come; it answers the events they complete.

    ``last_id`` is the last ``id`` the stream set (what ``Last-Event-ID`` sends back on a
    reconnection), ``retry_ms`` the last ``retry`` it asked for (None if none).
    """

    def __init__(self, last_id: str | None = None) -> None:
        self.last_id = last_id
        self.retry_ms: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # text after the last complete line
        self._after_cr = False  # the last chunk ended with CR: a LF starting the next one is its CRLF
        self._started = False
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[RawEvent]:
        """The events that ``chunk`` completes."""
        decoded = self._decoder.decode(chunk)
        if not decoded:
            return []  # (part of a character)
        skip = self._after_cr and decoded.startswith("\n")  # the LF of a CRLF split between two chunks
        text, self._after_cr = (decoded[1:] if skip else decoded), decoded.endswith("\r")
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")  # one byte-order mark may start the stream
        *lines, self._pending = LINE_END.split(self._pending + text)
        return [event for line in lines if (event := self._line(line)) is not None]

    def _line(self, line: str) -> RawEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: the heartbeat
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self.last_id = value or None  # an empty id resets it: no Last-Event-ID is sent
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> RawEvent | None:
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        if not data:
            return None
        return RawEvent(event, "\n".join(data), self.last_id)
