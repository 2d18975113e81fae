"""MiniMax channels (type 35, the OpenAI-compatible `/v1/chat/completions`) through the official
openai SDK against a strict fake (tests/upstream/providers/minimax/fake_minimax.py): thinking split off and read as
`reasoning_content`, tools with the thinking replayed, failures answered with HTTP 200 and
`base_resp`, MiniMax's own 401 envelope."""
from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Channel
from tests.relay.fakes import add_channel, make_key, relay_of, rich_user
from tests.upstream.providers.kit import finish_reasons, sdk, settled_log, stream_chat
from tests.upstream.providers.minimax.fake_minimax import KEY, REPLY_PIECES, THOUGHT, USAGE, FakeMiniMax

MODEL = "MiniMax-M2.5"
MESSAGES: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
BILLED = (USAGE["prompt_tokens"], USAGE["completion_tokens"])
TOOLS: list[Any] = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                                      "parameters": {"type": "object",
                                                                     "properties": {"city": {"type": "string"}}}}}]
# MiniMax-M2.5 at ¥2.1 / ¥8.4 per million tokens (platform.minimaxi.com pricing): set by the operator,
# as the shipped table has no price for it.
PRICES = {"ModelRatio": {MODEL: 0.15}, "CompletionRatio": {MODEL: 4}}


@pytest.fixture(autouse=True)
async def prices(gateway) -> None:
    for name, table in PRICES.items():
        await gateway.server.app[keys.OPTIONS].update(name, orjson.dumps(table).decode())


@pytest.fixture
async def minimax(aiohttp_server):
    async def start(**behaviour) -> FakeMiniMax:
        fake = FakeMiniMax(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


async def minimax_channel(gateway, fake: FakeMiniMax, **fields) -> Channel:
    return await add_channel(gateway, None, models=MODEL, type=int(ChannelType.MINIMAX), base_url=fake.url,
                             key=fields.pop("key", KEY), **fields)


def billed(gateway, log) -> None:
    assert (log.prompt_tokens, log.completion_tokens) == BILLED
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], MODEL)
    assert log.quota == pricing.settle_quota(price, *BILLED) > 0


async def test_thinking_split_off_as_reasoning_content_and_billing(gateway, minimax) -> None:
    fake = await minimax()
    await minimax_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.7)
    message = answer.choices[0].message
    assert message.content == "".join(REPLY_PIECES)
    assert message.model_extra["reasoning_content"] == THOUGHT
    assert message.model_extra["reasoning_details"][0]["text"] == THOUGHT  # kept for MiniMax-aware clients
    seen = fake.seen[0]
    assert seen["headers"]["Authorization"] == f"Bearer {KEY}"
    assert seen["body"] == {"model": MODEL, "messages": MESSAGES, "temperature": 0.7, "reasoning_split": True}
    billed(gateway, await settled_log(gateway, user))


@pytest.mark.parametrize("done_marker", [False, True])
async def test_stream_ends_at_the_usage_chunk_with_or_without_done(gateway, minimax, done_marker) -> None:
    fake = await minimax(done_marker=done_marker)
    await minimax_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    thoughts = [c.choices[0].delta.model_extra.get("reasoning_content") for c in chunks if c.choices]
    assert "".join(t for t in thoughts if t) == THOUGHT
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == BILLED
    assert "stream_options" not in fake.seen[0]["body"]
    log = await settled_log(gateway, user)
    billed(gateway, log)
    assert "incomplete" not in (log.other or "")


async def test_a_client_that_keeps_think_in_the_content(gateway, minimax) -> None:
    fake = await minimax()
    await minimax_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES,
                                                      extra_body={"reasoning_split": False})
    assert answer.choices[0].message.content == f"<think>\n{THOUGHT}\n</think>\n\n" + "".join(REPLY_PIECES)
    assert fake.seen[0]["body"]["reasoning_split"] is False


async def test_tools_with_the_thinking_replayed(gateway, minimax) -> None:
    fake = await minimax(tool_call={"name": "get_weather", "arguments": '{"city": "Shanghai"}'})
    await minimax_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS)
        message = answer.choices[0].message
        call = message.tool_calls[0]
        assert answer.choices[0].finish_reason == "tool_calls"
        assert (call.id, call.function.name, orjson.loads(call.function.arguments)) == (
            "call_function_7t3k", "get_weather", {"city": "Shanghai"})
        _, calls = await stream_chat(client, model=MODEL, messages=MESSAGES, tools=TOOLS)
        turn = {"role": "assistant", "content": message.content, "tool_calls": [call.model_dump()],
                "reasoning_content": message.model_extra["reasoning_content"]}
        history = [*MESSAGES, turn, {"role": "tool", "tool_call_id": call.id, "content": "22°C"}]
        text, chunks = await stream_chat(client, model=MODEL, messages=history, tools=TOOLS)
    assert finish_reasons(calls) == ["tool_calls"]
    assert [t.function.name for c in calls if c.choices for t in c.choices[0].delta.tool_calls or ()] == [
        "get_weather"]
    assert text == "".join(REPLY_PIECES) and finish_reasons(chunks) == ["stop"]
    replayed = fake.seen[2]["body"]["messages"][2]
    assert "reasoning_content" not in replayed
    assert replayed["reasoning_details"] == [{"type": "reasoning.text", "text": THOUGHT}]
    assert fake.seen[0]["body"]["tools"] == TOOLS


@pytest.mark.parametrize(("fail", "status", "error"), [
    ((1008, "insufficient balance"), 403, openai.PermissionDeniedError),
    ((2013, "invalid params, tools"), 400, openai.BadRequestError),
    ((1026, "input new_sensitive"), 400, openai.BadRequestError),
    ((1002, "rate limit"), 429, openai.RateLimitError),
])
async def test_a_base_resp_failure_with_http_200_is_an_error(gateway, minimax, fail, status, error) -> None:
    fake = await minimax(fail=fail)
    await minimax_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(error) as caught:
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert caught.value.status_code == status
    if status != 429:  # a saturated upstream is answered in the gateway's own words
        assert fail[1] in caught.value.message and caught.value.code == str(fail[0])


async def test_a_base_resp_failure_mid_stream_ends_it(gateway, minimax) -> None:
    fake = await minimax(fail_mid_stream=(1027, "output new_sensitive"))
    await minimax_channel(gateway, fake)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.APIError, match="output new_sensitive"):
            await stream_chat(client, model=MODEL, messages=MESSAGES)


async def test_an_unknown_model_is_refused(gateway, minimax) -> None:
    fake = await minimax()
    await minimax_channel(gateway, fake, model_mapping=orjson.dumps({MODEL: "abab6.5s-chat"}).decode())
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="unknown model"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)


async def test_a_refused_key_disables_the_channel(gateway, minimax) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    fake = await minimax()
    channel = await minimax_channel(gateway, fake, key="sk-api-revoked")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="login fail") as caught:
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert caught.value.type == "authentication_error"
    assert relay_of(gateway).index.get(channel.id) is None
