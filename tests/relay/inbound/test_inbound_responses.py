# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""OpenAI's Responses API in, through the official openai SDK: converted for a chat-format channel
(answers, the typed event stream, function calls both ways, reasoning, hosted tools left out with a
notice, errors) and relayed as sent to an OpenAI channel's /v1/responses (built-in tools kept, the
upstream's events untouched, usage read); stateless: stored state is refused with the reason;
billing and logs to the unit."""
from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from tests.relay.fakes import REPLY, add_channel, drain, gateway, make_key, rich_user, upstreams  # noqa: F401
from tests.upstream.providers.kit import consume_logs, sdk
from tests.upstream.providers.openai.fake_responses import FakeResponses

MODEL = "deepseek-chat"  # a chat-completions channel (DeepSeek): converted
NATIVE = "gpt-4o"  # an OpenAI channel: relayed as sent
WEATHER = {"type": "function", "name": "get_weather", "description": "Weather of a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


async def chat_channel(gateway, fake) -> None:
    await add_channel(gateway, fake, models=MODEL, type=int(ChannelType.DEEPSEEK))


async def test_converted_answer_and_billing(gateway, upstreams) -> None:
    fake = await upstreams()
    await chat_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        response = await client.responses.create(
            model=MODEL, instructions="Be brief.", max_output_tokens=50, temperature=0.2,
            input=[{"role": "user", "content": [{"type": "input_text", "text": "Say hello."}]}])
    assert response.object == "response" and response.status == "completed" and response.store is False
    assert response.output_text == REPLY
    assert (response.usage.input_tokens, response.usage.output_tokens) == (13, 7)
    assert fake.seen[0].body["messages"] == [{"role": "system", "content": "Be brief."},
                                             {"role": "user", "content": "Say hello."}]
    assert (fake.seen[0].body["max_tokens"], fake.seen[0].body["temperature"]) == (50, 0.2)
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        13, 7, pricing.settle_quota(pricing.resolve_price(MODEL), 13, 7))
    assert orjson.loads(log.other)["inbound_format"] == "responses"


async def test_converted_event_stream(gateway, upstreams) -> None:
    fake = await upstreams()
    await chat_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        async with client.responses.stream(model=MODEL, input="Say hello.") as stream:
            kinds = []
            text = ""
            async for event in stream:
                kinds.append(event.type)
                if event.type == "response.output_text.delta":
                    text += event.delta
            final = await stream.get_final_response()
    assert text == REPLY == final.output_text
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert {"response.output_item.added", "response.content_part.added", "response.output_text.done",
            "response.output_item.done"} <= set(kinds)
    assert (final.usage.input_tokens, final.usage.output_tokens) == (13, 7)
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens) == (13, 7)


async def test_function_calls_both_ways(gateway, aiohttp_server) -> None:
    seen: list[dict[str, Any]] = []
    call = {"id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    usage = {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40}

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        if not body.get("stream"):
            message = {"role": "assistant", "content": None, "tool_calls": [call],
                       "reasoning_content": "Need the weather."}
            return web.json_response({"id": "chatcmpl-f", "object": "chat.completion", "created": 1, "model": MODEL,
                                      "usage": usage, "choices": [{"index": 0, "finish_reason": "tool_calls",
                                                                   "message": message}]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for delta, finish in (({"reasoning_content": "Need the weather."}, None),
                              ({"tool_calls": [{"index": 0, **call, "function": {"name": "get_weather",
                                                                                 "arguments": ""}}]}, None),
                              ({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]},
                               "tool_calls")):
            chunk = {"id": "chatcmpl-f", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await resp.write(b"data: " + orjson.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1,
                                                   "model": MODEL, "choices": [], "usage": usage}) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        return resp

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    server = await aiohttp_server(app)
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.DEEPSEEK),
                      base_url=str(server.make_url("")).rstrip("/"))
    token = await make_key(await rich_user())
    history = [{"role": "user", "content": "Weather in Paris?"},
               {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Rome"}'},
               {"type": "function_call_output", "call_id": "call_1", "output": "21°C"},
               {"role": "assistant", "content": [{"type": "output_text", "text": "Rome: 21°C."}]},
               {"role": "user", "content": "And Paris?"}]
    async with sdk(gateway, token) as client:
        response = await client.responses.create(model=MODEL, input=history, tools=[WEATHER],
                                                 tool_choice={"type": "function", "name": "get_weather"})
        async with client.responses.stream(model=MODEL, input=history, tools=[WEATHER]) as stream:
            final = await stream.get_final_response()
        # The next turn sends the reasoning item back: DeepSeek gets its reasoning_content again.
        answered = [*history, *[item.model_dump(exclude_none=True) for item in final.output],
                    {"type": "function_call_output", "call_id": "call_9", "output": "18°C"}]
        await client.responses.create(model=MODEL, input=answered, tools=[WEATHER])
    for answer in (response, final):
        kinds = [item.type for item in answer.output]
        assert kinds == ["reasoning", "function_call"], kinds
        fc = answer.output[1]
        assert (fc.call_id, fc.name, fc.arguments) == ("call_9", "get_weather", '{"city":"Paris"}')
        assert answer.output[0].summary[0].text == "Need the weather."
    assert seen[0]["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather of a city", "parameters": WEATHER["parameters"]}}]
    assert seen[0]["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert seen[0]["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city":"Rome"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21°C"},
        {"role": "assistant", "content": "Rome: 21°C."},
        {"role": "user", "content": "And Paris?"}]
    assert seen[2]["messages"][-2:] == [
        {"role": "assistant", "content": None, "reasoning_content": "Need the weather.", "tool_calls": [
            {"id": "call_9", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "18°C"}]


async def test_relayed_as_sent_to_an_openai_channel(gateway, aiohttp_server) -> None:
    fake = FakeResponses()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, fake, models=NATIVE)
    user = await rich_user()
    token = await make_key(user)
    tools = [{"type": "web_search"}, {"type": "file_search", "vector_store_ids": ["vs_1"]}]
    async with sdk(gateway, token) as client:
        raw = await client.responses.with_raw_response.create(model=NATIVE, input="Search it.", tools=tools)
        answer = raw.parse()
        async with client.responses.stream(model=NATIVE, input="Search it.", tools=tools) as stream:
            kinds = [event.type async for event in stream]
            final = await stream.get_final_response()
    assert answer.id == "resp_upstream" == final.id and answer.output_text == fake.reply == final.output_text
    assert "X-Gateway-Dropped" not in raw.headers  # the upstream runs its own tools: nothing left out
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert fake.seen[0]["body"] == {"model": NATIVE, "input": "Search it.", "tools": tools, "store": False}
    assert fake.seen[0]["headers"]["Authorization"] == "Bearer sk-upstream-secret"
    await drain(gateway)
    price = pricing.resolve_price(NATIVE)
    expected = pricing.settle_quota(price, 40, 12, cached_tokens=16)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (40, 12, expected)] * 2


async def test_hosted_tools_left_out_with_a_notice_on_a_converted_channel(gateway, upstreams) -> None:
    fake = await upstreams()
    await chat_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        raw = await client.responses.with_raw_response.create(
            model=MODEL, input="Hi", tools=[WEATHER, {"type": "code_interpreter", "container": {"type": "auto"}}])
    assert raw.parse().output_text == REPLY
    assert raw.headers["X-Gateway-Dropped"] == "tools.code_interpreter"
    assert [t["function"]["name"] for t in fake.seen[0].body["tools"]] == ["get_weather"]
    await drain(gateway)
    assert orjson.loads((await consume_logs(user))[0].other)["dropped"] == ["tools.code_interpreter"]


async def test_stateless_and_errors_in_openais_types(gateway, upstreams) -> None:
    fake = await upstreams(fail_status=500)
    await chat_channel(gateway, fake)
    token = await make_key(await rich_user())
    poor = await make_key(await rich_user("poor", quota=0))
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="previous_response_id is not supported"):
            await client.responses.create(model=MODEL, input="Hi", previous_response_id="resp_123")
        with pytest.raises(openai.BadRequestError, match="conversation is not supported"):
            await client.responses.create(model=MODEL, input="Hi", conversation="conv_1")
        with pytest.raises(openai.BadRequestError, match="item_reference is not supported"):
            await client.responses.create(model=MODEL, input=[{"type": "item_reference", "id": "msg_1"}])
        with pytest.raises(openai.NotFoundError, match="not stored"):
            await client.responses.retrieve("resp_123")
        with pytest.raises(openai.InternalServerError):
            await client.responses.create(model=MODEL, input="Hi")
    async with openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key="sk-nope", max_retries=0) as bad:
        with pytest.raises(openai.AuthenticationError):
            await bad.responses.create(model=MODEL, input="Hi")
    async with sdk(gateway, poor) as client:
        with pytest.raises(openai.PermissionDeniedError):
            await client.responses.create(model=MODEL, input="Hi")
