"""Stream decoders: newline-delimited JSON and AWS's binary event-stream framing."""
from __future__ import annotations

import base64
import zlib

import pytest

from api.upstream.decoders import EventStreamDecoder, NDJSONDecoder, encode_event_stream_message
from api.upstream.sse import SSEError, SSEEvent, SSELineTooLong


def test_ndjson_lines_split_across_chunks() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a": 1}\r\n{"b"') == [SSEEvent(b'{"a": 1}')]
    assert decoder.feed(b': 2}\n\n') == [SSEEvent(b'{"b": 2}')]
    assert decoder.feed(b'{"c": 3}') == []
    assert decoder.close() == [SSEEvent(b'{"c": 3}')]
    with pytest.raises(SSELineTooLong):
        NDJSONDecoder(max_line_bytes=8).feed(b"0123456789")


def messages() -> tuple[bytes, list[SSEEvent]]:
    chunk = b'{"bytes": "' + base64.b64encode(b'{"type":"message_stop"}') + b'"}'
    raw = (encode_event_stream_message({":event-type": "chunk", ":content-type": "application/json",
                                        ":message-type": "event"}, chunk)
           + encode_event_stream_message({":exception-type": "throttlingException", ":message-type": "exception"},
                                         b'{"message": "Too many requests"}'))
    return raw, [SSEEvent(chunk, "chunk"), SSEEvent(b'{"message": "Too many requests"}',
                                                    "exception:throttlingException")]


def test_event_stream_whole_and_byte_by_byte() -> None:
    raw, expected = messages()
    assert EventStreamDecoder().feed(raw) == expected
    decoder, events = EventStreamDecoder(), []
    for i in range(len(raw)):
        events += decoder.feed(raw[i:i + 1])
    assert events == expected and decoder.close() == []


def test_event_stream_layout() -> None:
    raw = encode_event_stream_message({":event-type": "chunk"}, b"{}")
    headers = bytes([11]) + b":event-type" + bytes([7]) + b"\x00\x05chunk"
    assert raw[:8] == (12 + len(headers) + 2 + 4).to_bytes(4, "big") + len(headers).to_bytes(4, "big")
    assert raw[8:12] == zlib.crc32(raw[:8]).to_bytes(4, "big")
    assert raw[12:-4] == headers + b"{}" and raw[-4:] == zlib.crc32(raw[:-4]).to_bytes(4, "big")


def test_event_stream_corruption_and_truncation_are_errors() -> None:
    raw, _ = messages()
    broken = bytearray(raw)
    broken[20] ^= 0xFF
    with pytest.raises(SSEError):
        EventStreamDecoder().feed(bytes(broken))
    decoder = EventStreamDecoder()
    decoder.feed(raw[:30])
    with pytest.raises(SSEError):
        decoder.close()
    error = encode_event_stream_message({":message-type": "error", ":error-code": "InternalFailure",
                                         ":error-message": "boom"}, b"")
    assert EventStreamDecoder().feed(error) == [SSEEvent(b"boom", "error:InternalFailure")]
