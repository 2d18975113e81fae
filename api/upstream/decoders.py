"""Stream decoders besides SSE (api/upstream/sse.py), with the same interface: `feed(bytes)` returns
the events the bytes complete, `close()` the rest at the end of the stream. Memory is bounded.

- `NDJSONDecoder`: newline-delimited JSON (one event per non-empty line); also how a WebSocket
  conversation reaches an adaptor (api/upstream/client.py writes one line per message).
- `EventStreamDecoder`: AWS's binary event-stream framing (`application/vnd.amazon.eventstream`,
  Bedrock's InvokeModelWithResponseStream). A message is: total length (u32), headers length (u32),
  prelude CRC32, headers, payload, message CRC32 — all big-endian, both CRCs checked. An event
  becomes `SSEEvent(payload, event=<:event-type>)`; an exception `SSEEvent(payload,
  event="exception:<:exception-type>")`; an error `SSEEvent(<:error-message>, event="error:<:error-code>")`.
"""
from __future__ import annotations

import struct
import uuid
import zlib

from api.upstream.base import StreamDecoder
from api.upstream.sse import DEFAULT_MAX_LINE_BYTES, SSEError, SSEEvent, SSELineTooLong

MAX_EVENT_STREAM_MESSAGE = 16 * 1024 * 1024
_PRELUDE = struct.Struct(">III")  # total length, headers length, prelude CRC
_MIN_MESSAGE = _PRELUDE.size + 4


class NDJSONDecoder:
    __slots__ = ("_pending", "_size", "max_line_bytes")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._pending: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        last = chunk.rfind(b"\n")
        if last < 0:
            self._keep(chunk)
            return []
        head, rest = chunk[:last], chunk[last + 1:]
        if self._pending:
            self._pending.append(head)
            head = b"".join(self._pending)
            self._pending, self._size = [], 0
        events = []
        for line in head.split(b"\n"):
            line = line.strip()
            if len(line) > self.max_line_bytes:
                raise SSELineTooLong(self.max_line_bytes)
            if line:
                events.append(SSEEvent(line))
        if rest:
            self._keep(rest)
        return events

    def close(self) -> list[SSEEvent]:
        line = b"".join(self._pending).strip()
        self._pending, self._size = [], 0
        return [SSEEvent(line)] if line else []

    def _keep(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._size += len(piece)
        if self._size > self.max_line_bytes:
            raise SSELineTooLong(self.max_line_bytes)


# Header value types of the event-stream format: type id → fixed size (None = u16 length prefix).
_FIXED_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
_STRING, _BYTES = 7, 6


def parse_headers(raw: bytes) -> dict[str, str | bytes | int | bool]:
    headers: dict[str, str | bytes | int | bool] = {}
    pos = 0
    try:
        while pos < len(raw):
            name_len = raw[pos]
            name = raw[pos + 1:pos + 1 + name_len].decode()
            pos += 1 + name_len
            kind = raw[pos]
            pos += 1
            if kind in (_STRING, _BYTES):
                (size,) = struct.unpack_from(">H", raw, pos)
                value = raw[pos + 2:pos + 2 + size]
                headers[name] = value.decode() if kind == _STRING else value
                pos += 2 + size
            elif kind in _FIXED_SIZES:
                size = _FIXED_SIZES[kind]
                if kind in (0, 1):
                    headers[name] = kind == 0
                elif kind in (2, 3, 4, 5, 8):
                    headers[name] = int.from_bytes(raw[pos:pos + size], "big", signed=kind != 8)
                else:
                    headers[name] = str(uuid.UUID(bytes=raw[pos:pos + size]))
                pos += size
            else:
                raise SSEError(f"unknown event-stream header type {kind}")
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise SSEError("malformed event-stream headers") from exc
    return headers


class EventStreamDecoder:
    __slots__ = ("_buffer", "max_message_bytes")

    def __init__(self, max_message_bytes: int = MAX_EVENT_STREAM_MESSAGE) -> None:
        self.max_message_bytes = max_message_bytes
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += chunk
        events: list[SSEEvent] = []
        buf = self._buffer
        while len(buf) >= _PRELUDE.size:
            total, headers_len, prelude_crc = _PRELUDE.unpack_from(buf, 0)
            if zlib.crc32(bytes(buf[:8])) != prelude_crc:
                raise SSEError("event-stream prelude checksum mismatch")
            if total > self.max_message_bytes:
                raise SSELineTooLong(self.max_message_bytes)
            if total < _MIN_MESSAGE + headers_len:
                raise SSEError("malformed event-stream message length")
            if len(buf) < total:
                break
            message = bytes(buf[:total])
            del buf[:total]
            (message_crc,) = struct.unpack_from(">I", message, total - 4)
            if zlib.crc32(message[:-4]) != message_crc:
                raise SSEError("event-stream message checksum mismatch")
            headers = parse_headers(message[_PRELUDE.size:_PRELUDE.size + headers_len])
            payload = message[_PRELUDE.size + headers_len:-4]
            events.append(_event(headers, payload))
        return events

    def close(self) -> list[SSEEvent]:
        if self._buffer:
            self._buffer.clear()
            raise SSEError("the event stream ended inside a message")
        return []


def _event(headers: dict[str, str | bytes | int | bool], payload: bytes) -> SSEEvent:
    kind = headers.get(":message-type", "event")
    if kind == "exception":
        return SSEEvent(payload, f"exception:{headers.get(':exception-type', 'unknown')!s}")
    if kind == "error":
        message = str(headers.get(":error-message", "")).encode()
        return SSEEvent(message, f"error:{headers.get(':error-code', 'unknown')!s}")
    return SSEEvent(payload, str(headers.get(":event-type", "")))


def encode_event_stream_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message with string headers (what a Bedrock-speaking server writes)."""
    raw_headers = b"".join(
        bytes([len(name.encode())]) + name.encode() + bytes([_STRING]) + struct.pack(">H", len(value.encode()))
        + value.encode() for name, value in headers.items())
    total = _MIN_MESSAGE + len(raw_headers) + len(payload)
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


END_OF_BODY = "gateway:end-of-body"


class EndOfBody:
    """Wraps a decoder for a provider whose stream has no end marker (Gemini closes the body after
    its last chunk): `close()` adds an event named END_OF_BODY, on which the adaptor decides whether
    the stream ended cleanly (it saw a finish reason) or was cut."""

    __slots__ = ("_inner",)

    def __init__(self, inner: StreamDecoder) -> None:
        self._inner = inner

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        return self._inner.feed(chunk)

    def close(self) -> list[SSEEvent]:
        return [*self._inner.close(), SSEEvent(b"", END_OF_BODY)]


class WholeBody:
    """An answer that is not a stream at all, read as one event at its end (a provider that cannot
    stream, asked for a stream: the adaptor turns the whole answer into chunks)."""

    __slots__ = ("_parts", "_size", "max_bytes")

    def __init__(self, max_bytes: int = MAX_EVENT_STREAM_MESSAGE) -> None:
        self.max_bytes = max_bytes
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._parts.append(chunk)
        self._size += len(chunk)
        if self._size > self.max_bytes:
            raise SSELineTooLong(self.max_bytes)
        return []

    def close(self) -> list[SSEEvent]:
        body = b"".join(self._parts)
        self._parts, self._size = [], 0
        return [SSEEvent(body)] if body.strip() else []
