"""The relay fuzz suite's gateway (and the crash-site tests'): the whole app on a test server with
an OpenAI, a Jina, an Anthropic and a Gemini channel (the strict fakes of tests/relay), a user and a
key; and what every answer is held to (`World.check`): never a server error, a refusal in the route's
own error shape, and nothing charged for it.

The fakes refuse what their provider refuses; a body shape a fake's checks do not foresee is answered
400 in that provider's own shape (what the provider does), never a fake's own crash.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from tortoise import Tortoise

from api.app import create_app
from api.upstream.catalogue import ChannelType
from models import Log, Token, User
from models.db import close_database, init_database
from models.enums import LogType
from models.settings import Settings
from tests.conftest import PREFIX, REDIS_URL
from tests.helpers import eventually
from tests.relay.fakes import FakeUpstream, add_channel, drain, live_balance, make_key, relay_of, rich_user
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_responses import FakeResponses

OPENAI_MODELS = ("gpt-4o", "text-embedding-3-small", "text-moderation-latest", "dall-e-2", "dall-e-3", "tts-1",
                 "whisper-1")
RERANK = "jina-reranker-v2-base-multilingual"  # on a Jina channel (OpenAI's format, with rerank)
CLAUDE = "claude-sonnet-4-5-20250929"
GEMINI = "gemini-2.5-flash"
GEMINI_EMBEDDING = "text-embedding-004"
CHAT_MODELS = ("gpt-4o", CLAUDE, GEMINI)  # one per channel: native and converted routes alike


def _provider_errors(shape: str):
    """A body the fake cannot read is refused as its provider refuses it (400), not a 500."""

    @web.middleware
    async def refuse_unreadable(request: web.Request, handler):
        try:
            return await handler(request)
        except web.HTTPException:
            raise
        except Exception as exc:  # a fake's own limits: answered as its provider would
            message = f"invalid request: {type(exc).__name__}"
            body: dict[str, Any] = {
                "openai": {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                     "code": None}},
                "anthropic": {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
                "gemini": {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}},
            }[shape]
            return web.json_response(body, status=400)

    return refuse_unreadable


def _openai_app(chat: FakeUpstream, responses: FakeResponses) -> web.Application:
    app = chat.app()
    app.router.add_post("/v1/responses", responses.responses)
    app.router.add_post("/v1/responses/compact", responses.compact)
    app.middlewares.append(_provider_errors("openai"))
    return app


@dataclass
class Ledger:
    """What the user has: live balance, reservations and records waiting, and the database's view."""

    live: int | None
    reservations: int
    pending: int
    quota: int
    used_quota: int
    logs: int


@dataclass
class World:
    client: TestClient
    user: User
    token: Token
    servers: list[TestServer] = field(default_factory=list)
    fakes: dict[str, Any] = field(default_factory=dict)  # by format: openai, responses, anthropic, gemini
    answers: dict[int, int] = field(default_factory=dict)  # status → how many, for the report
    last: Ledger | None = None  # after the previous answer
    last_head: bytes = b""  # the headers of the last answer to `raw`

    @property
    def key(self) -> str:
        return f"sk-{self.token.key}"

    async def ledger(self) -> Ledger:
        quota = relay_of(self.client).quota
        store = quota.store
        reservations = await store.redis.hlen(quota._u(self.user.id, "resv"))
        pending = await store.redis.hlen(quota.pending_key(self.user.id))
        row = await User.get(id=self.user.id)
        logs = await Log.filter(user_id=self.user.id, type=LogType.CONSUME).count()
        return Ledger(await live_balance(self.client, self.user.id), reservations, pending, row.quota,
                      row.used_quota, logs)

    async def settled(self) -> bool:
        quota = relay_of(self.client).quota
        return await quota.store.redis.hlen(quota._u(self.user.id, "resv")) == 0

    async def check(self, resp: ClientResponse, shape: str, before: Ledger | None) -> Ledger:
        """The answer is no server error; a refusal has the route's error shape and charged nothing.
        Returns the ledger to compare the next answer with."""
        return await self.check_raw(resp.status, await resp.read(), shape, before)

    async def check_raw(self, status: int, raw: bytes, shape: str, before: Ledger | None) -> Ledger:
        self.answers[status] = self.answers.get(status, 0) + 1
        assert status < 500, (status, raw[:600])
        if status < 400:
            # A stream settles after its last byte: once it has, apply the record as a worker does, so
            # that the next refusal is compared with the settled ledger.
            await eventually(self.settled, timeout=10, interval=0.01)
            await drain(self.client)
            return await self.ledger()
        assert_error_shape(shape, status, orjson.loads(raw))
        return await self.unchanged(before)

    async def unchanged(self, before: Ledger | None) -> Ledger:
        """Nothing charged since `before` (a balance not yet loaded into Redis is not a change)."""
        after = await self.ledger()
        assert before is not None
        assert after == replace(before, live=after.live if before.live is None else before.live), (before, after)
        assert after.reservations == 0 and after.pending == 0, after
        return after

    async def raw(self, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b"",
                  method: bytes = b"POST") -> tuple[int, bytes]:
        """A request with headers as bytes (any bytes: what an HTTP client library would not send)."""
        server = self.client.server
        reader, writer = await asyncio.open_connection(server.host, server.port)
        try:
            head = [method + b" " + path.encode() + b" HTTP/1.1", b"Host: gateway", b"Connection: close",
                    b"Content-Length: " + str(len(body)).encode(), *(name + b": " + value for name, value in headers)]
            writer.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
            await writer.drain()
            answer = await reader.read()
        finally:
            writer.close()
            await writer.wait_closed()
        status_line, _, rest = answer.partition(b"\r\n")
        self.last_head, _, content = rest.partition(b"\r\n\r\n")
        if b"transfer-encoding: chunked" in self.last_head.lower():
            content = _unchunked(content)
        return int(status_line.split()[1]), content


def _unchunked(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, data = data.partition(b"\r\n")
        length = int(size, 16)
        if length == 0:
            break
        out, data = out + data[:length], data[length + 2:]
    return out


def assert_error_shape(shape: str, status: int, body: Any) -> None:
    """The error body of each API, as its own SDK reads it."""
    if shape == "openai":
        error = body["error"]
        assert isinstance(error["message"], str) and error["message"], body
        assert isinstance(error["type"], str) and {"param", "code"} <= error.keys(), body
    elif shape == "anthropic":
        assert body["type"] == "error" and isinstance(body["error"]["type"], str), body
        assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    else:
        error = body["error"]
        assert error["code"] == status and isinstance(error["status"], str), body
        assert isinstance(error["message"], str) and error["message"], body
    if status == 400 and shape != "gemini":
        kind = body["error"]["type"]
        assert kind in ("invalid_request_error", "new_api_error"), body


async def _database(backend: str, request: pytest.FixtureRequest, path: Path) -> str:
    if backend == "postgres":
        url = request.getfixturevalue("postgres_database")
        await init_database(url, generate_schemas=True)
        conn = Tortoise.get_connection("default")
        tables = [m._meta.db_table for app in Tortoise.apps.values() for m in app.values()]
        await conn.execute_script("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY")
    else:
        url = f"sqlite://{path / 'fuzz.sqlite3'}"
        await init_database(url, generate_schemas=True)
    await close_database()
    return url


def _with(app: web.Application, shape: str) -> web.Application:
    app.middlewares.append(_provider_errors(shape))
    return app
@asynccontextmanager
async def open_world(backend: str, request: pytest.FixtureRequest, path: Path) -> AsyncIterator[World]:
    """The gateway on a fresh database (`sqlite` or `postgres`), its channels, a user with a key."""
    url = await _database(backend, request, path)
    settings = Settings.from_env({
        "DATABASE_URL": url, "REDIS_URL": REDIS_URL, "REDIS_PREFIX": PREFIX, "SESSION_SECRET": "test-session-secret",
        "DATA_DIR": str(path), "FRONTEND_DIR": str(path / "no-frontend"), "RATE_LIMIT_API": "100000",
        "RATE_LIMIT_CRITICAL": "100000", "SHUTDOWN_TIMEOUT": "1"})
    client = TestClient(TestServer(create_app(replace(settings, streaming_timeout=5.0))))
    await client.start_server()
    servers: list[TestServer] = []
    try:
        chat, responses, claude, gemini = FakeUpstream(), FakeResponses(), FakeClaude(), FakeGemini()
        apps = ((chat, _openai_app(chat, responses)), (claude, _with(claude.app(), "anthropic")),
                (gemini, _with(gemini.app(), "gemini")))
        for fake, app in apps:
            server = TestServer(app)
            await server.start_server()
            servers.append(server)
            fake.server = server
        responses.server = chat.server
        await add_channel(client, chat, models=",".join(OPENAI_MODELS), name="openai")
        await add_channel(client, chat, models=RERANK, type=int(ChannelType.JINA), name="jina")
        await add_channel(client, None, models=CLAUDE, type=int(ChannelType.ANTHROPIC), base_url=claude.url,
                          key=claude.key, name="anthropic")
        await add_channel(client, None, models=f"{GEMINI},{GEMINI_EMBEDDING}", type=int(ChannelType.GEMINI),
                          base_url=gemini.url, key=gemini.key, name="gemini")
        user = await rich_user("fuzz", quota=10**12)
        token = await make_key(user)
        world = World(client, user, token, servers,
                      {"openai": chat, "responses": responses, "anthropic": claude, "gemini": gemini})
        world.last = await world.ledger()
        yield world
    finally:
        for server in servers:
            await server.close()
        await client.close()
