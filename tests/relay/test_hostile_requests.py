# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""What a key holder must not be able to do: read the channel's key in an upstream error, disable a
shared channel with bad requests, or make the relay fail (500) with a malformed body."""
from __future__ import annotations

import logging

import orjson
import pytest

from api import keys
from api.upstream.errors import mask_secrets
from models import Channel, Log
from models.enums import ChannelStatus
from tests.helpers import eventually
from tests.relay.fakes import add_channel, gateway, headers_for, make_key, relay_of, rich_user, upstreams  # noqa: F401

BODY = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}
UPSTREAM_KEY = "sk-live-0123456789abcdefSECRET"


async def set_option(gateway, key: str, value: str) -> None:
    await gateway.server.app[keys.OPTIONS].update(key, value)


def test_mask_secrets_hides_every_part_of_a_key_and_the_upstream_address() -> None:
    text = ("Incorrect API key provided: Bearer sk-live-0123456789abcdefSECRET. AK AKIAABCDEFGHIJKLMNOP with "
            "secret wJalrXUtnFEMI/K7MDENG and region; see https://api.internal.example/v1 (api.internal.example)")
    masked = mask_secrets(text, "AKIAABCDEFGHIJKLMNOP|wJalrXUtnFEMI/K7MDENG|us-east-1",
                          "https://api.internal.example/v1")
    assert "0123456789" not in masked and "AKIA" not in masked and "wJalr" not in masked
    assert "internal.example" not in masked and "upstream" in masked
    assert mask_secrets("model not found", "sk-x", "") == "model not found"  # short keys: nothing to mask


async def test_an_upstream_error_quoting_the_key_reaches_nobody(gateway, upstreams, worker, caplog) -> None:
    fake = await upstreams(fail_status=401, fail_body={"error": {
        "message": f"Incorrect API key provided: Bearer {UPSTREAM_KEY}", "type": "invalid_request_error",
        "code": "invalid_api_key"}})
    channel = await add_channel(gateway, fake, key=UPSTREAM_KEY)
    await set_option(gateway, "AutomaticDisableChannelEnabled", "true")
    token = await make_key(await rich_user())
    caplog.set_level(logging.INFO)
    resp = await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    text = await resp.text()
    assert resp.status == 401 and "Incorrect API key" in text and UPSTREAM_KEY not in text
    assert "0123456789abcdef" not in text

    async def disabled() -> Channel | None:
        row = await Channel.get(id=channel.id)
        return row if row.status == ChannelStatus.AUTO_DISABLED else None

    row = await eventually(disabled, timeout=30)  # by the worker, with the reason it was given
    reason = orjson.loads(row.other_info)["status_reason"]
    assert "Incorrect API key" in reason and "0123456789abcdef" not in reason
    records = "\n".join(r.getMessage() for r in caplog.records)
    assert "Incorrect API key" in records and "0123456789abcdef" not in records
    assert not await Log.filter(content__contains="0123456789abcdef").exists()


async def test_bad_requests_do_not_count_against_a_shared_channel(gateway, upstreams) -> None:
    fake = await upstreams(fail_status=400, fail_body={"error": {"message": "Invalid value for 'logit_bias'",
                                                                 "type": "invalid_request_error", "code": None}})
    channel = await add_channel(gateway, fake)
    await set_option(gateway, "AutomaticDisableChannelEnabled", "true")
    await set_option(gateway, "AutomaticDisableMinRequests", "4")
    await set_option(gateway, "AutomaticDisableErrorRate", "0.5")
    token = await make_key(await rich_user())
    for _ in range(12):
        resp = await gateway.post("/v1/chat/completions", json={**BODY, "logit_bias": {"x": 1}},
                                  headers=headers_for(token))
        assert resp.status == 400
    assert relay_of(gateway).index.get(channel.id) is not None  # still serving everyone
    fake.fail_status = 500  # errors about the channel still count
    for _ in range(4):
        await gateway.post("/v1/chat/completions", json=BODY, headers=headers_for(token))
    assert relay_of(gateway).index.get(channel.id) is None


@pytest.mark.parametrize("body,param", [
    ("hi", None), ({}, "messages"), ([1], None), ({"model": "gpt-4", "messages": "hi"}, "messages"),
    ({"model": "gpt-4", "messages": [1]}, "messages[0]"),
    ({"model": "gpt-4", "messages": [{"role": 1, "content": "hi"}]}, "messages[0].role"),
    ({"model": "gpt-4", "messages": [{"role": "user", "content": {"a": 1}}]}, "messages[0].content"),
    ({"model": "gpt-4", "messages": [{"role": "user", "content": [1]}]}, "messages[0].content"),
    ({**BODY, "stream": "yes"}, "stream"), ({**BODY, "max_tokens": -1}, "max_tokens"),
    ({**BODY, "max_tokens": 10 ** 15}, "max_tokens"), ({**BODY, "max_tokens": 1.5}, "max_tokens"),
    (b'{"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1e30}', "max_tokens"),
    (b'{"model": "gpt-4", "messages": [], "max_tokens": 100000000000000000000000000000}', None),
    ({**BODY, "temperature": "hot"}, "temperature"), ({**BODY, "top_p": True}, "top_p"),
    ({**BODY, "n": 0}, "n"),
    (100, "body"), (900, None),
])
async def test_malformed_bodies_are_400_and_never_forwarded(gateway, upstreams, body, param) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    if isinstance(body, int):  # nested that deep
        raw = b'{"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}], "metadata": ' + \
            b"[" * body + b'"x"' + b"]" * body + b"}"
    else:
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
    resp = await gateway.post("/v1/chat/completions", data=raw,
                              headers={**headers_for(token), "Content-Type": "application/json"})
    answer = await resp.json()
    assert resp.status == 400, answer
    assert answer["error"]["type"] == "invalid_request_error"
    if param is not None:
        assert answer["error"]["param"] == param, answer
    assert fake.seen == []
    assert not await Log.filter(user_id=user.id, type=2).exists()
