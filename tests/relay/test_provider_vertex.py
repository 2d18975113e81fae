# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Vertex AI channels (type 41): Gemini and Claude models behind one service-account key, exchanged
for an access token (once, cached, refreshed before expiry) at a fake token endpoint that verifies
the assertion; region per model from `other`."""
from __future__ import annotations

import base64
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from api.relay.credentials import process_credentials
from api.relay.providers.vertex.adaptor import vertex_model
from api.services import pricing
from models import Log
from models.enums import ChannelType, LogType
from tests.helpers import ApiClient, eventually
from tests.relay.fake_anthropic import REPLY as CLAUDE_REPLY
from tests.relay.fake_anthropic import FakeClaude
from tests.relay.fake_gemini import REPLY as GEMINI_REPLY
from tests.relay.fake_gemini import FakeGemini
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401

MESSAGES = [{"role": "user", "content": "Say hello."}]
REGIONS = '{"default": "us-central1", "claude-3-5-sonnet-20240620": "europe-west1"}'


class FakeVertex:
    """Google's token endpoint plus Vertex's publisher routes (Gemini through FakeGemini)."""

    def __init__(self, expires_in: int = 3600) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.expires_in = expires_in
        self.tokens: list[str] = []
        self.gemini = FakeGemini(bearers=set())
        self.claude = FakeClaude()
        self.claude_seen: list[dict[str, Any]] = []
        self.url = ""

    def service_account(self) -> str:
        pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
        return orjson.dumps({"type": "service_account", "project_id": "proj-7", "private_key_id": "k1",
                             "private_key": pem, "client_email": "relay@proj-7.iam.gserviceaccount.com",
                             "token_uri": f"{self.url}/token"}, option=orjson.OPT_INDENT_2).decode()

    async def token(self, request: web.Request) -> web.Response:
        assertion = (await request.post())["assertion"]
        header, claims, signature = str(assertion).split(".")
        pad = lambda part: base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))  # noqa: E731
        self.key.public_key().verify(pad(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(),
                                     hashes.SHA256())
        token = f"ya29.token-{len(self.tokens) + 1}"
        self.tokens.append(token)
        assert self.gemini.bearers is not None
        self.gemini.bearers.add(token)
        return web.json_response({"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"})

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model, _, action = request.match_info["target"].partition(":")
        self.claude_seen.append({"path": request.path, "model": model, "action": action, "body": body,
                                 "authorization": request.headers.get("Authorization"),
                                 "headers": dict(request.headers)})
        if request.headers.get("Authorization") not in {f"Bearer {t}" for t in self.tokens}:
            return web.json_response({"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "bad token"}},
                                     status=401)
        # The model in the URL, `anthropic_version: vertex-2023-10-16` in the body
        # (platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai).
        if body.get("anthropic_version") != "vertex-2023-10-16":
            return web.json_response({"error": {"code": 400, "message": "anthropic_version: vertex-2023-10-16 is "
                                                                        "required"}}, status=400)
        problem = self.claude.problem(body, "vertex", model)
        if problem:
            return web.json_response({"type": "error", "error": {"type": "invalid_request_error",
                                                                 "message": problem}}, status=400)
        if action == "rawPredict":
            return web.json_response(self.claude.message(body, model))
        return await self.claude.stream(request, self.claude.events(body, model))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/token", self.token)
        app.router.add_post("/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{target}",
                            self.anthropic)
        gemini = self.gemini.app()
        for route in gemini.router.routes():
            app.router.add_route(route.method, route.resource.canonical, route.handler)
        return app


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
