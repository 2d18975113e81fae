"""Tencent Hunyuan channels (type 23) through the official openai SDK against a fake TencentCloud
API that checks every TC3 signature, and Hunyuan's OpenAI-compatible endpoint for a channel whose
key is one API key; the signer itself against Tencent's published example."""
from __future__ import annotations

import hashlib

import openai
import pytest

from api import keys
from api.services.billing import pricing
from api.services.model_name import ModelName
from api.upstream.base import RelayMeta
from api.upstream.catalogue import ChannelType
from api.upstream.providers.tencent import key_problem as tencent_key_problem
from api.upstream.registry import build_adaptor
from api.upstream.signing import tc3
from models import Channel
from tests.helpers import ApiClient, eventually
from tests.relay.fakes import add_channel, make_key, relay_of, rich_user
from tests.upstream.providers.kit import finish_reasons, sdk, settled_log, stream_chat
from tests.upstream.providers.tencent.fake_tencent import REPLY_PIECES, FakeTencent

MODEL = "hunyuan-pro"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]

# Tencent's published example of signature v3 (the "Signature v3" page of the TencentCloud API
# documentation: CVM DescribeInstances, 2019-02-25).
EXAMPLE_PAYLOAD = b'{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
EXAMPLE_HEADERS = {"Content-Type": "application/json; charset=utf-8", "Host": "cvm.tencentcloudapi.com"}


def test_tc3_matches_tencents_published_example() -> None:
    canonical, names = tc3.canonical_request(EXAMPLE_PAYLOAD, EXAMPLE_HEADERS)
    assert names == "content-type;host"
    assert canonical == ("POST\n/\n\ncontent-type:application/json; charset=utf-8\nhost:cvm.tencentcloudapi.com\n\n"
                         "content-type;host\n35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064")
    assert hashlib.sha256(canonical.encode()).hexdigest() == (
        "5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031")
    assert tc3.authorization("AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******", "Gu5t9xGARNpq86cd98joQYCN3*******", "cvm",
                             1551113065, EXAMPLE_PAYLOAD, EXAMPLE_HEADERS) == (
        "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******/2019-02-25/cvm/tc3_request, "
        "SignedHeaders=content-type;host, "
        "Signature=2230eefd229f582d8b1b891af7107b91597240707d778ab3738f756258d7652c")


@pytest.fixture
async def tencent(aiohttp_server):
    async def start(**behaviour) -> FakeTencent:
        fake = FakeTencent(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


async def tencent_channel(gateway, fake: FakeTencent, **fields) -> Channel:
    return await add_channel(gateway, None, models=fields.pop("models", MODEL), type=int(ChannelType.TENCENT),
                             base_url=fake.url, key=fields.pop("key", f"1300000000|{fake.secret_id}|{fake.secret_key}"),
                             **fields)


async def test_signed_answer_and_billing(gateway, tencent) -> None:
    fake = await tencent()
    await tencent_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.5, top_p=0.9)
    assert answer.choices[0].message.content == "".join(REPLY_PIECES)
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (11, 7)
    seen = fake.seen[0]
    assert seen["action"] == "ChatCompletions" and seen["headers"]["X-TC-Version"] == "2023-09-01"
    assert seen["body"] == {"Model": MODEL, "Stream": False, "Temperature": 0.5, "TopP": 0.9,
                            "Messages": [{"Role": "system", "Content": "Be brief."},
                                         {"Role": "user", "Content": "Say hello."}]}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 7)
    assert log.quota == pricing.settle_quota(pricing.resolve_price(MODEL), 11, 7)


async def test_stream_and_its_usage(gateway, tencent) -> None:
    fake = await tencent()
    await tencent_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 7)
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 7)
    assert log.quota == pricing.settle_quota(pricing.resolve_price(MODEL), 11, 7)


async def test_tools_both_ways(gateway, tencent) -> None:
    fake = await tencent(tool_call={"Name": "get_weather", "Arguments": '{"city":"Paris"}'})
    await tencent_channel(gateway, fake)
    token = await make_key(await rich_user())
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                               "parameters": {"type": "object",
                                                              "properties": {"city": {"type": "string"}}}}}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=tools, tool_choice="auto")
        call = answer.choices[0].message.tool_calls[0]
        assert (call.id, call.function.name, call.function.arguments) == ("call-1", "get_weather", '{"city":"Paris"}')
        history = [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
        _, chunks = await stream_chat(client, model=MODEL, messages=history, tools=tools)
    sent = fake.seen[0]["body"]
    assert sent["Tools"] == [{"Type": "function", "Function": {
        "Name": "get_weather", "Description": "Weather",
        "Parameters": '{"type":"object","properties":{"city":{"type":"string"}}}'}}]
    assert sent["ToolChoice"] == "auto"
    assert fake.seen[1]["body"]["Messages"][2:] == [
        {"Role": "assistant", "Content": "", "ToolCalls": [{"Id": "call-1", "Type": "function", "Function": {
            "Name": "get_weather", "Arguments": '{"city":"Paris"}'}}]},
        {"Role": "tool", "Content": "18°C", "ToolCallId": "call-1"}]
    assert finish_reasons(chunks) == ["tool_calls"]


async def test_a_bad_signature_disables_the_channel(gateway, tencent) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    fake = await tencent()
    channel = await tencent_channel(gateway, fake, key=f"1300000000|{fake.secret_id}|wrong-secret")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="could not be validated"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        with pytest.raises(openai.APIStatusError):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    assert relay_of(gateway).index.get(channel.id) is None
    store = gateway.server.app[keys.STORE]

    async def queued() -> bool:
        return await store.redis.llen(f"{store.prefix}dramatiq:relay") >= 1

    await eventually(queued, timeout=10)


async def test_embeddings_and_the_channel_test(gateway, tencent, root: ApiClient) -> None:
    fake = await tencent()
    channel = await tencent_channel(gateway, fake, models=f"{MODEL},hunyuan-embedding")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="hunyuan-embedding", input=["one", "two"])
    assert [d.embedding for d in result.data] == [[0.25, 0.0], [0.25, 1.0]]
    assert fake.seen[0]["action"] == "GetEmbedding" and fake.seen[0]["body"] == {"InputList": ["one", "two"]}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (8, 0)
    body = await root.get(f"/api/channel/test/{channel.id}?model={MODEL}")
    assert body["success"], body
    assert fake.seen[-1]["action"] == "ChatCompletions"


# -- the OpenAI-compatible endpoint (a channel whose key is one API key) ------------------------------

TURBOS = "hunyuan-turbos-latest"


async def api_key_channel(gateway, fake: FakeTencent, **fields) -> Channel:
    return await add_channel(gateway, None, models=fields.pop("models", TURBOS), type=int(ChannelType.TENCENT),
                             base_url=fake.url, key=fields.pop("key", fake.api_key), **fields)


def test_the_key_decides_the_endpoint() -> None:
    def url(key: str, base_url: str = "") -> str:
        meta = RelayMeta(1, int(ChannelType.TENCENT), key, base_url, name=ModelName(upstream=TURBOS))
        return build_adaptor(meta).request_url()

    assert url("sk-abc") == "https://api.hunyuan.cloud.tencent.com/v1/chat/completions"
    assert url("sk-abc", "https://hunyuan.tencentcloudapi.com") == url("sk-abc")  # API 3.0's address left in
    assert url("sk-abc", "https://proxy.example/hy") == "https://proxy.example/hy/v1/chat/completions"
    assert url("1300000000|AKIDx|secret") == "https://hunyuan.tencentcloudapi.com/"
    assert tencent_key_problem("sk-abc") is None and tencent_key_problem("1|AKID|s") is None
    assert tencent_key_problem("1|AKID") == tencent_key_problem("sk a") == "channel_key_hunyuan"


async def test_an_api_key_answer_and_billing(gateway, tencent) -> None:
    fake = await tencent()
    await api_key_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=TURBOS, messages=MESSAGES, temperature=0.5,
                                                      extra_body={"enable_enhancement": True})
    assert answer.choices[0].message.content == "".join(REPLY_PIECES)
    seen = fake.seen[0]
    assert seen["path"] == "/v1/chat/completions" and seen["headers"]["Authorization"] == f"Bearer {fake.api_key}"
    assert seen["body"] == {"model": TURBOS, "messages": MESSAGES, "temperature": 0.5, "enable_enhancement": True}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 7)
    assert log.quota == pricing.settle_quota(pricing.resolve_price(TURBOS), 11, 7)


async def test_an_api_key_stream_and_its_usage(gateway, tencent) -> None:
    fake = await tencent()
    await api_key_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=TURBOS, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 7)
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 7)
    assert log.quota == pricing.settle_quota(pricing.resolve_price(TURBOS), 11, 7)


async def test_an_api_key_tools_both_ways(gateway, tencent) -> None:
    fake = await tencent(tool_call={"Name": "get_weather", "Arguments": '{"city":"Paris"}'})
    await api_key_channel(gateway, fake)
    token = await make_key(await rich_user())
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=TURBOS, messages=MESSAGES, tools=tools)
        call = answer.choices[0].message.tool_calls[0]
        assert (call.id, call.function.name, call.function.arguments) == ("call-1", "get_weather", '{"city":"Paris"}')
        _, calls = await stream_chat(client, model=TURBOS, messages=MESSAGES, tools=tools)
        history = [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
        text, chunks = await stream_chat(client, model=TURBOS, messages=history, tools=tools)
    assert answer.choices[0].finish_reason == "tool_calls" and finish_reasons(calls) == ["tool_calls"]
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    assert fake.seen[0]["body"]["tools"] == tools


async def test_an_api_key_refused_disables_the_channel(gateway, tencent) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    fake = await tencent()
    channel = await api_key_channel(gateway, fake, key="sk-revoked")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="Incorrect API key"):
            await client.chat.completions.create(model=TURBOS, messages=MESSAGES)
    assert relay_of(gateway).index.get(channel.id) is None


async def test_an_api_key_turns_out_of_order_are_the_clients(gateway, tencent) -> None:
    fake = await tencent()
    await api_key_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="交替出现"):
            await client.chat.completions.create(model=TURBOS, messages=[{"role": "assistant", "content": "Hi"}])


async def test_an_api_key_embeddings(gateway, tencent) -> None:
    fake = await tencent()
    await api_key_channel(gateway, fake, models="hunyuan-embedding")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="hunyuan-embedding", input=["one", "two"])
    assert [d.embedding for d in result.data] == [[0.125, 0.0], [0.125, 1.0]]
    assert fake.seen[0]["path"] == "/v1/embeddings"
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (8, 0)
