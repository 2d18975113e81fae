# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Google's Gemini API in, through the official `google-genai` SDK: converted for an OpenAI channel
(generate, stream, function calls, JSON output, count_tokens, embeddings, the model list, errors in
Google's shape) and relayed as sent to a Gemini channel (the body untouched, the answer back as it
came, usage read); the key in x-goog-api-key or ?key=; billing and logs checked to the unit.
Reasoning state across providers: Claude's thinking blocks ride sealed in thought signatures and go
back to Claude as they were; a Gemini channel gets the placeholder for ours. Python-function tools and
Google's own tools on another provider's channel."""
from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from aiohttp import web
from google import genai
from google.genai import errors, types

from api import keys
from api.relay.inbound.gemini_read import wrap
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import ANTHROPIC, GEMINI_SKIP_SIGNATURE, seal
from api.upstream.tokenizer import count_chat_request
from models import Token
from tests.relay.fakes import REPLY, add_channel, drain, gateway, make_key, rich_user, upstreams  # noqa: F401
from tests.upstream.providers.agent_script import AgentView, Turn
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import REPLY as GEMINI_REPLY
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import consume_logs

MODEL = "gpt-4o"
GEMINI = "gemini-2.0-flash"


def client_for(gateway, token: Token | None, key: str | None = None) -> genai.Client:
    return genai.Client(api_key=key or f"sk-{token.key}", http_options=types.HttpOptions(
        base_url=str(gateway.make_url("")), api_version="v1beta"))


async def test_generate_converted_for_an_openai_channel(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    answer = await client_for(gateway, token).aio.models.generate_content(
        model=MODEL, contents="Say hello.",
        config=types.GenerateContentConfig(system_instruction="Be brief.", temperature=0.3, max_output_tokens=40,
                                           stop_sequences=["END"]))
    assert answer.text == REPLY
    assert answer.candidates[0].finish_reason == types.FinishReason.STOP
    assert (answer.usage_metadata.prompt_token_count, answer.usage_metadata.candidates_token_count) == (13, 7)
    sent = fake.seen[0].body
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
    assert (sent["temperature"], sent["max_tokens"], sent["stop"]) == (0.3, 40, ["END"])
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        13, 7, pricing.settle_quota(pricing.resolve_price(MODEL), 13, 7))
    assert orjson.loads(log.other)["inbound_format"] == "gemini"


async def test_stream_converted_for_an_openai_channel(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    chunks = [c async for c in await client_for(gateway, token).aio.models.generate_content_stream(
        model=MODEL, contents="Say hello.")]
    assert "".join(c.text or "" for c in chunks) == REPLY
    assert chunks[-1].usage_metadata.candidates_token_count == 7
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens) == (13, 7)


async def test_the_json_array_stream_without_alt_sse(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    token = await make_key(await rich_user())
    resp = await gateway.post(f"/v1beta/models/{MODEL}:streamGenerateContent?key=sk-{token.key}",
                              json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]})
    assert resp.status == 200 and resp.content_type == "application/json"
    answers = orjson.loads(await resp.read())
    text = "".join(p.get("text", "") for a in answers for p in a["candidates"][0]["content"]["parts"])
    assert text == REPLY and answers[-1]["usageMetadata"]["totalTokenCount"] == 20


async def test_function_calls_and_json_output(gateway, aiohttp_server) -> None:
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        return web.json_response({"id": "chatcmpl-g", "object": "chat.completion", "created": 1, "model": MODEL,
                                  "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
                                  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                                      "role": "assistant", "content": None, "tool_calls": [call]}}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    server = await aiohttp_server(app)
    await add_channel(gateway, None, models=MODEL, base_url=str(server.make_url("")).rstrip("/"))
    token = await make_key(await rich_user())
    weather = types.FunctionDeclaration(name="get_weather", description="Weather of a city", parameters={
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}}})
    contents = [types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
                types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
                    name="get_weather", args={"city": "Rome"}))]),
                types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                    name="get_weather", response={"temp": "21°C"}))])]
    answer = await client_for(gateway, token).aio.models.generate_content(
        model=MODEL, contents=contents, config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[weather])],
            tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode="ANY")),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))
    call = answer.function_calls[0]
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    sent = seen[0]
    assert sent["tool_choice"] == "required" and sent["tools"][0]["function"]["name"] == "get_weather"
    history = sent["messages"]
    assert history[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Rome"}'}
    assert history[2] == {"role": "tool", "tool_call_id": history[1]["tool_calls"][0]["id"],
                          "content": '{"temp":"21°C"}'}
    await client_for(gateway, token).aio.models.generate_content(
        model=MODEL, contents="Give JSON.", config=types.GenerateContentConfig(
            response_mime_type="application/json", response_schema={"type": "OBJECT", "properties": {
                "ok": {"type": "BOOLEAN"}}}))
    assert seen[1]["response_format"]["type"] == "json_schema"


async def test_relayed_as_sent_to_a_gemini_channel(gateway, aiohttp_server) -> None:
    fake = FakeGemini()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=GEMINI, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    user = await rich_user()
    token = await make_key(user)
    config = types.GenerateContentConfig(temperature=0, safety_settings=[types.SafetySetting(
        category="HARM_CATEGORY_HARASSMENT", threshold="BLOCK_ONLY_HIGH")])
    client = client_for(gateway, token)
    answer = await client.aio.models.generate_content(model=GEMINI, contents="Hi", config=config)
    chunks = [c async for c in await client.aio.models.generate_content_stream(model=GEMINI, contents="Hi",
                                                                              config=config)]
    assert answer.text == GEMINI_REPLY == "".join(c.text or "" for c in chunks)
    sent = fake.seen[0]
    assert sent["body"]["safetySettings"] == [{"category": "HARM_CATEGORY_HARASSMENT",
                                               "threshold": "BLOCK_ONLY_HIGH"}]  # the client's, untouched
    assert sent["headers"]["x-goog-api-key"] == fake.key and fake.seen[1]["action"] == "streamGenerateContent"
    await drain(gateway)
    quota = pricing.settle_quota(pricing.resolve_price(GEMINI), 17, 8)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (17, 8, quota)] * 2


async def test_count_tokens_embeddings_and_models(gateway, upstreams) -> None:
    fake = await upstreams()
    await add_channel(gateway, fake, models=f"{MODEL},text-embedding-3-small")
    user = await rich_user()
    token = await make_key(user)
    client = client_for(gateway, token)
    counted = await client.aio.models.count_tokens(model=MODEL, contents="Hello there")
    assert counted.total_tokens == count_chat_request({"model": MODEL, "messages": [
        {"role": "user", "content": "Hello there"}]})
    embedded = await client.aio.models.embed_content(model="text-embedding-3-small", contents=["one", "two"])
    assert len(embedded.embeddings) == 2 and embedded.embeddings[0].values
    assert fake.seen[-1].body["input"] == ["one", "two"]
    names = [m.name async for m in await client.aio.models.list()]
    assert sorted(names) == [f"models/{MODEL}", "models/text-embedding-3-small"]
    resp = await gateway.get(f"/v1/models?key=sk-{token.key}")  # a Google client on /v1
    assert sorted(m["name"] for m in (await resp.json())["models"]) == names
    resp = await gateway.post(f"/v1/models/{MODEL}:generateContent", headers={"x-goog-api-key": f"sk-{token.key}"},
                              json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]})
    assert (await resp.json())["candidates"][0]["content"]["parts"] == [{"text": REPLY}]


async def test_errors_in_googles_shape(gateway, upstreams) -> None:
    fake = await upstreams(fail_status=500)
    await add_channel(gateway, fake, models=MODEL)
    with pytest.raises(errors.ClientError) as caught:
        await client_for(gateway, None, key="sk-nope").aio.models.generate_content(model=MODEL, contents="Hi")
    assert caught.value.code == 401 and caught.value.status == "UNAUTHENTICATED"
    poor = await make_key(await rich_user("poor", quota=0))
    with pytest.raises(errors.ClientError) as caught:
        await client_for(gateway, poor).aio.models.generate_content(model=MODEL, contents="Hi")
    assert caught.value.code == 403 and caught.value.status == "PERMISSION_DENIED"
    token = await make_key(await rich_user())
    with pytest.raises(errors.ServerError) as caught:
        await client_for(gateway, token).aio.models.generate_content(model=MODEL, contents="Hi")
    assert caught.value.code == 500
    resp = await gateway.get(f"/v1beta/nothing?key=sk-{token.key}")
    assert resp.status == 404 and (await resp.json())["error"]["status"] == "NOT_FOUND"


# -- reasoning state and Google's tools, end to end ---------------------------------------------------

CLAUDE = "claude-sonnet-4-5-20250929"
GEMINI_3 = "gemini-3-pro-preview"
WEATHER_DECLARATION = types.FunctionDeclaration(name="get_weather", description="Weather of a city", parameters={
    "type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]})
NO_AUTO_CALLS = types.AutomaticFunctionCallingConfig(disable=True)


def weather_script(view: AgentView) -> Turn:
    """Calls get_weather first (thinking before it), then answers from the tool's output."""
    if view.tool_results:
        return Turn(text="It is 18°C." if "18°C" in view.tool_results[-1] else "no result", thinking="Got it.")
    return Turn(thinking="The user wants the weather.", tool={"id": "toolu_01", "name": "get_weather",
                                                                 "input": {"city": "Paris"}})


def answered(call: types.FunctionCall) -> types.Content:
    return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=call.id, name=call.name, response={"output": "18°C"}))])


@pytest.mark.parametrize("streamed", [False, True])
async def test_claude_thinking_comes_back_through_google_genai(gateway, aiohttp_server, streamed) -> None:
    """A Gemini client on a Claude channel: Claude's thinking blocks ride (sealed) in the function
    call's thought signature, survive google-genai's base64 round trip and Gemini CLI's habit of
    dropping thought parts, and go back to Claude as they were (the strict fake checks each block's
    signature and that the tool turn starts with one)."""
    fake = FakeClaude(script=weather_script)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=CLAUDE, type=int(ChannelType.ANTHROPIC), base_url=fake.url, key=fake.key)
    client = client_for(gateway, await make_key(await rich_user()))
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[WEATHER_DECLARATION])], automatic_function_calling=NO_AUTO_CALLS,
        max_output_tokens=8000, thinking_config=types.ThinkingConfig(thinking_budget=2048, include_thoughts=True))
    contents = [types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])]
    if streamed:
        chunks = [c async for c in await client.aio.models.generate_content_stream(
            model=CLAUDE, contents=contents, config=config)]
        parts = [p for c in chunks for p in c.candidates[0].content.parts]
    else:
        parts = (await client.aio.models.generate_content(model=CLAUDE, contents=contents,
                                                          config=config)).candidates[0].content.parts
    assert "".join(p.text for p in parts if p.thought) == "The user wants the weather."
    (call,) = [p for p in parts if p.function_call]
    assert call.thought_signature and call.function_call.args == {"city": "Paris"}
    turn = types.Content(role="model", parts=[p for p in parts if not p.thought])  # as Gemini CLI keeps it
    second = await client.aio.models.generate_content(
        model=CLAUDE, contents=[*contents, turn, answered(call.function_call)], config=config)
    assert second.text == "It is 18°C."
    replayed = fake.seen[1]["body"]["messages"][1]["content"]
    assert replayed[0]["type"] == "thinking" and replayed[0]["thinking"] == "The user wants the weather."
    assert fake.seen[1]["body"]["thinking"]["type"] == "enabled"


async def test_a_gemini_channel_gets_the_placeholder_for_our_signatures(gateway, aiohttp_server) -> None:
    """History a Claude channel answered, sent on to a Gemini 3 channel as it is: the sealed
    signature becomes Gemini's documented placeholder (the strict fake refuses any it did not issue)."""
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps({GEMINI_3: 1.0}).decode())
    fake = FakeGemini(script=weather_script)
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=GEMINI_3, type=int(ChannelType.GEMINI), base_url=fake.url, key=fake.key)
    client = client_for(gateway, await make_key(await rich_user()))
    ours = base64.b64decode(wrap(seal(ANTHROPIC, {"blocks": [{"type": "thinking", "thinking": "t",
                                                                "signature": "claude"}]})))
    call = types.FunctionCall(id="toolu_01", name="get_weather", args={"city": "Paris"})
    contents = [types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
                types.Content(role="model", parts=[types.Part(function_call=call, thought_signature=ours)]),
                answered(call)]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[WEATHER_DECLARATION])],
                                         automatic_function_calling=NO_AUTO_CALLS)
    answer = await client.aio.models.generate_content(model=GEMINI_3, contents=contents, config=config)
    assert answer.text == "It is 18°C."
    replayed = fake.seen[0]["body"]["contents"][1]["parts"][0]
    assert replayed["thoughtSignature"] == GEMINI_SKIP_SIGNATURE


async def test_python_functions_and_googles_own_tools_on_an_openai_channel(gateway, upstreams) -> None:
    """A Python function's parameters (parameters_json_schema) arrive as JSON Schema; Google Search
    is the hosted web search; code execution is left out and said, never a refused request."""
    fake = await upstreams()
    await add_channel(gateway, fake, models=MODEL)
    client = client_for(gateway, await make_key(await rich_user()))

    def get_weather(city: str, days: int | None = None) -> str:
        """Weather of a city."""
        return "sunny"

    config = types.GenerateContentConfig(tools=[get_weather, types.Tool(google_search=types.GoogleSearch()),
                                                types.Tool(code_execution=types.ToolCodeExecution())],
                                         automatic_function_calling=NO_AUTO_CALLS)
    answer = await client.aio.models.generate_content(model=MODEL, contents="Weather?", config=config)
    assert answer.text == REPLY
    headers = {k.lower(): v for k, v in (answer.sdk_http_response.headers or {}).items()}
    assert "tools.codeExecution" in headers["x-gateway-dropped"].split(","), headers
    function = fake.seen[0].body["tools"][0]["function"]
    assert function["name"] == "get_weather" and function["parameters"]["required"] == ["city"]
    assert function["parameters"]["properties"]["city"] == {"type": "string"}
