"""Baidu Qianfan V2 channels (type 46) through the official openai SDK against a fake Qianfan V2:
chat under /v2 with the usage Qianfan reports (in the last chunk of a stream, which the gateway asks
for), tools, embeddings and rerank, the optional appid header, and Qianfan's errors answered for
whose fault they are."""
from __future__ import annotations

import base64
import struct
from typing import Any

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.providers.qianfan import key_problem, other_problem
from models import Channel
from models.enums import ChannelStatus
from tests.relay.fakes import add_channel, make_key, relay_of, rich_user
from tests.upstream.providers.kit import finish_reasons, sdk, settled_log, stream_chat
from tests.upstream.providers.qianfan.fake_qianfan import KEY, PIECES, USAGE, FakeQianfan

MODEL = "ernie-4.5-turbo-128k"
MESSAGES: Any = [{"role": "system", "content": "简短回答。"}, {"role": "user", "content": "你好"}]
TOOLS: Any = [{"type": "function", "function": {"name": "get_current_weather", "description": "天气查询工具",
                                           "parameters": {"type": "object", "required": ["location"],
                                                          "properties": {"location": {"type": "string"}}}}}]


# Qianfan V2's model IDs are not in the default price table: the operator prices them (RMB per
# million tokens: 0.8 in / 3.2 out for ernie-4.5-turbo-128k, as ratios of $0.002 per 1K).
RATIOS = {MODEL: 0.4, "ernie-gone-8k": 0.4, "embedding-v1": 0.25, "bce-reranker-base": 0.25}


@pytest.fixture
async def qianfan(gateway, aiohttp_server) -> FakeQianfan:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelRatio", orjson.dumps(RATIOS).decode())
    await options.update("CompletionRatio", orjson.dumps({MODEL: 4}).decode())
    fake = FakeQianfan()
    fake.server = await aiohttp_server(fake.app())
    return fake


def quota(gateway, model: str, prompt: int, completion: int) -> int:
    return pricing.settle_quota(pricing.resolve_configured(gateway.server.app[keys.OPTIONS], model), prompt,
                                completion)


async def qianfan_channel(gateway, fake: FakeQianfan, models: str = MODEL, **fields) -> Channel:
    return await add_channel(gateway, None, models=models, type=int(ChannelType.QIANFAN),
                             base_url=fields.pop("base_url", fake.url), key=fields.pop("key", KEY), **fields)


async def test_chat_billed_by_qianfans_usage(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0,
                                                      max_tokens=64, seed=7)
    assert answer.choices[0].message.content == "".join(PIECES) and answer.choices[0].finish_reason == "stop"
    seen = qianfan.seen[0]
    assert seen["path"] == "/v2/chat/completions" and "appid" not in seen["headers"]
    assert seen["body"] == {"model": MODEL, "messages": MESSAGES, "temperature": 0, "max_tokens": 64, "seed": 7}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (USAGE["prompt_tokens"], USAGE["completion_tokens"])
    assert log.quota == quota(gateway, MODEL, 11, 15)


async def test_stream_asks_for_the_usage_chunk_and_bills_it(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES)
    assert text == "".join(PIECES) and finish_reasons(chunks) == ["stop"]
    assert qianfan.seen[0]["body"]["stream_options"] == {"include_usage": True}
    assert all(c.choices for c in chunks)  # the client did not ask for the usage chunk: not forwarded
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 15)
    assert log.quota == quota(gateway, MODEL, 11, 15)


async def test_stream_usage_chunk_forwarded_when_asked(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(PIECES)
    assert not chunks[-1].choices and (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 15)
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 15)
    assert log.quota == quota(gateway, MODEL, 11, 15)


async def test_tools_round_trip(gateway, qianfan) -> None:
    qianfan.tool_call = {"name": "get_current_weather", "arguments": {"location": "上海市"}}
    await qianfan_channel(gateway, qianfan)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS,
                                                      tool_choice="auto")
        call: Any = (answer.choices[0].message.tool_calls or [])[0]
        _, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES, tools=TOOLS)
        streamed = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
        qianfan.tool_call = None
        history = [*MESSAGES, {"role": "assistant", "content": "", "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": '{"temperature": "25"}'}]
        final = await client.chat.completions.create(model=MODEL, messages=history, tools=TOOLS)
    assert answer.choices[0].finish_reason == "tool_calls" and finish_reasons(chunks) == ["tool_calls"]
    assert (call.function.name, orjson.loads(call.function.arguments)) == ("get_current_weather",
                                                                            {"location": "上海市"})
    assert streamed[0].id == call.id and streamed[0].function.name == "get_current_weather"
    assert qianfan.seen[0]["body"]["tools"] == TOOLS and qianfan.seen[0]["body"]["tool_choice"] == "auto"
    assert qianfan.seen[2]["body"]["messages"][-1] == {"role": "tool", "tool_call_id": call.id,
                                                       "content": '{"temperature": "25"}'}
    assert final.choices[0].message.content == "".join(PIECES)


async def test_embeddings_at_v2(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan, models="embedding-v1")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.embeddings.create(model="embedding-v1", input=["白色T恤", "黑色"])
    # The SDK asks for base64 (its default); Qianfan gives floats only: asked as float, encoded back.
    assert [d.embedding for d in answer.data] == [[0.25, -0.5, 0.0], [0.25, -0.5, 1.0]]
    assert qianfan.seen[0]["path"] == "/v2/embeddings"
    assert qianfan.seen[0]["body"] == {"model": "embedding-v1", "input": ["白色T恤", "黑色"],
                                       "encoding_format": "float"}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (6, 0)  # Qianfan's usage.prompt_tokens
    assert log.quota == quota(gateway, "embedding-v1", 6, 0)
    raw = await gateway.post("/v1/embeddings", headers={"Authorization": f"Bearer sk-{token.key}"},
                             json={"model": "embedding-v1", "input": "黑色", "encoding_format": "base64"})
    vector = (await raw.json())["data"][0]["embedding"]
    assert struct.unpack("<3f", base64.b64decode(vector)) == (0.25, -0.5, 0.0)  # OpenAI's float32 encoding


async def test_rerank_at_v2(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan, models="bce-reranker-base")
    user = await rich_user()
    token = await make_key(user)
    body = {"model": "bce-reranker-base", "query": "上海天气", "documents": ["上海气候", "北京美食"], "top_n": 1}
    resp = await gateway.post("/v1/rerank", json=body, headers={"Authorization": f"Bearer sk-{token.key}"})
    answer = await resp.json()
    assert resp.status == 200, answer
    assert answer["results"] == [{"document": "上海气候", "relevance_score": 1.0, "index": 0}]
    assert qianfan.seen[0]["path"] == "/v2/rerank" and qianfan.seen[0]["body"] == body
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (11, 0)  # Qianfan's usage.prompt_tokens
    assert log.quota == quota(gateway, "bce-reranker-base", 11, 0)


async def test_appid_from_other_and_base_url_ending_in_v2(gateway, qianfan) -> None:
    qianfan.appid = "app-Mu4xq6"
    await qianfan_channel(gateway, qianfan, other="app-Mu4xq6", base_url=f"{qianfan.url}/v2/")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert answer.choices[0].message.content == "".join(PIECES)
    assert qianfan.seen[0]["path"] == "/v2/chat/completions" and qianfan.seen[0]["headers"]["appid"] == "app-Mu4xq6"


async def test_a_refused_key_disables_the_channel(gateway, qianfan) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    broken = await qianfan_channel(gateway, qianfan, key="bce-v3/ALTAK-revoked/0000")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="IAM Certification failed") as raised:
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert raised.value.code == "invalid_iam_token"
    assert relay_of(gateway).index.get(broken.id) is None  # disabled at once


async def test_a_model_the_account_cannot_use_is_not_found_and_keeps_the_channel(gateway, qianfan) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    channel = await qianfan_channel(gateway, qianfan, models="ernie-gone-8k")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.NotFoundError, match="No permission to use the model") as raised:
            await client.chat.completions.create(model="ernie-gone-8k", messages=MESSAGES)
    assert raised.value.code == "model_not_found"
    assert qianfan.seen[0]["body"]["model"] == "ernie-gone-8k"
    assert (await Channel.get(id=channel.id)).status == ChannelStatus.ENABLED
    assert relay_of(gateway).index.get(channel.id) is not None


async def test_rate_limit_and_bad_request_pass_through(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="blank") as bad:
            await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "  "}])
        qianfan.rate_limited = True
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert bad.value.code == "invalid_messages" and len(qianfan.seen) == 2


async def test_modes_qianfan_has_not_are_refused_locally(gateway, qianfan) -> None:
    await qianfan_channel(gateway, qianfan, models="dall-e-3")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.APIStatusError) as raised:
            await client.images.generate(model="dall-e-3", prompt="a cat")
    assert raised.value.status_code == 501 and qianfan.seen == []


def test_key_and_appid_checks() -> None:
    assert key_problem(KEY) is None
    assert key_problem("bce-v3/ALTAKS-abc/def0123") is None
    assert key_problem("ak123|sk456") == "channel_key_qianfan"  # V1's APIKey|SecretKey pair
    assert key_problem("sk-abc") == "channel_key_qianfan"
    assert other_problem("") is None and other_problem("app-Mu4xq6") is None
    assert other_problem("app id") == "channel_other_qianfan_appid"
