"""Providers speaking OpenAI's format at their own paths with their own credentials: Jina
(embeddings, rerank), Cloudflare Workers AI (account id in the path); through the official openai
SDK, billed from the provider's usage. Zhipu GLM (type 26): tests/upstream/providers/zhipu/test_provider_zhipu_v4.py."""
from __future__ import annotations

from typing import Any

import openai
import pytest
from aiohttp import web

from api.upstream.catalogue import ChannelType
from models import Log
from models.enums import LogType
from tests.helpers import ApiClient
from tests.relay.fakes import add_channel, drain, make_key, rich_user

MESSAGES = [{"role": "user", "content": "Say hello."}]


def chat_answer(model: str, text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def sdk(gateway, token) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=str(gateway.make_url("/v1")), api_key=f"sk-{token.key}", max_retries=0)


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
