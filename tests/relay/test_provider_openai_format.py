# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""Providers speaking OpenAI's format at their own paths with their own credentials: Zhipu GLM-4
(JWT signed from `id.secret`, verified by the fake), Jina (embeddings, rerank), Cloudflare Workers
AI (account id in the path); through the official openai SDK, billed from the provider's usage."""
from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any

import openai
import orjson
import pytest
from aiohttp import web

from api.relay.catalogue import ChannelType
from api.relay.signing import zhipu
from api.services import pricing
from models import Log
from models.enums import LogType
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401

ZHIPU_KEY = "3f1a2b.s3cr3tValue"
MESSAGES = [{"role": "user", "content": "Say hello."}]


def b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def jwt_claims(token: str, secret: str) -> dict[str, Any] | None:
    """The claims of a Zhipu JWT when its HS256 signature checks out, else None."""
    header, claims, signature = token.split(".")
    expected = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, b64decode(signature)):
        return None
    assert orjson.loads(b64decode(header)) == {"alg": "HS256", "sign_type": "SIGN"}
    return orjson.loads(b64decode(claims))


def chat_answer(model: str, text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


def test_zhipu_token_is_an_hs256_jwt_with_millisecond_claims() -> None:
    credential = zhipu.token(ZHIPU_KEY, 1_700_000_000.5)
    assert jwt_claims(credential.value, "s3cr3tValue") == {
        "api_key": "3f1a2b", "exp": 1_700_003_600_500, "timestamp": 1_700_000_000_500}
    assert credential.expires_at == 1_700_003_600.5 and jwt_claims(credential.value, "other") is None


async def test_zhipu_v4_signed_once_and_streamed(gateway, aiohttp_server) -> None:
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        auth = request.headers.get("Authorization", "")
        claims = jwt_claims(auth.removeprefix("Bearer "), "s3cr3tValue") if auth.count(".") == 2 else None
        seen.append({"auth": auth, "claims": claims, "body": body})
        if claims is None or claims["exp"] < time.time() * 1000:
            return web.json_response({"error": {"code": "1000", "message": "身份验证失败。"}}, status=401)
        if not body.get("stream"):
            return web.json_response(chat_answer(body["model"], "你好！", (8, 3)))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i, piece in enumerate(("你", "好！")):
            chunk = {"id": "x", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}}]}
            if i == 1:  # Zhipu's last chunk carries the finish reason and the usage
                chunk["choices"][0]["finish_reason"] = "stop"
                chunk["usage"] = {"prompt_tokens": 8, "completion_tokens": 3, "total_tokens": 11}
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        return resp

    app = web.Application()
    app.router.add_post("/api/paas/v4/chat/completions", chat)
    server = await aiohttp_server(app)
    await add_channel(gateway, None, models="glm-4-flash", type=int(ChannelType.ZHIPU_V4), key=ZHIPU_KEY,
                      base_url=str(server.make_url("")).rstrip("/"))
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model="glm-4-flash", messages=MESSAGES)
        stream = await client.chat.completions.create(model="glm-4-flash", messages=MESSAGES, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert answer.choices[0].message.content == "你好！" and text == "你好！"
    assert seen[0]["claims"]["api_key"] == "3f1a2b" and ZHIPU_KEY not in seen[0]["auth"]
    assert seen[0]["auth"] == seen[1]["auth"]  # signed once, reused from the credential cache
    assert "stream_options" not in seen[1]["body"]
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    quota = pricing.settle_quota(pricing.resolve_price("glm-4-flash"), 8, 3)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(8, 3, quota)] * 2


async def test_jina_embeddings_and_rerank(gateway, aiohttp_server) -> None:
    seen: list[tuple[str, dict]] = []

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.path, body))
        return web.json_response({"model": body["model"], "object": "list", "usage": {"total_tokens": 6,
                                                                                     "prompt_tokens": 6},
                                  "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}]})

    async def rerank(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.path, body))
        return web.json_response({"model": body["model"], "usage": {"total_tokens": 12, "prompt_tokens": 12},
                                  "results": [{"index": 1, "relevance_score": 0.9, "document": {"text": "b"}},
                                              {"index": 0, "relevance_score": 0.1, "document": {"text": "a"}}]})

    app = web.Application()
    app.router.add_post("/v1/embeddings", embeddings)
    app.router.add_post("/v1/rerank", rerank)
    server = await aiohttp_server(app)
    await add_channel(gateway, None, models="jina-embeddings-v3,jina-reranker-v2-base-multilingual",
                      type=int(ChannelType.JINA), key="jina_key", base_url=str(server.make_url("")).rstrip("/"))
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        vectors = await client.embeddings.create(model="jina-embeddings-v3", input="hello there")
    resp = await gateway.post("/v1/rerank", json={"model": "jina-reranker-v2-base-multilingual", "query": "q",
                                                  "documents": ["a", "b"], "top_n": 2},
                              headers={"Authorization": f"Bearer sk-{token.key}"})
    ranked = await resp.json()
    assert vectors.data[0].embedding == [0.5, 0.25]
    assert resp.status == 200 and [r["index"] for r in ranked["results"]] == [1, 0]
    assert [path for path, _ in seen] == ["/v1/embeddings", "/v1/rerank"] and seen[1][1]["top_n"] == 2
    async with sdk(gateway, token) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.chat.completions.create(model="jina-embeddings-v3", messages=MESSAGES)
    assert caught.value.status_code == 501  # Jina serves no chat
    await drain(gateway)
    logs = await Log.filter(user_id=user.id, type=LogType.CONSUME).order_by("id")
    assert [(log.model_name, log.prompt_tokens) for log in logs] == [
        ("jina-embeddings-v3", 6), ("jina-reranker-v2-base-multilingual", 12)]


async def test_cloudflare_account_in_the_path_and_required(gateway, aiohttp_server, root: ApiClient) -> None:
    seen: list[tuple[str, str | None]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.path, request.headers.get("Authorization")))
        return web.json_response(chat_answer(body["model"], "hi", (5, 1)))

    app = web.Application()
    app.router.add_post("/client/v4/accounts/{account}/ai/v1/chat/completions", chat)
    server = await aiohttp_server(app)
    model = "@cf/meta/llama-3.1-8b-instruct"
    await add_channel(gateway, None, models=model, type=int(ChannelType.CLOUDFLARE), key="cf-token",
                      other="0123abcd", base_url=str(server.make_url("")).rstrip("/"))
    token = await make_key(await rich_user())
    async with sdk(gateway, token) as client:
        answer = await client.chat.completions.create(model=model, messages=MESSAGES)
    assert answer.choices[0].message.content == "hi"
    assert seen == [("/client/v4/accounts/0123abcd/ai/v1/chat/completions", "Bearer cf-token")]
    body = await root.post("/api/channel/", {"name": "cf", "type": 39, "key": "t", "models": model, "other": ""})
    assert body["success"] is False and "account ID" in body["message"]
    body = await root.post("/api/channel/", {"name": "cf", "type": 39, "key": "t", "models": model,
                                             "other": "../../x"})
    assert body["success"] is False
