"""The upstream SSE parser and the client frame encoders."""

from pathlib import Path

import orjson
import pytest

from api.upstream.sse import (
    DONE_FRAME,
    SSEEvent,
    SSELineTooLong,
    SSEParser,
    encode_data,
    encode_done,
    encode_many,
)

FIXTURES = Path(__file__).parent / "fixtures"
STREAM = (FIXTURES / "openai_chat_stream.sse").read_bytes()


def parse_all(chunks, **kwargs) -> list[SSEEvent]:
    parser = SSEParser(**kwargs)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def test_fixture_whole() -> None:
    events = parse_all([STREAM])
    assert len(events) == 6
    assert events[-1].is_done
    assert not events[0].is_done
    assert orjson.loads(events[1].data)["choices"][0]["delta"]["content"] == "Hello"
    assert all(e.event is None for e in events)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_split_position_gives_the_same_events(newline: bytes) -> None:
    data = STREAM.replace(b"\n", newline)
    expected = parse_all([data])
    assert len(expected) == 6
    for i in range(len(data) + 1):
        assert parse_all([data[:i], data[i:]]) == expected, i


def test_byte_by_byte_and_three_way_splits() -> None:
    expected = parse_all([STREAM])
    assert parse_all([STREAM[i : i + 1] for i in range(len(STREAM))]) == expected
    step = len(STREAM) // 7
    for i in range(0, len(STREAM), step):
        for j in range(i, len(STREAM), step):
            assert parse_all([STREAM[:i], STREAM[i:j], STREAM[j:]]) == expected


def test_crlf_split_between_cr_and_lf_is_one_line_end() -> None:
    events = parse_all([b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"])
    assert events == [SSEEvent(b"a"), SSEEvent(b"b")]


def test_comments_fields_and_multiline_data() -> None:
    raw = b": keep-alive\nevent: message_start\nid: 7\nretry: 1000\ndata: line one\ndata:line two\ndata\nunknown: x\n\n"
    assert parse_all([raw]) == [SSEEvent(b"line one\nline two\n", "message_start", "7")]


def test_only_one_space_after_colon_is_removed() -> None:
    assert parse_all([b"data:  two spaces\n\n"]) == [SSEEvent(b" two spaces")]


def test_blank_lines_without_data_dispatch_nothing_and_reset_event_name() -> None:
    events = parse_all([b"\n\nevent: ping\n\ndata: x\n\n"])
    assert events == [SSEEvent(b"x")]


def test_close_flushes_an_unterminated_last_event() -> None:
    parser = SSEParser()
    assert parser.feed(b'data: {"a":1}\ndata: [DONE]') == []
    assert parser.close() == [SSEEvent(b'{"a":1}\n[DONE]')]
    parser = SSEParser()
    assert parser.feed(b"data: [DONE]") == []
    events = parser.close()
    assert events == [SSEEvent(b"[DONE]")] and events[0].is_done


def test_empty_chunks_are_harmless() -> None:
    parser = SSEParser()
    assert parser.feed(b"") == []
    assert parser.feed(b"data: x\n") == []
    assert parser.feed(b"") == []
    assert parser.feed(b"\n") == [SSEEvent(b"x")]


def test_line_over_the_limit_raises_when_fed_in_pieces() -> None:
    parser = SSEParser(max_line_bytes=100)
    parser.feed(b"data: " + b"x" * 50)
    with pytest.raises(SSELineTooLong, match="exceeds 100 bytes"):
        parser.feed(b"x" * 60)


def test_line_over_the_limit_raises_in_one_chunk() -> None:
    parser = SSEParser(max_line_bytes=100)
    with pytest.raises(SSELineTooLong):
        parser.feed(b"data: " + b"y" * 200 + b"\n\n")


def test_event_data_over_the_limit_raises() -> None:
    parser = SSEParser(max_line_bytes=100)
    with pytest.raises(SSELineTooLong):
        parser.feed(b"data: " + b"z" * 60 + b"\n" + b"data: " + b"z" * 60 + b"\n")


def test_lines_at_the_limit_pass() -> None:
    line = b"data: " + b"a" * 94  # exactly 100 bytes
    assert parse_all([line + b"\n\n"], max_line_bytes=100) == [SSEEvent(b"a" * 94)]


def test_default_limit_is_one_mebibyte() -> None:
    assert SSEParser().max_line_bytes == 1 << 20


def test_long_line_in_small_chunks() -> None:
    payload = b"q" * 300_000
    data = b"data: " + payload + b"\n\n"
    chunks = [data[i : i + 1000] for i in range(0, len(data), 1000)]
    assert parse_all(chunks) == [SSEEvent(payload)]


def test_encoders() -> None:
    assert encode_data({"a": 1, "b": "é"}) == b'data: {"a":1,"b":"\xc3\xa9"}\n\n'
    assert encode_data(b'{"raw":true}') == b'data: {"raw":true}\n\n'
    assert encode_done() == DONE_FRAME == b"data: [DONE]\n\n"
    assert encode_many([{"a": 1}, b"{}"]) == b'data: {"a":1}\n\ndata: {}\n\n'


def test_encoded_frames_parse_back() -> None:
    frames = encode_many([{"n": i} for i in range(3)]) + encode_done()
    events = parse_all([frames])
    assert [orjson.loads(e.data) for e in events[:3]] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert events[3].is_done
