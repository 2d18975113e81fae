"""Dify channels (type 37) and AI Proxy knowledge-base channels (type 21) through the official
openai SDK against fakes of their APIs: Dify's chat-messages (blocking, and SSE with its event
types: message, agent_message, agent_thought, workflow events, message_end with the usage, error),
the library's `ask` (answer and documents, streamed pieces without usage: billed by the local
count), their error shapes, the channel test and the library's balance."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.tokenizer import count_chat_request, count_text
from models import Channel
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, make_key, relay_of, rich_user
from tests.upstream.providers.kit import FakeBase, consume_logs, finish_reasons, sdk, settled_log, stream_chat

APP_KEY = "app-upstream"
MESSAGES = [{"role": "user", "content": "What is in the handbook?"}]
USAGE = {"prompt_tokens": 31, "prompt_unit_price": "0.001", "completion_tokens": 9, "total_tokens": 40,
         "total_price": "0.0001", "currency": "USD", "latency": 1.2}


@dataclass
class FakeDify(FakeBase):
    agent: bool = False
    fail_mid_stream: bool = False
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat-messages", self.chat)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {APP_KEY}":
            return web.json_response({"code": "unauthorized", "message": "Access token is invalid", "status": 401},
                                     status=401)
        body = await request.json()
        self.seen.append(body)
        if not isinstance(body.get("query"), str) or not body.get("user") or "inputs" not in body:
            return web.json_response({"code": "invalid_param", "message": "query is required", "status": 400},
                                     status=400)
        if body["response_mode"] == "blocking":
            return web.json_response({"event": "message", "task_id": "t1", "id": "m1", "message_id": "m1",
                                      "conversation_id": "c1", "mode": "chat", "answer": "Chapter one.",
                                      "metadata": {"usage": USAGE}, "created_at": 1700000000})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        kind = "agent_message" if self.agent else "message"
        events: list[dict[str, Any]] = [{"event": "workflow_started", "data": {"id": "w1"}}, {"event": "ping"}]
        if self.agent:
            events.append({"event": "agent_thought", "thought": "I should search.", "position": 1})
        events += [{"event": kind, "message_id": "m1", "answer": piece} for piece in ("Chapter ", "one.")]
        if self.fail_mid_stream:
            events.append({"event": "error", "status": 500, "code": "internal", "message": "model crashed"})
        events += [{"event": "node_finished", "data": {}},
                   {"event": "message_end", "message_id": "m1", "metadata": {"usage": USAGE}}]
        for event in events:
            await response.write(b"data: " + orjson.dumps(event) + b"\n\n")
        await response.write_eof()
        return response


@dataclass
class FakeLibrary(FakeBase):
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/library/ask", self.ask)
        app.router.add_get("/api/report/getUserOverview", self.overview)
        return app

    async def ask(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Api-Key") != "lib-key":
            return web.json_response({"success": False, "errCode": 401, "message": "Api-Key 无效"})
        body = await request.json()
        self.seen.append(body)
        if body.get("libraryId") != "lib-1":
            return web.json_response({"success": False, "errCode": 40004, "message": "知识库不存在"})
        documents = [{"title": "Handbook", "url": "https://docs.example/handbook"}]
        if not body.get("stream"):
            return web.json_response({"success": True, "answer": "Chapter one.", "documents": documents})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in ("Chapter ", "one."):
            await response.write(b"data: " + orjson.dumps({"content": piece, "finish": False, "model": "m"}) + b"\n\n")
        final = {"content": "", "finish": True, "model": "m", "documents": documents}
        await response.write(b"data: " + orjson.dumps(final) + b"\n\n")
        await response.write_eof()
        return response

    async def overview(self, request: web.Request) -> web.Response:
        if request.headers.get("Api-Key") != "lib-key":
            return web.json_response({"success": False, "message": "Api-Key 无效"})
        return web.json_response({"success": True, "data": {"totalPoints": 12.5}})


@pytest.fixture
async def dify(serve):
    return await serve(FakeDify())


@pytest.fixture
async def library(serve):
    return await serve(FakeLibrary())


async def dify_channel(gateway, fake: FakeDify, **fields) -> Channel:
    return await add_channel(gateway, None, models="dify", type=int(ChannelType.DIFY), base_url=fake.url,
                             key=fields.pop("key", APP_KEY), **fields)


async def test_dify_blocking_answer_and_the_transcript_as_query(gateway, dify) -> None:
    await dify_channel(gateway, dify)
    user = await rich_user()
    token = await make_key(user)
    history = [{"role": "system", "content": "Answer from the handbook."}, *MESSAGES]
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="dify", messages=MESSAGES, user="u-7")
        await client.chat.completions.create(model="dify", messages=history)
    assert answer.choices[0].message.content == "Chapter one."
    assert dify.seen[0] == {"inputs": {}, "query": "What is in the handbook?", "response_mode": "blocking",
                            "user": "u-7"}
    assert dify.seen[1]["query"] == "SYSTEM: \nAnswer from the handbook.\nUSER: \nWhat is in the handbook?"
    assert dify.seen[1]["user"] == "api-gateway"
    await drain(gateway)
    quota = pricing.settle_quota(pricing.resolve_price("dify"), 31, 9)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (31, 9, quota)] * 2


@pytest.mark.parametrize("agent", [False, True])
async def test_dify_stream_events(gateway, dify, agent: bool) -> None:
    dify.agent = agent
    await dify_channel(gateway, dify)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        text, chunks = await stream_chat(client, model="dify", messages=MESSAGES,
                                         stream_options={"include_usage": True})
    assert text == "Chapter one." and finish_reasons(chunks) == ["stop"]
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (31, 9)
    assert dify.seen[0]["response_mode"] == "streaming"
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.completion_tokens) == (31, 9)


async def test_dify_error_mid_stream_is_billed_for_what_was_sent(gateway, dify) -> None:
    dify.fail_mid_stream = True
    await dify_channel(gateway, dify)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.APIError, match="model crashed"):
            await stream_chat(client, model="dify", messages=MESSAGES)
    log = await settled_log(gateway, user)
    prompt = count_chat_request({"model": "dify", "messages": MESSAGES})
    assert (log.prompt_tokens, log.completion_tokens) == (prompt, count_text("Chapter one."))
    assert orjson.loads(log.other)["incomplete"]


async def test_dify_bad_key_disables_and_the_channel_test(gateway, dify, root: ApiClient) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    broken = await dify_channel(gateway, dify, key="app-revoked")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="Access token is invalid"):
            await client.chat.completions.create(model="dify", messages=MESSAGES)
    assert relay_of(gateway).index.get(broken.id) is None
    good = await dify_channel(gateway, dify)
    body = await root.get(f"/api/channel/test/{good.id}")
    assert body["success"], body


async def library_channel(gateway, fake: FakeLibrary, **fields) -> Channel:
    return await add_channel(gateway, None, models="gpt-4o-mini", type=int(ChannelType.AIPROXY_LIBRARY),
                             base_url=fake.url, key=fields.pop("key", "lib-key"), other=fields.pop("other", "lib-1"),
                             **fields)


async def test_library_answers_with_its_documents_billed_by_the_local_count(gateway, library) -> None:
    await library_channel(gateway, library)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
        text, chunks = await stream_chat(client, model="gpt-4o-mini", messages=MESSAGES)
    expected = "Chapter one.\n\nReferences:\n- [Handbook](https://docs.example/handbook)"
    assert answer.choices[0].message.content == expected == text and finish_reasons(chunks) == ["stop"]
    assert library.seen == [{"model": "gpt-4o-mini", "query": "What is in the handbook?", "libraryId": "lib-1",
                             "stream": False}, {"model": "gpt-4o-mini", "query": "What is in the handbook?",
                                                "libraryId": "lib-1", "stream": True}]
    await drain(gateway)
    prompt = count_chat_request({"model": "gpt-4o-mini", "messages": MESSAGES})
    price = pricing.resolve_price("gpt-4o-mini")
    logs = await consume_logs(user)
    assert [(log.prompt_tokens, log.quota) for log in logs] == [
        (prompt, pricing.settle_quota(price, prompt, log.completion_tokens)) for log in logs]
    assert logs[0].completion_tokens == logs[1].completion_tokens == count_text(expected)


async def test_library_errors_balance_and_channel_test(gateway, library, root: ApiClient) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    missing = await library_channel(gateway, library, other="lib-404")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.InternalServerError, match="知识库不存在"):
            await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert relay_of(gateway).index.get(missing.id) is not None  # not the key's fault: not disabled
    broken = await library_channel(gateway, library, key="lib-revoked")
    body = await root.get(f"/api/channel/test/{broken.id}")
    assert body["success"] is False and "Api-Key 无效" in body["message"]
    good = await library_channel(gateway, library)
    body = await root.get(f"/api/channel/test/{good.id}")
    assert body["success"], body
    body = await root.get(f"/api/channel/update_balance/{good.id}")
    assert body["success"] and body["balance"] == 12.5, body
