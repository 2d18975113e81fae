"""Current Claude models through the gateway, against the strict fakes of Anthropic, Bedrock and
Vertex AI: OpenAI chat, Responses and Gemini clients (official SDKs) converted, with thinking on; a
tool loop whose second request replays the thinking block with its signature; web search and its
citations; Anthropic's own /v1/messages relayed as sent to Bedrock and Vertex; each charge to the
unit (cache reads, five-minute and one-hour cache writes)."""
from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest
from google import genai
from google.genai import types

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Token
from tests.relay.fakes import add_channel, drain, make_key, rich_user
from tests.upstream.providers.agent_script import AgentView, Turn
from tests.upstream.providers.aws.test_provider_bedrock import ACCESS, REGION, SECRET, FakeBedrock
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import SEARCH_URL, sign
from tests.upstream.providers.kit import consume_logs
from tests.upstream.providers.vertex.test_provider_vertex import FakeVertex

# Adaptive thinking with its text shown (Opus 4.7 and later omit it unless asked).
ADAPTIVE = {"type": "adaptive", "display": "summarized"}

USAGE = {"input_tokens": 40, "output_tokens": 12, "cache_read_input_tokens": 1000,
         "cache_creation_input_tokens": 300, "cache_creation": {"ephemeral_5m_input_tokens": 100,
                                                               "ephemeral_1h_input_tokens": 200}}
PROMPT = 40 + 1000 + 300
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
LOOKED_UP = "I need the weather in Oslo: I call get_weather."


def weather_script(view: AgentView) -> Turn:
    """Call the tool first, then answer from its result."""
    if not view.tool_results:
        return Turn("", {"id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}}, LOOKED_UP)
    return Turn(f"Oslo: {view.tool_results[-1]}.", None, "The tool answered; I report it.")


async def priced(gateway, *models: str) -> None:
    """Ratios for current models: input $4/M (ratio 2), output ×5, cache read ×0.1, writes ×1.25 / ×2."""
    options = gateway.server.app[keys.OPTIONS]
    for name, value in (("ModelRatio", 2), ("CompletionRatio", 5), ("CacheRatio", 0.1), ("CreateCacheRatio", 1.25),
                        ("CreateCacheRatio1h", 2)):
        table = {**(options.get_json(name) or {}), **{model: value for model in models}}
        await options.update(name, orjson.dumps(table).decode())


def charge(gateway, model: str, prompt: int = PROMPT, completion: int = 12, read: int = 1000, write: int = 300,
           one_hour: int = 200) -> int:
    price = pricing.resolve_configured(gateway.server.app[keys.OPTIONS], model)
    return pricing.settle_quota(price, prompt, completion, cached_tokens=read, cache_creation_tokens=write,
                                cache_creation_1h_tokens=one_hour)


async def charged(gateway, user) -> list[tuple[int, int, int]]:
    await drain(gateway)
    return [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)]


@pytest.fixture
async def claude(aiohttp_server):
    async def start(**behaviour: Any) -> FakeClaude:
        fake = FakeClaude(usage=dict(USAGE), **behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


def openai_sdk(gateway, token: Token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


async def test_openai_chat_tool_loop_replays_the_signed_thinking_and_bills_cache_writes(gateway, claude) -> None:
    model = "claude-opus-5-5"
    fake = await claude(script=weather_script)
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    ask = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Oslo?"}]
    async with openai_sdk(gateway, token) as client:
        first = (await client.chat.completions.create(model=model, messages=ask, tools=[WEATHER])).choices[0]
        (call,) = first.message.tool_calls
        history = [*ask, first.message.model_dump(exclude_none=True),
                   {"role": "tool", "tool_call_id": call.id, "content": "-3°C"}]
        second = (await client.chat.completions.create(model=model, messages=history, tools=[WEATHER])).choices[0]
        tampered = [*ask, {**history[2], "thinking_blocks": [{**history[2]["thinking_blocks"][0], "thinking": "Hm."}]},
                    history[3]]
        with pytest.raises(openai.BadRequestError, match="Invalid `signature` in `thinking` block"):
            await client.chat.completions.create(model=model, messages=tampered, tools=[WEATHER])
    assert first.finish_reason == "tool_calls" and first.message.model_extra["reasoning_content"] == LOOKED_UP
    assert first.message.model_extra["thinking_blocks"] == [{"type": "thinking", "thinking": LOOKED_UP,
                                                             "signature": sign(LOOKED_UP)}]
    assert second.message.content == "Oslo: -3°C." and second.finish_reason == "stop"
    sent = fake.seen[1]["body"]
    # Opus 5.5 thinks by default: it is only asked to show its thinking, with no effort
    assert sent["thinking"] == ADAPTIVE and "output_config" not in sent
    assert sent["system"] == [{"type": "text", "text": "Be brief."}]
    assert sent["messages"][1:] == [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": LOOKED_UP, "signature": sign(LOOKED_UP)},
                                          {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
                                           "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "-3°C"}]}]
    # (40 + 1000 × 0.1 + 100 × 1.25 + 200 × 2 + 12 × 5) × 2 = 1450
    assert charge(gateway, model) == 1450
    assert await charged(gateway, user) == [(PROMPT, 12, 1450)] * 2  # the refused request costs nothing


async def test_openai_chat_stream_thinking_deltas_and_what_was_left_out(gateway, claude) -> None:
    model = "claude-fable-5-1"
    fake = await claude()
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with openai_sdk(gateway, token) as client:
        raw = await client.chat.completions.with_raw_response.create(
            model=model, messages=[{"role": "user", "content": "Hi"}], tools=[WEATHER], tool_choice="required",
            temperature=0.2, reasoning_effort="high", stream=True, stream_options={"include_usage": True})
        chunks = [c async for c in raw.parse()]
    deltas = [c.choices[0].delta.model_extra or {} for c in chunks if c.choices]
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == fake.thinking
    assert [b for d in deltas for b in d.get("thinking_blocks") or ()] == [
        {"index": 0, "type": "thinking", "thinking": "", "signature": sign(fake.thinking)}]
    assert raw.headers["X-Gateway-Dropped"] == "temperature,tool_choice"  # refused by Fable: left out, said
    sent = fake.seen[0]["body"]
    assert sent["thinking"] == ADAPTIVE and sent["output_config"] == {"effort": "high"}
    assert sent["tool_choice"] == {"type": "auto"} and "temperature" not in sent
    assert chunks[-1].usage.prompt_tokens == PROMPT
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))]


async def test_responses_client_to_a_claude_channel(gateway, claude) -> None:
    model = "claude-sonnet-5-5"
    fake = await claude()
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with openai_sdk(gateway, token) as client:
        response = await client.responses.create(model=model, instructions="Be brief.", input="Hi",
                                                 reasoning={"effort": "xhigh", "summary": "auto"},
                                                 max_output_tokens=200000)
    assert response.output_text == fake.reply
    assert [item.type for item in response.output][0] == "reasoning"
    sent = fake.seen[0]["body"]
    assert (sent["thinking"], sent["output_config"], sent["max_tokens"]) == (ADAPTIVE,
                                                                             {"effort": "xhigh"}, 128000)
    assert sent["system"] == [{"type": "text", "text": "Be brief."}]
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))]


async def test_non_streamed_chat_and_responses_report_the_cache_writes(gateway, claude) -> None:
    model = "claude-sonnet-5-5"
    fake = await claude()
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with openai_sdk(gateway, token) as client:
        chat = await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}])
        response = await client.responses.create(model=model, input="Hi")
    assert chat.usage is not None and chat.usage.prompt_tokens_details is not None
    assert chat.usage.prompt_tokens == PROMPT and chat.usage.prompt_tokens_details.cached_tokens == 1000
    assert chat.usage.prompt_tokens_details.cache_write_tokens == 300
    assert response.usage is not None and response.usage.input_tokens == PROMPT
    details = response.usage.input_tokens_details
    assert (details.cached_tokens, details.cache_write_tokens) == (1000, 300)
    # (40 + 1000 × 0.1 + 100 × 1.25 + 200 × 2 + 12 × 5) × 2 = 1450, as before the writes were shown
    assert await charged(gateway, user) == [(PROMPT, 12, 1450)] * 2


async def test_gemini_client_to_a_claude_channel(gateway, claude) -> None:
    model = "claude-opus-4-7"
    fake = await claude()
    await add_channel(gateway, None, models=model, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    client = genai.Client(api_key=f"sk-{token.key}", http_options=types.HttpOptions(
        base_url=str(gateway.make_url("")), api_version="v1beta"))
    answer = await client.aio.models.generate_content(model=model, contents="Hi", config=types.GenerateContentConfig(
        system_instruction="Be brief.", temperature=0.4,
        thinking_config=types.ThinkingConfig(thinking_budget=20000, include_thoughts=True)))
    assert answer.text == fake.reply
    sent = fake.seen[0]["body"]
    assert sent["thinking"] == ADAPTIVE and "temperature" not in sent  # 4.7 takes no sampling
    assert "budget_tokens" not in orjson.dumps(sent).decode()
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))]


async def test_bedrock_inference_profile_no_web_search_and_one_hour_writes(gateway, aiohttp_server) -> None:
    model = "claude-opus-4-7"
    fake = FakeBedrock(FakeClaude(usage=dict(USAGE)))
    server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=model, type=int(ChannelType.AWS), key=f"{ACCESS}|{SECRET}|{REGION}",
                      base_url=str(server.make_url("")).rstrip("/"), other="context-1m-2025-08-07")
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with openai_sdk(gateway, token) as client:
        raw = await client.chat.completions.with_raw_response.create(
            model=model, messages=[{"role": "user", "content": "Weather?"}], reasoning_effort="low",
            tools=[WEATHER, {"type": "web_search"}])  # type: ignore[list-item]
        stream = await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}],
                                                      stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert raw.parse().choices[0].message.content == fake.claude.reply == text
    assert raw.headers["X-Gateway-Dropped"] == "tools.web_search"  # Bedrock runs no server tools
    assert [s["model"] for s in fake.seen] == ["us.anthropic.claude-opus-4-7"] * 2
    sent = fake.seen[0]["body"]
    assert sent["anthropic_beta"] == ["context-1m-2025-08-07"] and sent["output_config"] == {"effort": "low"}
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))] * 2


async def test_vertex_web_search_citations_become_annotations(gateway, aiohttp_server) -> None:
    model = "claude-opus-5-5"
    fake = FakeVertex()
    fake.claude.usage = dict(USAGE)
    server = await aiohttp_server(fake.app())
    fake.url = str(server.make_url("")).rstrip("/")
    await add_channel(gateway, None, models=model, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=fake.service_account())
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    search = {"type": "web_search", "max_uses": 2}
    async with openai_sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Weather?"}],
                                                      tools=[search])  # type: ignore[list-item]
    message = answer.choices[0].message
    assert message.content == "It is sunny." + fake.claude.reply
    assert [a.model_dump() for a in message.annotations or ()] == [{"type": "url_citation", "url_citation": {
        "start_index": 0, "end_index": len("It is sunny."), "url": SEARCH_URL, "title": "Weather today"}}]
    assert fake.claude_seen[0]["body"]["tools"] == [{"type": "web_search_20250305", "name": "web_search",
                                                     "max_uses": 2}]
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))]


# -- Anthropic's own format, relayed as sent ---------------------------------------------------------


def anthropic_sdk(gateway, token: Token) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}", max_retries=0,
                                    default_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"})


NATIVE = {"max_tokens": 4000, "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
          "messages": [{"role": "user", "content": "Hi"}], "thinking": {"type": "adaptive"},
          "output_config": {"effort": "medium"}, "metadata": {"user_id": "u-1"}}


async def test_native_messages_to_bedrock(gateway, aiohttp_server) -> None:
    model = "claude-opus-4-6"
    fake = FakeBedrock(FakeClaude(usage=dict(USAGE)))
    server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=model, type=int(ChannelType.AWS), key=f"{ACCESS}|{SECRET}|{REGION}",
                      base_url=str(server.make_url("")).rstrip("/"))
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with anthropic_sdk(gateway, token) as client:
        message = await client.messages.create(model=model, **NATIVE)
    assert message.content[0].type == "thinking" and message.content[0].signature == sign(fake.claude.thinking)
    assert message.usage.cache_creation.ephemeral_1h_input_tokens == 200
    seen = fake.seen[0]
    assert (seen["model"], seen["action"]) == ("us.anthropic.claude-opus-4-6-v1", "invoke")
    assert seen["body"] == {**NATIVE, "anthropic_version": "bedrock-2023-05-31",
                            "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    assert "anthropic-beta" not in seen["headers"] and "anthropic-version" not in seen["headers"]
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))]


async def test_native_messages_stream_from_bedrock(gateway, aiohttp_server) -> None:
    model = "claude-opus-4-6"
    fake = FakeBedrock(FakeClaude(usage=dict(USAGE)))
    server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=model, type=int(ChannelType.AWS), key=f"{ACCESS}|{SECRET}|{REGION}",
                      base_url=str(server.make_url("")).rstrip("/"))
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with anthropic_sdk(gateway, token) as client:
        async with client.messages.stream(model=model, **NATIVE) as stream:
            final = await stream.get_final_message()
    assert final.content[1].text == fake.claude.reply and fake.seen[0]["action"] == "invoke-with-response-stream"
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))]


async def test_native_messages_to_vertex_streamed_and_not(gateway, aiohttp_server) -> None:
    model = "claude-opus-5-5"
    fake = FakeVertex()
    fake.claude.usage = dict(USAGE)
    server = await aiohttp_server(fake.app())
    fake.url = str(server.make_url("")).rstrip("/")
    await add_channel(gateway, None, models=model, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=fake.service_account())
    await priced(gateway, model)
    user = await rich_user()
    token = await make_key(user)
    async with anthropic_sdk(gateway, token) as client:
        message = await client.messages.create(model=model, **NATIVE)
        async with client.messages.stream(model=model, **NATIVE) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
    assert message.content[1].text == text == fake.claude.reply
    assert final.content[0].signature == sign(fake.claude.thinking)
    assert [(s["model"], s["action"]) for s in fake.claude_seen] == [(model, "rawPredict"), (model, "streamRawPredict")]
    assert fake.claude_seen[0]["body"] == {**NATIVE, "anthropic_version": "vertex-2023-10-16"}
    assert fake.claude_seen[1]["body"]["stream"] is True
    assert fake.claude_seen[0]["headers"]["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert "anthropic-version" not in fake.claude_seen[0]["headers"]
    assert await charged(gateway, user) == [(PROMPT, 12, charge(gateway, model))] * 2
