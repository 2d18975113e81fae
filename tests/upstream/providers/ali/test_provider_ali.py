"""Alibaba Qwen channels (type 17) through the official openai SDK against a fake DashScope:
chat in its OpenAI-compatible mode (streams with the usage chunk it sends when asked), embeddings
in the native format, and image synthesis as an asynchronous task the adaptor polls to the end."""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.providers.ali import AliAdaptor
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, make_key, rich_user
from tests.upstream.providers.kit import FakeBase, consume_logs, finish_reasons, sdk, settled_log, stream_chat

KEY = "sk-dashscope"
MESSAGES = [{"role": "user", "content": "Say hello."}]
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
                       "AAAABJRU5ErkJggg==")


@dataclass
class FakeDashScope(FakeBase):
    polls_before_done: int = 2
    task_fails: bool = False
    seen: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, int] = field(default_factory=dict)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/compatible-mode/v1/chat/completions", self.chat)
        app.router.add_post("/api/v1/services/embeddings/text-embedding/text-embedding", self.embeddings)
        app.router.add_post("/api/v1/services/aigc/text2image/image-synthesis", self.synthesis)
        app.router.add_get("/api/v1/tasks/{id}", self.task)
        app.router.add_get("/files/{name}", self.file)
        return app

    def refused(self, request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"code": "InvalidApiKey", "message": "Invalid API-key provided.",
                                      "request_id": "r0"}, status=401)
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"error": {"message": "Incorrect API key provided.", "type":
                                                "invalid_request_error", "code": "invalid_api_key"}}, status=401)
        body = await request.json()
        self.seen.append({"path": request.path, "body": body, "headers": dict(request.headers)})
        usage = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
        if not body.get("stream"):
            return web.json_response({"id": "chatcmpl-q", "object": "chat.completion", "created": 1, "model":
                                      body["model"], "usage": usage, "choices": [
                                          {"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": "你好！"}}]})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece, finish in (("你", None), ("好！", "stop")):
            chunk = {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                     "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": finish}]}
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk = {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                     "choices": [], "usage": usage}
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        return response

    async def embeddings(self, request: web.Request) -> web.Response:
        refused = self.refused(request)
        if refused is not None:
            return refused
        body = await request.json()
        self.seen.append({"path": request.path, "body": body})
        texts = (body.get("input") or {}).get("texts")
        if not isinstance(texts, list):
            return web.json_response({"code": "InvalidParameter", "message": "input.texts is required"}, status=400)
        return web.json_response({"output": {"embeddings": [{"text_index": i, "embedding": [0.125, float(i)]}
                                                            for i in range(len(texts))]},
                                  "usage": {"total_tokens": 5 * len(texts)}, "request_id": "r1"})

    async def synthesis(self, request: web.Request) -> web.Response:
        refused = self.refused(request)
        if refused is not None:
            return refused
        if request.headers.get("X-DashScope-Async") != "enable":
            return web.json_response({"code": "AccessDenied", "message": "current user api does not support "
                                      "synchronous calls"}, status=403)
        body = await request.json()
        self.seen.append({"path": request.path, "body": body})
        task_id = f"task-{len(self.tasks) + 1}"
        self.tasks[task_id] = 0
        return web.json_response({"output": {"task_id": task_id, "task_status": "PENDING"}, "request_id": "r2"})

    async def task(self, request: web.Request) -> web.Response:
        refused = self.refused(request)
        if refused is not None:
            return refused
        task_id = request.match_info["id"]
        self.tasks[task_id] += 1
        if self.tasks[task_id] <= self.polls_before_done:
            return web.json_response({"output": {"task_id": task_id, "task_status": "RUNNING"}})
        if self.task_fails:
            return web.json_response({"output": {"task_id": task_id, "task_status": "FAILED",
                                                 "code": "DataInspectionFailed",
                                                 "message": "Output data may contain inappropriate content."}})
        return web.json_response({"output": {"task_id": task_id, "task_status": "SUCCEEDED",
                                             "results": [{"url": f"{self.url}/files/{task_id}.png"}],
                                             "task_metrics": {"TOTAL": 1, "SUCCEEDED": 1, "FAILED": 0}},
                                  "usage": {"image_count": 1}})

    async def file(self, request: web.Request) -> web.Response:
        return web.Response(body=PNG, content_type="image/png")


@pytest.fixture
async def dashscope(aiohttp_server, monkeypatch):
    monkeypatch.setattr(AliAdaptor, "poll_interval", 0.0)
    fake = FakeDashScope()
    fake.server = await aiohttp_server(fake.app())
    return fake


async def qwen_channel(gateway, fake: FakeDashScope, models: str, **fields):
    return await add_channel(gateway, None, models=models, type=int(ChannelType.ALI), base_url=fake.url,
                             key=fields.pop("key", KEY), **fields)


async def test_chat_in_compatible_mode_streamed_and_not(gateway, dashscope) -> None:
    await qwen_channel(gateway, dashscope, "qwen-plus", other="dashscope-plugin-a")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="qwen-plus", messages=MESSAGES)
        text, chunks = await stream_chat(client, model="qwen-plus", messages=MESSAGES)
    assert answer.choices[0].message.content == "你好！" == text and finish_reasons(chunks) == ["stop"]
    assert all(c.usage is None for c in chunks)  # the client did not ask for the usage chunk…
    assert dashscope.seen[1]["body"]["stream_options"] == {"include_usage": True}  # …the gateway did
    assert dashscope.seen[0]["headers"]["X-DashScope-Plugin"] == "dashscope-plugin-a"
    await drain(gateway)
    quota = pricing.settle_quota(pricing.resolve_price("qwen-plus"), 9, 4)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in await consume_logs(user)] == [
        (9, 4, quota)] * 2


async def test_native_embeddings(gateway, dashscope) -> None:
    await qwen_channel(gateway, dashscope, "text-embedding-v3")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        result = await client.embeddings.create(model="text-embedding-v3", input=["one", "two"], dimensions=512)
    assert [d.embedding for d in result.data] == [[0.125, 0.0], [0.125, 1.0]]
    assert dashscope.seen[0]["body"] == {"model": "text-embedding-v3", "input": {"texts": ["one", "two"]},
                                         "parameters": {"text_type": "document", "dimension": 512}}
    log = await settled_log(gateway, user)
    assert (log.prompt_tokens, log.quota) == (10, pricing.settle_quota(pricing.resolve_price("text-embedding-v3"),
                                                                        10, 0))


async def test_images_are_a_polled_task(gateway, dashscope) -> None:
    await gateway.server.app[keys.OPTIONS].update("MediaFetchPrivateEnabled", "true")  # the fake is local
    await qwen_channel(gateway, dashscope, "wanx-v1")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        image = await client.images.generate(model="wanx-v1", prompt="a cat", size="1024x1024", n=1)
        inline = await client.images.generate(model="wanx-v1", prompt="a dog", response_format="b64_json")
    assert image.data[0].url == f"{dashscope.url}/files/task-1.png"
    assert base64.b64decode(inline.data[0].b64_json) == PNG
    assert dashscope.seen[0]["body"] == {"model": "wanx-v1", "input": {"prompt": "a cat"},
                                         "parameters": {"n": 1, "size": "1024*1024"}}
    assert dashscope.tasks == {"task-1": 3, "task-2": 3}  # polled until it succeeded
    await drain(gateway)
    expected = pricing.image_quota(pricing.resolve_price("wanx-v1"), "1024x1024", None, 1)
    assert [log.quota for log in await consume_logs(user)][0] == expected


async def test_a_failed_image_task_charges_nothing(gateway, dashscope) -> None:
    dashscope.task_fails = True
    await qwen_channel(gateway, dashscope, "wanx-v1")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.BadRequestError, match="inappropriate content"):
            await client.images.generate(model="wanx-v1", prompt="a cat")
    await drain(gateway)
    assert await consume_logs(user) == []


async def test_errors_and_the_channel_test(gateway, dashscope, root: ApiClient) -> None:
    await gateway.server.app[keys.OPTIONS].update("AutomaticDisableChannelEnabled", "true")
    channel = await qwen_channel(gateway, dashscope, "qwen-plus,text-embedding-v1", key="sk-wrong")
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.AuthenticationError, match="Invalid API-key provided"):
            await client.embeddings.create(model="text-embedding-v1", input="x")
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"] is False and "Incorrect API key" in body["message"]
    good = await qwen_channel(gateway, dashscope, "qwen-plus")
    body = await root.get(f"/api/channel/test/{good.id}")
    assert body["success"], body
