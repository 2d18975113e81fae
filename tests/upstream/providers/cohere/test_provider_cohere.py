"""Cohere channels (type 34) through the official openai SDK against a strict fake of Cohere's v2
API (tests/upstream/providers/cohere/fake_cohere.py): chat with OpenAI-like messages, its SSE stream, tools and tool
results, thinking on the reasoning models, billed units as usage, rerank and embeddings v2, the
retired `-internet` models, and Cohere's error bodies."""
from __future__ import annotations

from typing import Any, cast

import aiohttp
import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_input, count_text
from models import Channel
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, make_key, relay_of, rich_user
from tests.upstream.providers.cohere.fake_cohere import (
    EMBED_UNITS,
    KEY,
    REPLY_PIECES,
    THOUGHT,
    TOOL_PLAN,
    UNITS,
    FakeCohere,
)
from tests.upstream.providers.kit import consume_logs, finish_reasons, sdk, settled_log, stream_chat

MODEL = "command-a-03-2025"
REASONING = "command-a-reasoning-08-2025"
REPLY = "".join(REPLY_PIECES)
MESSAGES: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Say hello again."}]
COHERE_MESSAGES: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."},
                   {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Say hello again."}]
TOOLS: list[Any] = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                           "parameters": {"type": "object", "required": ["city"],
                                                          "properties": {"city": {"type": "string"}}}}}]
# Models the shipped price table does not list yet, priced here the way an operator would.
RATIOS = {**pricing.DEFAULT_MODEL_RATIO, REASONING: 1.25, "embed-v4.0": 0.06, "command-r-plus-internet": 1.5,
          "command-nightly": 1}


def quota(model: str, prompt: int, completion: int) -> int:
    return pricing.settle_quota(pricing.resolve_price(model, model_ratio=RATIOS), prompt, completion)


@pytest.fixture
async def cohere(aiohttp_server, gateway) -> FakeCohere:
    await gateway.server.app[keys.OPTIONS].update("ModelRatio", orjson.dumps(RATIOS).decode())
    fake = FakeCohere()
    fake.server = await aiohttp_server(fake.app())
    return fake


async def cohere_channel(gateway, fake: FakeCohere, models: str = MODEL, **fields: Any) -> Channel:
    return await add_channel(gateway, None, models=models, type=int(ChannelType.COHERE), base_url=fake.url,
                             key=fields.pop("key", KEY), **fields)


async def test_messages_sampling_and_billed_units(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere)
    user = await rich_user()
    token = await make_key(user)
    schema = {"type": "object", "properties": {"greeting": {"type": "string"}}}
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(
            model=MODEL, messages=MESSAGES, temperature=0.3, top_p=0.8, max_tokens=50, stop="END", seed=3,
            response_format=cast(Any, {"type": "json_schema", "json_schema": {"name": "greeting", "schema": schema}}))
    assert answer.choices[0].message.content == REPLY and answer.choices[0].finish_reason == "stop"
    assert cohere.seen[0] == {"path": "/v2/chat", "body": {
        "model": MODEL, "messages": COHERE_MESSAGES, "temperature": 0.3, "p": 0.8, "seed": 3, "max_tokens": 50,
        "stop_sequences": ["END"], "response_format": {"type": "json_object", "json_schema": schema}}}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (15, 7)  # billed_units, not Cohere's template tokens
    assert log.quota == quota(MODEL, 15, 7)


async def test_sse_stream_billed_units(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES, top_p=1,
                                         stream_options={"include_usage": True})
    assert text == REPLY and finish_reasons(chunks) == ["stop"]
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (UNITS["input_tokens"],
                                                                                     UNITS["output_tokens"])
    assert cohere.seen[0]["body"] == {"model": MODEL, "messages": COHERE_MESSAGES, "p": 0.99, "stream": True}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (15, 7, quota(MODEL, 15, 7))


async def test_tools_round_trip_with_a_tool_result(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere)
    user = await rich_user()
    token = await make_key(user)
    question: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=question, tools=TOOLS,
                                                      tool_choice="required")
        _, chunks = await stream_chat(client, model=MODEL, messages=question, tools=TOOLS)
        call: Any = cast(list[Any], answer.choices[0].message.tool_calls)[0]
        history = [*question, {"role": "assistant", "content": answer.choices[0].message.content,
                               "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
        final, final_chunks = await stream_chat(client, model=MODEL, messages=history, tools=TOOLS)
    assert answer.choices[0].finish_reason == "tool_calls" and answer.choices[0].message.content == TOOL_PLAN
    assert (call.id, call.function.name, orjson.loads(call.function.arguments)) == (
        "get_weather_c-1", "get_weather", {"city": "Paris"})
    assert cohere.seen[0]["body"] == {"model": MODEL, "messages": question, "tools": TOOLS, "tool_choice": "REQUIRED"}
    streamed = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or ()]
    assert (streamed[0].id, streamed[0].function.name) == ("get_weather_c-2", "get_weather")
    assert orjson.loads("".join(d.function.arguments or "" for d in streamed)) == {"city": "Paris"}
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == TOOL_PLAN
    assert finish_reasons(chunks) == ["tool_calls"]
    assert cohere.seen[2]["body"]["messages"][1:] == [
        {"role": "assistant", "tool_plan": TOOL_PLAN, "tool_calls": [{
            "id": call.id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
    assert final == "It is 18°C." and finish_reasons(final_chunks) == ["stop"]
    await drain(gateway)
    logs = await consume_logs(user)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(15, 7, quota(MODEL, 15, 7))] * 3


async def test_command_r_gets_no_tool_choice(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere, models="command-r-08-2024")
    token = await make_key(await rich_user())
    question: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    async with sdk(gateway, token) as client:
        forced = await client.chat.completions.with_raw_response.create(
            model="command-r-08-2024", messages=question, tools=TOOLS, tool_choice="required")
        quiet = await client.chat.completions.create(model="command-r-08-2024", messages=question, tools=TOOLS,
                                                     tool_choice="none")
    assert "tool_choice" in forced.headers["X-Gateway-Dropped"] and forced.parse().choices[0].message.tool_calls
    assert cohere.seen[0]["body"] == {"model": "command-r-08-2024", "messages": question, "tools": TOOLS}
    assert cohere.seen[1]["body"] == {"model": "command-r-08-2024", "messages": question}
    assert quiet.choices[0].message.content == REPLY and quiet.choices[0].finish_reason == "stop"


async def test_reasoning_models_think_and_the_others_are_not_asked(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere, models=f"{REASONING},{MODEL}")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=REASONING, messages=MESSAGES, reasoning_effort="low")
        _, chunks = await stream_chat(client, model=REASONING, messages=MESSAGES)
        quiet = await client.chat.completions.create(model=REASONING, messages=MESSAGES, reasoning_effort="none")
        raw = await client.chat.completions.with_raw_response.create(model=MODEL, messages=MESSAGES,
                                                                     reasoning_effort="high")
    message: Any = answer.choices[0].message
    assert message.content == REPLY and message.reasoning_content == THOUGHT
    assert cohere.seen[0]["body"]["thinking"] == {"type": "enabled", "token_budget": 2048}
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(getattr(d, "reasoning_content", None) or "" for d in deltas) == THOUGHT
    assert "".join(d.content or "" for d in deltas) == REPLY and "thinking" not in cohere.seen[1]["body"]
    assert cohere.seen[2]["body"]["thinking"] == {"type": "disabled"}
    assert getattr(quiet.choices[0].message, "reasoning_content", None) is None
    assert "thinking" not in cohere.seen[3]["body"] and "reasoning_effort" in raw.headers["X-Gateway-Dropped"]


async def test_internet_models_are_refused_with_the_reason(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere, models="command-r-plus-internet")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="web-search connector") as refused:
            await client.chat.completions.create(model="command-r-plus-internet", messages=MESSAGES)
    body = cast(dict[str, Any], refused.value.body)
    assert body["code"] == "model_not_supported" and "2025-09-15" in refused.value.message
    assert cohere.seen == []


async def test_rerank_v2_billed_by_the_local_count(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere, models="rerank-v3.5")
    user = await rich_user()
    token = await make_key(user)
    body = {"model": "rerank-v3.5", "query": "capital of France", "documents": ["Paris", {"text": "Berlin"}],
            "top_n": 1, "return_documents": True}
    resp = await gateway.post("/v1/rerank", json=body, headers={"Authorization": f"Bearer sk-{token.key}"})
    answer = await resp.json()
    assert resp.status == 200, answer
    assert answer["results"] == [{"index": 1, "relevance_score": 0.9, "document": {"text": "Berlin"}}]
    assert cohere.seen[0] == {"path": "/v2/rerank", "body": {"model": "rerank-v3.5", "query": "capital of France",
                                                             "documents": ["Paris", "Berlin"], "top_n": 1}}
    log = await settled_log(gateway, user)
    prompt = count_text("capital of France") + count_input(["Paris", "Berlin"])
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (prompt, 0, quota("rerank-v3.5", prompt, 0))


async def test_embeddings_v2_billed_units(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere, models="embed-v4.0")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:  # the SDK asks for base64 and decodes it
        result = await client.embeddings.create(model="embed-v4.0", input=["one", "two"], dimensions=3,
                                                extra_body={"input_type": "search_query"})
    expected = [[round((i + 1) / (d + 2), 3) for d in range(3)] for i in range(2)]
    assert [e.embedding for e in result.data] == [pytest.approx(v, rel=1e-6) for v in expected]
    assert cohere.seen[0] == {"path": "/v2/embed", "body": {
        "model": "embed-v4.0", "texts": ["one", "two"], "embedding_types": ["float"], "input_type": "search_query",
        "output_dimension": 3}}
    log = await settled_log(gateway, user)
    billed = EMBED_UNITS["input_tokens"]
    assert (log.prompt_tokens, log.completion_tokens, log.quota) == (billed, 0, quota("embed-v4.0", billed, 0))


async def test_errors_a_refused_key_disables_and_the_channel_test(gateway, cohere, root: ApiClient) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    broken = await cohere_channel(gateway, cohere, key="co-revoked")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="invalid api token"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert relay_of(gateway).index.get(broken.id) is None
        await cohere_channel(gateway, cohere, models="command-nightly")
        with pytest.raises(openai.NotFoundError, match="model 'command-nightly' not found"):
            await client.chat.completions.create(model="command-nightly", messages=MESSAGES)
    good = await cohere_channel(gateway, cohere)
    body = await root.get(f"/api/channel/test/{good.id}")
    assert body["success"], body


async def test_the_fake_is_as_strict_as_cohere(cohere) -> None:
    """What the adaptor must never send: v1's fields on /v2/chat, v1's paths, a wrong key."""
    headers = {"Authorization": f"Bearer {KEY}"}
    v1 = {"model": MODEL, "message": "Hi", "chat_history": [], "preamble": "Be brief.",
          "connectors": [{"id": "web-search"}]}
    async with aiohttp.ClientSession() as http:
        refused = await http.post(f"{cohere.url}/v2/chat", json={**v1, "messages": COHERE_MESSAGES}, headers=headers)
        old = await http.post(f"{cohere.url}/v1/chat", json=v1, headers=headers)
        stranger = await http.post(f"{cohere.url}/v2/chat", json={"model": MODEL, "messages": COHERE_MESSAGES},
                                   headers={"Authorization": "Bearer nope"})
        assert (refused.status, (await refused.json())["message"]) == (
            422, "unknown field: parameter chat_history is not a valid field. For proper usage, please refer to "
                 "https://docs.cohere.com/reference/chat")
        assert old.status == 404 and (stranger.status, await stranger.json()) == (401, {"message": "invalid api token"})
