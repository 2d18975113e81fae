"""A fake of iFlytek Spark's OpenAI-compatible HTTP API, strict where its documentation is:

- HTTP doc = https://www.xfyun.cn/doc/spark/HTTP调用文档.html (Spark Lite … 4.0 Ultra, /v1)
- X1 doc = https://www.xfyun.cn/doc/spark/X1http.html (X1, /v2)
- error codes = the code table of the Spark API documentation (https://www.xfyun.cn/doc/spark/Web.html)

Each rule below names the section it comes from."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.kit import FakeBase

PASSWORD = "KpvsQcuLyVRUvOwrjOHx:oLXdBzlgoXDPrzBcmCeB"  # an APIPassword, as the console shows it
APP_ID, API_SECRET, API_KEY = "5f1a2b3c", "spark-secret", "spark-key"
# HTTP doc §2 / §3.2 `model`: the models of /v1; X1 doc §1: `x1` at /v2.
PATH_MODELS = {"/v1/chat/completions": {"lite", "generalv3", "pro-128k", "generalv3.5", "max-32k", "4.0Ultra"},
               "/v2/chat/completions": {"x1"}}
# HTTP doc §3.2: the request parameters (the table is the whole of what the API takes).
FIELDS = {"model", "user", "messages", "temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty",
          "stream", "max_tokens", "response_format", "tools", "tool_calls_switch", "tool_choice", "suppress_plugin"}
ROLES = {"user", "assistant", "system", "tool"}  # HTTP doc §3.2 `messages.role`
FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_]{1,32}$")  # HTTP doc §3.2 `tools.function.name`
SMALL_OUTPUT = {"lite", "pro-128k"}  # HTTP doc §3.2 `max_tokens`: [1,4096] for Lite and Pro-128K, else [1,8192]
SID = "cha000b0003@dx1905cd86d6bb86d552"


@dataclass
class FakeSparkHttp(FakeBase):
    pieces: tuple[str, ...] = ("你好，", "我是", "星火。")
    reasoning: tuple[str, ...] = ("先想", "一想。")  # X1's thinking (X1 doc §2.1: delta.reasoning_content)
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 13, "completion_tokens": 6,
                                                           "total_tokens": 19})
    tool_call: dict[str, Any] | None = None  # {"name", "arguments"}: the answer calls it
    business_error: tuple[int, str] | None = None  # (code, message) of the error-code table
    seen: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        for path in PATH_MODELS:
            app.router.add_post(path, self.chat)
        return app

    @staticmethod
    def error(status: int, message: str) -> web.Response:
        # HTTP doc §4 (响应参数): a refused request is answered {"error": {message, type, param, code}};
        # the SDK example shows a wrong APIPassword as "401 - invalid user".
        return web.json_response({"error": {"message": message, "type": "api_error", "param": None, "code": None}},
                                 status=status)

    def problem(self, request: web.Request, body: Any) -> web.Response | None:
        # HTTP doc §3.1: `Authorization: Bearer <APIPassword>`; X1 doc §2.1: also APIKey:APISecret.
        if request.headers.get("Authorization") not in (f"Bearer {PASSWORD}", f"Bearer {API_KEY}:{API_SECRET}"):
            return self.error(401, "invalid user")
        if not isinstance(body, dict):
            return self.error(400, "invalid request body")
        unknown = set(body) - FIELDS
        if unknown:
            return self.error(400, f"unknown parameter {sorted(unknown)}")
        if body.get("model") not in PATH_MODELS[request.path]:  # HTTP doc §3.2 `model` (required); X1 doc §1
            return self.error(400, f"invalid model {body.get('model')!r} for {request.path}")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:  # HTTP doc §3.2 `messages` (required)
            return self.error(400, "messages is required")
        for message in messages:  # HTTP doc §3.2: `messages.role` one of four, `messages.content` a string
            if not isinstance(message, dict) or message.get("role") not in ROLES \
                    or not isinstance(message.get("content"), str):
                return self.error(400, f"invalid message {message!r}")
        temperature = body.get("temperature", 1.0)  # HTTP doc §3.2: [0, 2]
        if not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
            return self.error(400, "temperature out of range")
        if not 1 <= body.get("top_k", 4) <= 6:  # HTTP doc §3.2: [1, 6]
            return self.error(400, "top_k out of range")
        if not 1 <= body.get("max_tokens", 1) <= (4096 if body["model"] in SMALL_OUTPUT else 8192 if
                                                  body["model"] != "x1" else 32768):
            return self.error(400, "max_tokens out of range")
        for tool in body.get("tools") or ():  # HTTP doc §3.2 `tools.function.*` (name, description, parameters)
            function = tool.get("function") or {}
            if tool.get("type") == "function" and not (FUNCTION_NAME.match(str(function.get("name")))
                                                       and function.get("description")
                                                       and isinstance(function.get("parameters"), dict)):
                return self.error(400, f"invalid tool {tool!r}")
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = None
        refused = self.problem(request, body)
        if refused is not None:
            return refused
        self.seen.append({"path": request.path, "auth": request.headers["Authorization"], "body": body})
        head = {"code": 0, "message": "Success", "sid": SID}
        if self.business_error:  # HTTP doc §4: `code` non-zero is an error, with its `message`
            code, text = self.business_error
            return web.json_response({"code": code, "message": text, "sid": SID})
        x1 = body["model"] == "x1"
        call = None
        if self.tool_call:
            call = {"id": "call_1", "type": "function", "function": dict(self.tool_call)}
        # HTTP doc §3.2 `tool_calls_switch`: true → tool_calls a list, else one object.
        calls: Any = ([call] if body.get("tool_calls_switch") else call) if call else None
        if not body.get("stream"):  # HTTP doc §4: the answer of a request not streamed
            message: dict[str, Any] = {"role": "assistant", "content": "" if call else "".join(self.pieces)}
            if x1:
                message["reasoning_content"] = "".join(self.reasoning)
            if calls:
                message["tool_calls"] = calls
            return web.json_response({**head, "choices": [{"message": message, "index": 0}], "usage": self.usage})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        events: list[dict[str, Any]] = []
        if x1:
            events += [{"role": "assistant", "reasoning_content": r} for r in self.reasoning]
        if calls:
            events.append({"role": "assistant", "content": "", "tool_calls": calls})
        else:
            events += [{"role": "assistant", "content": p} for p in self.pieces]
        for i, delta in enumerate(events):
            event: dict[str, Any] = {**head, "id": SID, "created": 1719546385,
                                     "choices": [{"delta": delta, "index": 0}]}
            if i == len(events) - 1 and not x1:  # HTTP doc §4: the last event of a /v1 stream carries the usage
                event["usage"] = self.usage
            await response.write(b"data:" + orjson.dumps(event) + b"\n\n")
        if x1:  # the /v2 stream ends with a finish reason, then a usage event (as its clients read it; X1 doc
            # §2.1 shows only the OpenAI SDK reading reasoning_content and content)
            end = {**head, "id": SID, "choices": [{"delta": {"role": "assistant", "content": ""}, "index": 0,
                                                   "finish_reason": "stop"}]}
            await response.write(b"data:" + orjson.dumps(end) + b"\n\n")
            await response.write(b"data:" + orjson.dumps({**head, "id": SID, "choices": [], "usage": self.usage})
                                 + b"\n\n")
        await response.write(b"data:[DONE]\n\n")
        await response.write_eof()
        return response
