"""A fake Baidu Qianfan (ERNIE) API: the OAuth token endpoint (`/oauth/2.0/token`, client
credentials in the query), chat at `/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}` and
embeddings at `…/embeddings/{endpoint}`, both with `?access_token=`. Strict as Baidu is: roles
user/assistant/function only, an odd number of messages starting with a user turn, `system` apart,
no OpenAI-only fields. Failures are HTTP 200 with `{error_code, error_msg}`; streams are SSE
pieces with `is_end` and the running `usage`, without an end marker."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.relay.provider_kit import FakeBase

REPLY_PIECES = ["Hello ", "from ", "ERNIE."]
OPENAI_ONLY = {"model", "max_tokens", "stream_options", "tools", "tool_choice", "n", "presence_penalty"}


@dataclass
class FakeBaidu(FakeBase):
    ak: str = "ak-good"
    sk: str = "sk-good"
    expires_in: int = 2592000
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 14, "completion_tokens": 6,
                                                           "total_tokens": 20})
    call: dict[str, Any] | None = None  # answer with a function call
    issued: list[str] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    exchanges: int = 0
    seen: list[dict[str, Any]] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/oauth/2.0/token", self.token)
        app.router.add_post("/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}", self.chat)
        app.router.add_post("/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/{endpoint}", self.embeddings)
        return app

    async def token(self, request: web.Request) -> web.Response:
        self.exchanges += 1
        query = request.query
        if query.get("grant_type") != "client_credentials":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        if (query.get("client_id"), query.get("client_secret")) != (self.ak, self.sk):
            return web.json_response({"error": "invalid_client", "error_description": "unknown client id"},
                                     status=401)
        token = f"24.token-{next(self._ids)}"
        self.issued.append(token)
        return web.json_response({"access_token": token, "expires_in": self.expires_in, "scope": "ai_custom"})

    def authorised(self, request: web.Request) -> web.Response | None:
        token = request.query.get("access_token")
        if token not in self.issued or token in self.revoked:
            return web.json_response({"error_code": 110, "error_msg": "Access token invalid or no longer valid"})
        return None

    @staticmethod
    def problem(body: dict[str, Any]) -> str | None:
        leaked = OPENAI_ONLY & set(body)
        if leaked:
            return f"invalid argument: {sorted(leaked)[0]}"
        messages = body.get("messages")
        if not isinstance(messages, list) or len(messages) % 2 == 0:
            return "the length of messages must be an odd number"
        for i, message in enumerate(messages):
            role = message.get("role")
            if role not in ("user", "assistant", "function"):
                return f"invalid role: {role}"
            if i % 2 == 0 and role == "assistant" or i % 2 == 1 and role != "assistant":
                return "messages must alternate between user and assistant"
            if role == "function" and not message.get("name"):
                return "a function message needs its name"
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        refused = self.authorised(request)
        if refused is not None:
            return refused
        body = await request.json()
        self.seen.append({"endpoint": request.match_info["endpoint"], "body": body, "query": dict(request.query)})
        problem = self.problem(body)
        if problem:
            return web.json_response({"error_code": 336003, "error_msg": problem})
        base = {"id": "as-fake", "object": "chat.completion", "created": 1700000000}
        if not body.get("stream"):
            answer = {**base, "result": "".join(REPLY_PIECES), "is_truncated": False, "need_clear_history": False,
                      "finish_reason": "normal", "usage": self.usage}
            if self.call:
                answer.update(result="", finish_reason="function_call", function_call=self.call)
            return web.json_response(answer)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        pieces = [""] if self.call else REPLY_PIECES
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            event = {**base, "sentence_id": i, "is_end": last, "result": piece,
                     "usage": self.usage if last else {**self.usage, "completion_tokens": i + 1}}
            if last and self.call:
                event.update(function_call=self.call, finish_reason="function_call")
            await response.write(b"data: " + orjson.dumps(event) + b"\n\n")
        await response.write_eof()
        return response

    async def embeddings(self, request: web.Request) -> web.Response:
        refused = self.authorised(request)
        if refused is not None:
            return refused
        body = await request.json()
        self.seen.append({"endpoint": request.match_info["endpoint"], "body": body, "query": dict(request.query)})
        texts = body.get("input")
        if not isinstance(texts, list) or "model" in body:
            return web.json_response({"error_code": 336003, "error_msg": "input must be a list"})
        return web.json_response({"id": "as-emb", "object": "embedding_list", "created": 1700000000,
                                  "data": [{"object": "embedding", "embedding": [0.5, float(i)], "index": i}
                                           for i in range(len(texts))],
                                  "usage": {"prompt_tokens": 3 * len(texts), "total_tokens": 3 * len(texts)}})
