"""A fake Zhipu GLM API (v4, OpenAI's format under `/api/paas/v4`), strict about what Zhipu
documents: the API key itself as a Bearer token, the request fields it checks, and its errors as
`{"error": {"code", "message"}}` with Zhipu's business codes and HTTP statuses. Streams are SSE of
OpenAI chunks (`reasoning_content` deltas while thinking), the last one with the finish reason and
the usage, then `data: [DONE]`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

KEY = "5f0c3e7d9a2b4c6e8f1a3b5c7d9e0f21.Xy7Kq2LmN9pR4sTv"
REPLY_PIECES = ["你好，", "我是 ", "GLM。"]
THOUGHT_PIECES = ["The user ", "greets me."]
# docs.bigmodel.cn/cn/guide/start/model-overview and docs.z.ai/api-reference/llm/chat-completion
# (the model enum): the models this fake serves; another is refused with 1211.
CHAT_MODELS = frozenset({"glm-5.1", "glm-5", "glm-4.7", "glm-4.6", "glm-4.5-air", "glm-4-flash-250414"})
EMBEDDING_MODELS = frozenset({"embedding-3"})
USAGE = {"prompt_tokens": 14, "completion_tokens": 9, "total_tokens": 23, "prompt_tokens_details": {"cached_tokens": 0}}


def error(status: int, code: str, message: str) -> web.Response:
    """Zhipu's error body (docs.bigmodel.cn/cn/api/api-code: the business code inside the HTTP
    status; docs.z.ai/api-reference/api-code for the statuses: 400 parameters, 401 authentication,
    429 concurrency and balance)."""
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


@dataclass
class FakeZhipu(FakeBase):
    key: str = KEY
    tool_call: dict[str, Any] | None = None  # {"name", "arguments"}: the model calls this tool
    finish: str | None = None  # a finish reason of Zhipu's own (`sensitive`, `network_error`)
    fail: tuple[int, str, str] | None = None  # (status, code, message) answered to every request
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/paas/v4/chat/completions", self.chat)
        app.router.add_post("/api/paas/v4/embeddings", self.embeddings)
        return app

    def refused(self, request: web.Request) -> web.Response | None:
        # docs.bigmodel.cn/cn/guide/develop/http/introduction ("API Key 鉴权": `Authorization: Bearer
        # YOUR_API_KEY`); docs.bigmodel.cn/cn/api/api-code: 1001 no Authorization header, 1002 an
        # invalid token; docs.z.ai/api-reference/api-code: HTTP 401 for authentication failures.
        auth = request.headers.get("Authorization")
        if not auth:
            return error(401, "1001", "Header中未收到Authorization参数，无法进行身份验证。")
        if auth != f"Bearer {self.key}":
            return error(401, "1002", "Authorization Token非法，请确认Authorization Token正确传递。")
        if self.fail is not None:
            return error(*self.fail)
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        refused = self.refused(request)
        body = await request.json()
        self.seen.append({"path": request.path, "headers": dict(request.headers), "body": body})
        if refused is not None:
            return refused
        problem = self.chat_problem(body)
        if problem is not None:
            return problem
        thinking = (body.get("thinking") or {}).get("type", "enabled") == "enabled"
        calls = [{"id": "call_9f8e7d", "type": "function", "index": 0,
                  "function": {"name": self.tool_call["name"], "arguments": self.tool_call["arguments"]}}] \
            if self.tool_call and body.get("tools") and body["messages"][-1].get("role") != "tool" else None
        finish = self.finish or ("tool_calls" if calls else "stop")
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": "" if calls else "".join(REPLY_PIECES)}
            if thinking:
                message["reasoning_content"] = "".join(THOUGHT_PIECES)
            if calls:
                message["tool_calls"] = calls
            return web.json_response({"id": "20251105-glm-1", "request_id": "req-1", "created": 1762300000,
                                      "model": body["model"], "usage": USAGE,
                                      "choices": [{"index": 0, "finish_reason": finish, "message": message}]})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(delta: dict[str, Any], last: bool = False) -> None:
            chunk: dict[str, Any] = {"id": "20251105-glm-1", "created": 1762300000, "model": body["model"],
                                     "choices": [{"index": 0, "delta": {"role": "assistant", **delta}}]}
            if last:  # Zhipu's last chunk carries the finish reason and the usage
                chunk["choices"][0]["finish_reason"] = finish
                chunk["usage"] = USAGE
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")

        for piece in THOUGHT_PIECES if thinking else ():
            await send({"reasoning_content": piece})
        if calls:
            await send({"tool_calls": calls}, last=True)
        else:
            for i, piece in enumerate(REPLY_PIECES):
                await send({"content": piece}, last=i == len(REPLY_PIECES) - 1)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def chat_problem(self, body: dict[str, Any]) -> web.Response | None:
        # docs.bigmodel.cn/cn/api/api-code: 1213 a required field not received, 1214 a field's value
        # is not valid, 1211 no such model; the chat API (docs.bigmodel.cn/api-reference/模型-api/对话补全)
        # requires `model` and `messages`.
        for name in ("model", "messages"):
            if not body.get(name):
                return error(400, "1213", f"未正常接收到{name}参数")
        if body["model"] not in CHAT_MODELS:
            return error(400, "1211", "模型不存在，请检查模型代码。")
        # docs.z.ai/api-reference/llm/chat-completion: "The input must not consist of system messages
        # or assistant messages only"; roles are system, user, assistant and tool.
        roles = [m.get("role") for m in body["messages"]]
        if set(roles) - {"system", "user", "assistant", "tool"} or set(roles) <= {"system", "assistant"}:
            return error(400, "1214", "messages 参数非法。请检查文档。")
        # docs.z.ai/api-reference/llm/chat-completion: `thinking.type` is `enabled` or `disabled`;
        # temperature within [0.0, 1.0].
        thinking = body.get("thinking")
        switch = thinking.get("type") if isinstance(thinking, dict) else None
        if thinking is not None and switch not in ("enabled", "disabled"):
            return error(400, "1214", "thinking 参数非法。请检查文档。")
        temperature = body.get("temperature")
        if temperature is not None and not (isinstance(temperature, int | float) and 0 <= temperature <= 1):
            return error(400, "1214", "temperature 参数非法。请检查文档。")
        return None

    async def embeddings(self, request: web.Request) -> web.Response:
        refused = self.refused(request)
        body = await request.json()
        self.seen.append({"path": request.path, "headers": dict(request.headers), "body": body})
        if refused is not None:
            return refused
        # docs.bigmodel.cn/api-reference/模型-api/文本嵌入: `model` (embedding-3 …) and `input` required.
        if body.get("model") not in EMBEDDING_MODELS or not body.get("input"):
            return error(400, "1214", "input 或 model 参数非法。请检查文档。")
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        tokens = 3 * len(texts)
        return web.json_response({
            "model": body["model"], "object": "list", "id": "emb-1", "request_id": "req-2",
            "data": [{"index": i, "object": "embedding", "embedding": [0.5, float(i)]} for i in range(len(texts))],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}})
