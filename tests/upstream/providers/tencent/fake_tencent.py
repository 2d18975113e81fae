"""A fake Tencent Hunyuan API (TencentCloud API 3.0, `POST /` with `X-TC-Action: ChatCompletions`
or `GetEmbedding`, `X-TC-Version: 2023-09-01`). It checks the TC3-HMAC-SHA256 signature itself (its
own computation, from the headers named in SignedHeaders), the timestamp, and the body's
capitalised fields; failures are HTTP 200 with `Response.Error {Code, Message}`. Streams are SSE
of `{Choices: [{Delta, FinishReason}], Usage}` without an end marker.

It also serves Hunyuan's OpenAI-compatible endpoint (`POST /v1/chat/completions`, `/v1/embeddings`,
cloud.tencent.com/document/product/1729/111007): the console's API key as a Bearer token, OpenAI's
bodies and chunks, errors as `{"error": {id, message, type, param, code}}`."""
from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

REPLY_PIECES = ["Hello ", "from ", "Hunyuan."]
LOWER_CASE_FIELDS = {"model", "messages", "stream", "temperature", "tools", "max_tokens"}


def _sign(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def alternating(roles: list[Any]) -> bool:
    """User (or a run of tool) and assistant turns alternate, from a user turn to a user or tool turn."""
    turns: list[str] = []
    for i, role in enumerate(roles):
        if role == "tool" and i and roles[i - 1] == "tool":
            continue
        turns.append("user" if role == "tool" else str(role))
    return bool(turns) and turns[0] == turns[-1] == "user" and all(
        turns[i] != turns[i + 1] for i in range(len(turns) - 1))


@dataclass
class FakeTencent(FakeBase):
    secret_id: str = "AKIDfake"
    secret_key: str = "tencent-secret"
    usage: dict[str, int] = field(default_factory=lambda: {"PromptTokens": 11, "CompletionTokens": 7,
                                                           "TotalTokens": 18})
    tool_call: dict[str, Any] | None = None
    api_key: str = "sk-hunyuanFakeKey0123456789"
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/", self.handle)
        app.router.add_post("/v1/chat/completions", self.openai_chat)
        app.router.add_post("/v1/embeddings", self.openai_embeddings)
        return app

    # -- the OpenAI-compatible endpoint ---------------------------------------------------------------

    @staticmethod
    def openai_error(status: int, code: str, message: str, kind: str = "invalid_request_error") -> web.Response:
        # The error body this endpoint answers (as quoted in FoundationAgents/OpenManus#894: HTTP 400
        # {"error": {"id", "message", "type": "invalid_request_error", "param", "code": "1001"}}).
        return web.json_response({"error": {"id": "3d98282009c094e0", "message": message, "type": kind,
                                            "param": None, "code": code}}, status=status)

    async def openai_request(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        body = await request.json()
        self.seen.append({"path": request.path, "body": body, "headers": dict(request.headers)})
        # cloud.tencent.com/document/product/1729/111007: `Authorization: Bearer $HUNYUAN_API_KEY`, the
        # key created on the console's API Key page. A refused key is a 401 (the endpoint follows
        # OpenAI's conventions; the exact code and text are this fake's).
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return body, self.openai_error(401, "4001", "Incorrect API key provided", "authentication_error")
        if not body.get("model"):
            return body, self.openai_error(400, "1001", "model 参数缺失")
        return body, None

    async def openai_chat(self, request: web.Request) -> web.StreamResponse:
        body, refused = await self.openai_request(request)
        if refused is not None:
            return refused
        # FoundationAgents/OpenManus#894 (this endpoint's 400, code 1001): user (tool) and assistant
        # turns alternate, starting with user and ending with user or tool; tool may repeat.
        roles = [m.get("role") for m in body.get("messages") or () if m.get("role") != "system"]
        if not alternating(roles):
            return self.openai_error(400, "1001", "messages 中 user（tool） 和 assistant 角色需交替出现 (一问一答)，"
                                                  "以 user 提问开始， user（tool）提问结束, tool 可以连续出现多次")
        calls = [{"id": "call-1", "type": "function", "index": 0,
                  "function": {"name": self.tool_call["Name"], "arguments": self.tool_call["Arguments"]}}] \
            if self.tool_call and roles[-1] != "tool" else None
        usage = {"prompt_tokens": self.usage["PromptTokens"], "completion_tokens": self.usage["CompletionTokens"],
                 "total_tokens": self.usage["TotalTokens"]}
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": "" if calls else "".join(REPLY_PIECES)}
            if calls:
                message["tool_calls"] = calls
            return web.json_response({"id": "hy-2", "object": "chat.completion", "created": 1700000000,
                                      "model": body["model"], "usage": usage, "note": "以上内容为AI生成",
                                      "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        deltas: list[dict[str, Any]] = [{"tool_calls": calls}] if calls else [{"content": p} for p in REPLY_PIECES]
        for i, delta in enumerate(deltas):
            last = i == len(deltas) - 1
            chunk: dict[str, Any] = {"id": "hy-2", "object": "chat.completion.chunk", "created": 1700000000,
                                     "model": body["model"], "choices": [{"index": 0, "delta": {
                                         "role": "assistant", **delta}, "finish_reason": finish if last else None}]}
            if last:
                chunk["usage"] = usage
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def openai_embeddings(self, request: web.Request) -> web.Response:
        body, refused = await self.openai_request(request)
        if refused is not None:
            return refused
        texts = [body["input"]] if isinstance(body.get("input"), str) else list(body.get("input") or ())
        if not texts:
            return self.openai_error(400, "1001", "input 参数缺失")
        tokens = 4 * len(texts)
        return web.json_response({"object": "list", "model": body["model"],
                                  "data": [{"object": "embedding", "index": i, "embedding": [0.125, float(i)]}
                                           for i in range(len(texts))],
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    # -- TencentCloud API 3.0 -------------------------------------------------------------------------

    @staticmethod
    def error(code: str, message: str) -> web.Response:
        return web.json_response({"Response": {"Error": {"Code": code, "Message": message}, "RequestId": "r-1"}})

    def signature_problem(self, request: web.Request, payload: bytes) -> str | None:
        auth = request.headers.get("Authorization", "")
        try:
            algorithm, rest = auth.split(" ", 1)
            parts = dict(p.strip().split("=", 1) for p in rest.split(","))
            secret_id, date, service, terminator = parts["Credential"].split("/")
        except ValueError:
            return "malformed Authorization"
        timestamp = int(request.headers.get("X-TC-Timestamp", "0"))
        if algorithm != "TC3-HMAC-SHA256" or terminator != "tc3_request" or service != "hunyuan":
            return "bad credential scope"
        if secret_id != self.secret_id:
            return "The SecretId is not found"
        if abs(time.time() - timestamp) > 300 or date != datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d"):
            return "The timestamp is out of range"
        names = parts["SignedHeaders"].split(";")
        if not {"content-type", "host"} <= set(names):
            return "content-type and host must be signed"
        headers = "".join(f"{n}:{request.headers.get(n, '').strip().lower() if n == 'x-tc-action' else request.headers.get(n, '').strip()}\n"  # noqa: E501
                          for n in names)
        canonical = f"POST\n/\n\n{headers}\n{';'.join(names)}\n{hashlib.sha256(payload).hexdigest()}"
        to_sign = f"TC3-HMAC-SHA256\n{timestamp}\n{date}/hunyuan/tc3_request\n{hashlib.sha256(canonical.encode()).hexdigest()}"  # noqa: E501
        key = _sign(_sign(_sign(("TC3" + self.secret_key).encode(), date), "hunyuan"), "tc3_request")
        if hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest() != parts["Signature"]:
            return "The provided credentials could not be validated"
        return None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        payload = await request.read()
        # TencentCloud API signature v3 (cloud.tencent.com/document/api/213/30654): TC3-HMAC-SHA256
        # over the signed headers and the payload, a credential scope of date/service/tc3_request.
        problem = self.signature_problem(request, payload)
        if problem:
            return self.error("AuthFailure.SignatureFailure", problem)
        # Hunyuan's API overview (cloud.tencent.com/document/product/1729/101848): version 2023-09-01.
        if request.headers.get("X-TC-Version") != "2023-09-01":
            return self.error("InvalidParameter", "bad version")
        body = orjson.loads(payload)
        action = request.headers.get("X-TC-Action")
        self.seen.append({"action": action, "body": body, "headers": dict(request.headers)})
        # ChatCompletions (cloud.tencent.com/document/api/1729/105701): capitalised parameter names;
        # an unknown parameter is UnknownParameter.
        if LOWER_CASE_FIELDS & set(body):
            return self.error("UnknownParameter", f"The parameter `{sorted(LOWER_CASE_FIELDS & set(body))[0]}` "
                                                  "is not recognized")
        if action == "GetEmbedding":
            texts = body.get("InputList") or []
            return web.json_response({"Response": {
                "Data": [{"Embedding": [0.25, float(i)], "Index": i, "Object": "embedding"}
                         for i in range(len(texts))],
                "Usage": {"PromptTokens": 4 * len(texts), "TotalTokens": 4 * len(texts)}, "RequestId": "r-2"}})
        if action != "ChatCompletions":
            return self.error("InvalidAction", f"no action {action}")
        for turn in body.get("Messages") or ():
            if turn.get("Role") not in ("system", "user", "assistant", "tool"):
                return self.error("InvalidParameter", f"Role {turn.get('Role')}")
        calls = [{"Id": "call-1", "Type": "function", "Function": self.tool_call}] if self.tool_call else None
        if not body.get("Stream"):
            message: dict[str, Any] = {"Role": "assistant", "Content": "" if calls else "".join(REPLY_PIECES)}
            if calls:
                message["ToolCalls"] = calls
            return web.json_response({"Response": {
                "Id": "hy-1", "Created": 1700000000, "Note": "AI generated", "Usage": self.usage,
                "Choices": [{"Index": 0, "FinishReason": "tool_calls" if calls else "stop", "Message": message}],
                "RequestId": "r-3"}})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        pieces = [""] if calls else REPLY_PIECES
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            delta: dict[str, Any] = {"Role": "assistant", "Content": piece}
            if last and calls:
                delta["ToolCalls"] = calls
            event = {"Id": "hy-1", "Created": 1700000000, "Note": "AI generated",
                     "Usage": {**self.usage, "CompletionTokens": i + 1} if not last else self.usage,
                     "Choices": [{"Delta": delta, "FinishReason": ("tool_calls" if calls else "stop") if last else ""}]}
            await response.write(b"data: " + orjson.dumps(event) + b"\n\n")
        await response.write_eof()
        return response
