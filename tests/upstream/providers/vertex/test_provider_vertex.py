"""Vertex AI channels (type 41): Gemini and Claude models behind one service-account key, exchanged
for an access token (once, cached, refreshed before expiry) at a fake token endpoint that verifies
the assertion, region per model from `other`; or behind a Vertex AI API key (express mode: Gemini
models on the global endpoint, Claude refused before sending); text embeddings through `:predict` with
either credential, billed on Vertex's token counts."""
from __future__ import annotations

from typing import Any

import aiohttp
import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.credentials import process_credentials
from api.upstream.providers.vertex import key_problem, other_problem
from api.upstream.providers.vertex.adaptor import vertex_model
from models import Log
from models.enums import LogType
from tests.helpers import ApiClient, eventually
from tests.relay.fakes import add_channel, drain, make_key, rich_user
from tests.upstream.providers.claude.fake_anthropic import REPLY as CLAUDE_REPLY
from tests.upstream.providers.gemini.fake_gemini import REPLY as GEMINI_REPLY
from tests.upstream.providers.kit import consume_logs, settled_log, stream_chat
from tests.upstream.providers.vertex.fake_vertex import API_KEY, BLOCKED_KEY, FakeVertex, token_count

MESSAGES = [{"role": "user", "content": "Say hello."}]
REGIONS = '{"default": "us-central1", "claude-3-5-sonnet-20240620": "europe-west1"}'


@pytest.fixture
async def vertex(aiohttp_server):
    async def start(**options: Any) -> FakeVertex:
        fake = FakeVertex(**options)
        server = await aiohttp_server(fake.app())
        fake.url = str(server.make_url("")).rstrip("/")
        return fake
    return start


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def test_model_names_on_vertex() -> None:
    assert vertex_model("claude-3-5-sonnet-20240620") == "claude-3-5-sonnet@20240620"
    assert vertex_model("claude-sonnet-4@20250514") == "claude-sonnet-4@20250514"
    assert vertex_model("gemini-2.0-flash") == "gemini-2.0-flash"


async def test_gemini_and_claude_on_one_key_token_exchanged_once(gateway, vertex) -> None:
    fake = await vertex()
    await add_channel(gateway, None, models="gemini-2.0-flash,claude-3-5-sonnet-20240620",
                      type=int(ChannelType.VERTEX_AI), base_url=fake.url, key=fake.service_account(), other=REGIONS)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        gemini = await client.chat.completions.create(model="gemini-2.0-flash", messages=MESSAGES)
        stream = await client.chat.completions.create(model="gemini-2.0-flash", messages=MESSAGES, stream=True)
        gemini_text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        claude = await client.chat.completions.create(model="claude-3-5-sonnet-20240620", messages=MESSAGES)
        stream = await client.chat.completions.create(model="claude-3-5-sonnet-20240620", messages=MESSAGES,
                                                      stream=True)
        claude_text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert gemini.choices[0].message.content == GEMINI_REPLY and gemini_text == GEMINI_REPLY
    assert claude.choices[0].message.content == CLAUDE_REPLY and claude_text == CLAUDE_REPLY
    assert fake.tokens == ["ya29.token-1"]  # one exchange for four requests
    assert [s["path"] for s in fake.gemini.seen] == [
        "/v1/projects/proj-7/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent",
        "/v1/projects/proj-7/locations/us-central1/publishers/google/models/gemini-2.0-flash:streamGenerateContent"]
    assert [(s["model"], s["action"]) for s in fake.claude_seen] == [
        ("claude-3-5-sonnet@20240620", "rawPredict"), ("claude-3-5-sonnet@20240620", "streamRawPredict")]
    assert "/locations/europe-west1/" in fake.claude_seen[0]["path"]  # the region of this model
    assert "x-goog-api-key" not in fake.gemini.seen[0]["headers"]
    assert fake.claude_seen[1]["body"]["stream"] is True
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    claude_quota = pricing.settle_quota(pricing.resolve_price("claude-3-5-sonnet-20240620"), 21, 9)
    assert [log.quota for log in logs][2:] == [claude_quota, claude_quota]


async def test_token_refreshed_before_it_expires(gateway, vertex, root: ApiClient) -> None:
    fake = await vertex(expires_in=120)  # inside the refresh margin from the start
    channel = await add_channel(gateway, None, models="gemini-2.0-flash", type=int(ChannelType.VERTEX_AI),
                                base_url=fake.url, key=fake.service_account(), other='{"default": "global"}')
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        await client.chat.completions.create(model="gemini-2.0-flash", messages=MESSAGES)
        assert fake.tokens == ["ya29.token-1"]
        # Still valid: answered with the current token at once, and one refresh starts meanwhile.
        await client.chat.completions.create(model="gemini-2.0-flash", messages=MESSAGES)
    assert fake.gemini.seen[1]["headers"]["Authorization"] == "Bearer ya29.token-1"

    async def refreshed() -> bool:  # the new token issued and the background refresh finished with it
        return len(fake.tokens) >= 2 and not process_credentials()._inflight

    await eventually(refreshed, timeout=10)
    body = await root.get(f"/api/channel/test/{channel.id}")  # the test goes through the same cache
    assert body["success"], body
    assert fake.gemini.seen[-1]["headers"]["Authorization"] != "Bearer ya29.token-1"
    assert "/locations/global/" in fake.gemini.seen[-1]["path"]


# -- the key and the region field --------------------------------------------------------------------


def test_key_and_region_checks() -> None:
    fake = FakeVertex()
    fake.url = "https://oauth2.example"
    assert key_problem(fake.service_account()) is None
    assert key_problem(API_KEY) is None and key_problem("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW") is None
    assert key_problem('{"type": "authorized_user"}') == "channel_key_vertex_json"
    assert key_problem("ya29.a0AfH6SMBexample-access-token-0123456789") == "channel_key_vertex_token"
    assert key_problem("AIza with spaces in it and more words here") == "channel_key_vertex_api_key"
    assert key_problem("short") == "channel_key_vertex_api_key"
    assert other_problem("") is None and other_problem(REGIONS) is None
    assert other_problem('{"default": "global", "claude-opus-4-8": "us-east5"}') is None
    assert other_problem("us-central1") == "channel_vertex_region_table"
    assert other_problem('{"default": "US Central"}') == "channel_vertex_region_table"


# -- API keys (express mode) -----------------------------------------------------------------------


async def express_channel(gateway, fake: FakeVertex, models: str = "gemini-2.5-flash", **fields: Any):
    return await add_channel(gateway, None, models=models, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                             key=fields.pop("key", API_KEY), other=fields.pop("other", ""), **fields)


async def test_api_key_chat_and_stream_on_the_global_endpoint_billed(gateway, vertex, root: ApiClient) -> None:
    fake = await vertex()
    channel = await express_channel(gateway, fake)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="gemini-2.5-flash", messages=MESSAGES)
        text, _ = await stream_chat(client, model="gemini-2.5-flash", messages=MESSAGES)
    assert answer.choices[0].message.content == GEMINI_REPLY and text == GEMINI_REPLY
    assert [(s["path"], s["query"]) for s in fake.express_seen] == [
        ("/v1/publishers/google/models/gemini-2.5-flash:generateContent", {}),
        ("/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent", {"alt": "sse"})]
    headers = fake.express_seen[0]["headers"]
    assert headers["x-goog-api-key"] == API_KEY and "Authorization" not in headers  # never in the URL
    assert fake.tokens == []  # no token exchange
    await drain(gateway)
    quota = pricing.settle_quota(pricing.resolve_price("gemini-2.5-flash"), 17, 8)
    assert [log.quota for log in await consume_logs(user)] == [quota, quota]
    body = await root.get(f"/api/channel/test/{channel.id}")  # the channel test takes the same path
    assert body["success"], body
    assert fake.express_seen[-1]["path"] == "/v1/publishers/google/models/gemini-2.5-flash:generateContent"


async def test_api_key_tools_round_trip_keeps_gemini_3_thought_signatures(gateway, vertex) -> None:
    model = "gemini-3-flash-preview"
    fake = await vertex()
    fake.gemini.reply, fake.gemini.call = "", {"name": "get_weather", "args": {"city": "Paris"}}
    await express_channel(gateway, fake, models=model)
    user = await rich_user()
    token = await make_key(user)
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                               "parameters": {"type": "object",
                                                              "properties": {"city": {"type": "string"}}}}}]
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=model, messages=ask, tools=tools)
        call = answer.choices[0].message.tool_calls[0]
        follow = ask + [answer.choices[0].message.model_dump(exclude_none=True),
                        {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 18}'}]
        fake.gemini.call, fake.gemini.reply = None, "It is 18°C."
        final = await client.chat.completions.create(model=model, messages=follow, tools=tools)
    assert answer.choices[0].finish_reason == "tool_calls" and call.function.name == "get_weather"
    sent = fake.express_seen[1]["body"]["contents"][1]["parts"][0]
    assert sent["functionCall"] == {"name": "get_weather", "args": {"city": "Paris"}}
    assert sent["thoughtSignature"] in fake.gemini.issued  # the fake refuses a turn without it
    assert final.choices[0].message.content == "It is 18°C."
    await drain(gateway)
    assert len(await consume_logs(user)) == 2


async def test_api_key_refusals_in_googles_shape(gateway, vertex, root: ApiClient) -> None:
    fake = await vertex()
    await express_channel(gateway, fake, models="gemini-2.5-pro", key="AIzaSyUnknownUnknownUnknownUnknown0000")
    await express_channel(gateway, fake, models="gemini-2.5-flash-lite", key=BLOCKED_KEY)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError) as invalid:
            await client.chat.completions.create(model="gemini-2.5-pro", messages=MESSAGES)
        with pytest.raises(openai.PermissionDeniedError) as blocked:
            await client.chat.completions.create(model="gemini-2.5-flash-lite", messages=MESSAGES)
    assert "API key not valid" in invalid.value.message
    assert "are blocked" in blocked.value.message
    async with aiohttp.ClientSession() as http:  # the fake itself: an API key on a project path
        url = f"{fake.url}/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent"
        async with http.post(url, params={"key": API_KEY}, json={"contents": []}) as resp:
            assert resp.status == 401 and (await resp.json())["error"]["status"] == "UNAUTHENTICATED"


async def test_claude_on_an_api_key_channel_is_refused_before_sending(gateway, vertex, root: ApiClient) -> None:
    fake = await vertex()
    model = "claude-sonnet-4-6"
    express = await express_channel(gateway, fake, models=model, priority=10)
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model=model, messages=MESSAGES)
        assert "serves Google's Gemini models only" in refused.value.message
        assert fake.claude_seen == [] and fake.express_seen == []
        body = await root.get(f"/api/channel/test/{express.id}")  # the channel test says why
        assert not body["success"] and "service-account key" in body["message"], body
        # With a service-account channel beside it, that one serves the model.
        await add_channel(gateway, None, models=model, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                          key=fake.service_account(), other='{"default": "us-east5"}')
        answer = await client.chat.completions.create(model=model, messages=MESSAGES)
    assert answer.choices[0].message.content == CLAUDE_REPLY
    assert [s["path"] for s in fake.claude_seen] == [
        f"/v1/projects/proj-7/locations/us-east5/publishers/anthropic/models/{model}:rawPredict"]


# -- embeddings ------------------------------------------------------------------------------------


async def test_embeddings_with_a_service_account_key_in_one_batch(gateway, vertex) -> None:
    model = "text-embedding-005"
    ratios = {**pricing.DEFAULT_MODEL_RATIO, model: 0.05}
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps(ratios).decode())
    fake = await vertex()
    regions = orjson.dumps({"default": "us-central1", model: "europe-west4"}).decode()
    await add_channel(gateway, None, models=model, type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=fake.service_account(), other=regions)
    user = await rich_user()
    token = await make_key(user)
    texts = ["first text", "the second one", "third"]
    async with sdk(gateway, token) as client:
        answer = await client.embeddings.create(model=model, input=texts, dimensions=8,
                                                extra_body={"task_type": "RETRIEVAL_DOCUMENT"})
    assert [len(d.embedding) for d in answer.data] == [8, 8, 8]
    assert [d.embedding[0] for d in answer.data] == [float(len(t)) for t in texts]  # in the input's order
    tokens = sum(token_count(t) for t in texts)
    assert answer.usage.prompt_tokens == tokens
    [seen] = fake.predict_seen
    assert seen["path"] == f"/v1/projects/proj-7/locations/europe-west4/publishers/google/models/{model}:predict"
    assert seen["headers"]["Authorization"] == "Bearer ya29.token-1"
    assert seen["body"] == {"instances": [{"content": t, "task_type": "RETRIEVAL_DOCUMENT"} for t in texts],
                            "parameters": {"autoTruncate": True, "outputDimensionality": 8}}
    log = await settled_log(gateway, user)
    price = pricing.resolve_price(model, model_ratio=ratios)
    assert (log.prompt_tokens, log.quota) == (tokens, pricing.settle_quota(price, tokens, 0))


async def test_embeddings_with_an_api_key_one_input_per_request(gateway, vertex) -> None:
    model = "gemini-embedding-001"  # one instance per request: the list is sent one by one
    fake = await vertex()
    await express_channel(gateway, fake, models=model)
    user = await rich_user()
    token = await make_key(user)
    texts = ["alpha", "beta gamma", "delta epsilon zeta", "eta"]
    async with sdk(gateway, token) as client:
        answer = await client.embeddings.create(model=model, input=texts)
        with pytest.raises(openai.BadRequestError) as too_wide:
            await client.embeddings.create(model=model, input="x", dimensions=4096)
        fake.too_long = "too long"  # one later batch fails: the request fails, nothing is charged for it
        with pytest.raises(openai.InternalServerError):
            await client.embeddings.create(model=model, input=["fine", "too long", "fine too"])
    assert [d.embedding[0] for d in answer.data] == [float(len(t)) for t in texts]
    assert [d.index for d in answer.data] == [0, 1, 2, 3]
    assert sorted(s["body"]["instances"][0]["content"] for s in fake.predict_seen[:4]) == sorted(texts)
    assert all(len(s["body"]["instances"]) == 1 for s in fake.predict_seen)
    assert {s["path"] for s in fake.predict_seen} == {f"/v1/publishers/google/models/{model}:predict"}
    assert all(s["headers"]["x-goog-api-key"] == API_KEY for s in fake.predict_seen)
    assert "output dimensionality" in too_wide.value.message
    tokens = sum(token_count(t) for t in texts)
    assert answer.usage.prompt_tokens == tokens
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.quota) == (tokens, pricing.settle_quota(pricing.resolve_price(model), tokens, 0))
