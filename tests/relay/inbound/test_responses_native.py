# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Which channels get the Responses API as sent, learnt from them: an OpenAI-type channel whose
upstream has no /v1/responses (404) serves the same request converted at once, is not penalised
(no failure in its health window, no retry used, never disabled), and later requests go straight to
conversion, in every process (the mark is in Redis); a 404 about the model is the model's. And
/v1/responses/compact: relayed to a native upstream, converted elsewhere. Every charge to the unit."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.services import redis_keys
from api.services.billing import pricing
from api.upstream.reasoning import TEXT, unseal
from tests.relay.fakes import REPLY, FakeUpstream, add_channel, drain, gateway, make_key, relay_of, rich_user  # noqa: F401
from tests.upstream.providers.kit import consume_logs, sdk
from tests.upstream.providers.openai.fake_responses import FakeResponses

MODEL = "gpt-4o"
HISTORY = [{"role": "user", "content": "Fix the login bug."},
           {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"command":["ls"]}'},
           {"type": "function_call_output", "call_id": "c1", "output": "login.py"},
           {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Found it."}]},
           {"role": "user", "content": "Go on."}]
SHELL = {"type": "function", "name": "shell", "description": "Run a command",
         "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}}


@pytest.fixture
async def chat_only(aiohttp_server) -> Callable[..., Awaitable[tuple[FakeUpstream, list[str]]]]:
    """An OpenAI-compatible upstream with chat completions only; every path asked for is listed."""

    async def start(**behaviour: Any) -> tuple[FakeUpstream, list[str]]:
        fake, paths = FakeUpstream(**behaviour), []

        @web.middleware
        async def listed(request: web.Request, handler):
            paths.append(request.path)
            return await handler(request)

        app = fake.app()
        app.middlewares.append(listed)
        fake.server = await aiohttp_server(app)
        return fake, paths

    return start


async def strict_health(gateway) -> None:
    """One counted failure would disable a channel at once, and no retry is left."""
    options = gateway.server.app[keys.OPTIONS]
    for name, value in (("AutomaticDisableChannelEnabled", "true"), ("AutomaticDisableMinRequests", "1"),
                        ("AutomaticDisableErrorRate", "0.01"), ("RetryTimes", "0")):
        await options.update(name, value)


async def test_no_responses_upstream_is_served_converted_and_not_penalised(gateway, chat_only) -> None:
    fake, paths = await chat_only()
    channel = await add_channel(gateway, fake, models=MODEL)
    await strict_health(gateway)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        first = await client.responses.create(model=MODEL, input=HISTORY, tools=[SHELL])
        async with client.responses.stream(model=MODEL, input="Again.") as stream:
            streamed = await stream.get_final_response()
    assert first.output_text == REPLY == streamed.output_text
    assert paths == ["/v1/responses", "/v1/chat/completions", "/v1/chat/completions"]
    assert fake.seen[0].body["messages"] == [
        {"role": "user", "content": "Fix the login bug."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"command":["ls"]}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "login.py"},
        {"role": "assistant", "content": "Found it."},
        {"role": "user", "content": "Go on."}]
    relay = relay_of(gateway)
    assert relay.index.get(channel.id) is not None
    assert [ok for _, ok in relay.health._windows[channel.id]] == [True, True]
    store = gateway.server.app[keys.STORE]
    mark = orjson.loads(await store.redis.hget(redis_keys.native_missing(store),
                                               f"{channel.id}:/v1/responses"))
    assert mark["base"] == fake.url
    await drain(gateway)
    price = pricing.resolve_price(MODEL)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota, log.channel_id) for log in await consume_logs(user)
            ] == [(13, 7, pricing.settle_quota(price, 13, 7), channel.id)] * 2


def forget_marks(gateway) -> None:
    """This process forgets what it knew of native endpoints (as a process that just started)."""
    marks = relay_of(gateway).native_routes
    marks.missing.clear()
    marks.read_at.clear()


async def test_every_process_reads_the_mark_and_it_lapses(gateway, chat_only) -> None:
    fake, paths = await chat_only()
    channel = await add_channel(gateway, fake, models=MODEL)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        await client.responses.create(model=MODEL, input="Hi")
        forget_marks(gateway)  # another process: nothing known but what Redis holds
        await client.responses.create(model=MODEL, input="Hi")
        assert paths == ["/v1/responses", "/v1/chat/completions", "/v1/chat/completions"]
        store = gateway.server.app[keys.STORE]
        await store.redis.hset(redis_keys.native_missing(store), f"{channel.id}:/v1/responses",
                               orjson.dumps({"base": fake.url, "at": 1.0}))  # marked long ago
        forget_marks(gateway)
        async with client.responses.stream(model=MODEL, input="Hi") as stream:
            assert (await stream.get_final_response()).output_text == REPLY
    assert paths[3:] == ["/v1/responses", "/v1/chat/completions"]  # tried again, then converted again


async def test_a_missing_model_is_not_a_missing_endpoint(gateway, aiohttp_server) -> None:
    async def no_model(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": "The model `gpt-4o` does not exist or you do not have "
                                            "access to it.", "type": "invalid_request_error", "param": None,
                                            "code": "model_not_found"}}, status=404)

    app = web.Application()
    app.router.add_post("/v1/responses", no_model)
    server = await aiohttp_server(app)
    channel = await add_channel(gateway, None, models=MODEL, base_url=str(server.make_url("")).rstrip("/"))
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.NotFoundError, match="does not exist"):
            await client.responses.create(model=MODEL, input="Hi")
    store = gateway.server.app[keys.STORE]
    assert await store.redis.hget(redis_keys.native_missing(store), f"{channel.id}:/v1/responses") \
        is None
    assert [ok for _, ok in relay_of(gateway).health._windows[channel.id]] == [False]


async def test_compact_relayed_to_a_native_upstream(gateway, aiohttp_server) -> None:
    fake = FakeResponses()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        compacted = await client.responses.compact(model=MODEL, input=HISTORY, instructions="You are Codex.")
    assert compacted.object == "response.compaction" and compacted.id == "resp_compacted"
    assert [item.type for item in compacted.output] == ["message", "message", "compaction"]
    assert fake.seen[0]["path"] == "/v1/responses/compact"
    assert fake.seen[0]["body"] == {"model": MODEL, "input": HISTORY, "instructions": "You are Codex."}
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        40, 12, pricing.settle_quota(pricing.resolve_price(MODEL), 40, 12, cached_tokens=16))
    assert orjson.loads(log.other)["inbound_format"] == "responses_compact"


async def test_compact_converted_where_the_upstream_has_none(gateway, chat_only) -> None:
    fake, paths = await chat_only(reply="The user wants the login bug fixed; login.py is the culprit.")
    await add_channel(gateway, fake, models=MODEL)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        raw = await client.responses.with_raw_response.compact(model=MODEL, input=HISTORY,
                                                               instructions="You are Codex.")
        compacted = orjson.loads(raw.content)  # as Codex reads it (codex-rs/codex-api/src/endpoint/compact.rs)
        followed = await client.responses.create(model=MODEL, input=[*compacted["output"],
                                                                     {"role": "user", "content": "Continue."}])
    assert followed.output_text == fake.reply
    assert paths == ["/v1/responses/compact", "/v1/chat/completions", "/v1/responses", "/v1/chat/completions"]
    assert compacted["object"] == "response.compaction"
    assert [(item["type"], item.get("role")) for item in compacted["output"]] == [
        ("message", "user"), ("message", "user"), ("compaction", None)]
    assert compacted["output"][0]["content"] == [{"type": "input_text", "text": "Fix the login bug."}]
    assert unseal(compacted["output"][2]["encrypted_content"]) == (TEXT, {"text": fake.reply})
    asked = fake.seen[0].body
    assert asked["messages"][0] == {"role": "system", "content": "You are Codex."}
    assert asked["messages"][-1]["role"] == "user" and "summary" in asked["messages"][-1]["content"]
    assert "stream" not in asked
    again = fake.seen[1].body["messages"]
    assert [m["role"] for m in again] == ["user", "user", "user", "user"]
    assert again[2]["content"].endswith(fake.reply) and again[3]["content"] == "Continue."
    await drain(gateway)
    price = pricing.resolve_price(MODEL)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (13, 7, pricing.settle_quota(price, 13, 7))] * 2
