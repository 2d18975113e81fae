"""Anthropic's Messages stream events → OpenAI chat.completion.chunk objects.

message_start (id, input and cache counts) → the role chunk; content_block_start of a tool_use →
a tool-call delta with its id and name; content_block_delta: text_delta → content,
thinking_delta → reasoning_content, input_json_delta → tool-call arguments; message_delta (stop
reason, output count) → the finish chunk and the usage; message_stop → the end. ping,
content_block_stop and signature deltas produce nothing; an `error` event raises.

Usage is reported once the output count is known (message_delta): a stream cut before that is
billed by the pipeline's own count of the prompt and of what was produced.
"""
from __future__ import annotations

import time
from typing import Any

from api.relay.base import EVENT_NOT_OBJECT, StreamChunk, StreamState, json_object
from api.relay.providers.claude.convert import STOP_REASONS, stream_error, usage_of


class ClaudeStream:
    def __init__(self, model: str) -> None:
        self.model = model
        self.id = "chatcmpl-"
        self.created = int(time.time())
        self.input: dict[str, Any] = {}
        self.tools: dict[int, int] = {}  # content block index → tool-call index

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def convert(self, name: str | None, data: bytes, state: StreamState) -> list[StreamChunk]:
        event = json_object(data, EVENT_NOT_OBJECT)
        kind = event.get("type") or name
        if kind == "message_start":
            message = event.get("message") or {}
            self.id = f"chatcmpl-{message.get('id', '')}"
            self.input = dict(message.get("usage") or {})
            return [self.chunk({"role": "assistant", "content": ""})]
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                index = self.tools.setdefault(int(event.get("index") or 0), len(self.tools))
                return [self.chunk({"tool_calls": [{"index": index, "id": block.get("id", ""), "type": "function",
                                                    "function": {"name": block.get("name", ""), "arguments": ""}}]})]
            if block.get("type") == "text" and block.get("text"):
                return [self.chunk({"content": block["text"]})]
            return []
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                return [self.chunk({"content": delta.get("text", "")})]
            if dtype == "thinking_delta":
                return [self.chunk({"reasoning_content": delta.get("thinking", "")})]
            if dtype == "input_json_delta":
                index = self.tools.get(int(event.get("index") or 0), 0)
                return [self.chunk({"tool_calls": [{"index": index,
                                                    "function": {"arguments": delta.get("partial_json", "")}}]})]
            return []
        if kind == "message_delta":
            usage = {**self.input, **(event.get("usage") or {})}
            parsed = usage_of(usage)
            if parsed is not None:
                state.usage = parsed
            reason = (event.get("delta") or {}).get("stop_reason")
            return [self.chunk({}, STOP_REASONS.get(reason or "", "stop"))]
        if kind == "message_stop":
            state.done = True
            return []
        if kind == "error":
            raise stream_error(event)
        return []  # ping, content_block_stop, and events added later
