# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""One masking step on every path from an upstream to a user or a log: upstreams that quote the
channel's key, or the Vertex AI access token made from it (a service-account key exchanged at
Google's token endpoint), in a refusal of the token endpoint, in a failed answer and in the middle
of a stream, in every client format (converted, and relayed as sent). Neither the client, the
consume log (the user's and the admin's view), nor the gateway's own log lines contain them."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web

from api.upstream.catalogue import ChannelType
from api.upstream.credentials import Credential, CredentialCache
from api.upstream.errors import RelayError
from api.upstream.masking import DERIVED, DerivedSecrets, mask_bytes, mask_secrets, remember
from api.upstream.signing import google
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.openai.fake_responses import FakeResponses
from tests.upstream.providers.vertex.fake_vertex import FakeVertex, error

SAY_HELLO = [{"role": "user", "content": "Say hello."}]


@pytest.fixture(autouse=True)
def no_remembered_credentials():
    """Each test masks the credentials it made, not ones left registered by earlier tests."""
    DERIVED.forget_all()
    yield
    DERIVED.forget_all()


# -- the step itself --------------------------------------------------------------------------------


def test_a_derived_secret_is_masked_while_it_lives_and_the_registry_is_bounded() -> None:
    clock = [1000.0]
    registry = DerivedSecrets(limit=2, clock=lambda: clock[0])
    registry.remember("derived-one-0123", 1100)
    registry.remember("derived-two-0123", 2000)
    registry.remember("short", 2000)  # too short to be a credential: never masked
    registry.remember("already-expired-0123", 900)
    assert [s for s, _ in registry.live()] == ["derived-one-0123", "derived-two-0123"]
    clock[0] = 1200
    assert [s for s, _ in registry.live()] == ["derived-two-0123"]  # gone with its credential
    registry.remember("derived-three-0123", 3000)
    registry.remember("derived-four-0123", 3000)
    assert {s for s, _ in registry.live()} == {"derived-three-0123", "derived-four-0123"}  # the oldest went first


def test_a_remembered_credential_is_masked_whoever_calls() -> None:
    remember("ya29.live-1", time.time() + 60)  # too short for the `ya29.` pattern: masked as remembered
    remember("24.opaque-derived/token+9", time.time() + 60)
    text = "token ya29.live-1 invalid; access_token=24.opaque-derived%2Ftoken%2B9 refused"
    masked = mask_secrets(text)  # whoever calls, without knowing the key
    assert "ya29.live-1" not in masked and "opaque-derived" not in masked and masked.count("***") == 2
    assert mask_bytes(b"data: ya29.live-1\n\n") == b"data: ***\n\n"
    assert mask_bytes(b"\xff plain \xfe") == b"\xff plain \xfe"  # bytes that are not text come back untouched


async def test_a_failed_background_refresh_is_logged_masked(caplog) -> None:
    now = time.time()
    cache = CredentialCache(refresh_margin=300)
    remember("derived-current-token-0123", now + 100)

    async def fetch() -> Credential:
        if not fetched:
            fetched.append(1)
            return Credential("derived-current-token-0123", now + 100)  # inside the refresh margin
        raise RelayError(502, "refresh refused: derived-current-token-0123 is still valid")

    fetched: list[int] = []
    assert await cache.get("k", fetch) == "derived-current-token-0123"
    assert await cache.get("k", fetch) == "derived-current-token-0123"  # starts the refresh in the background
    refresh = cache._inflight["k"]
    await asyncio.gather(refresh, return_exceptions=True)
    await asyncio.sleep(0)  # its done-callback (the log line) runs on the next loop turn
    lines = [r.getMessage() for r in caplog.records if r.name == "api.upstream.credentials"]
    assert lines == ["background credential refresh failed (the current one is kept): refresh refused: *** is "
                     "still valid"]


# -- fakes that quote what they were given ----------------------------------------------------------


async def started(aiohttp_server, fake: FakeVertex) -> FakeVertex:
    server = await aiohttp_server(fake.app())
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


class RefusingTokenEndpoint(FakeVertex):
    """Google's token endpoint issuing the service account one access token, then refusing it,
    quoting that token (still live). The tokens are `ya29.token-N`: too short for the `ya29.`
    pattern, so only their registration as they are received masks them."""

    async def token(self, request: web.Request) -> web.Response:
        if not self.tokens:
            return await super().token(request)
        return web.json_response({"error": "invalid_grant", "error_description":
                                  f"account disabled, its access token {self.tokens[-1]} revoked"}, status=400)


class LeakyVertex(FakeVertex):
    """Vertex answering a Gemini model with an error that quotes the access token it was sent: the
    whole answer, or after the first piece of a stream."""

    async def project_google(self, request: web.Request) -> web.StreamResponse:
        if not self.bearer_ok(request):
            return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        token = request.headers["Authorization"].removeprefix("Bearer ")  # quoted bare, not after "Bearer "
        leak = {"error": {"code": 500, "message": f"Internal error (access token {token})", "status": "INTERNAL"}}
        if not request.match_info["target"].endswith(":streamGenerateContent"):
            return web.json_response(leak, status=500)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for frame in (self.gemini.answer([{"text": "Hello "}], None, False), leak):
            await resp.write(b"data: " + orjson.dumps(frame) + b"\r\n\r\n")
        return resp


# The same question in each client format: (path, body, headers of a key).
def asked(client_format: str, model: str, key: str, stream: bool = True) -> tuple[str, dict[str, Any], dict]:
    bearer = {"Authorization": f"Bearer {key}"}
    if client_format == "anthropic":
        return "/v1/messages", {"model": model, "max_tokens": 100, "messages": SAY_HELLO, "stream": stream}, {
            "x-api-key": key, "anthropic-version": "2023-06-01"}
    if client_format == "gemini":
        action = "streamGenerateContent?alt=sse" if stream else "generateContent"
        contents = [{"role": "user", "parts": [{"text": "Say hello."}]}]
        return f"/v1beta/models/{model}:{action}", {"contents": contents}, {"x-goog-api-key": key}
    if client_format == "responses":
        return "/v1/responses", {"model": model, "input": "Say hello.", "stream": stream}, bearer
    return "/v1/chat/completions", {"model": model, "messages": SAY_HELLO, "stream": stream}, bearer


async def logs_seen_by_user_and_admin(gateway, username: str) -> str:
    """The consume logs as the user reads them (/api/log/self) and as an admin does (/api/log/)."""
    await drain(gateway)
    user, admin = ApiClient(gateway), ApiClient(gateway.__class__(gateway.server))
    await user.login(username, "password123")
    await admin.login("root", "123456")
    mine, everyone = await user.get("/api/log/self/?p=0"), await admin.get("/api/log/?p=0")
    await admin.client.session.close()
    assert mine["success"] and everyone["success"], (mine, everyone)
    return orjson.dumps([mine, everyone]).decode()


def gateway_records(caplog) -> list[logging.LogRecord]:
    """The gateway's log lines (the fakes' access lines show what they were sent, and are not ours)."""
    return [r for r in caplog.records if r.name != "aiohttp.access"]


def clean(text: str, *secrets: str) -> None:
    leaked = [s for s in secrets if s and s in text]
    assert not leaked, (leaked, text)
    assert "***" in text, text  # the error's text did arrive, masked


# -- through the gateway ----------------------------------------------------------------------------


async def test_a_token_endpoint_quoting_the_access_token_is_masked(gateway, aiohttp_server, caplog) -> None:
    fake = await started(aiohttp_server, RefusingTokenEndpoint())
    async with aiohttp.ClientSession() as http:
        issued = await google.exchange(http, google.parse_service_account(fake.service_account()), time.time())
    assert issued.value == fake.tokens[-1] == "ya29.token-1"
    assert mask_secrets(f"Access token {issued.value} invalid") == "Access token *** invalid"  # registered
    await add_channel(gateway, None, models="gemini-2.0-flash", type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=fake.service_account(), other='{"default": "us-central1"}')
    user = await rich_user()
    token = await make_key(user)
    caplog.set_level(logging.INFO)
    path, body, headers = asked("openai", "gemini-2.0-flash", f"sk-{token.key}", stream=False)
    resp = await gateway.post(path, json=body, headers=headers)
    text = await resp.text()
    assert resp.status == 401 and "revoked" in text, text
    clean(text, issued.value)
    lines = [r.getMessage() for r in gateway_records(caplog)]
    assert any("its access token *** revoked" in line for line in lines), lines
    assert not [line for line in lines if issued.value in line]


@pytest.mark.parametrize("client_format", ["openai", "anthropic", "gemini", "responses"])
async def test_a_vertex_access_token_quoted_mid_stream_and_in_an_answer_reaches_nobody(
        gateway, aiohttp_server, caplog, client_format) -> None:
    fake = await started(aiohttp_server, LeakyVertex())
    await add_channel(gateway, None, models="gemini-2.0-flash", type=int(ChannelType.VERTEX_AI), base_url=fake.url,
                      key=fake.service_account(), other='{"default": "us-central1"}')
    user = await rich_user()
    token = await make_key(user)
    caplog.set_level(logging.INFO)
    path, body, headers = asked(client_format, "gemini-2.0-flash", f"sk-{token.key}")
    resp = await gateway.post(path, json=body, headers=headers)
    text = await resp.text()
    assert resp.status == 200 and "Hello" in text, text
    access_token = fake.tokens[-1]
    clean(text, access_token)
    clean(await logs_seen_by_user_and_admin(gateway, user.username), access_token)
    path, body, headers = asked(client_format, "gemini-2.0-flash", f"sk-{token.key}", stream=False)
    resp = await gateway.post(path, json=body, headers=headers)
    assert resp.status == 500
    clean(await resp.text(), access_token)
    assert fake.tokens == [access_token]  # one token, on every request
    assert not [r for r in gateway_records(caplog) if access_token in r.getMessage()]


# Relayed as sent: the upstream's own error event goes to the client in its bytes, masked.

class LeakyClaude(FakeClaude):
    def events(self, body: dict[str, Any], model: str | None = None) -> list[dict[str, Any]]:
        events = super().events(body, model)
        first = next(i for i, e in enumerate(events) if e["type"] == "content_block_delta")
        return [*events[:first + 1], {"type": "error", "error": {
            "type": "overloaded_error", "message": f"Overloaded (key {self.key} at {self.url})"}}]


class LeakyGemini(FakeGemini):
    async def stream(self, request: web.Request, parts: list[dict[str, Any]],
                     grounding: dict[str, Any] | None) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        error = {"error": {"code": 500, "message": f"Internal error for key {self.key}", "status": "INTERNAL"}}
        for frame in (self.answer([{"text": "Hello "}], None, False), error):
            await resp.write(b"data: " + orjson.dumps(frame) + b"\r\n\r\n")
        return resp


class LeakyResponses(FakeResponses):
    def events(self, body: dict[str, Any], output: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        events = super().events(body, output)
        first = next(i for i, (kind, _) in enumerate(events) if kind == "response.output_text.delta")
        return [*events[:first + 1], ("error", {"code": "server_error", "message": f"failed for key {self.key}"})]


NATIVE = {  # client format → (fake, channel type, model)
    "anthropic": (lambda: LeakyClaude(key="claude-key-0123456789"), ChannelType.ANTHROPIC,
                  "claude-3-5-sonnet-20241022"),
    "gemini": (lambda: LeakyGemini(key="gemini-key-0123456789"), ChannelType.GEMINI, "gemini-2.0-flash"),
    "responses": (lambda: LeakyResponses(key="responses-key-0123456789", reply="Hello from OpenAI."),
                  ChannelType.OPENAI, "gpt-4o"),
}


@pytest.mark.parametrize("client_format", sorted(NATIVE))
async def test_a_native_streams_error_event_is_relayed_masked(gateway, aiohttp_server, client_format) -> None:
    make, channel_type, model = NATIVE[client_format]
    fake = make()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models=model, type=int(channel_type), base_url=fake.url, key=fake.key)
    user = await rich_user()
    token = await make_key(user)
    path, body, headers = asked(client_format, model, f"sk-{token.key}")
    resp = await gateway.post(path, json=body, headers=headers)
    text = await resp.text()
    assert resp.status == 200 and "Hello" in text, text
    clean(text, fake.key)
    clean(await logs_seen_by_user_and_admin(gateway, user.username), fake.key)
