"""Zhipu GLM channels (type 26, `/api/paas/v4`) through the official openai SDK against a strict fake
(tests/upstream/providers/zhipu/fake_zhipu.py): the console's API key sent as it is, thinking, tools, embeddings,
Zhipu's finish reasons and business error codes."""
from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.providers.zhipu import key_problem
from models import Channel
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, make_key, relay_of, rich_user
from tests.upstream.providers.kit import finish_reasons, sdk, settled_log, stream_chat
from tests.upstream.providers.zhipu.fake_zhipu import KEY, REPLY_PIECES, THOUGHT_PIECES, USAGE, FakeZhipu

MODEL = "glm-4.6"
MESSAGES: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
BILLED = (USAGE["prompt_tokens"], USAGE["completion_tokens"])
TOOLS: list[Any] = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                           "parameters": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}]


# GLM-4.6 at ¥2 / ¥8 per million tokens, embedding-3 at ¥0.5 (bigmodel.cn/pricing): prices the
# operator sets, as the shipped table has none for them.
PRICES = {"ModelRatio": {MODEL: 0.1429, "embedding-3": 0.0357}, "CompletionRatio": {MODEL: 4}}


@pytest.fixture(autouse=True)
async def prices(gateway) -> None:
    for name, table in PRICES.items():
        await gateway.server.app[keys.OPTIONS].update(name, orjson.dumps(table).decode())


@pytest.fixture
async def zhipu(aiohttp_server):
    async def start(**behaviour) -> FakeZhipu:
        fake = FakeZhipu(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


async def zhipu_channel(gateway, fake: FakeZhipu, **fields) -> Channel:
    return await add_channel(gateway, None, models=fields.pop("models", MODEL), type=int(ChannelType.ZHIPU_V4),
                             base_url=fake.url, key=fields.pop("key", KEY), **fields)


def billed(gateway, log) -> None:
    assert (log.prompt_tokens, log.completion_tokens) == BILLED
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], MODEL)
    assert log.quota == pricing.settle_quota(price, *BILLED) > 0


def test_the_key_is_one_api_key() -> None:
    assert key_problem(KEY) is None and key_problem("c0ffee-plain-key") is None
    assert key_problem("two words") == "channel_key_zhipu_v4" and key_problem("  ") == "channel_key_zhipu_v4"


async def test_the_key_itself_as_bearer_with_thinking_and_billing(gateway, zhipu) -> None:
    fake = await zhipu()
    await zhipu_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.6,
                                                      extra_body={"thinking": {"type": "enabled"}})
    message = answer.choices[0].message
    assert message.content == "".join(REPLY_PIECES)
    assert message.model_extra["reasoning_content"] == "".join(THOUGHT_PIECES)
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == BILLED
    seen = fake.seen[0]
    assert seen["headers"]["Authorization"] == f"Bearer {KEY}"
    assert seen["body"] == {"model": MODEL, "messages": MESSAGES, "temperature": 0.6, "thinking": {"type": "enabled"}}
    billed(gateway, await settled_log(gateway, user))


async def test_stream_with_reasoning_and_the_last_chunks_usage(gateway, zhipu) -> None:
    fake = await zhipu()
    await zhipu_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    thoughts = [c.choices[0].delta.model_extra.get("reasoning_content") for c in chunks if c.choices]
    assert "".join(t for t in thoughts if t) == "".join(THOUGHT_PIECES)
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == BILLED
    assert "stream_options" not in fake.seen[0]["body"]
    billed(gateway, await settled_log(gateway, user))


async def test_reasoning_effort_becomes_the_thinking_switch(gateway, zhipu) -> None:
    fake = await zhipu()
    await zhipu_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, reasoning_effort="none")
        await client.chat.completions.create(model=MODEL, messages=MESSAGES, reasoning_effort="high")
    assert "reasoning_content" not in (answer.choices[0].message.model_extra or {})
    sent = [s["body"] for s in fake.seen]
    assert [b["thinking"] for b in sent] == [{"type": "disabled"}, {"type": "enabled"}]
    assert not any("reasoning_effort" in b for b in sent)


async def test_tools_both_ways(gateway, zhipu) -> None:
    fake = await zhipu(tool_call={"name": "get_weather", "arguments": '{"city":"Beijing"}'})
    await zhipu_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS,
                                                      tool_choice="auto")
        call = answer.choices[0].message.tool_calls[0]
        assert answer.choices[0].finish_reason == "tool_calls"
        assert (call.id, call.function.name, orjson.loads(call.function.arguments)) == (
            "call_9f8e7d", "get_weather", {"city": "Beijing"})
        _, calls = await stream_chat(client, model=MODEL, messages=MESSAGES, tools=TOOLS)
        history = [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
        text, chunks = await stream_chat(client, model=MODEL, messages=history, tools=TOOLS)
    assert finish_reasons(calls) == ["tool_calls"]
    streamed = [t for c in calls if c.choices for t in c.choices[0].delta.tool_calls or ()]
    assert [(t.id, t.function.name) for t in streamed] == [("call_9f8e7d", "get_weather")]
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    assert fake.seen[0]["body"]["tools"] == TOOLS and fake.seen[0]["body"]["tool_choice"] == "auto"
    assert fake.seen[2]["body"]["messages"][-1] == {"role": "tool", "tool_call_id": "call_9f8e7d", "content": "18°C"}


async def test_a_sensitive_finish_is_content_filter_and_network_error_an_error(gateway, zhipu) -> None:
    fake = await zhipu(finish="sensitive")
    await zhipu_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        _, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES)
        assert answer.choices[0].finish_reason == "content_filter"
        assert finish_reasons(chunks) == ["content_filter"]
        fake.finish = "network_error"
        with pytest.raises(openai.APIStatusError, match="network_error") as caught:
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert caught.value.status_code == 502


@pytest.mark.parametrize(("fail", "status", "error", "said"), [
    ((429, "1113", "您的账户已欠费，请充值后重试。"), 403, openai.PermissionDeniedError, True),
    ((400, "1261", "Prompt 超长"), 400, openai.BadRequestError, True),
    # a saturated upstream is answered in the gateway's own words
    ((429, "1302", "您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"), 429, openai.RateLimitError, False),
])
async def test_business_codes_mapped(gateway, zhipu, fail, status, error, said) -> None:
    fake = await zhipu(fail=fail)
    await zhipu_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(error) as caught:
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert caught.value.status_code == status
    if said:
        assert fail[2] in caught.value.message and caught.value.code == fail[1]


async def test_an_unknown_model_is_the_channels_404(gateway, zhipu) -> None:
    fake = await zhipu()
    await zhipu_channel(gateway, fake, model_mapping=orjson.dumps({MODEL: "glm-3-turbo"}).decode())
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.NotFoundError, match="模型不存在"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert fake.seen[0]["body"]["model"] == "glm-3-turbo"


async def test_a_refused_key_disables_the_channel(gateway, zhipu) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    fake = await zhipu()
    channel = await zhipu_channel(gateway, fake, key="5f0c3e7d.revoked")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="Authorization Token非法"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert fake.seen[0]["headers"]["Authorization"] == "Bearer 5f0c3e7d.revoked"
    assert relay_of(gateway).index.get(channel.id) is None


async def test_embeddings_and_the_channel_test(gateway, zhipu, root: ApiClient) -> None:
    fake = await zhipu()
    channel = await zhipu_channel(gateway, fake, models=f"{MODEL},embedding-3")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="embedding-3", input=["one", "two"])
    assert [d.embedding for d in result.data] == [[0.5, 0.0], [0.5, 1.0]]
    assert fake.seen[0]["path"] == "/api/paas/v4/embeddings"
    log = await settled_log(gateway, user)
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], "embedding-3")
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (6, 0, pricing.settle_quota(price, 6, 0))
    body = await root.get(f"/api/channel/test/{channel.id}?model={MODEL}")
    assert body["success"], body
    assert fake.seen[-1]["path"] == "/api/paas/v4/chat/completions"
