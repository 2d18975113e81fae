"""iFlytek Spark channels (type 18) through the official openai SDK.

A channel whose key is an APIPassword speaks the OpenAI-compatible HTTP API (tests/relay/
fake_xunfei_http.py): answers streamed and not, billed to the unit; tools and their round trip; X1 on
/v2 with its reasoning (also for a WebSocket key, as APIKey:APISecret); the error object and the
error codes. A channel whose key is APPID|APISecret|APIKey keeps the WebSocket API, against a fake
Spark WebSocket server that checks the HMAC-signed URL (host, date, request line), the version's path
and domain, and answers in frames whose last (status 2) carries the usage: streamed and not,
function calls, the handshake refused for a bad signature, business errors in a frame."""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp
import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from models import Channel
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, make_key, relay_of, rich_user
from tests.upstream.providers.kit import FakeBase, consume_logs, finish_reasons, sdk, stream_chat
from tests.upstream.providers.xunfei.fake_xunfei_http import PASSWORD, FakeSparkHttp

APP_ID, API_SECRET, API_KEY = "5f1a2b3c", "spark-secret", "spark-key"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
PIECES = ["你好，", "我是", "星火。"]
USAGE = {"question_tokens": 4, "prompt_tokens": 13, "completion_tokens": 6, "total_tokens": 19}
DOMAINS = {"/v1.1/chat": "lite", "/v3.5/chat": "generalv3.5", "/v4.0/chat": "4.0Ultra", "/chat/max-32k": "max-32k"}


@dataclass
class FakeSpark(FakeBase):
    function_call: dict[str, Any] | None = None
    frame_error: tuple[int, str] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        for path in DOMAINS:
            app.router.add_get(path, self.handle)
        return app

    def signature_problem(self, request: web.Request) -> str | None:
        query = request.query
        try:
            authorization = base64.b64decode(query["authorization"]).decode()
            fields = dict(re.findall(r'(\w+)="([^"]*)"', authorization))
            date = query["date"]
        except (KeyError, ValueError):
            return "missing authorization"
        if fields.get("api_key") != API_KEY or fields.get("algorithm") != "hmac-sha256":
            return "invalid api_key"
        if abs(parsedate_to_datetime(date).timestamp() - time.time()) > 300:
            return "the date is too far from now"
        if query.get("host") != request.host:
            return "host mismatch"
        origin = f"host: {request.host}\ndate: {date}\nGET {request.path} HTTP/1.1"
        expected = base64.b64encode(hmac.new(API_SECRET.encode(), origin.encode(), hashlib.sha256).digest()).decode()
        return None if hmac.compare_digest(expected, fields.get("signature", "")) else "HMAC signature does not match"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        problem = self.signature_problem(request)
        if problem:
            return web.json_response({"message": problem}, status=401)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        message = await ws.receive_json()
        self.seen.append({"path": request.path, "body": message})
        header = {"code": 0, "message": "Success", "sid": "cht000b1", "status": 0}
        if message["header"].get("app_id") != APP_ID:
            await ws.send_json({"header": {**header, "code": 10313, "message": "appid和apikey不匹配", "status": 2}})
        elif message["parameter"]["chat"]["domain"] != DOMAINS[request.path]:
            await ws.send_json({"header": {**header, "code": 10404, "message": "domain mismatch", "status": 2}})
        elif self.frame_error:
            code, text = self.frame_error
            await ws.send_json({"header": {**header, "code": code, "message": text, "status": 2}})
        else:
            pieces = [""] if self.function_call else PIECES
            for i, piece in enumerate(pieces):
                last = i == len(pieces) - 1
                item: dict[str, Any] = {"content": piece, "role": "assistant", "index": 0}
                if last and self.function_call:
                    item["function_call"] = self.function_call
                payload: dict[str, Any] = {"choices": {"status": 2 if last else 1, "seq": i, "text": [item]}}
                if last:
                    payload["usage"] = {"text": USAGE}
                await ws.send_json({"header": {**header, "status": 2 if last else 1}, "payload": payload})
        await ws.close()
        return ws


@pytest.fixture
async def spark(serve):
    return await serve(FakeSpark())


async def spark_channel(gateway, fake: FakeSpark, model: str = "SparkDesk-v3.5", **fields) -> Channel:
    return await add_channel(gateway, None, models=model, type=int(ChannelType.XUNFEI), base_url=fake.url,
                             key=fields.pop("key", f"{APP_ID}|{API_SECRET}|{API_KEY}"), **fields)


async def test_answer_streamed_and_not_billed_by_the_last_frame(gateway, spark) -> None:
    await spark_channel(gateway, spark, other="v3.5")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="SparkDesk-v3.5", messages=MESSAGES, temperature=0,
                                                      max_tokens=100)
        text, chunks = await stream_chat(client, model="SparkDesk-v3.5", messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert answer.choices[0].message.content == "".join(PIECES) == text
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (13, 6)
    assert finish_reasons(chunks) == ["stop"] and chunks[-1].usage.completion_tokens == 6
    sent = spark.seen[0]
    assert sent["path"] == "/v3.5/chat"
    assert sent["body"] == {"header": {"app_id": APP_ID},
                            "parameter": {"chat": {"domain": "generalv3.5", "auditing": "default",
                                                   "temperature": 0.01, "max_tokens": 100}},
                            "payload": {"message": {"text": [{"role": "system", "content": "Be brief."},
                                                             {"role": "user", "content": "Say hello."}]}}}
    await drain(gateway)
    quota = pricing.settle_quota(pricing.resolve_price("SparkDesk-v3.5"), 13, 6)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (13, 6, quota)] * 2


async def test_the_version_comes_from_the_model_name_then_other(gateway, spark) -> None:
    await price_spark_models(gateway)
    await spark_channel(gateway, spark, model="SparkDesk-v4.0,SparkDesk-v3.5-32K,lite,SparkDesk", other="v1.1")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        for model in ("SparkDesk-v4.0", "SparkDesk-v3.5-32K", "lite", "SparkDesk"):
            await client.chat.completions.create(model=model, messages=MESSAGES)
    assert [s["path"] for s in spark.seen] == ["/v4.0/chat", "/chat/max-32k", "/v1.1/chat", "/v1.1/chat"]


async def test_a_bare_sparkdesk_without_a_version_is_refused_locally(gateway, spark) -> None:
    await spark_channel(gateway, spark, model="SparkDesk", other="")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.InternalServerError, match="names no version"):
            await client.chat.completions.create(model="SparkDesk", messages=MESSAGES)
    assert spark.seen == []


async def test_function_calls(gateway, spark) -> None:
    spark.function_call = {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    await spark_channel(gateway, spark, other="v3.5")
    token = await make_key(await rich_user())
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                               "parameters": {"type": "object",
                                                              "properties": {"city": {"type": "string"}}}}}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="SparkDesk-v3.5", messages=MESSAGES, tools=tools)
        _, chunks = await stream_chat(client, model="SparkDesk-v3.5", messages=MESSAGES, tools=tools)
    call = answer.choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("get_weather", '{"city":"Paris"}')
    assert answer.choices[0].finish_reason == "tool_calls" and finish_reasons(chunks) == ["tool_calls"]
    assert spark.seen[0]["body"]["payload"]["functions"] == {"text": [tools[0]["function"]]}


async def test_a_bad_signature_is_refused_at_the_handshake_and_disables(gateway, spark) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    channel = await spark_channel(gateway, spark, key=f"{APP_ID}|wrong-secret|{API_KEY}", other="v3.5")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="refused the WebSocket"):
            await client.chat.completions.create(model="SparkDesk-v3.5", messages=MESSAGES)
    assert relay_of(gateway).index.get(channel.id) is None and spark.seen == []


async def test_an_error_frame_and_the_channel_test(gateway, spark, root: ApiClient) -> None:
    channel = await spark_channel(gateway, spark, other="v3.5")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"], body
    spark.frame_error = (11202, "授权错误：秒级流控超限")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.RateLimitError):  # (the gateway's own words for an upstream 429)
            await client.chat.completions.create(model="SparkDesk-v3.5", messages=MESSAGES)
        spark.frame_error = (10907, "token数量超过上限")
        with pytest.raises(openai.BadRequestError, match="token数量超过上限"):
            await stream_chat(client, model="SparkDesk-v3.5", messages=MESSAGES)
    await drain(gateway)
    assert await consume_logs(user) == []


def test_the_signed_url_is_what_the_fake_checks() -> None:
    from api.upstream.providers.xunfei import signed_url

    url = signed_url("wss://spark-api.xf-yun.com/v3.5/chat", API_KEY, API_SECRET, "Mon, 23 Nov 2026 10:00:00 GMT")
    parsed = aiohttp.client.URL(url)
    assert (parsed.host, parsed.path, parsed.query["host"]) == ("spark-api.xf-yun.com", "/v3.5/chat",
                                                                "spark-api.xf-yun.com")
    authorization = base64.b64decode(parsed.query["authorization"]).decode()
    origin = "host: spark-api.xf-yun.com\ndate: Mon, 23 Nov 2026 10:00:00 GMT\nGET /v3.5/chat HTTP/1.1"
    signature = base64.b64encode(hmac.new(API_SECRET.encode(), origin.encode(), hashlib.sha256).digest()).decode()
    assert authorization == (f'api_key="{API_KEY}", algorithm="hmac-sha256", headers="host date request-line", '
                             f'signature="{signature}"')


def test_the_signed_url_is_masked_while_it_is_valid() -> None:
    """The authorisation in the URL opens the account for minutes: an error quoting the URL (or the
    authorisation alone, URL-encoded or not) shows neither."""
    from urllib.parse import quote

    from api.upstream.masking import mask_secrets
    from api.upstream.providers.xunfei import signed_url

    url = signed_url("wss://spark-api.xf-yun.com/v3.5/chat", API_KEY, API_SECRET, "Mon, 23 Nov 2026 10:00:01 GMT")
    authorization = aiohttp.client.URL(url).query["authorization"]
    for quoted in (f"could not connect to {url}", f"bad authorization {authorization}",
                   f"authorization={quote(authorization, safe='')}"):
        masked = mask_secrets(quoted)
        assert authorization not in masked and quote(authorization, safe="") not in masked, masked


# -- the HTTP API (an APIPassword key) ---------------------------------------------------------------

SPARK_RATIOS = {"lite": 0.0001, "generalv3.5": 1.2858, "x1": 0.25}  # what the price table lacks so far
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                           "parameters": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}]


async def price_spark_models(gateway) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("ModelRatio", orjson.dumps({**pricing.DEFAULT_MODEL_RATIO, **SPARK_RATIOS}).decode())
    await options.update("CompletionRatio", orjson.dumps({**pricing.DEFAULT_COMPLETION_RATIO, "x1": 4}).decode())


@pytest.fixture
async def spark_http(gateway, aiohttp_server) -> FakeSparkHttp:
    await price_spark_models(gateway)
    fake = FakeSparkHttp()
    fake.server = await aiohttp_server(fake.app())
    return fake


def quota_of(model: str, prompt: int, completion: int) -> int:
    price = pricing.resolve_price(model, model_ratio={**pricing.DEFAULT_MODEL_RATIO, **SPARK_RATIOS},
                                  completion_ratio={**pricing.DEFAULT_COMPLETION_RATIO, "x1": 4})
    return pricing.settle_quota(price, prompt, completion)


async def http_channel(gateway, fake: FakeSparkHttp, model: str = "generalv3.5", **fields) -> Channel:
    return await add_channel(gateway, None, models=model, type=int(ChannelType.XUNFEI), base_url=fake.url,
                             key=fields.pop("key", PASSWORD), **fields)


async def test_http_answer_streamed_and_not_billed_to_the_unit(gateway, spark_http) -> None:
    await http_channel(gateway, spark_http, model="generalv3.5,SparkDesk-v3.5")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="generalv3.5", messages=MESSAGES, temperature=0,
                                                      max_tokens=100, top_p=0.5, stop=["x"])
        text, chunks = await stream_chat(client, model="SparkDesk-v3.5", messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert answer.choices[0].message.content == "".join(spark_http.pieces) == text
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.choices[0].finish_reason) == (
        13, 6, "stop")
    assert finish_reasons(chunks) == ["stop"] and chunks[-1].usage.completion_tokens == 6
    first, second = spark_http.seen
    assert (first["path"], first["auth"]) == ("/v1/chat/completions", f"Bearer {PASSWORD}")
    assert first["body"] == {"model": "generalv3.5", "messages": MESSAGES, "temperature": 0, "top_p": 0.5,
                             "max_tokens": 100}  # `stop` is not a parameter of Spark's
    assert second["body"] == {"model": "generalv3.5", "messages": MESSAGES, "stream": True}  # the legacy name mapped
    await drain(gateway)
    assert [(log.model_name, log.prompt_tokens, log.completion_tokens, log.quota)
            for log in await consume_logs(user)] == [("generalv3.5", 13, 6, quota_of("generalv3.5", 13, 6)),
                                                     ("SparkDesk-v3.5", 13, 6, quota_of("SparkDesk-v3.5", 13, 6))]


async def test_http_tools_round_trip(gateway, spark_http) -> None:
    spark_http.tool_call = {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    await http_channel(gateway, spark_http, model="4.0Ultra,generalv3.5")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="generalv3.5", messages=MESSAGES, tools=TOOLS,
                                                      tool_choice="auto")
        _, chunks = await stream_chat(client, model="generalv3.5", messages=MESSAGES, tools=TOOLS)
        call = answer.choices[0].message.tool_calls[0]
        assert (call.id, call.function.name, call.function.arguments) == ("call_1", "get_weather", '{"city":"Paris"}')
        assert answer.choices[0].finish_reason == "tool_calls" and finish_reasons(chunks) == ["tool_calls"]
        streamed = [c.choices[0].delta.tool_calls for c in chunks if c.choices and c.choices[0].delta.tool_calls]
        assert [(t[0].index, t[0].function.name) for t in streamed] == [(0, "get_weather")]
        spark_http.tool_call = None
        turn = [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21°C"}]
        final = await client.chat.completions.create(model="generalv3.5", messages=turn, tools=TOOLS)
    assert final.choices[0].message.content == "".join(spark_http.pieces)
    assert spark_http.seen[0]["body"]["tools"] == TOOLS and spark_http.seen[0]["body"]["tool_calls_switch"] is True
    assert spark_http.seen[0]["body"]["tool_choice"] == "auto"
    assert spark_http.seen[2]["body"]["messages"][2:] == [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "content": "Sunny, 21°C", "tool_call_id": "call_1"}]


async def test_x1_on_v2_with_its_reasoning_and_a_websocket_key(gateway, spark_http) -> None:
    await http_channel(gateway, spark_http, model="x1")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="x1", messages=MESSAGES, max_tokens=50000)
        _, chunks = await stream_chat(client, model="x1", messages=MESSAGES)
    assert answer.choices[0].message.content == "".join(spark_http.pieces)
    assert answer.choices[0].message.model_extra["reasoning_content"] == "".join(spark_http.reasoning)
    thought = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in chunks
                      if c.choices)
    assert thought == "".join(spark_http.reasoning) and finish_reasons(chunks) == ["stop"]
    assert [s["path"] for s in spark_http.seen] == ["/v2/chat/completions"] * 2
    assert spark_http.seen[0]["body"]["max_tokens"] == 32768  # clamped to X1's limit
    await drain(gateway)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (13, 6, quota_of("x1", 13, 6))] * 2
    # A WebSocket key reaches X1 over HTTP too, as APIKey:APISecret (X1 doc §2.1).
    await http_channel(gateway, spark_http, model="x1", key=f"{APP_ID}|{API_SECRET}|{API_KEY}", priority=5)
    async with sdk(gateway, await make_key(await rich_user("bob"))) as client:
        await client.chat.completions.create(model="x1", messages=MESSAGES)
    assert spark_http.seen[-1]["auth"] == f"Bearer {API_KEY}:{API_SECRET}"


async def test_http_errors_are_mapped_and_not_billed(gateway, spark_http) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    broken = await http_channel(gateway, spark_http, key="revoked:password", priority=5)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="invalid user"):
            await client.chat.completions.create(model="generalv3.5", messages=MESSAGES)
        assert relay_of(gateway).index.get(broken.id) is None
        await http_channel(gateway, spark_http)
        spark_http.business_error = (11202, "授权错误：秒级流控超限")
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="generalv3.5", messages=MESSAGES)
        spark_http.business_error = (10907, "token数量超过上限")
        with pytest.raises(openai.BadRequestError, match="token数量超过上限"):
            await stream_chat(client, model="generalv3.5", messages=MESSAGES)
    await drain(gateway)
    assert await consume_logs(user) == []


async def test_the_http_channel_test(gateway, spark_http, root: ApiClient) -> None:
    channel = await http_channel(gateway, spark_http, model="lite")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"], body
    assert spark_http.seen[0]["body"]["model"] == "lite"


def test_the_key_and_other_checks() -> None:
    from api.upstream.providers.xunfei import key_problem, other_problem

    for key in (PASSWORD, "apikey:apisecret", "a|b|c", " a | b | c "):
        assert key_problem(key) is None, key
    for key in ("", "a|b", "a||c", "a b", "a|b|c|d"):
        assert key_problem(key) == "channel_key_spark", key
    assert [other_problem(o) for o in ("", "v3.5", "V4.0", "v2.1", "x")] == [
        None, None, None, "channel_spark_other_invalid", "channel_spark_other_invalid"]
