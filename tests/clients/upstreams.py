"""Scripted upstreams for the CLI tests, one per wire format a CLI's request reaches: Claude Messages
(also behind Bedrock's InvokeModel), OpenAI Responses, OpenAI chat completions and Gemini.

Each reduces a request to an `AgentView`, asks its `script` for the next `Turn` and answers it in its
own format, streamed or not, reporting a fixed usage (`usage`, in the provider's own fields). They
check what the CLI loop depends on (the key, the route) and keep every request in `seen`; the
provider rules themselves are the strict fakes' business (tests/relay/fake_*.py).

Reasoning comes back the way each provider returns it, with an opaque token the provider expects
again on the next turn: Claude's thinking block `signature`, Gemini 3's `thoughtSignature` on the
function call, a Responses `reasoning` item's `encrypted_content`.
"""
from __future__ import annotations

import base64
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestServer

from api.relay.decoders import encode_event_stream_message
from tests.relay.agent_script import AgentView, Script, Turn

CLAUDE_SIGNATURE = "c2lnbmVkLWJ5LXRoZS1mYWtlLWNsYXVkZQ=="
GEMINI_SIGNATURE = "Z2VtaW5pLXRob3VnaHQtc2lnbmF0dXJl"
RESPONSES_ENCRYPTED = "ZW5jcnlwdGVkLXJlYXNvbmluZw=="


def openai_key_refused() -> web.Response:
    return web.json_response({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                        "param": None, "code": "invalid_api_key"}}, status=401)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Scripted:
    """What every scripted upstream shares: its script, the requests it saw, where it listens."""

    script: Script | None = None
    seen: list[Seen] = field(default_factory=list)
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    def next_turn(self, view: AgentView) -> Turn:
        return self.script(view) if self.script is not None else Turn(text="Hello.")

    async def record(self, request: web.Request) -> dict[str, Any]:
        body = orjson.loads(await request.read() or b"{}")
        self.seen.append(Seen(request.path_qs, dict(request.headers), body))
        return body


def _texts(content: Any, kinds: tuple[str, ...] = ("text",)) -> list[str]:
    """The texts of a content that is a string or a list of typed parts."""
    if isinstance(content, str):
        return [content]
    return [part["text"] for part in content or () if isinstance(part, dict) and part.get("type") in kinds
            and isinstance(part.get("text"), str)]


async def sse(request: web.Request, frames: Iterable[bytes]) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    for frame in frames:
        await resp.write(frame)
    await resp.write_eof()
    return resp


# -- Claude Messages ---------------------------------------------------------------------------------


@dataclass
class ScriptedClaude(Scripted):
    key: str = "sk-ant-upstream"
    usage: dict[str, int] = field(default_factory=lambda: {
        "input_tokens": 500, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 3000,
        "output_tokens": 40})

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self.messages)
        return app

    @staticmethod
    def view(body: dict[str, Any]) -> AgentView:
        view = AgentView(tools={t["name"]: t["input_schema"] for t in body.get("tools") or () if "input_schema" in t})
        for message in body.get("messages") or ():
            if message.get("role") == "assistant":
                view.turns += 1
                continue
            content = message.get("content")
            view.user_texts += _texts(content)
            for block in content if isinstance(content, list) else ():
                if block.get("type") == "tool_result":
                    view.tool_results.append("\n".join(_texts(block.get("content"))))
        return view

    def message(self, body: dict[str, Any]) -> dict[str, Any]:
        turn = self.next_turn(self.view(body))
        content: list[dict[str, Any]] = []
        if turn.thinking:
            content.append({"type": "thinking", "thinking": turn.thinking, "signature": CLAUDE_SIGNATURE})
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        if turn.tool:
            content.append({"type": "tool_use", **turn.tool})
        return {"id": f"msg_{len(self.seen)}", "type": "message", "role": "assistant", "model": body.get("model"),
                "content": content, "stop_reason": "tool_use" if turn.tool else "end_turn", "stop_sequence": None,
                "usage": self.usage}

    def events(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        start = {**message, "content": [], "stop_reason": None, "usage": {**self.usage, "output_tokens": 1}}
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, block in enumerate(message["content"]):
            opened: dict[str, Any]
            if block["type"] == "thinking":
                opened = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                          {"type": "signature_delta", "signature": block["signature"]}]
            elif block["type"] == "text":
                opened, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
            else:
                opened = {**block, "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}]
            events.append({"type": "content_block_start", "index": index, "content_block": opened})
            events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            events.append({"type": "content_block_stop", "index": index})
        events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                       "usage": {"output_tokens": self.usage["output_tokens"]}})
        events.append({"type": "message_stop"})
        return events

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body = await self.record(request)
        if request.headers.get("x-api-key") != self.key:
            return web.json_response({"type": "error", "error": {"type": "authentication_error",
                                                                 "message": "invalid x-api-key"}}, status=401)
        message = self.message(body)
        if not body.get("stream"):
            return web.json_response(message)
        return await sse(request, (f"event: {e['type']}\ndata: ".encode() + orjson.dumps(e) + b"\n\n"
                                   for e in self.events(message)))


@dataclass
class ScriptedBedrock(ScriptedClaude):
    """Claude behind Bedrock's InvokeModel: `/model/{id}/invoke` (JSON) and
    `/invoke-with-response-stream` (AWS event-stream frames, each a base64 Claude event in `bytes`)."""

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/model/{model}/{action}", self.invoke)
        return app

    async def invoke(self, request: web.Request) -> web.StreamResponse:
        body = await self.record(request)
        if not request.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256 "):
            return web.json_response({"message": "Missing Authentication Token"}, status=403)
        message = self.message(body)
        if request.match_info["action"] == "invoke":
            return web.json_response(message)
        headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
        frames = (encode_event_stream_message(headers, orjson.dumps(
            {"bytes": base64.b64encode(orjson.dumps(event)).decode()})) for event in self.events(message))
        resp = web.StreamResponse(headers={"Content-Type": "application/vnd.amazon.eventstream"})
        await resp.prepare(request)
        for frame in frames:
            await resp.write(frame)
        await resp.write_eof()
        return resp


# -- OpenAI Responses --------------------------------------------------------------------------------


MODEL_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call"})


@dataclass
class ScriptedResponses(Scripted):
    key: str = "sk-upstream-secret"
    usage: dict[str, Any] = field(default_factory=lambda: {
        "input_tokens": 4000, "input_tokens_details": {"cached_tokens": 3000}, "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 4040})

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/responses", self.responses)
        return app

    @staticmethod
    def view(body: dict[str, Any]) -> AgentView:
        view = AgentView()
        for tool in body.get("tools") or ():
            for declared in tool.get("tools") or () if tool.get("type") == "namespace" else (tool,):
                if declared.get("type") == "function":
                    view.tools[declared["name"]] = declared.get("parameters") or {}
        items = body.get("input")
        answering = False  # consecutive output items (reasoning, calls, assistant messages) make one turn
        for item in [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items or ():
            kind, role = item.get("type", "message"), item.get("role")
            ours = kind in MODEL_ITEMS or (kind == "message" and role == "assistant")
            if ours and not answering:
                view.turns += 1
            answering = ours
            if kind == "message" and role == "user":
                view.user_texts += _texts(item.get("content"), ("input_text",))
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                view.tool_results.append(output if isinstance(output, str) else
                                         "\n".join(_texts(output, ("input_text", "output_text"))))
        return view

    def output(self, turn: Turn) -> list[dict[str, Any]]:
        n = len(self.seen)
        items: list[dict[str, Any]] = []
        if turn.thinking:
            items.append({"type": "reasoning", "id": f"rs_{n}", "encrypted_content": RESPONSES_ENCRYPTED,
                          "summary": [{"type": "summary_text", "text": turn.thinking}]})
        if turn.text:
            items.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
        if turn.tool:
            items.append({"type": "function_call", "id": f"fc_{n}", "call_id": turn.tool["id"], "status": "completed",
                          "name": turn.tool["name"], "arguments": orjson.dumps(turn.tool["input"]).decode()})
        return items

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body = await self.record(request)
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return openai_key_refused()
        items = self.output(self.next_turn(self.view(body)))
        response = {"id": f"resp_{len(self.seen)}", "object": "response", "created_at": int(time.time()),
                    "model": body.get("model"), "status": "completed", "output": items, "usage": self.usage}
        if not body.get("stream"):
            return web.json_response(response)
        events: list[dict[str, Any]] = [{"type": "response.created",
                                         "response": {**response, "status": "in_progress", "output": []}}]
        for index, item in enumerate(items):
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
            if item["type"] == "message":
                events.append({"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                               "content_index": 0, "delta": item["content"][0]["text"]})
            events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        events.append({"type": "response.completed", "response": response})
        return await sse(request, (f"event: {e['type']}\ndata: ".encode() + orjson.dumps({**e, "sequence_number": i})
                                   + b"\n\n" for i, e in enumerate(events)))


# -- OpenAI chat completions -------------------------------------------------------------------------


@dataclass
class ScriptedChat(Scripted):
    key: str = "sk-upstream-secret"
    usage: dict[str, Any] = field(default_factory=lambda: {
        "prompt_tokens": 4000, "completion_tokens": 40, "total_tokens": 4040,
        "prompt_tokens_details": {"cached_tokens": 3000}, "completion_tokens_details": {"reasoning_tokens": 12}})

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        return app

    @staticmethod
    def view(body: dict[str, Any]) -> AgentView:
        view = AgentView(tools={t["function"]["name"]: t["function"].get("parameters") or {}
                                for t in body.get("tools") or () if t.get("type") == "function"})
        for message in body.get("messages") or ():
            role = message.get("role")
            if role == "assistant":
                view.turns += 1
            elif role == "user":
                view.user_texts += _texts(message.get("content"))
            elif role == "tool":
                view.tool_results.append("\n".join(_texts(message.get("content"))))
        return view

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await self.record(request)
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return openai_key_refused()
        turn = self.next_turn(self.view(body))
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.tool:
            message["tool_calls"] = [{"id": turn.tool["id"], "type": "function", "function": {
                "name": turn.tool["name"], "arguments": orjson.dumps(turn.tool["input"]).decode()}}]
        finish = "tool_calls" if turn.tool else "stop"
        head = {"id": f"chatcmpl-{len(self.seen)}", "created": int(time.time()), "model": body.get("model")}
        if not body.get("stream"):
            return web.json_response({**head, "object": "chat.completion", "usage": self.usage,
                                      "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        delta = {**message, "tool_calls": [{"index": 0, **call} for call in message.get("tool_calls", ())]}
        if not turn.tool:
            delta.pop("tool_calls")
        chunks = [{**head, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**head, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": self.usage})
        return await sse(request, [*(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks), b"data: [DONE]\n\n"])


# -- Gemini ------------------------------------------------------------------------------------------


@dataclass
class ScriptedGemini(Scripted):
    key: str = "AIza-upstream"
    usage: dict[str, int] = field(default_factory=lambda: {
        "promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 28,
        "thoughtsTokenCount": 12, "totalTokenCount": 4040})

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{version}/models/{target}", self.generate)
        return app

    @staticmethod
    def view(body: dict[str, Any]) -> AgentView:
        view = AgentView()
        for tool in body.get("tools") or ():
            for declared in tool.get("functionDeclarations") or ():
                view.tools[declared["name"]] = declared.get("parameters") or declared.get("parametersJsonSchema") or {}
        for content in body.get("contents") or ():
            if content.get("role") == "model":
                view.turns += 1
                continue
            for part in content.get("parts") or ():
                if isinstance(part.get("text"), str) and not part.get("thought"):
                    view.user_texts.append(part["text"])
                if "functionResponse" in part:
                    view.tool_results.append(orjson.dumps(part["functionResponse"].get("response")).decode())
        return view

    @staticmethod
    def parts(turn: Turn) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if turn.thinking:
            parts.append({"text": turn.thinking, "thought": True})
        if turn.text:
            parts.append({"text": turn.text})
        if turn.tool:
            call: dict[str, Any] = {"functionCall": {"name": turn.tool["name"], "args": turn.tool["input"]}}
            if turn.thinking:
                call["thoughtSignature"] = GEMINI_SIGNATURE
            parts.append(call)
        return parts

    async def generate(self, request: web.Request) -> web.StreamResponse:
        body = await self.record(request)
        if request.headers.get("x-goog-api-key") != self.key:
            refusal = {"code": 400, "status": "INVALID_ARGUMENT", "message": "API key not valid."}
            return web.json_response({"error": refusal}, status=400)
        _, _, action = request.match_info["target"].partition(":")
        parts = self.parts(self.next_turn(self.view(body)))
        answer = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                  "usageMetadata": self.usage, "modelVersion": request.match_info["target"].partition(":")[0],
                  "responseId": f"resp-{len(self.seen)}"}
        if action == "generateContent":
            return web.json_response(answer)
        if action != "streamGenerateContent" or request.query.get("alt") != "sse":
            return web.json_response({"error": {"code": 404, "message": f"unknown action {action}",
                                                "status": "NOT_FOUND"}}, status=404)
        return await sse(request, [b"data: " + orjson.dumps(answer) + b"\r\n\r\n"])
