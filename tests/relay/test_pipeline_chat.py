# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Chat completions through the official openai SDK: answers, streams, and the exact bill."""
from __future__ import annotations

import asyncio

import openai
import orjson

from api.services.billing import pricing
from api.upstream.tokenizer import count_chat_request, count_text
from models import Channel, Log, QuotaData, Token, User
from models.enums import LogType
from tests.helpers import both_databases
from tests.relay.fakes import (  # noqa: F401
    REPLY,
    add_channel,
    drain,
    gateway,
    live_balance,
    make_key,
    rich_user,
    upstreams,
)

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}]


def sdk(gateway, token: Token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def sync_sdk(gateway, token: Token) -> openai.OpenAI:
    return openai.OpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def gpt4_quota(prompt: int, completion: int) -> int:
    # gpt-4: model ratio 15, completion ratio 2, group ratio 1 → round((P + 2C) × 15)
    return pricing.round_half_up((prompt + completion * 2) * 15)


@both_databases
async def test_chat_non_stream_answer_and_exact_bill(gateway, upstreams) -> None:
    fake = await upstreams(usage=(13, 7))
    channel = await add_channel(gateway, fake, models="gpt-4")
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=100_000, unlimited=False)
    async with sdk(gateway, token) as client:
        result = await client.chat.completions.with_raw_response.create(model="gpt-4", messages=MESSAGES)
    completion = result.parse()
    assert completion.choices[0].message.content == REPLY
    assert completion.usage.prompt_tokens == 13 and completion.usage.completion_tokens == 7
    request_id = result.headers["X-Oneapi-Request-Id"]
    assert request_id
    seen = fake.seen[0]
    assert seen.headers["Authorization"] == "Bearer sk-upstream-secret"
    assert "stream_options" not in seen.body

    quota = gpt4_quota(13, 7)
    assert quota == 405
    # Live balances are exact at once; the database follows when the worker applies the record.
    assert await live_balance(gateway, user.id) == 1_000_000 - quota
    assert await live_balance(gateway, user.id, token.id) == 100_000 - quota
    assert await drain(gateway) == 1
    assert await drain(gateway) == 0  # nothing left, nothing applied twice
    user = await User.get(id=user.id)
    assert (user.quota, user.used_quota, user.request_count) == (1_000_000 - quota, quota, 1)
    token = await Token.get(id=token.id)
    assert (token.remain_quota, token.used_quota) == (100_000 - quota, quota)
    assert (await Channel.get(id=channel.id)).used_quota == quota
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.model_name, log.quota, log.prompt_tokens, log.completion_tokens) == ("gpt-4", quota, 13, 7)
    assert log.request_id.startswith(request_id) and log.token_name == "test key" and log.channel_id == channel.id
    assert log.is_stream is False and log.username == "alice" and log.group == "default"
    other = orjson.loads(log.other)
    assert other["model_ratio"] == 15 and other["completion_ratio"] == 2 and other["group_ratio"] == 1
    assert other["model_price"] == -1 and other["admin_info"]["use_channel"] == [channel.id]
    assert other["upstream_model_name"] == "gpt-4" and other["is_model_mapped"] is False
    assert other["frt"] > 0
    data = await QuotaData.get(user_id=user.id, model_name="gpt-4")
    assert (data.count, data.quota, data.token_used) == (1, quota, 20)
    assert data.created_at % 3600 == 0


async def test_chat_stream_sync_sdk_hides_the_usage_chunk(gateway, upstreams) -> None:
    fake = await upstreams(usage=(21, 16))
    await add_channel(gateway, fake, models="gpt-4")
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)

    def call() -> list:
        with sync_sdk(gateway, token) as client:
            return list(client.chat.completions.create(model="gpt-4", messages=MESSAGES, stream=True))

    chunks = await asyncio.to_thread(call)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == REPLY
    assert all(c.choices for c in chunks)  # the usage-only chunk the gateway asked for is not shown
    assert fake.seen[0].body["stream_options"] == {"include_usage": True}
    assert await drain(gateway) == 1
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (21, 16, gpt4_quota(21, 16))
    assert log.is_stream is True and "incomplete" not in orjson.loads(log.other)
    assert (await User.get(id=user.id)).quota == 1_000_000 - gpt4_quota(21, 16)


async def test_chat_stream_with_client_usage_and_local_count(gateway, upstreams) -> None:
    """A compatible upstream (Moonshot) gets no stream_options and reports no usage: the gateway
    counts the prompt and the streamed text itself and sends the usage chunk the client asked for."""
    fake = await upstreams(usage=None)
    await add_channel(gateway, fake, models="moonshot-v1-8k", type=25)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model="moonshot-v1-8k", messages=MESSAGES, stream=True,
                                                      stream_options={"include_usage": True})
        chunks = [c async for c in stream]
    assert "stream_options" not in fake.seen[0].body
    prompt = count_chat_request({"messages": MESSAGES})
    completion = count_text(REPLY)
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == prompt
    assert chunks[-1].usage.completion_tokens == completion
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == REPLY
    await drain(gateway)
    price = pricing.resolve_price("moonshot-v1-8k")
    expected = pricing.settle_quota(price, prompt, completion)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (prompt, completion, expected)


async def test_non_stream_without_usage_is_counted_locally(gateway, upstreams) -> None:
    fake = await upstreams(usage=None)
    await add_channel(gateway, fake, models="gpt-4")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        completion = await client.chat.completions.create(model="gpt-4", messages=MESSAGES)
    assert completion.choices[0].message.content == REPLY
    await drain(gateway)
    prompt, output = count_chat_request({"messages": MESSAGES}), count_text(REPLY)
    log = await Log.get(user_id=user.id, type=LogType.CONSUME)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (prompt, output, gpt4_quota(prompt, output))
