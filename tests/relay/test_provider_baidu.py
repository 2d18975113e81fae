# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Baidu ERNIE channels (type 15) through the official openai SDK against a fake Qianfan API: the
access token exchanged once from `ak|sk` and reused, refreshed before it expires, exchanged again
when Baidu revokes it; answers, streams, function calls and embeddings billed to the unit; a
refused key disables the channel."""
from __future__ import annotations

import aiohttp
import openai
import pytest

from api import keys
from api.relay.base import RelayMeta, RelayMode, UpstreamContext
from api.relay.catalogue import ChannelType
from api.relay.credentials import CredentialCache
from api.relay.providers.baidu import BaiduAdaptor
from api.services import pricing
from models import Channel
from tests.helpers import ApiClient, eventually
from tests.relay.fake_baidu import REPLY_PIECES, FakeBaidu
from tests.relay.fakes import add_channel, drain, gateway, make_key, relay_of, rich_user  # noqa: F401
from tests.relay.provider_kit import consume_logs, finish_reasons, sdk, settled_log, stream_chat

MODEL = "ERNIE-4.0-8K"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                            "parameters": {"type": "object",
                                                           "properties": {"city": {"type": "string"}}}}}


@pytest.fixture
async def baidu(aiohttp_server):
    async def start(**behaviour) -> FakeBaidu:
        fake = FakeBaidu(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


async def baidu_channel(gateway, fake: FakeBaidu, **fields) -> Channel:
    return await add_channel(gateway, None, models=fields.pop("models", MODEL), type=int(ChannelType.BAIDU),
                             base_url=fake.url, key=fields.pop("key", f"{fake.ak}|{fake.sk}"), **fields)


async def test_answer_shape_token_reused_and_billed(gateway, baidu) -> None:
    fake = await baidu()
    await baidu_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.3,
                                                      max_tokens=64, stop=["END"], user="u-1")
        again = await client.chat.completions.create(model=MODEL, messages=MESSAGES[1:])
    assert answer.choices[0].message.content == "".join(REPLY_PIECES) == again.choices[0].message.content
    assert answer.choices[0].finish_reason == "stop" and answer.model == MODEL
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (14, 6)
    assert fake.exchanges == 1  # one exchange, the token reused by the second request
    seen = fake.seen[0]
    assert seen["endpoint"] == "completions_pro" and seen["query"]["access_token"] == fake.issued[0]
    assert seen["body"] == {"messages": [{"role": "user", "content": "Say hello."}], "system": "Be brief.",
                            "temperature": 0.3, "max_output_tokens": 64, "stop": ["END"], "user_id": "u-1"}
    await drain(gateway)
    price = pricing.resolve_price(MODEL)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (14, 6, pricing.settle_quota(price, 14, 6))] * 2


async def test_stream_is_billed_by_its_final_usage(gateway, baidu) -> None:
    fake = await baidu()
    await baidu_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    assert chunks[-1].usage.prompt_tokens == 14 and chunks[-1].usage.completion_tokens == 6
    assert fake.seen[0]["body"]["stream"] is True
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (14, 6)
    assert log.quota == pricing.settle_quota(pricing.resolve_price(MODEL), 14, 6)


async def test_function_calls_both_ways(gateway, baidu) -> None:
    fake = await baidu(call={"name": "get_weather", "arguments": '{"city": "Paris"}', "thoughts": "look it up"})
    await baidu_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=[WEATHER])
        call = answer.choices[0].message.tool_calls[0]
        assert (call.function.name, call.function.arguments) == ("get_weather", '{"city": "Paris"}')
        assert answer.choices[0].finish_reason == "tool_calls"
        history = [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
        _, chunks = await stream_chat(client, model=MODEL, messages=history, tools=[WEATHER])
    assert fake.seen[0]["body"]["functions"] == [{"name": "get_weather", "description": "Weather of a city",
                                                  "parameters": WEATHER["function"]["parameters"]}]
    assert fake.seen[1]["body"]["messages"][1:] == [
        {"role": "assistant", "content": "",
         "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"role": "function", "name": "get_weather", "content": "18°C"}]
    streamed = [c for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    assert streamed[0].choices[0].delta.tool_calls[0].function.name == "get_weather"
    assert finish_reasons(chunks) == ["tool_calls"]


async def test_a_refused_key_disables_the_channel(gateway, baidu) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    fake = await baidu()
    channel = await baidu_channel(gateway, fake, key="ak-good|sk-wrong")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="unknown client id"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert relay_of(gateway).index.get(channel.id) is None
    assert fake.seen == []  # nothing was asked without a token
    await disable_queued(gateway)


async def disable_queued(gateway) -> None:
    """The channel's auto-disable was handed to the workers."""
    store = gateway.server.app[keys.STORE]

    async def queued() -> bool:
        return await store.redis.llen(f"{store.prefix}dramatiq:relay") == 1

    await eventually(queued, timeout=10)


async def test_a_revoked_token_is_exchanged_again(gateway, baidu) -> None:
    """Baidu refuses a token it revoked (error 110): that request fails (retried on another
    channel when there is one), the token is dropped, and the next request gets a new one."""
    fake = await baidu()
    await baidu_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        fake.revoked.add(fake.issued[0])
        with pytest.raises(openai.InternalServerError, match="Access token invalid"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert answer.choices[0].message.content == "".join(REPLY_PIECES)
    assert fake.exchanges == 2 and fake.seen[-1]["query"]["access_token"] == fake.issued[1]


async def test_the_token_is_refreshed_before_it_expires(aiohttp_client, baidu) -> None:
    fake = await baidu(expires_in=3600)
    now = [1_000_000.0]
    cache = CredentialCache(refresh_margin=300, clock=lambda: now[0])
    meta = RelayMeta(1, int(ChannelType.BAIDU), f"{fake.ak}|{fake.sk}", fake.url, requested_model=MODEL,
                     mode=RelayMode.CHAT)
    async with aiohttp.ClientSession() as http:
        ctx = UpstreamContext(http, cache)

        async def url_token() -> str:
            adaptor = BaiduAdaptor(meta)
            request = adaptor.build_request(RelayMode.CHAT, adaptor.convert_request({"messages": MESSAGES}))
            await adaptor.authorize(request, ctx)
            return request.url.rsplit("access_token=", 1)[1]

        assert await url_token() == fake.issued[0]
        now[0] += 3600 - 200  # inside the refresh margin: the current token still serves…
        assert await url_token() == fake.issued[0]
        await eventually(lambda: _issued(fake, 2), timeout=5)  # …while a new one is fetched
        assert await url_token() == fake.issued[1] and fake.exchanges == 2


async def _issued(fake: FakeBaidu, n: int) -> bool:
    return len(fake.issued) >= n


async def test_embeddings_and_the_channel_test(gateway, baidu, root: ApiClient) -> None:
    fake = await baidu()
    channel = await baidu_channel(gateway, fake, models=f"{MODEL},Embedding-V1")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="Embedding-V1", input=["one", "two"])
    assert [d.embedding for d in result.data] == [[0.5, 0.0], [0.5, 1.0]]
    assert fake.seen[0]["endpoint"] == "embedding-v1" and fake.seen[0]["body"] == {"input": ["one", "two"]}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.quota) == (6, pricing.settle_quota(pricing.resolve_price("Embedding-V1"), 6, 0))
    body = await root.get(f"/api/channel/test/{channel.id}?model={MODEL}")
    assert body["success"], body
    assert fake.seen[-1]["endpoint"] == "completions_pro"
