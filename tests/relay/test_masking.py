# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""One masking step on every path from an upstream to a user or a log: upstreams that quote the
channel's key, the Baidu access token or the Zhipu JWT made from it, in a failed answer and in the
middle of a stream, in every client format (converted, and relayed as sent). Neither the client, the
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

from api.relay.catalogue import ChannelType
from api.relay.credentials import Credential, CredentialCache
from api.relay.errors import RelayError
from api.relay.masking import DerivedSecrets, mask_bytes, mask_secrets, remember
from api.relay.signing import baidu as baidu_signing
from api.relay.signing import zhipu as zhipu_signing
from tests.helpers import ApiClient
from tests.relay.fake_anthropic import FakeClaude
from tests.relay.fake_baidu import FakeBaidu
from tests.relay.fake_gemini import FakeGemini
from tests.relay.fake_responses import FakeResponses
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401

ZHIPU_KEY = "3f1a2b7c.zhipuSecretValue99"
ZHIPU_SECRET = "zhipuSecretValue99"
SAY_HELLO = [{"role": "user", "content": "Say hello."}]


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


def test_credentials_are_registered_as_they_are_made() -> None:
    jwt = zhipu_signing.token(ZHIPU_KEY, time.time()).value
    remember("24.opaque-derived/token+9", time.time() + 60)
    text = f"token {jwt} invalid; access_token=24.opaque-derived%2Ftoken%2B9 refused"
    masked = mask_secrets(text)  # whoever calls, without knowing the key
    assert jwt not in masked and "opaque-derived" not in masked and masked.count("***") == 2
    assert mask_bytes(f"data: {jwt}\n\n".encode()) == b"data: ***\n\n"
    assert mask_bytes(b"\xff plain \xfe") == b"\xff plain \xfe"  # bytes that are not text come back untouched


async def test_the_baidu_access_token_is_registered_when_exchanged(aiohttp_server) -> None:
    fake = FakeBaidu()
    fake.server = await aiohttp_server(fake.app())
    async with aiohttp.ClientSession() as http:
        credential = await baidu_signing.exchange(http, fake.url, f"{fake.ak}|{fake.sk}", time.time())
    assert credential.value == fake.issued[-1]
    assert mask_secrets(f"Access token {credential.value} invalid") == "Access token *** invalid"


async def test_a_token_endpoint_quoting_the_baidu_secret_is_masked(aiohttp_server) -> None:
    async def refuse(request: web.Request) -> web.Response:
        return web.json_response({"error": "invalid_client", "error_description": "client_secret "
                                  f"{request.query['client_secret']} does not match"}, status=401)

    app = web.Application()
    app.router.add_post("/oauth/2.0/token", refuse)
    server = await aiohttp_server(app)
    async with aiohttp.ClientSession() as http:
        with pytest.raises(RelayError) as refused:
            await baidu_signing.exchange(http, str(server.make_url("")).rstrip("/"), "baidu-ak-01|baidu-sk-0123456789",
                                         time.time())
    assert refused.value.status == 401 and "does not match" in refused.value.message
    assert "baidu-sk-0123456789" not in refused.value.message


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
    lines = [r.getMessage() for r in caplog.records if r.name == "api.relay.credentials"]
    assert lines == ["background credential refresh failed (the current one is kept): refresh refused: *** is "
                     "still valid"]


# -- fakes that quote what they were given ----------------------------------------------------------


class LeakyBaidu(FakeBaidu):
    """Qianfan answering an error that quotes the access token and the key: the whole answer, or
    after the first piece of a stream."""

    def leak(self, request: web.Request) -> str:
        return f"internal error (access_token={request.query['access_token']}, client {self.ak}:{self.sk})"

    async def chat(self, request: web.Request) -> web.StreamResponse:
        refused = self.authorised(request)
        if refused is not None:
            return refused
        body = await request.json()
        if not body.get("stream"):
            return web.json_response({"error_code": 336000, "error_msg": self.leak(request)})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        first = {"id": "as-1", "object": "chat.completion", "created": 0, "sentence_id": 0, "is_end": False,
                 "result": "Hello ", "usage": self.usage}
        for event in (first, {"error_code": 336000, "error_msg": self.leak(request)}):
            await resp.write(b"data: " + orjson.dumps(event) + b"\n\n")
        await resp.write_eof()
        return resp


def zhipu_app(tokens: list[str]) -> web.Application:
    """Zhipu GLM-4 quoting the JWT it was sent (and the key) in its errors."""

    async def chat(request: web.Request) -> web.StreamResponse:
        jwt = request.headers.get("Authorization", "").removeprefix("Bearer ")
        tokens.append(jwt)
        body = await request.json()
        error = {"error": {"code": "500", "message": f"token {jwt} of key {ZHIPU_KEY} rejected"}}
        if not body.get("stream"):
            return web.json_response(error, status=500)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        chunk = {"id": "x", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello "}}]}
        for event in (chunk, error):
            await resp.write(b"data: " + orjson.dumps(event) + b"\n\n")
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_post("/api/paas/v4/chat/completions", chat)
    return app


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


@pytest.mark.parametrize("client_format", ["openai", "anthropic", "gemini", "responses"])
async def test_a_zhipu_jwt_quoted_mid_stream_reaches_nobody(gateway, aiohttp_server, caplog, client_format) -> None:
    tokens: list[str] = []
    server = await aiohttp_server(zhipu_app(tokens))
    await add_channel(gateway, None, models="glm-4-flash", type=int(ChannelType.ZHIPU_V4), key=ZHIPU_KEY,
                      base_url=str(server.make_url("")).rstrip("/"))
    user = await rich_user()
    token = await make_key(user)
    caplog.set_level(logging.INFO)
    path, body, headers = asked(client_format, "glm-4-flash", f"sk-{token.key}")
    resp = await gateway.post(path, json=body, headers=headers)
    text = await resp.text()
    assert resp.status == 200 and "Hello" in text, text
    jwt = tokens[-1]
    clean(text, jwt, ZHIPU_SECRET)
    clean(await logs_seen_by_user_and_admin(gateway, user.username), jwt, ZHIPU_SECRET)
    path, body, headers = asked(client_format, "glm-4-flash", f"sk-{token.key}", stream=False)
    resp = await gateway.post(path, json=body, headers=headers)
    assert resp.status == 500
    clean(await resp.text(), jwt, ZHIPU_SECRET)
    assert not [r for r in gateway_records(caplog) if jwt in r.getMessage() or ZHIPU_SECRET in r.getMessage()]


async def test_a_baidu_access_token_quoted_mid_stream_and_in_an_answer_reaches_nobody(gateway, aiohttp_server,
                                                                                     caplog) -> None:
    fake = LeakyBaidu()
    fake.server = await aiohttp_server(fake.app())
    await add_channel(gateway, None, models="ERNIE-3.5-8K", type=int(ChannelType.BAIDU), base_url=fake.url,
                      key=f"{fake.ak}|{fake.sk}")
    user = await rich_user()
    token = await make_key(user)
    caplog.set_level(logging.INFO)
    path, body, headers = asked("openai", "ERNIE-3.5-8K", f"sk-{token.key}")
    resp = await gateway.post(path, json=body, headers=headers)
    text = await resp.text()
    assert "Hello " in text and "stream_interrupted" in text
    access_token = fake.issued[-1]
    clean(text, access_token, fake.sk)
    clean(await logs_seen_by_user_and_admin(gateway, user.username), access_token, fake.sk)
    path, body, headers = asked("openai", "ERNIE-3.5-8K", f"sk-{token.key}", stream=False)
    resp = await gateway.post(path, json=body, headers=headers)
    assert resp.status == 500
    clean(await resp.text(), access_token, fake.sk)
    assert not [r for r in gateway_records(caplog) if access_token in r.getMessage() or fake.sk in r.getMessage()]


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
