"""Google Gemini channels (type 24) through the official openai SDK against a fake Gemini API:
answers, SSE streams without an end marker, tools, images (inline and fetched under the media
policy), thinking, JSON mode, usage with cached and thought tokens billed to the unit, errors,
embeddings and the channel test."""
from __future__ import annotations

import base64

import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.services.billing import pricing
from api.services.model_name import ModelName
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_chat_request, count_input, count_text
from models import Log
from models.enums import LogType
from tests.helpers import ApiClient, eventually
from tests.relay.fakes import add_channel, drain, make_key, relay_of, rich_user
from tests.upstream.providers.gemini.fake_gemini import REPLY, FakeGemini

MODEL = "gemini-2.0-flash"  # ratio 0.05, completion ratio 4, cache read 0.25
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                           "parameters": {"type": "object", "additionalProperties": False,
                                                          "properties": {"city": {"type": "string"}}}}}]
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
                       "AAAABJRU5ErkJggg==")


@pytest.fixture
async def gemini(aiohttp_server):
    async def start(**behaviour) -> FakeGemini:
        fake = FakeGemini(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake
    return start


async def gemini_channel(gateway, fake: FakeGemini, **fields):
    return await add_channel(gateway, None, models=fields.pop("models", MODEL), type=int(ChannelType.GEMINI),
                             base_url=fake.url, key=fields.pop("key", fake.key), **fields)


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


async def consume_logs(user) -> list[Log]:
    return await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")


async def test_answer_request_shape_and_usage_with_cache_and_thoughts(gateway, gemini) -> None:
    usage = {"promptTokenCount": 1000, "candidatesTokenCount": 40, "thoughtsTokenCount": 60,
             "cachedContentTokenCount": 800, "totalTokenCount": 1100}
    fake = await gemini(usage=usage, thought="Thinking it over.")
    await gemini_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0, top_p=0.9,
                                                      max_tokens=64, stop="END", seed=7)
    message = answer.choices[0].message
    assert message.content == REPLY and message.model_extra["reasoning_content"] == "Thinking it over."
    assert answer.choices[0].finish_reason == "stop"
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (1000, 100)
    seen = fake.seen[0]
    assert (seen["model"], seen["action"], seen["path"].split("/")[1]) == (MODEL, "generateContent", "v1beta")
    assert seen["headers"]["x-goog-api-key"] == fake.key and "key" not in seen["query"]
    body = seen["body"]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Say hello."}]}]
    assert body["generationConfig"] == {"temperature": 0, "topP": 0.9, "seed": 7, "maxOutputTokens": 64,
                                        "stopSequences": ["END"]}
    assert {s["threshold"] for s in body["safetySettings"]} == {"BLOCK_NONE"}
    await drain(gateway)
    log = (await consume_logs(user))[0]
    # ((1000 − 800) + 800 × 0.25 + 100 × 4) × 0.05 = 40
    expected = pricing.settle_quota(pricing.resolve_price(MODEL), 1000, 100, cached_tokens=800)
    assert expected == 40 and (log.quota, log.prompt_tokens, log.completion_tokens) == (40, 1000, 100)
    other = orjson.loads(log.other)
    assert (other["cache_tokens"], other["cache_ratio"], other["reasoning_tokens"]) == (800, 0.25, 60)


async def test_stream_has_no_end_marker_and_is_billed(gateway, gemini) -> None:
    fake = await gemini(thought="Hmm.")
    await gemini_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                                      stream_options={"include_usage": True})
        chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                        for c in chunks if c.choices)
    assert (text, reasoning) == (REPLY, "Hmm.")
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage.prompt_tokens == 17 and chunks[-1].usage.completion_tokens == 8
    assert fake.seen[0]["action"] == "streamGenerateContent" and fake.seen[0]["query"] == {"alt": "sse"}
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (
        17, 8, pricing.settle_quota(pricing.resolve_price(MODEL), 17, 8))
    assert "incomplete" not in orjson.loads(log.other)


async def test_stream_cut_before_usage_is_billed_by_the_local_count(gateway, gemini) -> None:
    fake = await gemini(cut_after=3)
    await gemini_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    pieces: list[str] = []
    async with sdk(gateway, token) as client:
        stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
        with pytest.raises(openai.APIError, match="interrupted"):
            async for chunk in stream:
                pieces.extend(c.delta.content or "" for c in chunk.choices)
    text = "".join(pieces)
    assert text == "Hello from Gemini, "
    await drain(gateway)
    log = (await consume_logs(user))[0]
    prompt = count_chat_request({"model": MODEL, "messages": MESSAGES})
    assert (log.prompt_tokens, log.completion_tokens) == (prompt, count_text(text))
    assert "incomplete" in orjson.loads(log.other)


async def test_tools_with_a_call_and_the_follow_up_turn(gateway, gemini) -> None:
    fake = await gemini(reply="", call={"name": "get_weather", "args": {"city": "Paris"}})
    await gemini_channel(gateway, fake)
    token = await make_key(await rich_user())
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=ask, tools=TOOLS,
                                                      tool_choice={"type": "function",
                                                                   "function": {"name": "get_weather"}})
        stream = await client.chat.completions.create(model=MODEL, messages=ask, tools=TOOLS, stream=True)
        streamed = [c async for c in stream]
        call = answer.choices[0].message.tool_calls[0]
        follow = ask + [answer.choices[0].message.model_dump(exclude_none=True),
                        {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 18}'}]
        fake.call = None
        fake.reply = "It is 18°C."
        final = await client.chat.completions.create(model=MODEL, messages=follow, tools=TOOLS)
    assert answer.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather" and orjson.loads(call.function.arguments) == {"city": "Paris"}
    assert call.id.startswith("call_0_")
    body = fake.seen[0]["body"]
    assert body["tools"][0]["functionDeclarations"][0]["parameters"] == {
        "type": "object", "properties": {"city": {"type": "string"}}}  # additionalProperties removed
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}
    deltas = [c.choices[0].delta.tool_calls[0] for c in streamed if c.choices and c.choices[0].delta.tool_calls]
    assert deltas[0].id == call.id and orjson.loads(deltas[0].function.arguments) == {"city": "Paris"}
    assert [c.choices[0].finish_reason for c in streamed if c.choices][-1] == "tool_calls"
    assert fake.seen[2]["body"]["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp": 18}}}]}]
    assert final.choices[0].message.content == "It is 18°C."


async def test_images_inline_and_fetched_under_the_policy_and_json_mode(gateway, gemini, aiohttp_server) -> None:
    async def image(request: web.Request) -> web.Response:
        return web.Response(body=PNG, content_type="image/png")

    app = web.Application()
    app.router.add_get("/cat.png", image)
    images = await aiohttp_server(app)
    fake = await gemini()
    await gemini_channel(gateway, fake)
    token = await make_key(await rich_user())
    url = str(images.make_url("/cat.png"))
    content = [{"type": "text", "text": "What is this?"},
               {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
               {"type": "image_url", "image_url": {"url": url}}]
    request = {"model": MODEL, "messages": [{"role": "user", "content": content}]}
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="non-public address") as refused:
            await client.chat.completions.create(**request)
        assert not fake.seen  # refused before any upstream call
        await gateway.server.app[keys.OPTIONS].update("MediaFetchPrivateEnabled", "true")
        await client.chat.completions.create(**request)
        await client.chat.completions.create(model=MODEL, messages=MESSAGES,
                                             response_format={"type": "json_object"})
    assert refused.value.body["code"] == "invalid_image_url"
    parts = fake.seen[0]["body"]["contents"][0]["parts"]
    assert parts[1] == {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}}
    assert parts[2] == {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}
    assert fake.seen[1]["body"]["generationConfig"] == {"responseMimeType": "application/json"}


async def test_errors_and_retries(gateway, gemini) -> None:
    options = gateway.server.app[keys.OPTIONS]
    await options.update("AutomaticDisableChannelEnabled", "true")
    await options.update("RetryTimes", "1")
    fake = await gemini()
    broken = await gemini_channel(gateway, fake, key="AIza-revoked", priority=10)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="API key not valid"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert relay_of(gateway).index.get(broken.id) is None  # auto-disabled in this process at once
        store = gateway.server.app[keys.STORE]

        async def disable_queued() -> bool:
            return await store.redis.llen(f"{store.prefix}dramatiq:relay") == 1

        await eventually(disable_queued, timeout=10)
        busy = await gemini(fail_status=429, fail_body={"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                                                                  "message": "Quota exceeded"}})
        await gemini_channel(gateway, busy, priority=5)
        await gemini_channel(gateway, fake, priority=0)
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert answer.choices[0].message.content == REPLY and len(busy.seen) == 1


async def test_embeddings_and_the_channel_test(gateway, gemini, root: ApiClient) -> None:
    fake = await gemini()
    channel = await gemini_channel(gateway, fake, models="text-embedding-004,gemini-2.0-flash")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="text-embedding-004", input=["one", "two"])
    assert [d.embedding for d in result.data] == [[0.0, 0.2], [0.1, 0.2]]
    assert fake.seen[0]["action"] == "batchEmbedContents"
    assert fake.seen[0]["body"]["requests"][1] == {"model": "models/text-embedding-004",
                                                   "content": {"parts": [{"text": "two"}]}}
    await drain(gateway)
    log = (await consume_logs(user))[0]
    assert log.prompt_tokens == count_input(["one", "two"])
    body = await root.get(f"/api/channel/test/{channel.id}?model=gemini-2.0-flash")
    assert body["success"], body
    assert fake.seen[-1]["action"] == "generateContent"


def test_api_version_per_channel_or_per_model() -> None:
    from api.upstream.base import RelayMeta
    from api.upstream.providers.gemini import GeminiAdaptor

    def version(other: str, model: str = "gemini-1.0-pro") -> str:
        return GeminiAdaptor(RelayMeta(1, int(ChannelType.GEMINI), "k", other=other, name=ModelName(model))).version

    assert version("") == "v1beta" and version("v1") == "v1"
    table = '{"default": "v1alpha", "gemini-1.0-pro": "v1"}'
    assert version(table) == "v1" and version(table, "gemini-2.5-pro") == "v1alpha"
    assert version("{not json") == "v1beta" and version('{"gemini-1.0-pro": "../x"}') == "v1beta"
