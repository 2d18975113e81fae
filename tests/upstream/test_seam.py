# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""The upstream seam: every type accounted for, modes a type cannot serve, token exchange through
the credential cache, the WebSocket transport, the pipeline's own count of a stream, and the
channel test going through the same path as the relay."""
from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Mapping
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api.services.billing import pricing
from api.upstream import catalogue, registry
from api.upstream.base import (
    Adaptor,
    RelayMode,
    StreamChunk,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
)
from api.upstream.catalogue import ChannelType
from api.upstream.credentials import Credential
from api.upstream.decoders import NDJSONDecoder
from api.upstream.provider import Provider
from api.upstream.providers.compatible import API2GPTAdaptor, RerankingAdaptor
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.providers.unserved import UnservedAdaptor
from api.upstream.sse import SSEEvent
from api.upstream.tokenizer import count_chat_request, count_text
from models import Channel, Log
from models.enums import LogType
from tests.helpers import ApiClient
from tests.relay.fakes import (  # noqa: F401
    REPLY,
    add_channel,
    drain,
    gateway,
    make_key,
    relay_of,
    rich_user,
    upstreams,
)

MESSAGES = [{"role": "user", "content": "Say hello."}]

# The catalogue's own facts, read from its rows (adding a row adds it here, and to the tests below).
OPENAI_COMPATIBLE = {t for t, row in catalogue.CATALOGUE.items() if issubclass(row.adaptor, OpenAIAdaptor)}
TASK_TYPES = {t for t, row in catalogue.CATALOGUE.items() if row.task}
# The rows that are one row and nothing else: OpenAI's own adaptor (or the reranking one) at the row's
# address, paths and modes (README, "Adding a provider"); each is relayed below against a fake that
# answers at any path.
ONE_ROW = sorted(t for t, row in catalogue.CATALOGUE.items()
                 if row.adaptor in (OpenAIAdaptor, RerankingAdaptor) and registry.is_relayable(t))


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def test_every_type_is_dedicated_or_compatible_and_none_refuses() -> None:
    for channel_type in ChannelType:
        adaptor = registry.ADAPTORS[channel_type]  # every type has an entry
        if channel_type in TASK_TYPES:
            assert not registry.is_relayable(channel_type)
        elif channel_type in OPENAI_COMPATIBLE:
            assert issubclass(adaptor, OpenAIAdaptor), channel_type
        else:  # a dedicated format: its own adaptor, bound to its row
            assert not issubclass(adaptor, OpenAIAdaptor), channel_type
        assert adaptor.provider is catalogue.provider(channel_type)
    retired = [t for t, row in catalogue.CATALOGUE.items() if row.retired is not None]
    assert sorted(retired) == [11, 15, 16]
    for channel_type in [*TASK_TYPES, *retired]:  # loaded and shown, never relayed
        assert issubclass(registry.ADAPTORS[channel_type], UnservedAdaptor)
        assert not registry.is_relayable(channel_type)
    assert issubclass(registry.get_adaptor(12), API2GPTAdaptor)  # new-api's resellers
    assert registry.get_adaptor(9999).provider is catalogue.UNKNOWN


def test_the_catalogue_has_compatible_and_task_rows_to_check() -> None:
    assert {ChannelType.OPENAI, ChannelType.AZURE, ChannelType.DEEPSEEK, ChannelType.JINA} <= OPENAI_COMPATIBLE
    assert {ChannelType.MIDJOURNEY, ChannelType.SUNO} <= TASK_TYPES and not OPENAI_COMPATIBLE & TASK_TYPES
    assert {ChannelType.OPENAI, ChannelType.MISTRAL, ChannelType.JINA} <= set(ONE_ROW)
    assert ChannelType.AZURE not in ONE_ROW  # its own adaptor (deployment paths, api-key)


@pytest.mark.parametrize("channel_type", ONE_ROW, ids=lambda t: catalogue.CATALOGUE[t].name)
async def test_each_one_row_provider_is_relayed_at_its_own_path(gateway, aiohttp_server, channel_type) -> None:
    """A row of OpenAI's format alone is a whole provider: its address, its first model (priced by
    default), its path for its first mode; the request reaches the provider there with the key."""
    row = catalogue.CATALOGUE[channel_type]
    assert row.base_url.startswith("https://"), row.name  # a channel can be made without an address
    mode = RelayMode.CHAT if row.modes is None or RelayMode.CHAT in row.modes else RelayMode.EMBEDDINGS
    assert row.modes is None or mode in row.modes, row.name
    model = row.models[0] if row.models else "gpt-4"
    pricing.resolve_price(model)  # a default price, or PriceNotConfigured
    seen: list[tuple[str, str | None, str]] = []

    async def anything(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.path, request.headers.get("Authorization"), body["model"]))
        usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        if mode is RelayMode.CHAT:
            return web.json_response({"id": "c", "object": "chat.completion", "created": 0, "model": model,
                                      "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                                                   "finish_reason": "stop"}], "usage": usage})
        return web.json_response({"object": "list", "model": model, "usage": usage,
                                  "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}]})

    app = web.Application()
    app.router.add_post("/{tail:.*}", anything)
    server = await aiohttp_server(app)
    base_url = str(server.make_url("")).rstrip("/")
    await add_channel(gateway, None, models=model, type=int(channel_type), base_url=base_url)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        if mode is RelayMode.CHAT:
            answer = await client.chat.completions.create(model=model, messages=MESSAGES)
            assert answer.choices[0].message.content == REPLY
        else:
            vectors = await client.embeddings.create(model=model, input="hello", encoding_format="float")
            assert vectors.data[0].embedding == [0.5, 0.25]
    assert seen == [(registry.ADAPTORS[channel_type].paths[mode], "Bearer sk-upstream-secret", model)]
    await drain(gateway)
    assert await Log.filter(user_id=user.id, type=LogType.CONSUME).count() == 1


async def test_a_mode_the_channel_cannot_serve_is_501_and_never_its_fault(gateway, upstreams) -> None:
    fake = await upstreams()
    channel = await add_channel(gateway, fake, models="jina-reranker-v2-base-multilingual")
    user = await rich_user()
    token = await make_key(user)
    headers = {"Authorization": f"Bearer sk-{token.key}"}
    body = {"model": "jina-reranker-v2-base-multilingual", "query": "q", "documents": ["a", "b"]}
    for _ in range(3):
        resp = await gateway.post("/v1/rerank", json=body, headers=headers)
        assert resp.status == 501
        error = (await resp.json())["error"]
        assert error["type"] == "unsupported" and "OpenAI (1)" in error["message"]
    assert fake.seen == []
    assert channel.id not in relay_of(gateway).health._windows  # nothing recorded against the channel
    # Another channel of the model that can serve it is used instead, without spending a retry.
    siliconflow = await upstreams()
    await add_channel(gateway, siliconflow, models="jina-reranker-v2-base-multilingual",
                      type=int(ChannelType.SILICONFLOW), priority=-1)
    resp = await gateway.post("/v1/rerank", json=body, headers=headers)
    assert resp.status == 200, await resp.text()
    assert [s.path for s in siliconflow.seen] == ["/v1/rerank"]
    await drain(gateway)
    assert await Log.filter(user_id=user.id, type=LogType.CONSUME).count() == 1


async def test_a_task_type_answers_chat_requests_501(gateway) -> None:
    await add_channel(gateway, None, models="gpt-4", type=int(ChannelType.SUNO), base_url="http://127.0.0.1:9")
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.chat.completions.create(model="gpt-4", messages=MESSAGES)
    assert caught.value.status_code == 501
    assert "(36)" in caught.value.message


# -- a provider that needs a token exchange, over the seam ----------------------------------------


class ExchangeAdaptor(OpenAIAdaptor):
    """OpenAI's format, but the channel key is exchanged at `{base}/token` for a short-lived token."""


    def request_headers(self) -> dict[str, str]:
        return {}

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        async def exchange() -> Credential:
            async with ctx.http.post(f"{self.base_url}/token", json={"key": self.meta.key}) as resp:
                data = await resp.json()
            return Credential(data["token"], time.time() + data["expires_in"])

        cache_key = hashlib.sha256(f"{self.meta.channel_id}:{self.meta.key}".encode()).hexdigest()
        request.headers["Authorization"] = f"Bearer {await ctx.credentials.get(cache_key, exchange)}"


@pytest.fixture
def exchange_type(monkeypatch) -> int:
    monkeypatch.setitem(registry.ADAPTORS, ChannelType.DIFY, ExchangeAdaptor)
    return int(ChannelType.DIFY)


async def test_token_exchange_once_for_concurrent_requests_and_the_channel_test(
        gateway, upstreams, exchange_type, root: ApiClient) -> None:
    fake = await upstreams()
    exchanges: list[Any] = []

    async def token(request: web.Request) -> web.Response:
        exchanges.append(await request.json())
        return web.json_response({"token": f"tok-{len(exchanges)}", "expires_in": 3600})

    fake.server.app.router._frozen = False
    fake.server.app.router.add_post("/token", token)
    channel = await add_channel(gateway, fake, models="gpt-4", type=exchange_type)
    user = await rich_user()
    key = await make_key(user)
    async with sdk(gateway, key) as client:
        answers = await asyncio.gather(*[client.chat.completions.create(model="gpt-4", messages=MESSAGES)
                                         for _ in range(5)])
    assert [a.choices[0].message.content for a in answers] == [REPLY] * 5
    assert exchanges == [{"key": "sk-upstream-secret"}]  # one exchange for five requests
    assert {s.headers["Authorization"] for s in fake.seen} == {"Bearer tok-1"}  # never the key itself
    # The channel test goes through the same seam (and the same process-wide cache).
    body = await root.get(f"/api/channel/test/{channel.id}")
    assert body["success"], body
    assert fake.seen[-1].headers["Authorization"] == "Bearer tok-1" and len(exchanges) == 1


# -- WebSocket transport and the pipeline's own count ---------------------------------------------


class SocketAdaptor(Adaptor):
    """A provider speaking over a WebSocket: one JSON request, then one JSON message per piece."""


    def build_request(self, mode: RelayMode, body: Mapping[str, Any] | Any) -> UpstreamRequest:
        url = self.base_url.replace("http", "ws", 1) + "/socket"
        return UpstreamRequest(url, {"X-Key": self.meta.key}, orjson.dumps(body), transport="websocket")

    def stream_decoder(self, content_type: str) -> NDJSONDecoder | None:
        return NDJSONDecoder() if content_type == "application/x-ndjson" else None

    def decode_body(self, raw: bytes) -> dict[str, Any]:
        """A whole answer is every message of the conversation, one per line."""
        pieces = [orjson.loads(line) for line in raw.splitlines() if line.strip()]
        return {"text": "".join(p.get("text", "") for p in pieces)}

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        return {"prompt": req["messages"][-1]["content"], "stream": bool(req.get("stream"))}

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return {"id": "chatcmpl-ws", "object": "chat.completion", "created": 0, "model": self.meta.name.requested,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": body["text"]},
                             "finish_reason": "stop"}]}, None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        piece = orjson.loads(ev.data)
        if piece.get("end"):
            state.done = True
            return []
        return [{"id": "chatcmpl-ws", "object": "chat.completion.chunk", "created": 0,
                 "model": self.meta.name.requested,
                 "choices": [{"index": 0, "delta": {"content": piece["text"]}, "finish_reason": None}]}]


async def test_websocket_transport_streamed_and_not_billed_by_the_pipelines_count(
        gateway, aiohttp_server, monkeypatch) -> None:
    monkeypatch.setitem(catalogue.CATALOGUE, 901, Provider(901, "SOCKET", ("Socket", "Socket"), SocketAdaptor))
    requests: list[Any] = []

    async def socket(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        requests.append((request.headers.get("X-Key"), orjson.loads((await ws.receive()).data)))
        for word in REPLY.split(" "):
            await ws.send_str(orjson.dumps({"text": word + " "}).decode())
        await ws.send_str('{"end": true}')
        await ws.close()
        return ws

    app = web.Application()
    app.router.add_get("/socket", socket)
    server = await aiohttp_server(app)
    await add_channel(gateway, None, models="gpt-4", type=901, base_url=str(server.make_url("")).rstrip("/"))
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        whole = await client.chat.completions.create(model="gpt-4", messages=MESSAGES)
        stream = await client.chat.completions.create(model="gpt-4", messages=MESSAGES, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    expected = "".join(word + " " for word in REPLY.split(" "))
    assert whole.choices[0].message.content.startswith(expected) and text == expected
    assert requests == [("sk-upstream-secret", {"prompt": "Say hello.", "stream": False}),
                        ("sk-upstream-secret", {"prompt": "Say hello.", "stream": True})]
    # No usage from this provider: the pipeline counted the prompt and what the stream produced.
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    prompt = count_chat_request({"model": "gpt-4", "messages": MESSAGES})
    price = pricing.resolve_price("gpt-4")
    assert [(log.prompt_tokens, log.completion_tokens) for log in logs][1] == (prompt, count_text(expected))
    assert logs[1].quota == pricing.settle_quota(price, prompt, count_text(expected))


# -- channel form: key formats, base URLs, per-type settings --------------------------------


def channel_form(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "type": 1, "key": "sk-x", "models": "gpt-4", "groups": ["default"], **fields}


@pytest.mark.parametrize(("fields", "message"), [
    ({"type": 33, "key": "AKIAXXXX|secret"}, "The key of an AWS Bedrock channel is AccessKeyId|SecretAccessKey|Region"),
    ({"type": 33, "key": "AKIAXXXX|secret|moon-1"}, "The key of an AWS Bedrock channel"),
    ({"type": 41, "key": '{"type": "service_account", "project_id": "p"}', "other": '{"default": "us-central1"}'},
     "not a service-account key (missing client_email, private_key)"),
    ({"type": 41, "key": "ya29.token", "other": '{"default": "us-central1"}'}, "OAuth access token (ya29.…)"),
    ({"type": 15, "key": "ak|sk"}, "is retired: Baidu switched the V1 API (wenxinworkshop) off on 2026-08-31"),
    ({"type": 3, "key": "k", "base_url": ""}, "has no default API address"),
    ({"type": 8, "key": "k", "base_url": ""}, "has no default API address"),
    ({"type": 21, "key": "k", "other": ""}, "needs the knowledge base ID"),
    ({"type": 18, "key": "a|b|c", "other": "v9"}, "The Spark version must be empty or one of v1.1, v3.1"),
])
async def test_channel_form_checks_the_key_format_and_the_type(root: ApiClient, fields, message: str) -> None:
    body = await root.post("/api/channel/", channel_form(**fields))
    assert body["success"] is False and message in body["message"], body
    assert await Channel.all().count() == 0


async def test_channel_keys_of_the_right_format_are_accepted(root: ApiClient) -> None:
    body = await root.post("/api/channel/", channel_form(type=33, key="AKIA1|s3cr3t/+x|us-east-1\nAKIA2|s|eu-west-3"))
    assert body["success"], body
    assert sorted(c.key for c in await Channel.all()) == ["AKIA1|s3cr3t/+x|us-east-1", "AKIA2|s|eu-west-3"]
    channel = await Channel.get(key="AKIA2|s|eu-west-3")
    # An edit that keeps the key checks the stored key against a new type.
    body = await root.put("/api/channel/", {"id": channel.id, "type": 41, "other": '{"default": "us-east5"}'})
    assert body["success"] is False and "service-account" in body["message"]


def test_every_built_in_model_of_a_relayable_type_has_a_default_price() -> None:
    from api.channels.admin import type_models

    unpriced = []
    for channel_type in ChannelType:
        if not registry.is_relayable(channel_type):
            continue
        for model in type_models(int(channel_type)):
            try:
                pricing.resolve_price(model)
            except pricing.PriceNotConfigured:
                unpriced.append((int(channel_type), model))
    assert unpriced == []


async def test_every_dedicated_type_is_created_at_its_default_address(root: ApiClient) -> None:
    for channel_type, key, model in ((46, "bce-v3/ALTAK-x/y", "ernie-4.5-turbo-32k"), (26, "id.secret", "glm-4.6"),
                                     (17, "sk-dash", "qwen-plus"), (18, "app|secret|key", "SparkDesk-v3.5"),
                                     (23, "1|AKID|secret", "hunyuan-lite"), (34, "co-key", "command-a-03-2025"),
                                     (37, "app-key", "dify")):
        body = await root.post("/api/channel/", channel_form(type=channel_type, key=key, models=model))
        assert body["success"], (channel_type, body)
    stored = {c.type: c for c in await Channel.all()}
    assert stored[18].other == ""  # Spark takes the version from the model's name
    library = await root.post("/api/channel/", channel_form(type=21, key="k", other="lib-1", models="gpt-4o-mini"))
    assert library["success"], library
