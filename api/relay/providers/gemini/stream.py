"""Gemini's streamGenerateContent (`alt=sse`: each event a whole GenerateContentResponse) → OpenAI
chunks. The stream has no end marker: it is complete when a candidate finished and the body ended
(the END_OF_BODY event of api/relay/decoders.EndOfBody); the last usageMetadata is the total."""
from __future__ import annotations

import time
from typing import Any

import orjson

from api.relay.base import EVENT_NOT_OBJECT, StreamChunk, StreamState, json_object
from api.relay.decoders import END_OF_BODY
from api.relay.providers.gemini.convert import call_id, convert_error, finish_reason, usage_of
from api.relay.sse import SSEEvent


class GeminiStream:
    def __init__(self, model: str) -> None:
        self.model = model
        self.id = "chatcmpl-"
        self.created = int(time.time())
        self.started = False
        self.finished = False
        self.calls = 0

    def convert(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        if ev.event == END_OF_BODY:
            state.done = self.finished
            return []
        data = json_object(ev.data, EVENT_NOT_OBJECT)
        if "error" in data:
            raise convert_error(int((data["error"] or {}).get("code") or 500), ev.data)
        self.id = f"chatcmpl-{data.get('responseId', '')}"
        usage = usage_of(data.get("usageMetadata"))
        if usage is not None:
            state.usage = usage
        chunks: list[StreamChunk] = []
        for index, candidate in enumerate(data.get("candidates") or ()):
            delta: dict[str, Any] = {}
            if not self.started:
                delta["role"] = "assistant"
                self.started = True
            calls = []
            for part in (candidate.get("content") or {}).get("parts") or ():
                if "functionCall" in part:
                    call = part["functionCall"]
                    calls.append({"index": self.calls, "id": call_id(self.calls, call), "type": "function",
                                  "function": {"name": call.get("name", ""),
                                               "arguments": orjson.dumps(call.get("args") or {}).decode()}})
                    self.calls += 1
                elif part.get("thought"):
                    delta["reasoning_content"] = delta.get("reasoning_content", "") + (part.get("text") or "")
                elif "text" in part:
                    delta["content"] = delta.get("content", "") + part["text"]
            if calls:
                delta["tool_calls"] = calls
            reason = finish_reason(candidate, calls or ([1] if self.calls else []))
            if reason:
                self.finished = True
            if delta or reason:
                chunks.append({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                               "model": self.model, "choices": [{"index": candidate.get("index", index),
                                                                 "delta": delta, "finish_reason": reason}]})
        if not data.get("candidates") and (data.get("promptFeedback") or {}).get("blockReason"):
            self.finished = True
            chunks.append({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                           "model": self.model, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                             "finish_reason": "content_filter"}]})
        return chunks
