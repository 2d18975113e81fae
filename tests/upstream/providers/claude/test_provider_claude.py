# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Anthropic Claude channels (type 14) through the official openai SDK against a fake Messages API:
answers, streams, tools, images, thinking, JSON mode, cache usage billed to the unit, errors."""
from __future__ import annotations

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_chat_request, count_text
from models import Channel, Log
from models.enums import LogType
from tests.helpers import ApiClient, eventually
from tests.relay.fakes import (  # noqa: F401
    add_channel,
    drain,
    gateway,
    live_balance,
    make_key,
    relay_of,
    rich_user,
)
from tests.upstream.providers.claude.fake_anthropic import REPLY, THINKING, FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import sign

MODEL = "claude-3-5-sonnet-20241022"  # ratio 1.5, completion ratio 5, cache read 0.1, cache write 1.25
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


@pytest.fixture
async def claude(aiohttp_server):
    async def start(**behaviour) -> FakeClaude:
        fake = FakeClaude(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


async def claude_channel(gateway, fake: FakeClaude, **fields) -> Channel:
    return await add_channel(gateway, None, models=fields.pop("models", MODEL), type=int(ChannelType.ANTHROPIC),
                             base_url=fake.url, key=fields.pop("key", fake.key), **fields)


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def quota(prompt: int, completion: int, read: int = 0, write: int = 0) -> int:
    price = pricing.resolve_price(MODEL)
    return pricing.settle_quota(price, prompt, completion, cached_tokens=read, cache_creation_tokens=write)


async def consume_logs(user) -> list[Log]:
    return await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")


async def test_answer_request_shape_and_cache_usage_billed_to_the_unit(gateway, claude) -> None:
    usage = {"input_tokens": 21, "output_tokens": 9, "cache_read_input_tokens": 100,
             "cache_creation_input_tokens": 50}
    fake = await claude(usage=usage)
    channel = await claude_channel(gateway, fake)
    user = await rich_user(quota=1_000_000)
    token = await make_key(user, remain_quota=100_000, unlimited=False)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0, top_p=0.5,
                                                      stop=["END"], user="u-1")
    assert answer.choices[0].message.content == REPLY and answer.choices[0].finish_reason == "stop"
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (171, 9)
    assert answer.usage.prompt_tokens_details.cached_tokens == 100
    seen = fake.seen[0]
    assert seen["headers"]["x-api-key"] == fake.key and "Authorization" not in seen["headers"]
    assert seen["body"] == {"model": MODEL, "system": [{"type": "text", "text": "You are terse."}], "max_tokens": 8192,
                            "temperature": 0,
                            "top_p": 0.5, "stop_sequences": ["END"], "metadata": {"user_id": "u-1"},
                            "messages": [{"role": "user", "content": [{"type": "text", "text": "Say hello."}]}]}
    # (21 + 100 × 0.1 + 50 × 1.25 + 9 × 5) × 1.5 = 207.75 → 208
    assert quota(171, 9, 100, 50) == 208
    assert await live_balance(gateway, user.id) == 1_000_000 - 208
    assert await drain(gateway) == 1
    log = (await consume_logs(user))[0]
    assert (log.quota, log.prompt_tokens, log.completion_tokens, log.channel_id) == (208, 171, 9, channel.id)
    other = orjson.loads(log.other)
    assert (other["cache_tokens"], other["cache_ratio"]) == (100, 0.1)
    assert (other["cache_creation_tokens"], other["cache_creation_ratio"]) == (50, 1.25)


async def test_stream_with_usage_chunk_and_exact_bill(gateway, claude) -> None:
    fake = await claude()
    await claude_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                                      stream_options={"include_usage": True})
        chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == REPLY
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage.prompt_tokens == 21 and chunks[-1].usage.completion_tokens == 9
    assert fake.seen[0]["body"]["stream"] is True
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.quota, log.prompt_tokens, log.completion_tokens, log.is_stream) == (quota(21, 9), 21, 9, True)


async def test_tool_call_and_the_follow_up_turn_streamed_and_not(gateway, claude) -> None:
    fake = await claude(reply="", tool={"id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}})
    await claude_channel(gateway, fake)
    token = await make_key(await rich_user())
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=ask, tools=TOOLS, tool_choice="required")
        stream = await client.chat.completions.create(model=MODEL, messages=ask, tools=TOOLS, stream=True)
        deltas = [c.choices[0].delta for c in [c async for c in stream] if c.choices]
        call = answer.choices[0].message.tool_calls[0]
        follow = ask + [answer.choices[0].message.model_dump(exclude_none=True),
                        {"role": "tool", "tool_call_id": call.id, "content": "18°C, sunny"}]
        fake.tool = None
        await client.chat.completions.create(model=MODEL, messages=follow, tools=TOOLS)
    assert answer.choices[0].finish_reason == "tool_calls"
    assert (call.id, call.function.name, orjson.loads(call.function.arguments)) == ("toolu_01", "get_weather",
                                                                                    {"city": "Paris"})
    assert fake.seen[0]["body"]["tools"] == [{"name": "get_weather", "description": "Weather of a city",
                                              "input_schema": TOOLS[0]["function"]["parameters"]}]
    assert fake.seen[0]["body"]["tool_choice"] == {"type": "any"}
    streamed = [d.tool_calls[0] for d in deltas if d.tool_calls]
    assert streamed[0].id == "toolu_01" and streamed[0].function.name == "get_weather"
    assert orjson.loads("".join(t.function.arguments or "" for t in streamed)) == {"city": "Paris"}
    assert {t.index for t in streamed} == {0}
    assert fake.seen[2]["body"]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "get_weather",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C, sunny"}]},
    ]


async def test_images_budget_thinking_and_json_output(gateway, claude) -> None:
    """Claude Sonnet 4.5 thinks with a budget (never adaptive), above which max_tokens is raised;
    temperature is left out while it thinks (said in X-Gateway-Dropped); a JSON schema becomes
    output_config.format, a JSON object an instruction in the system prompt."""
    fake = await claude()
    model = "claude-sonnet-4-5-20250929"
    await claude_channel(gateway, fake, models=model)
    token = await make_key(await rich_user())
    content = [{"type": "text", "text": "What is this?"},
               {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
               {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    async with sdk(gateway, token) as client:
        raw = await client.chat.completions.with_raw_response.create(
            model=model, messages=[{"role": "user", "content": content}], reasoning_effort="low", temperature=0.3,
            max_tokens=100)
        answer = raw.parse()
        await client.chat.completions.create(model=model, messages=MESSAGES, response_format={
            "type": "json_schema", "json_schema": {"name": "person", "schema": schema}})
        await client.chat.completions.create(model=model, messages=MESSAGES, response_format={"type": "json_object"})
        stream = await client.chat.completions.create(model=model, messages=MESSAGES, stream=True,
                                                      reasoning_effort="minimal")
        reasoning = "".join([(c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                             async for c in stream if c.choices])
    body = fake.seen[0]["body"]
    assert body["messages"][0]["content"][1:] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in body
    assert body["max_tokens"] > 2048  # the budget must stay below max_tokens
    assert raw.headers["X-Gateway-Dropped"] == "temperature"
    message = answer.choices[0].message
    assert message.model_extra["reasoning_content"] == THINKING and message.content == REPLY
    assert message.model_extra["thinking_blocks"] == [{"type": "thinking", "thinking": THINKING,
                                                       "signature": sign(THINKING)}]
    assert fake.seen[1]["body"]["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    assert fake.seen[2]["body"]["system"][-1]["text"] == "Respond with a single valid JSON object and nothing else."
    assert fake.seen[3]["body"]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert reasoning == THINKING


async def test_stream_cut_before_usage_bills_claudes_prompt(gateway, claude) -> None:
    """Claude said its prompt count in `message_start`; the stream is cut before the final usage:
    the prompt is billed on Claude's count, the output on what was delivered."""
    fake = await claude(cut_after=2)
    await claude_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
        pieces: list[str] = []
        with pytest.raises(openai.APIError, match="interrupted"):  # the gateway's error frame, then [DONE]
            async for chunk in stream:
                pieces.extend(c.delta.content or "" for c in chunk.choices)
    assert "".join(pieces) == "Hello from "
    await drain(gateway)
    log = (await consume_logs(user))[0]
    prompt = fake.usage["input_tokens"]
    assert prompt != count_chat_request({"model": MODEL, "messages": MESSAGES})
    assert (log.prompt_tokens, log.completion_tokens) == (prompt, count_text("Hello from "))
    assert log.quota == quota(prompt, count_text("Hello from "))
    assert "incomplete" in orjson.loads(log.other)


async def test_errors_disable_on_credentials_retry_on_rate_limits(gateway, claude) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("AutomaticDisableChannelEnabled", "true")
    await options.update("RetryTimes", "1")
    bad_key = await claude(key="sk-ant-other")
    broken = await claude_channel(gateway, bad_key, priority=10, key="sk-ant-wrong")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)

        # This process stops using it at once; the worker job that disables it everywhere is queued.
        assert relay_of(gateway).index.get(broken.id) is None
        store = gateway.server.app[keys.STORE]

        async def disable_queued() -> bool:
            return await store.redis.llen(f"{store.prefix}dramatiq:relay") == 1

        await eventually(disable_queued, timeout=10)
        busy, good = await claude(fail_status=429, fail_type="rate_limit_error"), await claude()
        await claude_channel(gateway, busy, priority=5)
        await claude_channel(gateway, good, priority=0)
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert answer.choices[0].message.content == REPLY and len(busy.seen) == 1 and len(good.seen) == 1
        overloaded = await claude(fail_status=529, fail_type="overloaded_error")
        await claude_channel(gateway, overloaded, models="claude-3-haiku-20240307")
        with pytest.raises(openai.APIStatusError) as caught:
            await client.chat.completions.create(model="claude-3-haiku-20240307", messages=MESSAGES)
    assert caught.value.status_code == 503 and "fake failure 529" in caught.value.message
    await drain(gateway)
    assert len(await consume_logs(user)) == 1  # failed attempts cost nothing


async def test_channel_test_button(gateway, claude, root: ApiClient) -> None:
    fake = await claude()
    channel = await claude_channel(gateway, fake, test_model="claude-3-haiku-20240307")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"], body
    assert fake.seen[-1]["body"]["model"] == "claude-3-haiku-20240307"
    fake.key = "sk-ant-rotated"
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"] is False and "invalid x-api-key" in body["message"]
