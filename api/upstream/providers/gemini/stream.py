"""Gemini's streamGenerateContent (`alt=sse`: each event a whole GenerateContentResponse) → chunks of
the internal form. The stream has no end marker: it is complete when a candidate finished and the
body ended (the END_OF_BODY event of api/upstream/decoders.EndOfBody); the last usageMetadata is the
total. Thought signatures ride along: on a tool-call delta as that call's `extra_content`, on the
delta itself for a text part's signature (which Gemini 3 may send on an empty last part); grounding
metadata becomes the delta's `annotations`; a built-in tool's own parts (tool combination) are gathered
in `hidden`, never in a chunk (answer.py)."""
from __future__ import annotations

import time
from typing import Any

from api.upstream.base import StreamChunk, StreamState
from api.upstream.decoders import END_OF_BODY
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.providers.gemini.answer import Parts, citations, convert_error, finish_reason, usage_of
from api.upstream.reasoning import with_gemini_signature
from api.upstream.sse import SSEEvent


class GeminiStream:
    def __init__(self, model: str) -> None:
        self.model = model
        self.id = "chatcmpl-"
        self.created = int(time.time())
        self.started = False
        self.finished = False
        self.calls = 0
        self.text = ""  # what was streamed so far (grounding offsets refer to it)
        self.signature: str | None = None
        self.own = False  # whether a part the client gets came already (where a hidden part stands)
        self.hidden: list[dict[str, Any]] = []

    def chunk(self, index: int, delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": index, "delta": delta, "finish_reason": reason}]}

    def delta(self, candidate: dict[str, Any]) -> dict[str, Any]:
        delta: dict[str, Any] = {}
        if not self.started:
            delta["role"] = "assistant"
            self.started = True
        parts = Parts().read((candidate.get("content") or {}).get("parts"), self.calls, self.own)
        self.own = parts.own
        if parts.hidden:
            self.hidden += parts.hidden
        if parts.thoughts:
            delta["reasoning_content"] = "".join(parts.thoughts)
        if parts.text:
            delta["content"] = "".join(parts.text)
            self.text += delta["content"]
        if parts.images:
            delta["images"] = parts.images
        if parts.calls:
            delta["tool_calls"] = [{"index": self.calls + i, **call} for i, call in enumerate(parts.calls)]
            self.calls += len(parts.calls)
        if parts.signature and parts.signature != self.signature:
            self.signature = parts.signature
            with_gemini_signature(delta, parts.signature)
        cited = citations(candidate.get("groundingMetadata"), self.text)
        if cited:
            delta["annotations"] = cited
        return delta

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
            delta = self.delta(candidate)
            reason = finish_reason(candidate, self.calls > 0)
            if reason:
                self.finished = True
            if delta or reason:
                chunks.append(self.chunk(candidate.get("index", index), delta, reason))
        if not data.get("candidates") and (data.get("promptFeedback") or {}).get("blockReason"):
            self.finished = True
            chunks.append(self.chunk(0, {"role": "assistant", "content": ""}, "content_filter"))
        return chunks
