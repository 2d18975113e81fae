# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""GET /v1/realtime through the openai SDK's realtime client: a session's responses billed to the unit as each
`response.done` arrives (text and audio at their own ratios), the key checked before the upgrade (header or a
browser's subprotocol), the session's model fixed, the upstream's refusals relayed, and Azure's two paths."""
from __future__ import annotations

import aiohttp
import orjson
import pytest
from websockets.exceptions import InvalidStatus

from api import keys
from models import Log
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.relay.realtime.realtime_kit import (  # noqa: F401
    MODEL,
    QUOTA_1,
    QUOTA_2,
    USAGE_1,
    USAGE_2,
    USER_TEXT,
    open_reservations,
    price_of,
    realtime_fakes,
    sdk,
    sessions_over,
    until,
)

START = 10_000_000


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_two_responses_billed_to_the_unit(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1, USAGE_2])
    channel = await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        assert (await conn.recv()).type == "session.created"
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        assert (await until(conn, "session.updated"))[-1].session.model == MODEL
        texts = []
        for _ in range(2):
            await conn.conversation.item.create(item=USER_TEXT)
            await conn.response.create()
            events = await until(conn, "response.done")
            texts.append("".join(e.delta for e in events if e.type == "response.output_text.delta"))
        assert texts == ["Hello from the realtime fake."] * 2
        assert events[-1].response.usage.output_token_details.audio_tokens == 40
    await sessions_over(gateway)
    assert fake.handshakes[0]["authorization"] == "Bearer sk-upstream-secret"
    assert fake.handshakes[0]["query"] == {"model": MODEL}
    assert [e["type"] for e in fake.seen] == ["session.update", "conversation.item.create", "response.create"] * 1 + [
        "conversation.item.create", "response.create"]
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    assert [log.quota for log in logs] == [QUOTA_1, QUOTA_2] == [price_of(gateway, USAGE_1), price_of(gateway, USAGE_2)]
    first, second = (orjson.loads(log.other) for log in logs)
    assert first["realtime"]["audio_output_tokens"] == 15 and first["realtime"]["response"] == 1
    assert second["realtime"]["cached_audio_tokens"] == 170 and second["cache_tokens"] == 250
    assert first["realtime"]["session"] == second["realtime"]["session"]
    assert first["realtime"]["audio_ratio"] == 8 and first["admin_info"]["use_channel"] == [channel.id]
    assert (logs[0].prompt_tokens, logs[0].completion_tokens, logs[0].model_name) == (40, 20, MODEL)
    assert await live_balance(gateway, user.id) == START - QUOTA_1 - QUOTA_2
    assert await open_reservations(gateway, user.id) == {}


async def test_a_key_refused_before_the_upgrade(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    with pytest.raises(InvalidStatus) as refused:
        async with sdk(gateway, "sk-not-a-key").realtime.connect(model=MODEL):
            pass
    assert refused.value.response.status_code == 401
    assert orjson.loads(refused.value.response.body)["error"]["code"] == "invalid_api_key"
    # not a WebSocket: a plain answer in OpenAI's shape
    token = await make_key(user)
    resp = await gateway.get(f"/v1/realtime?model={MODEL}", headers={"Authorization": f"Bearer sk-{token.key}"})
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "websocket_required"
    # a model the key may not use, and no model: refused before the upgrade
    limited = await make_key(user, model_limits_enabled=True, model_limits="gpt-4o")
    with pytest.raises(InvalidStatus) as forbidden:
        async with sdk(gateway, limited).realtime.connect(model=MODEL):
            pass
    assert forbidden.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as unnamed:
        async with sdk(gateway, token).realtime.connect(model=""):
            pass
    assert unnamed.value.response.status_code == 400
    assert fake.handshakes == []
    assert await live_balance(gateway, user.id) in (None, START) and await open_reservations(gateway, user.id) == {}


async def test_a_browser_key_in_the_subprotocol(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    protocols = ("realtime", f"openai-insecure-api-key.sk-{token.key}")
    async with aiohttp.ClientSession() as http, http.ws_connect(
            gateway.make_url(f"/v1/realtime?model={MODEL}"), protocols=protocols) as ws:
        assert ws.protocol == "realtime"
        assert orjson.loads((await ws.receive()).data)["type"] == "session.created"
        await ws.send_str(orjson.dumps({"type": "conversation.item.create", "item": USER_TEXT}).decode())
        await ws.send_str(orjson.dumps({"type": "response.create"}).decode())
        while orjson.loads((await ws.receive()).data)["type"] != "response.done":
            pass
    await sessions_over(gateway)
    await drain(gateway)
    assert [log.quota for log in await Log.filter(user_id=user.id, type=LogType.CONSUME)] == [QUOTA_1]
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(gateway.make_url(f"/v1/realtime?model={MODEL}"),
                                  protocols=("realtime", "openai-insecure-api-key.sk-wrong"))
    assert refused.value.status == 401 and len(fake.handshakes) == 1


async def test_the_model_is_fixed_and_upstream_errors_are_relayed(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await until(conn, "session.created")
        await conn.session.update(session={"type": "realtime", "model": "gpt-realtime-mini"})
        refused = (await until(conn, "error"))[-1]
        assert refused.error.code == "invalid_value" and refused.error.param == "session.model"
        await conn.send({"type": "conversation.item.explode"})
        unknown = (await until(conn, "error"))[-1]
        assert unknown.error.code == "invalid_value" and unknown.error.param == "type"
        await conn.session.update(session={"type": "realtime", "model": MODEL, "instructions": "Be brief."})
        assert (await until(conn, "session.updated"))[-1].session.instructions == "Be brief."
    assert [e["type"] for e in fake.seen] == ["conversation.item.explode", "session.update"]
    await sessions_over(gateway)
    await drain(gateway)
    assert await Log.filter(user_id=user.id, type=LogType.CONSUME).count() == 0
    assert await live_balance(gateway, user.id) == START and await open_reservations(gateway, user.id) == {}


async def test_an_upstream_refusing_the_handshake_is_refunded(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(key="sk-other")
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    with pytest.raises(InvalidStatus) as refused:
        async with sdk(gateway, token).realtime.connect(model=MODEL):
            pass
    assert refused.value.response.status_code == 401
    body = refused.value.response.body.decode()
    assert "sk-upstream-secret" not in body and "status 401" in body
    assert len(fake.handshakes) == 1
    assert await live_balance(gateway, user.id) == START and await open_reservations(gateway, user.id) == {}


@pytest.mark.parametrize("other", ["", "2025-04-01-preview"])
async def test_azure_paths(gateway, realtime_fakes, other) -> None:
    fake = await realtime_fakes(azure=True, models=("realtime-deploy",), usages=[USAGE_2])
    await add_channel(gateway, fake, models=MODEL, type=3, other=other,
                      model_mapping=orjson.dumps({MODEL: "realtime-deploy"}).decode())
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        assert (await conn.recv()).session.model == "realtime-deploy"
        await conn.session.update(session={"type": "realtime", "model": MODEL})
        await until(conn, "session.updated")
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.done")
    shake = fake.handshakes[0]
    assert shake["api_key"] == "sk-upstream-secret" and shake["authorization"] == ""
    if other:
        assert shake["path"] == "/openai/realtime"
        assert shake["query"] == {"api-version": other, "deployment": "realtime-deploy"}
    else:
        assert shake["path"] == "/openai/v1/realtime" and shake["query"] == {"model": "realtime-deploy"}
    assert fake.seen[0]["session"]["model"] == "realtime-deploy"  # sent as the channel names it
    await sessions_over(gateway)
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.quota, log.model_name) == (QUOTA_2, MODEL)
    assert orjson.loads(log.other)["upstream_model_name"] == "realtime-deploy"
    assert await live_balance(gateway, user.id) == START - QUOTA_2


async def test_options_of_audio_prices_are_used(gateway, realtime_fakes) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("AudioRatio", orjson.dumps({MODEL: 4}).decode())
    await options.update("AudioCompletionRatio", "{}")  # audio output billed as text output
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token).realtime.connect(model=MODEL) as conn:
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.done")
    await sessions_over(gateway)
    await drain(gateway)
    # (30 + 10×4 + 5×4 + 15×4) × 2 = 300
    assert [log.quota for log in await Log.filter(user_id=user.id, type=LogType.CONSUME)] == [300]
