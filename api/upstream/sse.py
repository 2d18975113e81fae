"""The one Server-Sent-Events parser for upstream streams, and the encoders for what we write.

`SSEParser.feed(chunk)` takes raw bytes as they arrive from the upstream and returns the complete
events they finish. It follows the SSE spec (WHATWG HTML §9.2.6): lines end with `\\r\\n`, `\\n` or
`\\r`; a blank line dispatches the event; `:` starts a comment; several `data:` lines are joined
with `\\n`; one space after the colon is dropped. Work per chunk is done with bytes.find/split
(no per-byte Python loop), and an unfinished line is kept as a list of pieces, joined once when its
end arrives, so a long line fed in many small chunks costs O(n), not O(n²).

Memory is bounded: a line (or the data of one event) longer than `max_line_bytes` raises
`SSELineTooLong` — the pipeline turns it into an upstream error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

DEFAULT_MAX_LINE_BYTES = 1 << 20  # 1 MiB, like new-api's scanner buffer
DONE_PAYLOAD = b"[DONE]"
DONE_FRAME = b"data: [DONE]\n\n"
KEEPALIVE_FRAME = b": keep-alive\n\n"


class SSEError(ValueError):
    """The upstream stream is not valid SSE."""


class SSELineTooLong(SSEError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"upstream SSE line exceeds {limit} bytes")
        self.limit = limit


class SSEEvent:
    """One dispatched event: `data` (bytes, data lines joined by \\n) and optional `event` name."""

    __slots__ = ("data", "event", "id")

    def __init__(self, data: bytes, event: str | None = None, id: str | None = None) -> None:
        self.data = data
        self.event = event
        self.id = id

    @property
    def is_done(self) -> bool:
        return self.data == DONE_PAYLOAD

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SSEEvent):
            return NotImplemented
        return (self.data, self.event, self.id) == (other.data, other.event, other.id)

    def __hash__(self) -> int:
        return hash((self.data, self.event, self.id))

    def __repr__(self) -> str:
        return f"SSEEvent(data={self.data!r}, event={self.event!r}, id={self.id!r})"


class SSEParser:
    """Incremental SSE parser: `feed(bytes) -> list[SSEEvent]`, then `close()` at end of stream."""

    __slots__ = ("_data", "_data_len", "_event", "_id", "_pending", "_pending_len", "_skip_lf", "max_line_bytes")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._pending: list[bytes] = []  # pieces of the unfinished last line
        self._pending_len = 0
        self._skip_lf = False  # previous chunk ended with \r: a leading \n is its second half
        self._data: list[bytes] = []  # data lines of the event being built
        self._data_len = 0
        self._event: str | None = None
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        if b"\r" in chunk:
            # A trailing \r ends a line either way; remember to drop the \n of a split \r\n.
            self._skip_lf = chunk[-1:] == b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        last_nl = chunk.rfind(b"\n")
        if last_nl < 0:
            self._keep(chunk)
            return []
        complete, rest = chunk[:last_nl], chunk[last_nl + 1 :]
        if self._pending:
            self._pending.append(complete)
            complete = b"".join(self._pending)
            self._pending.clear()
            self._pending_len = 0
        events: list[SSEEvent] = []
        limit = self.max_line_bytes
        check_lines = len(complete) > limit
        for line in complete.split(b"\n"):
            if check_lines and len(line) > limit:
                raise SSELineTooLong(limit)
            self._line(line, events)
        if rest:
            self._keep(rest)
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: an unterminated last line and event are dispatched (lenient, unlike the spec,
        so an upstream that forgets the final blank line still delivers its last event)."""
        events: list[SSEEvent] = []
        if self._pending:
            line = b"".join(self._pending)
            self._pending.clear()
            self._pending_len = 0
            self._line(line, events)
        self._line(b"", events)
        return events

    def _keep(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_len += len(piece)
        if self._pending_len > self.max_line_bytes:
            raise SSELineTooLong(self.max_line_bytes)

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                events.append(SSEEvent(data, self._event, self._id))
                self._data = []
                self._data_len = 0
            self._event = None
            return
        if line[:5] == b"data:":
            value = line[6:] if line[5:6] == b" " else line[5:]
            self._data.append(value)
            self._data_len += len(value)
            if self._data_len > self.max_line_bytes:
                raise SSELineTooLong(self.max_line_bytes)
            return
        if line[:1] == b":":
            return  # comment
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id" and b"\0" not in value:
            self._id = value.decode("utf-8", "replace")
        elif name == b"data":  # "data" without a colon: an empty data line
            self._data.append(b"")
        # "retry" and unknown fields are ignored, as the spec says.


def encode_data(payload: Mapping[str, Any] | bytes) -> bytes:
    """One client frame `data: <json>\\n\\n`; bytes are taken as already-encoded JSON."""
    if not isinstance(payload, bytes):
        payload = orjson.dumps(payload)
    return b"data: " + payload + b"\n\n"


def encode_many(payloads: list[Any]) -> bytes:
    """Several frames in one write (fewer syscalls on the hot path)."""
    return b"".join([encode_data(p) for p in payloads])


def encode_done() -> bytes:
    return DONE_FRAME
