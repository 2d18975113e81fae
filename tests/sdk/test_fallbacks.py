"""Chains of models (api/relay/fallbacks.py) through the providers' SDKs: the first model's channels
fail (their providers' own error bodies), the next model of the chain answers, charged at its price
once; a chain that fails everywhere is refunded in full and logged as one error row."""
from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anthropic
import openai
import orjson
import pytest
from aiohttp import web
from google import genai
from google.genai import types

from api.upstream.catalogue import ChannelType
from models import Log, User
from models.enums import LogType
from tests.api.test_error_logs import written
from tests.relay.fakes import add_channel, drain, live_balance, make_key
from tests.sdk.channels import Usage
from tests.sdk.conftest import START_QUOTA, Relay, options_of
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_openai_strict import FakeOpenAI

OPENAI_USAGE = Usage(40, 12)  # FakeOpenAI's
CLAUDE_USAGE = Usage(21, 9)  # FakeClaude's
GEMINI_USAGE = Usage(17, 8)  # FakeGemini's
# The providers' own words (their documented error bodies)
OPENAI_CONTEXT = {"error": {"message": "This model's maximum context length is 400000 tokens. However, your messages "
                            "resulted in 412000 tokens. Please reduce the length of the messages.",
                            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
CLAUDE_CONTEXT = {"type": "error", "error": {"type": "invalid_request_error",
                                             "message": "prompt is too long: 208310 tokens > 200000 maximum"}}
GEMINI_CONTEXT = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "The input token count (1200000) "
                            "exceeds the maximum number of tokens allowed (1048576)."}}
OPENAI_POLICY = {"error": {"message": "Invalid prompt: your prompt was flagged as potentially violating our usage "
                           "policy.", "type": "invalid_request_error", "param": None, "code": "invalid_prompt"}}
OPENAI_500 = {"error": {"message": "The server had an error while processing your request.", "type": "server_error",
                        "param": None, "code": None}}
OPENAI_429 = {"error": {"message": "Rate limit reached for gpt-5 on tokens per min.", "type": "requests",
                        "param": None, "code": "rate_limit_exceeded"}}
CLAUDE_529 = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

Serve = Callable[..., Awaitable[str]]


@pytest.fixture
async def serve(aiohttp_server) -> AsyncIterator[Serve]:
    """serve(app) → the URL of a running fake."""
    async def start(app: web.Application) -> str:
        return str((await aiohttp_server(app)).make_url("")).rstrip("/")
    yield start


def failing(status: int, body: dict[str, Any], seen: list[str]) -> web.Application:
    async def answer(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.json_response(body, status=status)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app


async def chains(relay: Relay, value: dict[str, Any]) -> None:
    await options_of(relay.gateway).update("ModelFallbacks", orjson.dumps(value).decode())


OPENED: list[Any] = []


@pytest.fixture(autouse=True)
async def closed() -> AsyncIterator[None]:
    """Every SDK client a test opened, closed after it."""
    yield
    while OPENED:
        client = OPENED.pop()
        await (client.aio.aclose() if isinstance(client, genai.Client) else client.close())


def opened(client: Any) -> Any:
    OPENED.append(client)
    return client


def client_of(relay: Relay, key: str = "") -> openai.AsyncOpenAI:
    return opened(openai.AsyncOpenAI(base_url=str(relay.gateway.make_url("/v1")),
                                     api_key=f"sk-{key or relay.token.key}", max_retries=0))


async def consume_logs(relay: Relay) -> tuple[list[Log], int]:
    await drain(relay.gateway)
    logs = await Log.filter(user_id=relay.user.id, type=LogType.CONSUME).order_by("id")
    return logs, (await User.get(id=relay.user.id)).quota


async def openai_channel(relay: Relay, serve: Serve, model: str = "gpt-5") -> FakeOpenAI:
    fake = FakeOpenAI()
    await add_channel(relay.gateway, None, models=model, type=int(ChannelType.OPENAI), key=fake.key,
                      base_url=await serve(fake.app()), name=f"openai {model}")
    return fake


@pytest.mark.parametrize("down", ["500", "429", "refused", "529"])
@pytest.mark.parametrize("stream", [False, True])
async def test_every_channel_of_the_first_model_down_the_second_answers_at_its_price(
        relay: Relay, serve: Serve, unused_tcp_port: int, down: str, stream: bool) -> None:
    seen: list[str] = []
    if down == "refused":
        first = f"http://127.0.0.1:{unused_tcp_port}"
    elif down == "529":
        first = await serve(failing(529, CLAUDE_529, seen))
    else:
        first = await serve(failing(int(down), OPENAI_500 if down == "500" else OPENAI_429, seen))
    kind = ChannelType.ANTHROPIC if down == "529" else ChannelType.OPENAI
    for n in range(2):  # every channel of the first model fails
        await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(kind), key="sk-down",
                          base_url=first, name=f"down {n}")
    fake = await openai_channel(relay, serve)
    await chains(relay, {"claude-*": {"models": ["gpt-5"]}})
    client = client_of(relay)
    messages: list[Any] = [{"role": "user", "content": "hello"}]
    if stream:
        async with client.chat.completions.stream(model="claude-opus-5-5", messages=messages,
                                                  stream_options={"include_usage": True}) as events:
            answer = await events.get_final_completion()
    else:
        raw = await client.chat.completions.with_raw_response.create(model="claude-opus-5-5", messages=messages)
        assert raw.headers["X-Gateway-Model"] == "gpt-5"
        answer = raw.parse()
    assert answer.model == "gpt-5"
    assert answer.choices[0].message.content
    assert len(fake.seen) == 1 and "models" not in fake.seen[0]
    logs, balance = await consume_logs(relay)
    assert len(logs) == 1 and logs[0].model_name == "gpt-5"
    charge = relay.charge("gpt-5", OPENAI_USAGE)
    assert logs[0].quota == charge and balance == START_QUOTA - charge
    fallback = orjson.loads(logs[0].other)["fallback"]
    assert fallback["requested"] == "claude-opus-5-5" and fallback["answered"] == "gpt-5"
    assert [p["model"] for p in fallback["passed"]] == ["claude-opus-5-5"]
    assert fallback["passed"][0]["reason"] == "unavailable"


async def test_a_prompt_too_long_for_claude_goes_to_the_larger_context_model(relay: Relay, serve: Serve) -> None:
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.ANTHROPIC),
                      key="sk-ant", base_url=await serve(failing(400, CLAUDE_CONTEXT, seen)), name="claude")
    gemini = FakeGemini()
    await add_channel(relay.gateway, None, models="gemini-3-pro-preview", type=int(ChannelType.GEMINI),
                      key=gemini.key, base_url=await serve(gemini.app()), name="gemini")
    await chains(relay, {"claude-opus-5-5": {"models": ["gemini-3-pro-preview"]}})
    client = opened(anthropic.AsyncAnthropic(base_url=str(relay.gateway.make_url("")),
                                             api_key=f"sk-{relay.token.key}", max_retries=0))
    raw = await client.messages.with_raw_response.create(
        model="claude-opus-5-5", max_tokens=256, messages=[{"role": "user", "content": "a long prompt"}])
    assert raw.headers["X-Gateway-Model"] == "gemini-3-pro-preview"
    message = await raw.parse()
    assert message.model == "gemini-3-pro-preview"
    assert len(seen) == 1 and len(gemini.seen) == 1
    logs, balance = await consume_logs(relay)
    charge = relay.charge("gemini-3-pro-preview", GEMINI_USAGE)
    assert [log.quota for log in logs] == [charge] and balance == START_QUOTA - charge
    assert orjson.loads(logs[0].other)["fallback"]["passed"][0]["reason"] == "context"


@pytest.mark.parametrize(("first", "body"), [("gpt-5", OPENAI_CONTEXT), ("gemini-3-pro-preview", GEMINI_CONTEXT)])
async def test_the_context_errors_of_openai_and_gemini_through_google_genai(
        relay: Relay, serve: Serve, first: str, body: dict[str, Any]) -> None:
    seen: list[str] = []
    kind = ChannelType.OPENAI if first == "gpt-5" else ChannelType.GEMINI
    await add_channel(relay.gateway, None, models=first, type=int(kind), key="sk-first",
                      base_url=await serve(failing(400, body, seen)), name="first")
    claude = FakeClaude()
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.ANTHROPIC),
                      key=claude.key, base_url=await serve(claude.app()), name="claude")
    await chains(relay, {first: {"models": ["claude-opus-5-5"], "on": ["context"]}})
    client = opened(genai.Client(api_key=f"sk-{relay.token.key}", http_options=types.HttpOptions(
        base_url=str(relay.gateway.make_url("")), api_version="v1beta")))
    answer = await client.aio.models.generate_content(model=first, contents="a long prompt")
    assert answer.text
    assert len(seen) == 1 and len(claude.seen) == 1
    logs, balance = await consume_logs(relay)
    charge = relay.charge("claude-opus-5-5", CLAUDE_USAGE)
    assert [log.model_name for log in logs] == ["claude-opus-5-5"] and balance == START_QUOTA - charge


@pytest.mark.parametrize("on", [["unavailable", "context"], ["policy"]])
async def test_a_content_refusal_falls_back_only_when_the_chain_asks_for_it(
        relay: Relay, serve: Serve, on: list[str]) -> None:
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="gpt-5", type=int(ChannelType.OPENAI), key="sk-p",
                      base_url=await serve(failing(400, OPENAI_POLICY, seen)), name="strict")
    fake = await openai_channel(relay, serve, "deepseek-reasoner")
    await chains(relay, {"gpt-5": {"models": ["deepseek-reasoner"], "on": on}})
    client = client_of(relay)
    if "policy" not in on:
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}])
        assert fake.seen == []
        assert (await User.get(id=relay.user.id)).quota == START_QUOTA
        return
    answer = await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}])
    assert answer.model == "deepseek-reasoner" and len(fake.seen) == 1


async def test_a_client_chain_skips_a_model_the_key_may_not_use(relay: Relay, serve: Serve) -> None:
    token = await make_key(relay.user, model_limits_enabled=True, model_limits="gpt-5,claude-opus-5-5")
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.OPENAI), key="sk-d",
                      base_url=await serve(failing(500, OPENAI_500, seen)), name="down")
    forbidden = await openai_channel(relay, serve, "deepseek-reasoner")
    allowed = await openai_channel(relay, serve, "gpt-5")
    client = client_of(relay, token.key)
    answer = await client.chat.completions.create(
        model="claude-opus-5-5", messages=[{"role": "user", "content": "x"}],
        extra_body={"models": ["deepseek-reasoner", "gpt-5"], "route": "fallback"})
    assert answer.model == "gpt-5"
    assert forbidden.seen == [] and len(allowed.seen) == 1
    assert not {"models", "route"} & set(allowed.seen[0])
    logs, _ = await consume_logs(relay)
    passed = orjson.loads(logs[0].other)["fallback"]["passed"]
    assert {"model": "deepseek-reasoner", "skipped": "not_allowed"} in passed


async def test_a_chain_that_fails_everywhere_is_refunded_in_full_and_logged_once(relay: Relay, serve: Serve) -> None:
    seen: list[str] = []
    down = await serve(failing(500, OPENAI_500, seen))
    for model in ("claude-opus-5-5", "gpt-5"):
        await add_channel(relay.gateway, None, models=model, type=int(ChannelType.OPENAI), key="sk-d",
                          base_url=down, name=f"down {model}")
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})
    with pytest.raises(openai.InternalServerError):
        await client_of(relay).chat.completions.create(
            model="claude-opus-5-5", messages=[{"role": "user", "content": "x"}],
            extra_body={"fallbacks": ["gpt-5"]})
    assert len(seen) >= 2
    await drain(relay.gateway)
    assert (await User.get(id=relay.user.id)).quota == START_QUOTA
    rows = await written(relay.gateway)
    assert len(rows) == 1
    row = rows[0]
    assert orjson.loads(row.other)["fallback"]["passed"][0]["model"] == "claude-opus-5-5"
    assert await Log.filter(user_id=relay.user.id, type=LogType.CONSUME).count() == 0


async def test_a_dearer_model_is_reserved_again_and_charged_its_price(relay: Relay, serve: Serve) -> None:
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="deepseek-reasoner", type=int(ChannelType.OPENAI), key="sk-d",
                      base_url=await serve(failing(503, OPENAI_500, seen)), name="down")
    fake = FakeOpenAI()  # the dearer model (ModelRatio 2.5 against 0.275)
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.OPENAI), key=fake.key,
                      base_url=await serve(fake.app()), name="dear", model_mapping='{"claude-opus-5-5": "gpt-5"}')
    await chains(relay, {"deepseek-reasoner": {"models": ["claude-opus-5-5"]}})
    raw = await client_of(relay).chat.completions.with_raw_response.create(
        model="deepseek-reasoner", max_tokens=1000, messages=[{"role": "user", "content": "x"}])
    assert raw.headers["X-Gateway-Model"] == "claude-opus-5-5"
    logs, balance = await consume_logs(relay)
    charge = relay.charge("claude-opus-5-5", OPENAI_USAGE)
    assert [log.quota for log in logs] == [charge] and balance == START_QUOTA - charge


async def test_a_stream_that_failed_after_its_first_byte_does_not_fall_back(relay: Relay, serve: Serve) -> None:
    claude = FakeClaude(cut_after=1)
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.ANTHROPIC),
                      key=claude.key, base_url=await serve(claude.app()), name="claude")
    fake = await openai_channel(relay, serve)
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})
    stream = await client_of(relay).chat.completions.create(
        model="claude-opus-5-5", messages=[{"role": "user", "content": "x"}], stream=True)
    with pytest.raises(openai.APIError):
        async for _ in stream:
            pass
    assert len(claude.seen) == 1 and fake.seen == []
    logs, _ = await consume_logs(relay)
    assert [log.model_name for log in logs] == ["claude-opus-5-5"]
    assert "fallback" not in orjson.loads(logs[0].other)


async def test_a_named_route_is_listed_and_served_by_its_models_and_messages_take_fallbacks(
        relay: Relay, serve: Serve) -> None:
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.ANTHROPIC), key="sk-a",
                      base_url=await serve(failing(529, CLAUDE_529, seen)), name="claude down")
    fake = await openai_channel(relay, serve)
    await options_of(relay.gateway).update("ModelRoutes", orjson.dumps(
        {"auto-coder": {"models": ["claude-opus-5-5", "gpt-5"]}, "elsewhere": {"models": ["x"]}}).decode())
    client = client_of(relay)
    assert "auto-coder" in [m.id async for m in client.models.list()]
    assert "elsewhere" not in [m.id async for m in client.models.list()]
    answer = await client.chat.completions.create(model="auto-coder", messages=[{"role": "user", "content": "x"}])
    assert answer.model == "gpt-5" and len(seen) == 1 and len(fake.seen) == 1
    messages = opened(anthropic.AsyncAnthropic(base_url=str(relay.gateway.make_url("")),
                                               api_key=f"sk-{relay.token.key}", max_retries=0))
    message = await messages.messages.create(model="claude-opus-5-5", max_tokens=64, extra_body={
        "fallbacks": ["gpt-5"]}, messages=[{"role": "user", "content": "x"}])
    assert message.model == "gpt-5" and len(fake.seen) == 2 and "fallbacks" not in fake.seen[1]
    logs, _ = await consume_logs(relay)
    assert [orjson.loads(log.other)["fallback"]["source"] for log in logs] == ["route", "client"]


def down_once(target: str, seen: list[str], call: int) -> web.Application:
    """Claude overloaded for one call (the first or the second), itself otherwise."""
    import aiohttp

    async def answer(request: web.Request) -> web.Response:
        seen.append(request.path)
        if len(seen) == call:
            return web.json_response(CLAUDE_529, status=529)
        async with aiohttp.ClientSession() as session, session.post(
                target + request.path_qs, data=await request.read(), headers={
                    k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}) as up:
            return web.Response(body=await up.read(), status=up.status,
                                headers={"Content-Type": up.headers.get("Content-Type", "application/json")})
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app


@pytest.mark.parametrize("down", [1, 2], ids=["first-turn-down", "second-turn-down"])
@pytest.mark.parametrize("stream", [False, True])
async def test_a_thinking_tool_loop_falls_back_for_one_turn_and_returns_to_claude(
        relay: Relay, serve: Serve, stream: bool, down: int) -> None:
    """Claude Code's loop, thinking on: one turn served by gpt-5 while the Claude channel is down; the
    strict fakes refuse a foreign or altered signature, and a field OpenAI does not know."""
    from tests.sdk.clients import anthropic_messages
    from tests.sdk.scenario import ANSWER, WeatherScript

    claude = FakeClaude(script=WeatherScript())
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.ANTHROPIC), key=claude.key,
                      base_url=await serve(down_once(await serve(claude.app()), seen, down)), name="claude")
    gpt = FakeOpenAI(script=WeatherScript())
    await add_channel(relay.gateway, None, models="gpt-5", type=int(ChannelType.OPENAI), key=gpt.key,
                      base_url=await serve(gpt.app()), name="gpt")
    await chains(relay, {"claude-opus-5-5": {"models": ["gpt-5"]}})
    assert await anthropic_messages(relay.loop("claude-opus-5-5", stream)) == ANSWER
    assert len(seen) == 2 and len(gpt.seen) == 1 and len(claude.seen) == 1
    for message in claude.seen[0]["body"]["messages"]:  # nothing sealed by the gateway reaches Claude
        for block in message["content"] if isinstance(message["content"], list) else ():
            assert not str(block.get("signature", "")).startswith("gwr1."), block
    if down == 2:  # Claude's own thinking, signed, is never sent to OpenAI
        assert "thinking_blocks" not in orjson.dumps(gpt.seen[0]).decode()
    logs, balance = await consume_logs(relay)
    assert [log.model_name for log in logs] == (["gpt-5", "claude-opus-5-5"] if down == 1 else
                                                ["claude-opus-5-5", "gpt-5"])
    assert balance == START_QUOTA - sum(log.quota for log in logs)


async def test_a_dearer_model_the_key_cannot_cover_is_not_tried_and_all_is_refunded(relay: Relay, serve: Serve) -> None:
    seen: list[str] = []
    await add_channel(relay.gateway, None, models="deepseek-reasoner", type=int(ChannelType.OPENAI), key="sk-d",
                      base_url=await serve(failing(503, OPENAI_500, seen)), name="down")
    fake = FakeOpenAI()
    await add_channel(relay.gateway, None, models="claude-opus-5-5", type=int(ChannelType.OPENAI), key=fake.key,
                      base_url=await serve(fake.app()), name="dear", model_mapping='{"claude-opus-5-5": "gpt-5"}')
    await chains(relay, {"deepseek-reasoner": {"models": ["claude-opus-5-5"]}})
    # deepseek-reasoner's pre-charge for 1000 output tokens fits in 600; claude-opus-5-5's (2.5 × 1000+) does not
    token = await make_key(relay.user, remain_quota=600, unlimited=False)
    with pytest.raises(openai.InternalServerError):
        await client_of(relay, token.key).chat.completions.create(
            model="deepseek-reasoner", max_tokens=1000, messages=[{"role": "user", "content": "x"}])
    assert fake.seen == [] and len(seen) >= 1
    await drain(relay.gateway)
    assert (await User.get(id=relay.user.id)).quota == START_QUOTA
    assert await live_balance(relay.gateway, relay.user.id, token.id) == 600
