# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""POST /v1/realtime/client_secrets through the openai SDK: the gateway's own short-lived secret, usable only
to open /v1/realtime sessions of its model (header or a browser's subprotocol), each billed to the key that made
it, its session configuration sent upstream first; refused as a session would be, and nothing charged."""
from __future__ import annotations

import aiohttp
import openai
import orjson
import pytest
from websockets.exceptions import InvalidStatus

from models import Log
from models.enums import LogType
from tests.relay.fakes import add_channel, drain, gateway, live_balance, make_key, rich_user  # noqa: F401
from tests.relay.realtime.realtime_kit import (  # noqa: F401
    MODEL,
    QUOTA_1,
    USAGE_1,
    USER_TEXT,
    open_reservations,
    realtime_fakes,
    sdk,
    sessions_over,
    until,
)

START = 10_000_000


async def test_a_client_secret_opens_sessions_billed_to_its_key(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes(usages=[USAGE_1])
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        made = await client.realtime.client_secrets.create(
            expires_after={"anchor": "created_at", "seconds": 120},
            session={"type": "realtime", "model": MODEL, "instructions": "Answer in French."})
    assert made.value.startswith("ek_") and made.session.model == MODEL
    assert token.key not in made.model_dump_json()
    async with sdk(gateway, made.value).realtime.connect(model=MODEL) as conn:
        await until(conn, "session.updated")  # the secret's configuration, applied first
        await conn.conversation.item.create(item=USER_TEXT)
        await conn.response.create()
        await until(conn, "response.done")
    assert fake.seen[0]["type"] == "session.update"
    assert fake.seen[0]["session"] == {"type": "realtime", "instructions": "Answer in French."}
    # a browser: the secret as the subprotocol, the model taken from the secret
    async with aiohttp.ClientSession() as http, http.ws_connect(
            gateway.make_url("/v1/realtime"), protocols=("realtime", f"openai-insecure-api-key.{made.value}")) as ws:
        assert orjson.loads((await ws.receive()).data)["type"] == "session.created"
    await sessions_over(gateway)
    await drain(gateway)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.quota, log.token_id) == (QUOTA_1, token.id)
    assert await live_balance(gateway, user.id) == START - QUOTA_1
    assert await open_reservations(gateway, user.id) == {}


async def test_what_a_client_secret_cannot_do(gateway, realtime_fakes) -> None:
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=f"{MODEL},gpt-realtime-mini")
    user = await rich_user(quota=START)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        made = await client.realtime.client_secrets.create(session={"type": "realtime", "model": MODEL})
    async with sdk(gateway, made.value) as secret:
        with pytest.raises(InvalidStatus) as other_model:  # the secret's model only
            async with secret.realtime.connect(model="gpt-realtime-mini"):
                pass
        assert other_model.value.response.status_code == 400
        with pytest.raises(openai.AuthenticationError):  # no other route takes it
            await secret.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.AuthenticationError):  # nor does it make another
            await secret.realtime.client_secrets.create(session={"type": "realtime", "model": MODEL})
    with pytest.raises(InvalidStatus) as unknown:
        async with sdk(gateway, "ek_" + "0" * 44).realtime.connect(model=MODEL):
            pass
    assert unknown.value.response.status_code == 401
    assert fake.handshakes == []
    assert await live_balance(gateway, user.id) in (None, START)


@pytest.mark.parametrize(("body", "status", "param"), [
    ({"session": {"type": "realtime"}}, 400, None),  # no model
    ({"session": {"type": "transcription", "model": MODEL}}, 400, "session.type"),
    ({"session": {"type": "realtime", "model": MODEL}, "expires_after": {"anchor": "created_at", "seconds": 5}},
     400, "expires_after.seconds"),
    ({"session": {"type": "realtime", "model": MODEL}, "expires_after": {"anchor": "now", "seconds": 60}},
     400, "expires_after.anchor"),
    ({"session": {"type": "realtime", "model": "no-such-model"}}, 400, None),  # no price
])
async def test_bad_requests_are_refused(gateway, realtime_fakes, body, status, param) -> None:
    fake = await realtime_fakes()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user(quota=START)
    token = await make_key(user)
    resp = await gateway.post("/v1/realtime/client_secrets", json=body,
                              headers={"Authorization": f"Bearer sk-{token.key}"})
    assert resp.status == status
    error = (await resp.json())["error"]
    assert error["param"] == param
    refused = await gateway.post("/v1/realtime/client_secrets", json={"session": {"type": "realtime", "model": MODEL}},
                                 headers={"Authorization": "Bearer sk-wrong"})
    assert refused.status == 401
