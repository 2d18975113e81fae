# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""An upstream that refuses the connection: the client gets the gateway's 502 in its own format
(OpenAI's, Anthropic's, a task route's), nothing is charged, and neither the answer nor the user's
error log names the channel's address (host or port); the channel test, an operator's, still does."""
from __future__ import annotations

import orjson
import pytest

from api import keys
from api.channels.channel_test import run_test
from tests.api.test_error_logs import written
from tests.helpers import free_port
from tests.relay.fakes import add_channel, drain, gateway, headers_for, live_balance, make_key, rich_user  # noqa: F401

VIDEO_MODEL = "sora-compatible-1"
QUOTA = 10_000_000


@pytest.fixture
async def closed(gateway):
    """A channel whose address nothing listens on, a user and a key; (port, user, key)."""
    port = free_port()
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelPrice", orjson.dumps({**(options.get_json("ModelPrice") or {}),
                                                     VIDEO_MODEL: 0.05}).decode())
    channel = await add_channel(gateway, None, models=f"gpt-4o,{VIDEO_MODEL}", base_url=f"http://127.0.0.1:{port}")
    user = await rich_user(quota=QUOTA)
    return port, user, await make_key(user), channel


def names_no_address(text: str, port: int) -> None:
    assert str(port) not in text and "127.0.0.1" not in text, text


@pytest.mark.parametrize("stream", [False, True])
async def test_chat(gateway, closed, stream) -> None:
    port, user, token, _ = closed
    body = {"model": "gpt-4o", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    resp = await gateway.post("/v1/chat/completions", headers=headers_for(token), json=body)
    raw = (await resp.read()).decode()
    assert resp.status == 502, raw
    error = orjson.loads(raw)["error"]
    assert (error["type"], error["code"]) == ("upstream_error", "do_request_failed")
    assert error["message"].startswith("do request failed: the upstream refused the connection: nothing listens there")
    names_no_address(raw, port)
    [row] = await written(gateway)
    names_no_address(row.content, port)
    assert orjson.loads(row.other)["status_code"] == 502
    assert await drain(gateway) == 0 and await live_balance(gateway, user.id) == QUOTA


async def test_messages_in_anthropics_shape(gateway, closed) -> None:
    port, user, token, _ = closed
    resp = await gateway.post("/v1/messages", headers={"x-api-key": f"sk-{token.key}"},
                              json={"model": "gpt-4o", "max_tokens": 5, "stream": True,
                                    "messages": [{"role": "user", "content": "hi"}]})
    raw = (await resp.read()).decode()
    assert resp.status == 502 and orjson.loads(raw)["type"] == "error", raw
    names_no_address(raw, port)


async def test_a_video_task(gateway, closed) -> None:
    port, user, token, _ = closed
    resp = await gateway.post("/v1/videos", headers=headers_for(token),
                              json={"model": VIDEO_MODEL, "prompt": "a fox", "seconds": "4"})
    raw = (await resp.read()).decode()
    assert resp.status == 502 and orjson.loads(raw)["error"]["code"] == "task_submit_failed", raw
    names_no_address(raw, port)
    for row in await written(gateway):
        names_no_address(row.content, port)
    assert await drain(gateway) == 0 and await live_balance(gateway, user.id) == QUOTA


async def test_realtime_before_the_upgrade(gateway, closed) -> None:
    port, user, token, _ = closed
    resp = await gateway.get("/v1/realtime?model=gpt-4o", headers={
        **headers_for(token), "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    raw = (await resp.read()).decode()
    assert resp.status == 502, raw
    names_no_address(raw, port)


async def test_the_channel_test_tells_the_operator_where(gateway, closed) -> None:
    port, _, _, channel = closed
    result = await run_test(gateway.server.app[keys.HTTP], channel, "gpt-4o", 5.0)
    assert not result.success
    assert result.message == (f"Request to the upstream failed: the upstream refused the connection "
                              f"(127.0.0.1:{port}): nothing listens there")
