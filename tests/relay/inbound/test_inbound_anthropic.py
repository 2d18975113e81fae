# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Anthropic's Messages API in, through the official `anthropic` SDK: converted to an OpenAI
channel (answers, the stream helper, tools, images, errors in Anthropic's types) and relayed as
sent to a Claude channel (body and beta headers untouched, the upstream's bytes back, usage read),
Vertex AI's Claude models and Bedrock's whole answers included; count_tokens; billing and the log's
inbound format checked to the unit. Reasoning state across providers: a Gemini 3 turn's signatures
come back to Gemini through sealed thinking blocks, and never reach Claude; Claude Code's request
shapes (system blocks, a system message mid-conversation, client-run and server tools)."""
from __future__ import annotations

from typing import Any

import anthropic
import orjson
import pytest
from aiohttp import web
from anthropic._constants import ANTHROPIC_API_VERSION

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import GEMINI, seal
from api.upstream.tokenizer import count_chat_request
from models import Token
from tests.relay.fakes import REPLY, add_channel, drain, gateway, make_key, rich_user, upstreams  # noqa: F401
from tests.upstream.providers.agent_script import AgentView, Turn
from tests.upstream.providers.aws.test_provider_bedrock import ACCESS, REGION, SECRET, bedrock  # noqa: F401
from tests.upstream.providers.aws.test_provider_bedrock import MODEL as BEDROCK_MODEL
from tests.upstream.providers.claude.fake_anthropic import REPLY as CLAUDE_REPLY
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import consume_logs
from tests.upstream.providers.vertex.test_provider_vertex import vertex  # noqa: F401

MODEL = "gpt-4o"
CLAUDE_MODEL = "claude-3-5-sonnet-20241022"
WEATHER = {"name": "get_weather", "description": "Weather of a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def client_for(gateway, token: Token, **options: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key=f"sk-{token.key}", max_retries=0,
                                    **options)


@pytest.fixture
async def claude(aiohttp_server):
    fake = FakeClaude(usage={"input_tokens": 30, "output_tokens": 9, "cache_read_input_tokens": 100})
    fake.server = await aiohttp_server(fake.app())
    return fake


async def test_converted_to_an_openai_channel(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    async with client_for(gateway, token) as client:
        message = await client.messages.create(
            model=MODEL, max_tokens=100, system="Be brief.", stop_sequences=["END"], extra_body={"temperature": 0.5},
            messages=[{"role": "user", "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}])
    assert message.type == "message" and message.role == "assistant" and message.model == MODEL
    assert [b.type for b in message.content] == ["text"] and message.content[0].text == REPLY
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (13, 7)
    sent = fake.seen[0].body
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]
    assert (sent["max_tokens"], sent["temperature"], sent["stop"]) == (100, 0.5, ["END"])
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        13, 7, pricing.settle_quota(pricing.resolve_price(MODEL), 13, 7))
    assert orjson.loads(log.other)["inbound_format"] == "anthropic"


async def test_the_stream_helper_on_an_openai_channel(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    async with client_for(gateway, token) as client:
        async with client.messages.stream(model=MODEL, max_tokens=100,
                                          messages=[{"role": "user", "content": "Hi"}]) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
    assert text == REPLY and final.content[0].text == REPLY and final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 7 and final.usage.input_tokens == 13
    assert fake.seen[0].body["stream_options"] == {"include_usage": True}
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens) == (13, 7)


async def test_tools_through_an_openai_channel(gateway, aiohttp_server) -> None:
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        call = {"id": "call_1", "type": "function", "function": {"name": "get_weather",
                                                                  "arguments": '{"city": "Paris"}'}}
        usage = {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}
        if not body.get("stream"):
            return web.json_response({"id": "chatcmpl-t", "object": "chat.completion", "created": 1, "model": MODEL,
                                      "usage": usage, "choices": [{"index": 0, "finish_reason": "tool_calls",
                                                                   "message": {"role": "assistant", "content": None,
                                                                               "tool_calls": [call]}}]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        deltas = [{"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                   "function": {"name": "get_weather", "arguments": ""}}]},
                  {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
                  {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}]
        for i, delta in enumerate(deltas):
            chunk = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": "tool_calls" if i == 2 else None}]}
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await resp.write(b"data: " + orjson.dumps({"id": "chatcmpl-t", "object": "chat.completion.chunk",
                                                   "created": 1, "model": MODEL, "choices": [], "usage": usage})
                         + b"\n\ndata: [DONE]\n\n")
        return resp

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    server = await aiohttp_server(app)
    await add_channel(gateway, None, models=MODEL, base_url=str(server.make_url("")).rstrip("/"))
    token = await make_key(await rich_user())
    history = [{"role": "user", "content": "Weather in Paris?"},
               {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                                 {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                  "input": {"city": "Paris"}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C"},
                                            {"type": "text", "text": "And tomorrow?"}]}]
    async with client_for(gateway, token) as client:
        message = await client.messages.create(model=MODEL, max_tokens=100, tools=[WEATHER],
                                               tool_choice={"type": "any"}, messages=history)
        async with client.messages.stream(model=MODEL, max_tokens=100, tools=[WEATHER], messages=history) as stream:
            final = await stream.get_final_message()
    for answer in (message, final):
        block = answer.content[-1]
        assert (block.type, block.name, block.input) == ("tool_use", "get_weather", {"city": "Paris"})
        assert answer.stop_reason == "tool_use"
    assert seen[0]["tools"] == [{"type": "function", "function": {"name": "get_weather",
                                                                   "description": "Weather of a city",
                                                                   "parameters": WEATHER["input_schema"]}}]
    assert seen[0]["tool_choice"] == "required"
    assert seen[0]["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "toolu_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "18°C"},
        {"role": "user", "content": "And tomorrow?"}]


async def test_relayed_as_sent_to_a_claude_channel(gateway, claude) -> None:
    await add_channel(gateway, None, models=CLAUDE_MODEL, type=int(ChannelType.ANTHROPIC), base_url=claude.url,
                      key=claude.key, other="context-1m-2025-08-07")
    user = await rich_user()
    token = await make_key(user)
    request = {"model": CLAUDE_MODEL, "max_tokens": 64, "system": [{"type": "text", "text": "Be brief.",
                                                                     "cache_control": {"type": "ephemeral"}}],
               "messages": [{"role": "user", "content": "Hi"}], "metadata": {"user_id": "u-1"}}
    async with client_for(gateway, token, default_headers={"anthropic-beta": "prompt-caching-2024-07-31"}) as client:
        message = await client.messages.create(**request)
        async with client.messages.stream(**request) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
    assert message.content[0].text == CLAUDE_REPLY == text == final.content[0].text
    assert message.id == "msg_01fake" and message.usage.cache_read_input_tokens == 100
    sent = claude.seen[0]
    assert sent["body"] == request  # untouched: cache_control and metadata kept
    # The channel's beta flags and the client's, together.
    assert sent["headers"]["anthropic-beta"] == "context-1m-2025-08-07,prompt-caching-2024-07-31"
    assert sent["headers"]["anthropic-version"] == ANTHROPIC_API_VERSION  # the client's, not the gateway's
    assert sent["headers"]["x-api-key"] == claude.key
    assert final.usage.output_tokens == 9
    await drain(gateway)
    price = pricing.resolve_price(CLAUDE_MODEL)
    expected = pricing.settle_quota(price, 130, 9, cached_tokens=100)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (130, 9, expected)] * 2


async def test_count_tokens(gateway, upstreams) -> None:
    token = await make_key(await rich_user())
    request = {"model": MODEL, "system": "Be brief.", "messages": [{"role": "user", "content": "Hello there"}]}
    async with client_for(gateway, token) as client:
        counted = await client.messages.count_tokens(**request)
    assert counted.input_tokens == count_chat_request(
        {"model": MODEL, "messages": [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": "Hello there"}]})


async def test_errors_in_anthropics_types(gateway, upstreams) -> None:
    fake = await upstreams(fail_status=500)
    await add_channel(gateway, fake, models=MODEL)
    poor = await rich_user("poor", quota=0)
    token = await make_key(await rich_user())
    messages = [{"role": "user", "content": "Hi"}]
    async with anthropic.AsyncAnthropic(base_url=str(gateway.make_url("")), api_key="sk-nope", max_retries=0) as bad:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            await bad.messages.create(model=MODEL, max_tokens=10, messages=messages)
    assert caught.value.body["type"] == "error" and caught.value.body["error"]["type"] == "authentication_error"
    async with client_for(gateway, await make_key(poor)) as client:
        with pytest.raises(anthropic.PermissionDeniedError):
            await client.messages.create(model=MODEL, max_tokens=10, messages=messages)
    async with client_for(gateway, token) as client:
        with pytest.raises(anthropic.InternalServerError) as caught:
            await client.messages.create(model=MODEL, max_tokens=10, messages=messages)
        assert caught.value.body["error"]["type"] == "api_error"
        with pytest.raises(anthropic.InternalServerError):
            async with client.messages.stream(model=MODEL, max_tokens=10, messages=messages) as stream:
                await stream.get_final_message()


# -- reasoning state and Claude Code's shapes, end to end ------------------------------------------------

GEMINI_3 = "gemini-3-pro-preview"


def weather_script(view: AgentView) -> Turn:
    """Calls get_weather first (thinking before it), then answers from the tool's output."""
    if view.tool_results:
        return Turn(text=f"It is {view.tool_results[-1]}.", thinking="Got it.")
    return Turn(thinking="The user wants the weather.", tool={"id": "", "name": "get_weather",
                                                                 "input": {"city": "Paris"}})


@pytest.fixture
async def gemini3(gateway, aiohttp_server) -> FakeGemini:
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps({GEMINI_3: 1.0}).decode())
    fake = FakeGemini(script=weather_script)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=GEMINI_3, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    return fake


async def test_a_streamed_gemini_turn_comes_back_with_its_signatures(gateway, gemini3: FakeGemini) -> None:
    """Claude Code on a Gemini 3 channel: the streamed answer's thinking blocks carry sealed
    signatures (never an empty one), and the next request gives Gemini the signature it issued
    (the strict fake refuses a call replayed without it)."""
    token = await make_key(await rich_user())
    request: dict[str, Any] = {"model": GEMINI_3, "max_tokens": 8192, "tools": [WEATHER],
                               "thinking": {"type": "adaptive"}}
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
    async with client_for(gateway, token) as client:
        async with client.messages.stream(messages=history, **request) as stream:
            first = await stream.get_final_message()
        blocks = [b.model_dump(exclude_none=True) for b in first.content]
        thinking = [b for b in blocks if b["type"] == "thinking"]
        assert thinking and all(b["signature"].startswith("gwr1.") for b in thinking)
        assert thinking[0]["thinking"] == "The user wants the weather." and blocks[-1]["type"] == "tool_use"
        history += [{"role": "assistant", "content": blocks}, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": blocks[-1]["id"], "content": "18°C"}]}]
        second = await client.messages.create(messages=history, **request)
    assert second.content[-1].text == "It is 18°C."
    calls = [p for c in gemini3.seen[1]["body"]["contents"] if c["role"] == "model" for p in c["parts"]
             if "functionCall" in p]
    assert calls[0]["thoughtSignature"] in gemini3.issued


async def test_claude_never_gets_another_providers_thinking(gateway, claude) -> None:
    """Claude Code switched from a Gemini channel to a Claude one: the sealed block is removed, and
    the last tool turn then has no thinking block first, so thinking is off for this request (said in
    X-Gateway-Dropped) rather than refused."""
    await add_channel(gateway, None, models=CLAUDE_MODEL, type=int(ChannelType.ANTHROPIC), base_url=claude.url,
                      key=claude.key)
    token = await make_key(await rich_user())
    sealed = {"type": "thinking", "thinking": "Gemini's plan.", "signature": seal(GEMINI, {"calls": {"c": "s"}})}
    history = [{"role": "user", "content": "Weather?"},
               {"role": "assistant", "content": [sealed, {"type": "tool_use", "id": "c", "name": "get_weather",
                                                          "input": {"city": "Paris"}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "18°C"}]}]
    async with client_for(gateway, token) as client:
        raw = await client.messages.with_raw_response.create(
            model=CLAUDE_MODEL, max_tokens=4000, thinking={"type": "enabled", "budget_tokens": 2000}, tools=[WEATHER],
            messages=history)
    assert (await raw.parse()).content[0].text == CLAUDE_REPLY
    assert raw.headers["X-Gateway-Dropped"] == "thinking"
    sent = claude.seen[0]["body"]
    assert "thinking" not in sent
    assert sent["messages"][1]["content"] == [{"type": "tool_use", "id": "c", "name": "get_weather",
                                               "input": {"city": "Paris"}}]


async def test_claude_codes_request_shapes_on_an_openai_channel(gateway, upstreams) -> None:
    """System blocks with breakpoints, a system message mid-conversation, a client-run tool and a
    server tool no other provider runs (said in X-Gateway-Dropped)."""
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    token = await make_key(await rich_user())
    async with client_for(gateway, token) as client:
        raw = await client.messages.with_raw_response.create(
            model=MODEL, max_tokens=100,
            system=[{"type": "text", "text": "You are Claude Code."},
                    {"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}}],
            tools=[{"type": "bash_20250124", "name": "bash"}, {"type": "web_fetch_20250910", "name": "web_fetch"}],
            messages=[{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                      {"role": "system", "content": "Mind the tests."}, {"role": "user", "content": "three"}])
    assert raw.headers["X-Gateway-Dropped"].split(",")[0] == "tools.web_fetch_20250910"
    sent = fake.seen[0].body
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "system", "user"]
    assert [p["text"] for p in sent["messages"][0]["content"]] == ["You are Claude Code.", "Rules."]
    assert sent["messages"][3] == {"role": "system", "content": "Mind the tests."}
    assert [t["function"]["name"] for t in sent["tools"]] == ["bash"]


# -- the clouds' Claude channels, as sent ------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True])
async def test_vertex_claude_takes_the_body_as_sent(gateway, vertex, streamed) -> None:
    """Vertex AI's Claude models get the Messages body as sent (the model in the URL, Vertex's API
    version in the body); its Gemini models on the same channel are converted."""
    fake = await vertex()
    await add_channel(gateway, None, models=f"{CLAUDE_MODEL},gemini-2.0-flash", type=int(ChannelType.VERTEX_AI),
                      base_url=fake.url, key=fake.service_account())
    token = await make_key(await rich_user())
    request = {"model": CLAUDE_MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}],
               "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]}
    async with client_for(gateway, token) as client:
        if streamed:
            async with client.messages.stream(**request) as stream:
                message = await stream.get_final_message()
        else:
            message = await client.messages.create(**request)
        gemini = await client.messages.create(**{**request, "model": "gemini-2.0-flash"})
    assert message.content[0].text == CLAUDE_REPLY and gemini.content[0].text
    sent = fake.claude_seen[0]["body"]
    assert sent["system"] == request["system"] and sent["anthropic_version"] == "vertex-2023-10-16"
    assert fake.gemini.seen[0]["body"]["systemInstruction"]["parts"][0]["text"] == "Be brief."


async def test_bedrock_claude_takes_the_body_as_sent_and_streams_converted(gateway, bedrock) -> None:
    fake, url = await bedrock()
    await add_channel(gateway, None, models=BEDROCK_MODEL, type=int(ChannelType.AWS), base_url=url,
                      key=f"{ACCESS}|{SECRET}|{REGION}")
    token = await make_key(await rich_user())
    request = {"model": BEDROCK_MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}],
               "metadata": {"user_id": "u-1"}}
    async with client_for(gateway, token) as client:
        message = await client.messages.create(**request)
        async with client.messages.stream(**request) as stream:
            streamed = await stream.get_final_message()
    assert message.content[0].text == CLAUDE_REPLY == streamed.content[0].text
    assert fake.seen[0]["body"] == {k: v for k, v in request.items() if k != "model"} | {
        "anthropic_version": "bedrock-2023-05-31"}
    assert fake.seen[1]["action"] == "invoke-with-response-stream"


async def test_a_wrong_method_on_messages_answers_in_anthropics_shape(gateway) -> None:
    for method, path in (("GET", "/v1/messages"), ("GET", "/v1/messages/count_tokens")):
        resp = await gateway.request(method, path)
        body = await resp.json()
        assert resp.status == 405 and body["type"] == "error", body
        assert body["error"]["type"] == "invalid_request_error" and path in body["error"]["message"]
