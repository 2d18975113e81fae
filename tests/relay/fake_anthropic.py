"""A fake Anthropic Messages API (`POST /v1/messages`), strict about what Claude itself refuses:
the `x-api-key` and `anthropic-version` headers, `max_tokens`, roles alternating from `user`,
no OpenAI-only fields, well-formed content blocks. Answers JSON or the SSE event stream with
Anthropic's event names (message_start, content_block_start, ping, content_block_delta,
content_block_stop, message_delta, message_stop), tool_use and thinking blocks, cache usage,
and Anthropic's error bodies. Also reused by the Bedrock and Vertex AI fakes (`message()` /
`events()` build the answer; the transport differs).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestServer

REPLY = "Hello from Claude, in pieces."
OPENAI_ONLY = {"stream_options", "n", "response_format", "max_completion_tokens", "frequency_penalty",
               "presence_penalty", "logit_bias", "seed", "user", "reasoning_effort", "parallel_tool_calls"}
API_VERSIONS = {"2023-06-01", "2026-10-21"}  # the gateway's own, and the current SDK's
BLOCK_TYPES = {"text", "image", "tool_use", "tool_result", "thinking", "document"}


@dataclass
class FakeClaude:
    key: str = "sk-ant-upstream"
    reply: str = REPLY
    thinking: str = ""
    tool: dict[str, Any] | None = None  # {"id", "name", "input"}: answer with a tool call
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 21, "output_tokens": 9})
    fail_status: int | None = None
    fail_type: str = "api_error"
    cut_after: int | None = None  # stream: drop the connection after this many text deltas
    seen: list[dict[str, Any]] = field(default_factory=list)
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self.messages)
        return app

    # -- validation, as Claude does it ---------------------------------------------------------

    def problem(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return "max_tokens: Field required"
        leaked = OPENAI_ONLY & set(body)
        if leaked:
            return f"{sorted(leaked)[0]}: Extra inputs are not permitted"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        for i, message in enumerate(messages):
            if message.get("role") != ("user" if i % 2 == 0 else "assistant"):
                return f"messages.{i}: roles must alternate between user and assistant, starting with user"
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if block.get("type") not in BLOCK_TYPES:
                        return f"messages.{i}.content: unknown block type {block.get('type')}"
        if "system" in body and not isinstance(body["system"], str | list):
            return "system: must be a string or a list of blocks"
        if isinstance(body.get("thinking"), dict) and "temperature" in body:
            return "temperature may only be set to 1 when thinking is enabled"
        return None

    def error(self, status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)

    # -- answers -------------------------------------------------------------------------------

    def content(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if self.thinking:
            blocks.append({"type": "thinking", "thinking": self.thinking, "signature": "sig"})
        if self.reply:
            blocks.append({"type": "text", "text": self.reply})
        if self.tool:
            blocks.append({"type": "tool_use", **self.tool})
        return blocks

    def message(self, model: str) -> dict[str, Any]:
        return {"id": "msg_01fake", "type": "message", "role": "assistant", "model": model,
                "content": self.content(), "stop_reason": "tool_use" if self.tool else "end_turn",
                "stop_sequence": None, "usage": self.usage}

    def events(self, model: str) -> list[dict[str, Any]]:
        """The stream's events, in order (each has its `type`)."""
        start_usage = {k: v for k, v in self.usage.items() if k != "output_tokens"} | {"output_tokens": 1}
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": {**self.message(model), "content": [], "stop_reason": None,
                                                  "usage": start_usage}},
            {"type": "ping"},
        ]
        for index, block in enumerate(self.content()):
            if block["type"] == "text":
                events.append({"type": "content_block_start", "index": index,
                               "content_block": {"type": "text", "text": ""}})
                words = block["text"].split(" ")
                for i, word in enumerate(words):
                    piece = word + (" " if i < len(words) - 1 else "")
                    events.append({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "text_delta", "text": piece}})
            elif block["type"] == "thinking":
                events.append({"type": "content_block_start", "index": index,
                               "content_block": {"type": "thinking", "thinking": ""}})
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "signature_delta", "signature": "sig"}})
            else:
                events.append({"type": "content_block_start", "index": index,
                               "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                                 "input": {}}})
                raw = orjson.dumps(block["input"]).decode()
                for part in (raw[: len(raw) // 2], raw[len(raw) // 2:]):
                    events.append({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "input_json_delta", "partial_json": part}})
            events.append({"type": "content_block_stop", "index": index})
        events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use" if self.tool else "end_turn",
                                                          "stop_sequence": None},
                       "usage": {"output_tokens": self.usage["output_tokens"]}})
        events.append({"type": "message_stop"})
        return events

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.seen.append({"headers": dict(request.headers), "body": body})
        if request.headers.get("x-api-key") != self.key:
            return self.error(401, "authentication_error", "invalid x-api-key")
        if request.headers.get("anthropic-version") not in API_VERSIONS:
            return self.error(400, "invalid_request_error", "anthropic-version: header is required")
        problem = self.problem(body)
        if problem:
            return self.error(400, "invalid_request_error", problem)
        if self.fail_status:
            return self.error(self.fail_status, self.fail_type, f"fake failure {self.fail_status}")
        if not body.get("stream"):
            return web.json_response(self.message(body["model"]))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        deltas = 0
        for event in self.events(body["model"]):
            if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
                deltas += 1
                if self.cut_after is not None and deltas > self.cut_after:
                    request.transport.close()
                    return resp
            await resp.write(f"event: {event['type']}\ndata: ".encode() + orjson.dumps(event) + b"\n\n")
        return resp
