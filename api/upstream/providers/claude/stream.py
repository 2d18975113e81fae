"""Anthropic's Messages stream events → OpenAI chat.completion.chunk objects.

message_start (id, input and cache counts) → the role chunk; content_block_start of a tool_use →
a tool-call delta with its id and name, of a redacted_thinking block → a `thinking_blocks` delta;
content_block_delta: text_delta → content, thinking_delta → reasoning_content, signature_delta →
a `thinking_blocks` delta `{"type": "thinking", "thinking": "", "signature": …}`; a thinking_blocks
entry carries its `index` among the turn's thinking blocks (the openai SDK's stream accumulator merges
list entries by index, and refuses entries without one), input_json_delta →
tool-call arguments (server tools' input is not a call of the client's), citations_delta → an
`annotations` delta once its text block ends; message_delta (stop reason, output count) → the
finish chunk and the usage; message_stop → the end. ping and events added later produce nothing;
an `error` event raises.

Usage: message_start's input and cache counts at once (a stream cut after it bills the prompt on
Anthropic's numbers), the whole of it once the output count is known (message_delta).
"""
from __future__ import annotations

import time
from typing import Any

from api.upstream.base import StreamChunk, StreamState
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.providers.claude.answer import STOP_REASONS, annotation, stream_error, usage_of


class ClaudeStream:
    def __init__(self, model: str) -> None:
        self.model = model
        self.id = "chatcmpl-"
        self.created = int(time.time())
        self.input: dict[str, Any] = {}
        self.tools: dict[int, int] = {}  # content block index → tool-call index
        self.text_length = 0  # characters of content sent so far (citations point into it)
        self.text_starts: dict[int, int] = {}  # text block index → where its text starts
        self.citations: dict[int, list[Any]] = {}  # text block index → citations waiting for its end
        self.thinking: dict[int, int] = {}  # content block index → its place among the turn's thinking blocks

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def text(self, text: str) -> list[StreamChunk]:
        self.text_length += len(text)
        return [self.chunk({"content": text})]

    def convert(self, name: str | None, data: bytes, state: StreamState) -> list[StreamChunk]:
        event = json_object(data, EVENT_NOT_OBJECT)
        kind = event.get("type") or name
        raw_index = event.get("index")
        index = raw_index if isinstance(raw_index, int) else 0
        if kind == "message_start":
            message = event.get("message") or {}
            self.id = f"chatcmpl-{message.get('id', '')}"
            self.input = dict(message.get("usage") or {})
            state.usage = usage_of(self.input)
            return [self.chunk({"role": "assistant", "content": ""})]
        if kind == "content_block_start":
            return self.block_start(index, event.get("content_block") or {})
        if kind == "content_block_delta":
            return self.block_delta(index, event.get("delta") or {})
        if kind == "content_block_stop":
            pending = self.citations.pop(index, [])
            start = self.text_starts.get(index, self.text_length)
            found = [a for a in (annotation(c, start, self.text_length) for c in pending) if a is not None]
            return [self.chunk({"annotations": found})] if found else []
        if kind == "message_delta":
            parsed = usage_of({**self.input, **(event.get("usage") or {})})
            if parsed is not None:
                state.usage = parsed
            reason = (event.get("delta") or {}).get("stop_reason")
            return [self.chunk({}, STOP_REASONS.get(reason or "", "stop"))]
        if kind == "message_stop":
            state.done = True
            return []
        if kind == "error":
            raise stream_error(event)
        return []  # ping, and events added later

    def block_start(self, index: int, block: dict[str, Any]) -> list[StreamChunk]:
        kind = block.get("type")
        if kind == "tool_use":
            call = self.tools.setdefault(index, len(self.tools))
            return [self.chunk({"tool_calls": [{"index": call, "id": block.get("id", ""), "type": "function",
                                                "function": {"name": block.get("name", ""), "arguments": ""}}]})]
        if kind == "text":
            self.text_starts[index] = self.text_length
            self.citations[index] = list(block.get("citations") or ())
            return self.text(block["text"]) if block.get("text") else []
        if kind in ("thinking", "redacted_thinking"):
            place = self.thinking.setdefault(index, len(self.thinking))
            if kind == "redacted_thinking":
                return [self.chunk({"thinking_blocks": [{"index": place, "type": "redacted_thinking",
                                                         "data": block.get("data") or ""}]})]
            return [self.chunk({"reasoning_content": block["thinking"]})] if block.get("thinking") else []
        return []  # server tool use and its results: the model's own search, not the client's

    def block_delta(self, index: int, delta: dict[str, Any]) -> list[StreamChunk]:
        kind = delta.get("type")
        if kind == "text_delta":
            return self.text(delta.get("text", ""))
        if kind == "thinking_delta":
            return [self.chunk({"reasoning_content": delta.get("thinking", "")})]
        if kind == "signature_delta":
            return [self.chunk({"thinking_blocks": [{"index": self.thinking.get(index, 0), "type": "thinking",
                                                     "thinking": "", "signature": delta.get("signature", "")}]})]
        if kind == "input_json_delta" and index in self.tools:
            return [self.chunk({"tool_calls": [{"index": self.tools[index],
                                                "function": {"arguments": delta.get("partial_json", "")}}]})]
        if kind == "citations_delta":
            self.citations.setdefault(index, []).append(delta.get("citation"))
        return []
