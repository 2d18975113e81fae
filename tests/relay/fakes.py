"""Fake upstreams speaking the providers' real wire formats (OpenAI, Azure deployment URLs, Ollama's
native embeddings), as aiohttp test servers; and the fixtures and factories of the pipeline tests.

Import the fixtures into a test module: `from tests.relay.fakes import gateway, upstreams  # noqa: F401`.
"""
from __future__ import annotations

import asyncio
import secrets
import string
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from api import keys
from api.app import create_app
from api.relay.state import RELAY, RelayState
from api.services.billing.settlement import apply_pending, users_with_pending
from api.upstream.catalogue import ChannelType
from models import Channel, Token, User
from models.settings import Settings
from tests.helpers import eventually, make_user

REPLY = "Hello! I am a fake upstream, and this answer is streamed in small pieces."
ALPHABET = string.ascii_letters + string.digits


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    query: dict[str, str]
    body: Any  # parsed JSON, or the multipart fields


@dataclass
class FakeUpstream:
    """One upstream server. Tests set the attributes to choose its behaviour."""

    reply: str = REPLY
    usage: tuple[int, int] | None = (13, 7)  # (prompt, completion) reported; None = no usage anywhere
    fail_status: int | None = None
    fail_body: dict[str, Any] | None = None
    cut_after: int | None = None  # stream: close the connection after this many content chunks
    malformed_after: int | None = None  # stream: one broken `data:` line after this many chunks, then the rest
    hang_after: int | None = None  # stream: send nothing more after this many chunks (idle upstream)
    feed: asyncio.Queue | None = None  # stream: content pieces come from here (None ends the stream)
    feeds: list[asyncio.Queue] | None = None  # stream: each stream appends its own queue here, then as `feed`
    gate: asyncio.Event | None = None  # hold every request until set
    seen: list[Seen] = field(default_factory=list)
    waiting: int = 0
    client_gone: bool = False
    last_request: web.Request | None = None
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    def pieces(self) -> list[str]:
        words = self.reply.split(" ")
        return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]

    # -- the application ------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self.chat)
        app.router.add_post("/custom/{model}/chat", self.chat)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_post("/v1/embeddings", self.embeddings)
        app.router.add_post("/openai/deployments/{deployment}/embeddings", self.embeddings)
        app.router.add_post("/api/embed", self.ollama_embeddings)
        app.router.add_post("/v1/moderations", self.moderations)
        app.router.add_post("/v1/images/generations", self.images)
        app.router.add_post("/v1/audio/speech", self.speech)
        app.router.add_post("/v1/audio/transcriptions", self.transcription)
        app.router.add_post("/v1/audio/translations", self.transcription)
        app.router.add_post("/v1/rerank", self.rerank)
        return app

    async def _record(self, request: web.Request) -> Any:
        if request.content_type.startswith("multipart/"):
            fields: dict[str, Any] = {}
            async for part in await request.multipart():
                fields[part.name] = (part.filename, bytes(await part.read())) if part.filename else await part.text()
            body: Any = fields
        else:
            body = orjson.loads(await request.read() or b"null")
        self.seen.append(Seen(request.path, dict(request.headers), dict(request.query), body))
        self.last_request = request
        if self.gate is not None:
            self.waiting += 1
            try:
                await self.gate.wait()
            finally:
                self.waiting -= 1
        return body

    def _failure(self) -> web.Response | None:
        if self.fail_status is None:
            return None
        body = self.fail_body or {"error": {"message": f"fake failure {self.fail_status}", "type": "server_error",
                                            "param": None, "code": None}}
        return web.json_response(body, status=self.fail_status)

    def _usage(self) -> dict[str, int] | None:
        if self.usage is None:
            return None
        p, c = self.usage
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request)
        failed = self._failure()
        if failed is not None:
            return failed
        model = body.get("model", "")
        if body.get("stream"):
            return await self._stream(request, body, model, chat=True)
        answer = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": self.reply},
                               "finish_reason": "stop"}]}
        if self.usage is not None:
            answer["usage"] = self._usage()
        return web.json_response(answer)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request)
        failed = self._failure()
        if failed is not None:
            return failed
        model = body.get("model", "")
        if body.get("stream"):
            return await self._stream(request, body, model, chat=False)
        answer = {"id": "cmpl-fake", "object": "text_completion", "created": int(time.time()), "model": model,
                  "choices": [{"index": 0, "text": self.reply, "finish_reason": "stop", "logprobs": None}]}
        if self.usage is not None:
            answer["usage"] = self._usage()
        return web.json_response(answer)

    async def _stream(self, request: web.Request, body: dict, model: str, chat: bool) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        created = int(time.time())

        def chunk(piece: str | None, finish: str | None = None) -> bytes:
            if chat:
                delta = {"content": piece} if piece is not None else {}
                choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
                obj = "chat.completion.chunk"
            else:
                choice = {"index": 0, "text": piece or "", "finish_reason": finish}
                obj = "text_completion"
            data = {"id": "chatcmpl-fake", "object": obj, "created": created, "model": model, "choices": [choice]}
            return b"data: " + orjson.dumps(data) + b"\n\n"

        try:
            if chat:
                role = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
                        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                     "finish_reason": None}]}
                await resp.write(b"data: " + orjson.dumps(role) + b"\n\n")
            feed = self.feed
            if self.feeds is not None:
                feed = asyncio.Queue()
                self.feeds.append(feed)
            if feed is not None:
                while (piece := await feed.get()) is not None:
                    await resp.write(chunk(piece))
            else:
                for i, piece in enumerate(self.pieces()):
                    if self.cut_after is not None and i == self.cut_after:
                        request.transport.close()  # abrupt: no final chunk of the chunked encoding
                        return resp
                    if self.malformed_after is not None and i == self.malformed_after:
                        await resp.write(b'data: {"id": "broken", "choices": [\n\n')  # then the stream goes on
                    if self.hang_after is not None and i == self.hang_after:
                        await asyncio.Event().wait()
                    await resp.write(chunk(piece))
            await resp.write(chunk(None, "stop"))
            options = body.get("stream_options") or {}
            if options.get("include_usage") and self.usage is not None:
                usage = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model,
                         "choices": [], "usage": self._usage()}
                await resp.write(b"data: " + orjson.dumps(usage) + b"\n\n")
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            self.client_gone = True
            raise
        return resp

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        failed = self._failure()
        if failed is not None:
            return failed
        inputs = body.get("input")
        items = inputs if isinstance(inputs, list) else [inputs]
        data = [{"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]} for i in range(len(items))]
        answer: dict[str, Any] = {"object": "list", "data": data, "model": body.get("model")}
        if self.usage is not None:
            answer["usage"] = {"prompt_tokens": self.usage[0], "total_tokens": self.usage[0]}
        return web.json_response(answer)

    async def ollama_embeddings(self, request: web.Request) -> web.Response:
        """Ollama's /api/embed (ollama/ollama docs/api.md): `input` a string or a list of strings; an
        unknown field or another shape is refused with Ollama's `{"error": …}`."""
        body = await self._record(request)
        value = body.get("input") if isinstance(body, dict) else None
        texts = value if isinstance(value, list) else [value]
        known = {"model", "input", "truncate", "options", "keep_alive", "dimensions"}
        if not isinstance(body, dict) or set(body) - known or not body.get("model") \
                or not all(isinstance(t, str) for t in texts):
            return web.json_response({"error": "invalid input type"}, status=400)
        return web.json_response({"model": body["model"], "embeddings": [[0.5, 0.25] for _ in texts],
                                  "total_duration": 14143917, "load_duration": 1019500,
                                  "prompt_eval_count": 4 * len(texts)})

    async def moderations(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        return web.json_response({"id": "modr-fake", "model": body.get("model"), "results": [
            {"flagged": False, "categories": {"hate": False}, "category_scores": {"hate": 0.01}}]})

    async def images(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        failed = self._failure()
        if failed is not None:
            return failed
        n = body.get("n") or 1
        return web.json_response({"created": int(time.time()),
                                  "data": [{"url": f"https://img.example/{i}.png"} for i in range(n)]})

    async def speech(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.Response(body=b"ID3fake-mp3-bytes", content_type="audio/mpeg")

    async def transcription(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        if body.get("response_format") == "text":
            return web.Response(text=self.reply + "\n", content_type="text/plain")
        return web.json_response({"text": self.reply})

    async def rerank(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        results = [{"index": i, "relevance_score": 1 - i / 10} for i, _ in enumerate(body.get("documents") or [])]
        answer: dict[str, Any] = {"id": "rerank-fake", "results": results}
        if self.usage is not None:
            answer["usage"] = {"prompt_tokens": self.usage[0], "total_tokens": self.usage[0]}
        return web.json_response(answer)


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture
async def upstreams(aiohttp_server) -> Callable[..., Awaitable[FakeUpstream]]:
    """upstreams(**behaviour) → a running FakeUpstream."""

    async def start(**behaviour: Any) -> FakeUpstream:
        fake = FakeUpstream(**behaviour)
        fake.server = await aiohttp_server(fake.app())
        return fake

    return start


@pytest.fixture
async def gateway(aiohttp_client, settings: Settings) -> TestClient:
    """The whole gateway on a test server. Its idle timeout for upstream streams is long enough for a
    busy machine (a fake's first event can take more than a second there); a test of a stream the
    upstream leaves hanging takes `idle_gateway`."""
    return await aiohttp_client(create_app(replace(settings, streaming_timeout=60.0)))


@pytest.fixture
async def idle_gateway(aiohttp_client, settings: Settings) -> TestClient:
    """The gateway with a 1 s idle timeout for upstream streams: for fakes that stop sending (hang_after)."""
    return await aiohttp_client(create_app(replace(settings, streaming_timeout=1.0)))


# -- factories and helpers ------------------------------------------------------------------------


def relay_of(client: TestClient) -> RelayState:
    return client.server.app[RELAY]


def new_key() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(48))


async def make_key(user: User, remain_quota: int = 0, unlimited: bool = True, **fields: Any) -> Token:
    return await Token.create(user_id=user.id, key=new_key(), name=fields.pop("name", "test key"),
                              remain_quota=remain_quota, unlimited_quota=unlimited, **fields)


async def add_channel(client: TestClient, fake: FakeUpstream | None, models: str = "gpt-4", **fields: Any) -> Channel:
    """A channel row, announced like the console does, and present in this process's index."""
    fields.setdefault("type", int(ChannelType.OPENAI))
    fields.setdefault("base_url", fake.url if fake is not None else "")
    channel = await Channel.create(name=fields.pop("name", "fake"), key=fields.pop("key", "sk-upstream-secret"),
                                   models=models, **fields)
    await announce_channel(client, channel.id)
    return channel


async def announce_channel(client: TestClient, channel_id: int) -> None:
    """Publish the channel event and wait until this process's index reflects the database."""
    await client.server.app[keys.EVENTS].publish("channel", id=channel_id)
    index = relay_of(client).index
    row = await Channel.filter(id=channel_id).first()
    want = row is not None and row.status == 1

    async def reflected() -> bool:
        return (index.get(channel_id) is not None) == want and (not want or _same(index.get(channel_id), row))

    await eventually(reflected, timeout=10)


def _same(info: Any, row: Channel) -> bool:
    return info.priority == row.priority and info.weight == row.weight and info.models == tuple(
        m.strip() for m in row.models.split(",") if m.strip())


async def drain(client: TestClient) -> int:
    """Apply every pending settlement in this process (what a worker does), for assertions."""
    app = client.server.app
    store, options = app[keys.STORE], app[keys.OPTIONS]
    applied = 0
    for user_id in await users_with_pending(store):
        applied += await apply_pending(store, options, user_id)
    return applied


async def rich_user(username: str = "alice", quota: int = 10_000_000, **fields: Any) -> User:
    return await make_user(username, quota=quota, **fields)


def headers_for(token: Token) -> dict[str, str]:
    return {"Authorization": f"Bearer sk-{token.key}"}


async def live_balance(client: TestClient, user_id: int, token_id: int | None = None) -> int | None:
    from api.services.billing.balances import token_quota_key, user_quota_key

    store = client.server.app[keys.STORE]
    key = token_quota_key(store, user_id, token_id) if token_id else user_quota_key(store, user_id)
    value = await store.redis.get(key)
    return None if value is None else int(value)
