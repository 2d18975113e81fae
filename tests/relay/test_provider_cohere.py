# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Cohere channels (type 34) through the official openai SDK against a fake Cohere v1 API: chat
(message, chat_history and preamble; tools with parameter_definitions and tool_results), its
newline-delimited JSON stream, billed units as usage, rerank, and Cohere's error bodies."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.relay.tokenizer import count_input, count_text
from api.services import pricing
from models import Channel
from models.enums import ChannelType
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, gateway, make_key, relay_of, rich_user  # noqa: F401
from tests.relay.provider_kit import FakeBase, finish_reasons, sdk, settled_log, stream_chat

KEY = "co-upstream"
MODEL = "command-r"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Say hello again."}]
PIECES = ["Hello ", "again, ", "from Cohere."]
UNITS = {"input_tokens": 15, "output_tokens": 7}
CHAT_FIELDS = {"message", "model", "stream", "chat_history", "preamble", "temperature", "p", "k", "max_tokens",
               "stop_sequences", "seed", "frequency_penalty", "presence_penalty", "tools", "tool_results",
               "connectors"}


@dataclass
class FakeCohere(FakeBase):
    tool_call: dict[str, Any] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat", self.chat)
        app.router.add_post("/v1/rerank", self.rerank)
        return app

    def refused(self, request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"message": "invalid api token"}, status=401)
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        refused = self.refused(request)
        if refused is not None:
            return refused
        body = await request.json()
        self.seen.append({"path": request.path, "body": body})
        unknown = set(body) - CHAT_FIELDS
        if unknown or not isinstance(body.get("message"), str):
            return web.json_response({"message": f"invalid request: unknown field {sorted(unknown)}"}, status=400)
        meta = {"api_version": {"version": "1"}, "billed_units": UNITS, "tokens": {"input_tokens": 80,
                                                                                    "output_tokens": 7}}
        calls = [self.tool_call] if self.tool_call else []
        response_body = {"response_id": "r-1", "generation_id": "g-1", "text": "" if calls else "".join(PIECES),
                         "finish_reason": "COMPLETE", "meta": meta, **({"tool_calls": calls} if calls else {})}
        if not body.get("stream"):
            return web.json_response(response_body)
        response = web.StreamResponse(headers={"Content-Type": "application/stream+json"})
        await response.prepare(request)
        events: list[dict[str, Any]] = [{"is_finished": False, "event_type": "stream-start", "generation_id": "g-1"}]
        if calls:
            events.append({"is_finished": False, "event_type": "tool-calls-chunk",
                           "tool_call_delta": {"index": 0, "name": calls[0]["name"]}})
            events.append({"is_finished": False, "event_type": "tool-calls-generation", "tool_calls": calls})
        else:
            events += [{"is_finished": False, "event_type": "text-generation", "text": p} for p in PIECES]
        events.append({"is_finished": True, "event_type": "stream-end", "finish_reason": "COMPLETE",
                       "response": response_body})
        for event in events:
            await response.write(orjson.dumps(event) + b"\n")
        await response.write_eof()
        return response

    async def rerank(self, request: web.Request) -> web.Response:
        refused = self.refused(request)
        if refused is not None:
            return refused
        body = await request.json()
        self.seen.append({"path": request.path, "body": body})
        results = [{"index": i, "relevance_score": round(1 - i / 10, 2)} for i in range(len(body["documents"]))]
        return web.json_response({"id": "rr-1", "results": results[: body.get("top_n") or len(results)],
                                  "meta": {"api_version": {"version": "1"}, "billed_units": {"search_units": 1}}})


@pytest.fixture
async def cohere(aiohttp_server):
    fake = FakeCohere()
    fake.server = await aiohttp_server(fake.app())
    return fake


async def cohere_channel(gateway, fake: FakeCohere, models: str = MODEL, **fields) -> Channel:
    return await add_channel(gateway, None, models=models, type=int(ChannelType.COHERE), base_url=fake.url,
                             key=fields.pop("key", KEY), **fields)


async def test_chat_history_preamble_and_billed_units(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.3, top_p=0.8,
                                                      max_tokens=50, stop="END", seed=3)
    assert answer.choices[0].message.content == "".join(PIECES) and answer.choices[0].finish_reason == "stop"
    assert cohere.seen[0]["body"] == {
        "model": MODEL, "message": "Say hello again.", "preamble": "Be brief.",
        "chat_history": [{"role": "USER", "message": "Hi."}, {"role": "CHATBOT", "message": "Hello!"}],
        "temperature": 0.3, "p": 0.8, "seed": 3, "max_tokens": 50, "stop_sequences": ["END"]}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (15, 7)  # what Cohere bills
    assert log.quota == pricing.settle_quota(pricing.resolve_price(MODEL), 15, 7)


async def test_ndjson_stream(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model=MODEL, messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "".join(PIECES) and finish_reasons(chunks) == ["stop"]
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (15, 7)
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (15, 7)


async def test_tools_and_tool_results(gateway, cohere) -> None:
    cohere.tool_call = {"name": "get_weather", "parameters": {"city": "Paris"}}
    await cohere_channel(gateway, cohere)
    token = await make_key(await rich_user())
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                               "parameters": {"type": "object", "required": ["city"],
                                                              "properties": {"city": {"type": "string",
                                                                                      "description": "City"}}}}}]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=tools)
        call = answer.choices[0].message.tool_calls[0]
        history = [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                   {"role": "tool", "tool_call_id": call.id, "content": "18°C"}]
        _, chunks = await stream_chat(client, model=MODEL, messages=history, tools=tools)
    assert (call.function.name, orjson.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
    assert answer.choices[0].finish_reason == "tool_calls" and finish_reasons(chunks) == ["tool_calls"]
    assert cohere.seen[0]["body"]["tools"] == [{"name": "get_weather", "description": "Weather of a city",
                                                "parameter_definitions": {"city": {"description": "City",
                                                                                   "type": "str", "required": True}}}]
    second = cohere.seen[1]["body"]
    assert second["message"] == "" and second["tool_results"] == [
        {"call": {"name": "get_weather", "parameters": {"city": "Paris"}}, "outputs": [{"result": "18°C"}]}]
    assert second["chat_history"][-1] == {"role": "CHATBOT", "message": "",
                                          "tool_calls": [{"name": "get_weather", "parameters": {"city": "Paris"}}]}


async def test_rerank_billed_by_the_local_count(gateway, cohere) -> None:
    await cohere_channel(gateway, cohere, models="rerank-english-v3.0")
    user = await rich_user()
    token = await make_key(user)
    body = {"model": "rerank-english-v3.0", "query": "capital of France", "documents": ["Paris", "Berlin"],
            "top_n": 1}
    resp = await gateway.post("/v1/rerank", json=body, headers={"Authorization": f"Bearer sk-{token.key}"})
    answer = await resp.json()
    assert resp.status == 200 and answer["results"] == [{"index": 0, "relevance_score": 1.0}]
    assert cohere.seen[0]["body"] == body
    log = await settled_log(gateway, user)
    prompt = count_text("capital of France") + count_input(["Paris", "Berlin"])
    assert (log.prompt_tokens, log.completion_tokens) == (prompt, 0)
    assert log.quota == pricing.settle_quota(pricing.resolve_price("rerank-english-v3.0"), prompt, 0)


async def test_a_refused_key_disables_and_the_channel_test(gateway, cohere, root: ApiClient) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    broken = await cohere_channel(gateway, cohere, key="co-revoked")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="invalid api token"):
            await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert relay_of(gateway).index.get(broken.id) is None
    good = await cohere_channel(gateway, cohere)
    body = await root.get(f"/api/channel/test/{good.id}")
    assert body["success"], body
