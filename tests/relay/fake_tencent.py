"""A fake Tencent Hunyuan API (TencentCloud API 3.0, `POST /` with `X-TC-Action: ChatCompletions`
or `GetEmbedding`, `X-TC-Version: 2023-09-01`). It checks the TC3-HMAC-SHA256 signature itself (its
own computation, from the headers named in SignedHeaders), the timestamp, and the body's
capitalised fields; failures are HTTP 200 with `Response.Error {Code, Message}`. Streams are SSE
of `{Choices: [{Delta, FinishReason}], Usage}` without an end marker."""
from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from tests.relay.provider_kit import FakeBase

REPLY_PIECES = ["Hello ", "from ", "Hunyuan."]
LOWER_CASE_FIELDS = {"model", "messages", "stream", "temperature", "tools", "max_tokens"}


def _sign(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


@dataclass
class FakeTencent(FakeBase):
    secret_id: str = "AKIDfake"
    secret_key: str = "tencent-secret"
    usage: dict[str, int] = field(default_factory=lambda: {"PromptTokens": 11, "CompletionTokens": 7,
                                                           "TotalTokens": 18})
    tool_call: dict[str, Any] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/", self.handle)
        return app

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
        problem = self.signature_problem(request, payload)
        if problem:
            return self.error("AuthFailure.SignatureFailure", problem)
        if request.headers.get("X-TC-Version") != "2023-09-01":
            return self.error("InvalidParameter", "bad version")
        body = orjson.loads(payload)
        action = request.headers.get("X-TC-Action")
        self.seen.append({"action": action, "body": body, "headers": dict(request.headers)})
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
        for message in body.get("Messages") or ():
            if message.get("Role") not in ("system", "user", "assistant", "tool"):
                return self.error("InvalidParameter", f"Role {message.get('Role')}")
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
