# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Answers whose headers carry what the client or the upstream chose: field names and hosted tools'
types the conversion left out (X-Gateway-Dropped), an upstream's Content-Type. A control character,
CR/LF or a non-ASCII character in them never costs the client its answer (aiohttp refuses to write
such a header): the whole answer arrives, streamed or not, charged once; the header says the names
percent-encoded (api/web/header_values.py)."""
from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import unquote

import orjson
import pytest

from api.upstream.catalogue import ChannelType
from api.web.header_values import MAX_VALUE, header_list, header_value
from tests.relay.fakes import REPLY, add_channel, drain, gateway, headers_for, make_key, rich_user, upstreams  # noqa: F401
from tests.upstream.providers.gemini.fake_gemini import REPLY as GEMINI_REPLY
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import consume_logs
from tests.upstream.providers.xunfei.test_provider_xunfei import http_channel, spark_http  # noqa: F401

NAMES = ("a\u0001b", "x\r\ny", "é,%")  # a control character, CR/LF, non-ASCII with the list's separator
HI = [{"role": "user", "content": "Say hello."}]


def dropped(headers: Any) -> list[str]:
    return [unquote(item) for item in headers["X-Gateway-Dropped"].split(",")]


def chat_text(raw: bytes, stream: bool) -> str:
    if not stream:
        return str(orjson.loads(raw)["choices"][0]["message"]["content"])
    events = [orjson.loads(line[6:]) for line in raw.decode().splitlines()
              if line.startswith("data: {")]
    return "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e.get("choices"))


async def charged_once_each(gateway, user, calls: int) -> None:
    await drain(gateway)
    logs = await consume_logs(user)
    assert len(logs) == calls and all(log.quota > 0 for log in logs), logs


@pytest.mark.parametrize("stream", [False, True])
async def test_unknown_field_names_on_chat_completions(gateway, spark_http, stream) -> None:
    """Spark's HTTP API takes only its own fields: the client's unknown ones are dropped by name."""
    await http_channel(gateway, spark_http)
    user = await rich_user()
    token = await make_key(user)
    body = {"model": "generalv3.5", "messages": HI, "stream": stream, **dict.fromkeys(NAMES, 1)}
    resp = await gateway.post("/v1/chat/completions", headers=headers_for(token), json=body)
    raw = await resp.read()
    assert resp.status == 200, raw
    assert chat_text(raw, stream) == "".join(spark_http.pieces)
    assert dropped(resp.headers) == list(NAMES)
    assert len(spark_http.seen) == 1
    await charged_once_each(gateway, user, 1)


@pytest.mark.parametrize("stream", [False, True])
async def test_hosted_tool_types_on_chat_completions_to_gemini(gateway, aiohttp_server, stream) -> None:
    fake = FakeGemini()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models="gemini-2.0-flash", type=int(ChannelType.GEMINI), base_url=fake.url,
                      key=fake.key)
    user = await rich_user()
    token = await make_key(user)
    body = {"model": "gemini-2.0-flash", "messages": HI, "stream": stream, "tools": [{"type": n} for n in NAMES]}
    resp = await gateway.post("/v1/chat/completions", headers=headers_for(token), json=body)
    raw = await resp.read()
    assert resp.status == 200, raw
    assert chat_text(raw, stream) == GEMINI_REPLY
    assert dropped(resp.headers) == [f"tools.{n}" for n in NAMES]
    assert len(fake.seen) == 1
    await charged_once_each(gateway, user, 1)


@pytest.mark.parametrize("stream", [False, True])
async def test_messages_with_hosted_tools_and_unknown_fields(gateway, upstreams, stream) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="gpt-4o")
    user = await rich_user()
    token = await make_key(user)
    body = {"model": "gpt-4o", "max_tokens": 100, "messages": HI, "stream": stream,
            "tools": [{"type": n, "name": f"t{i}"} for i, n in enumerate(NAMES)], **dict.fromkeys(NAMES, 1)}
    resp = await gateway.post("/v1/messages", headers={"x-api-key": f"sk-{token.key}"}, json=body)
    raw = await resp.read()
    assert resp.status == 200, raw
    if stream:
        events = [orjson.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
        assert "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta") == REPLY
        assert events[-1]["type"] == "message_stop"
    else:
        assert orjson.loads(raw)["content"][0]["text"] == REPLY
    assert dropped(resp.headers) == [f"tools.{n}" for n in NAMES]
    assert len(fake.seen) == 1
    await charged_once_each(gateway, user, 1)


@pytest.mark.parametrize("stream", [False, True])
async def test_gemini_route_with_unknown_tool_keys(gateway, upstreams, stream) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models="gpt-4o")
    user = await rich_user()
    token = await make_key(user)
    action = "streamGenerateContent?alt=sse&" if stream else "generateContent?"
    body = {"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}], "tools": [dict.fromkeys(NAMES, {})],
            **dict.fromkeys(NAMES, 1)}
    resp = await gateway.post(f"/v1beta/models/gpt-4o:{action}key=sk-{token.key}", json=body)
    raw = await resp.read()
    assert resp.status == 200, raw
    answers = [orjson.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")] \
        if stream else [orjson.loads(raw)]
    assert "".join(p.get("text", "") for a in answers for p in a["candidates"][0]["content"]["parts"]) == REPLY
    assert dropped(resp.headers) == [f"tools.{n}" for n in NAMES]
    assert len(fake.seen) == 1
    await charged_once_each(gateway, user, 1)


async def test_many_long_names_bounded(gateway, upstreams) -> None:
    """Thousands of long hosted tool types: the header stays within its bound and says how many it left out."""
    fake = await upstreams()
    await add_channel(gateway, fake, models="gpt-4o")
    user = await rich_user()
    token = await make_key(user)
    tools = [{"type": f"tool_{i}_" + "\u0001" * 50, "name": f"t{i}"} for i in range(2000)]
    resp = await gateway.post("/v1/messages", headers={"x-api-key": f"sk-{token.key}"},
                              json={"model": "gpt-4o", "max_tokens": 10, "messages": HI, "tools": tools})
    assert resp.status == 200
    header = resp.headers["X-Gateway-Dropped"]
    items = header.split(",")
    assert len(header) <= MAX_VALUE and items[-1] == f"+{2000 - len(items) + 1} more"
    assert unquote(items[0]) == tools[0]["type"].join(("tools.", ""))
    await charged_once_each(gateway, user, 1)


async def test_an_upstream_content_type_with_a_control_character(gateway) -> None:
    """Speech bytes whose Content-Type holds a control character and undecodable bytes (aiohttp's client
    reads them as they came): the client gets the audio, under a value it can be sent."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(
            b"content-length:"))
        seen.append(await reader.readexactly(length))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: audio/mp\x013; x=\xff\r\nContent-Length: 5\r\n"
                     b"Connection: close\r\n\r\nAUDIO")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await add_channel(gateway, None, models="tts-1", base_url=f"http://127.0.0.1:{port}")
        user = await rich_user()
        token = await make_key(user)
        resp = await gateway.post("/v1/audio/speech", headers=headers_for(token),
                                  json={"model": "tts-1", "input": "Hello there.", "voice": "alloy"})
        assert resp.status == 200 and await resp.read() == b"AUDIO"
        assert resp.headers["Content-Type"] == "audio/mp%013; x=%FF"
        assert len(seen) == 1
        await charged_once_each(gateway, user, 1)
    finally:
        server.close()
        await server.wait_closed()


def test_the_helpers() -> None:
    assert header_value("text/event-stream; charset=utf-8") == "text/event-stream; charset=utf-8"
    assert header_value("100%") == "100%"  # a safe value comes back as it was
    assert header_value("a\rb\nc\x00\x7fé") == "a%0Db%0Ac%00%7F%C3%A9"
    assert header_value("é" * 600, limit=100) == "%C3%A9" * 16  # never cut inside an escape
    assert header_value("\udcff\ud800") == "%FF?"  # an undecodable byte as it was; a lone surrogate replaced
    assert header_list(["temperature", "tools.a,b", "temperature", "50%"]) == "temperature,tools.a%2Cb,50%25"
    assert header_list([f"name_{i}" for i in range(100)], limit=40) == "name_0,name_1,name_2,name_3,+96 more"
    assert header_list(["x" * 50], limit=40) == "+1 more"
