"""A fake Baidu Qianfan V2 (qianfan.baidubce.com/v2): chat, embeddings and rerank in OpenAI's format,
strict where Qianfan documents a refusal, each rule citing its source.

Sources:
  [chat]   cloud.baidu.com/doc/qianfan-api — 文本生成, POST /v2/chat/completions (updated 2025-12-23; its
           debug console: console.bce.baidu.com/support/#/api?product=QIANFAN&…&api=v2/chat/completions)
  [errors] cloud.baidu.com/doc/qianfan-api/s/Om9b4yj3w (模型错误码, linked from [chat]); the same table in
           cloud.baidu.com/doc/qianfan/s/Qmh4su56e and ai.baidu.com/ai-doc/WENXINWORKSHOP/Cm2y4d5ha
  [embed]  cloud.baidu.com/doc/qianfan-api/s/Fm7u3ropn (向量, POST /v2/embeddings)
  [rerank] cloud.baidu.com/doc/qianfan-api/s/2m7u4zt74 (重排序, POST /v2/rerank)
  [compat] cloud.baidu.com/doc/WENXINWORKSHOP/s/Zm2ycv77m (OpenAI 接口兼容: API key `bce-v3/ALTAK-…/…`,
           optional `appid` header)
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

KEY = "bce-v3/ALTAK-KZke3fXq9/f1d6ee0c7a2b4e19a7e0c4d2b8f1a6e3"
CHAT_MODELS = frozenset({"ernie-4.5-turbo-128k", "ernie-x1.1"})
EMBEDDING_MODELS = frozenset({"embedding-v1", "bge-large-zh", "tao-8k"})
RERANK_MODELS = frozenset({"bce-reranker-base"})
PIECES = ["你好，", "我是", "文心一言。"]
USAGE = {"prompt_tokens": 11, "completion_tokens": 15, "total_tokens": 26}
ROLES = frozenset({"user", "assistant", "system", "tool"})  # [chat] messages[].role (tool: tool_call_id)


def error(status: int, code: str, message: str, kind: str = "invalid_request_error") -> web.Response:
    """[errors] "若请求错误,服务器将以JSON格式返回错误信息": {"error": {code, message, type}, "id": "as-…"}."""
    body = {"error": {"code": code, "message": message, "type": kind}, "id": f"as-{secrets.token_hex(5)}"}
    return web.json_response(body, status=status)


@dataclass
class FakeQianfan(FakeBase):
    appid: str = ""  # the app ID this account has, accepted in the `appid` header
    tool_call: dict[str, Any] | None = None  # answer with this call ({"name", "arguments"}) instead of text
    rate_limited: bool = False
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v2/chat/completions", self.chat)  # [chat]
        app.router.add_post("/v2/embeddings", self.embeddings)  # [embed]
        app.router.add_post("/v2/rerank", self.rerank)  # [rerank]
        return app  # any other path: 404

    async def admit(self, request: web.Request, models: frozenset[str]) -> dict[str, Any] | web.Response:
        """The checks every endpoint makes, in Qianfan's order: the key, the app, the body, the model."""
        # [compat]/[chat] "Authorization: Bearer <API Key>"; [errors] 401 invalid_iam_token "IAM Certification failed".
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return error(401, "invalid_iam_token", "IAM Certification failed")
        # [compat] the optional appid header; [errors] 401 invalid_appid "No permission to use the appid".
        appid = request.headers.get("appid")
        if appid is not None and appid != self.appid:
            return error(401, "invalid_appid", "No permission to use the appid")
        # [errors] 400 malformed_json "Invalid Argument": the body is not JSON.
        try:
            body = json.loads(await request.read())
        except ValueError:
            return error(400, "malformed_json", "Invalid Argument")
        if not isinstance(body, dict):
            return error(400, "malformed_json", "Invalid Argument")
        self.seen.append({"path": request.path, "headers": dict(request.headers), "body": body})
        # [errors] 400 invalid_model "model is empty"; 401 invalid_model "No permission to use the model".
        if not body.get("model"):
            return error(400, "invalid_model", "model is empty")
        if body["model"] not in models:
            return error(401, "invalid_model", "No permission to use the model")
        # [errors] 429 rate_limit_exceeded / rpm_rate_limit_exceeded "Rate limit reached for RPM".
        if self.rate_limited:
            return error(429, "rpm_rate_limit_exceeded", "Rate limit reached for RPM", "rate_limit_exceeded")
        return body

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await self.admit(request, CHAT_MODELS)
        if isinstance(body, web.Response):
            return body
        problem = messages_problem(body.get("messages"))
        if problem:
            return error(400, "invalid_messages", problem)  # [errors] 400 invalid_messages
        answer_id, created = f"as-{secrets.token_hex(5)}", 1755938117
        call = self.tool_call
        calls = [{"id": "04fed17840d34b1e99bf3cd6dc94150d", "type": "function",
                  "function": {"name": call["name"], "arguments": orjson.dumps(call["arguments"]).decode()}}
                 ] if call else []
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            # [chat] 响应示例: choices[].message, finish_reason, flag; usage on every non-stream answer.
            message: dict[str, Any] = {"role": "assistant", "content": "" if calls else "".join(PIECES)}
            if calls:
                message["tool_calls"] = calls
            return web.json_response({"id": answer_id, "object": "chat.completion", "created": created,
                                      "model": body["model"], "usage": USAGE, "choices": [
                                          {"index": 0, "message": message, "finish_reason": finish, "flag": 0}]})
        # [chat] stream: SSE "以一条data: [DONE]消息结束"; usage "流式请求默认不返回,当开启
        # stream_options.include_usage=true时,会在最后一个chunk返回实际内容,其他chunk返回null".
        options = body.get("stream_options") or {}
        wants_usage = bool(options.get("include_usage"))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        def chunk(choices: list[dict[str, Any]], usage: Any = None) -> bytes:
            data: dict[str, Any] = {"id": answer_id, "object": "chat.completion.chunk", "created": created,
                                    "model": body["model"], "choices": choices}
            if wants_usage:
                data["usage"] = usage
            return b"data: " + orjson.dumps(data) + b"\n\n"

        deltas: list[dict[str, Any]] = (
            [{"role": "assistant", "content": "", "tool_calls": [{"index": 0, **calls[0]}]}] if calls
            else [{"role": "assistant", "content": PIECES[0]}, *({"content": p} for p in PIECES[1:])])
        for delta in deltas:
            await response.write(chunk([{"index": 0, "delta": delta, "flag": 0}]))
        await response.write(chunk([{"index": 0, "delta": {"content": ""}, "finish_reason": finish, "flag": 0}]))
        if wants_usage:
            await response.write(chunk([], USAGE))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await self.admit(request, EMBEDDING_MODELS)
        if isinstance(body, web.Response):
            return body
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        # [embed] input: "不能为空List,List的每个成员不能为空字符串"; tao-8k "文本数量只能为1", the others ≤ 16.
        limit = 1 if body["model"] == "tao-8k" else 16
        if not isinstance(texts, list) or not texts or len(texts) > limit or not all(
                isinstance(t, str) and t for t in texts):
            return error(400, "invalid_argument", "input is invalid")
        # [embed] encoding_format "当前只支持float" (only float).
        if body.get("encoding_format", "float") != "float":
            return error(400, "invalid_argument", "encoding_format only supports float")
        tokens = sum(len(t) for t in texts)
        return web.json_response({"id": f"as-{secrets.token_hex(5)}", "object": "list", "created": 1755938117,
                                  "model": body["model"], "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                                  "data": [{"object": "embedding", "index": i, "embedding": [0.25, -0.5, float(i)]}
                                           for i in range(len(texts))]})

    async def rerank(self, request: web.Request) -> web.Response:
        body = await self.admit(request, RERANK_MODELS)
        if isinstance(body, web.Response):
            return body
        documents = body.get("documents")
        # [rerank] query required; documents "不能为空List,List的每个成员不能为空字符串", "文本数量不超过64".
        if not isinstance(body.get("query"), str) or not body["query"] or not isinstance(documents, list) or not (
                0 < len(documents) <= 64) or not all(isinstance(d, str) and d for d in documents):
            return error(400, "invalid_argument", "query or documents is invalid")
        scored = sorted(((1 - i / 10, i, d) for i, d in enumerate(documents)), reverse=True)
        results = [{"document": d, "relevance_score": round(s, 2), "index": i} for s, i, d in scored]
        # [rerank] 返回: id, object "reranker_list", created, model, results, usage {prompt_tokens, total_tokens}.
        return web.json_response({"id": f"as-{secrets.token_hex(5)}", "object": "reranker_list",
                                  "created": 1743904734, "model": body["model"],
                                  "results": results[: body.get("top_n") or len(results)],
                                  "usage": {"prompt_tokens": 11, "total_tokens": 11}})


def messages_problem(messages: Any) -> str | None:
    """[chat] messages: "messages成员不能为空"; role user/assistant/system (and tool, with tool_call_id:
    "当role为tool时,该字段必填"); the last message's content "不能为blank字符"."""
    if not isinstance(messages, list) or not messages:
        return "messages is empty"
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            return "the role of a message is invalid"
        if m["role"] == "tool" and not m.get("tool_call_id"):
            return "tool_call_id is required when role is tool"
    last = messages[-1].get("content")
    if isinstance(last, str) and not last.strip():
        return "the content of the last message is blank"
    return None
