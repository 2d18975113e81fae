"""Internal stream chunks → Anthropic's stream events: message_start, content_block_start / delta /
stop (one block open at a time), message_delta (stop reason, usage), message_stop; a stream cut
short ends with an `error` event.

Thinking: reasoning deltas fill a thinking block; a Claude signature (a `thinking_blocks` delta)
arrives as its `signature_delta` and completes the block; a block closed without one gets a sealed
signature (api/relay/inbound/anthropic_render.sealed_signature). Gemini's signatures come with the
tool calls (or the text), often after the thinking block has closed: those not sealed yet go into
an extra thinking block (empty text, sealed signature) just before the next tool_use block, or at
the end. Redacted thinking is a block of its own. URL annotations become `citations_delta` events
on the open text block. An image the model drew is a whole image block (start, stop).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.inbound.anthropic_render import (
    citation,
    image_blocks,
    message_id,
    sealed_signature,
    stop_reason,
    tool_id,
    usage_of,
)
from api.relay.inbound.base import StreamWriter
from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError
from api.upstream.reasoning import gemini_signature

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
               403: "permission_error", 404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large",
               429: "rate_limit_error", 503: "overloaded_error", 529: "overloaded_error"}


def event(kind: str, data: Mapping[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + b"\n\n"


def error_event(err: RelayError) -> bytes:
    return event("error", {"error": {"type": ERROR_TYPES.get(err.status, "api_error"), "message": err.message}})


class AnthropicStreamWriter(StreamWriter):
    def __init__(self, model: str, prompt_tokens: int) -> None:
        self.model = model
        self.prompt_tokens = prompt_tokens
        self.started = False
        self.block: str | None = None  # the open block's type
        self.index = -1
        self.thinking = ""  # the open thinking block's text
        self.signed = False  # the open thinking block has its Claude signature
        self.tools: dict[int, int] = {}  # tool-call index → block index
        self.ids: dict[int, str] = {}  # tool-call index → tool_use id
        self.calls: dict[str, str] = {}  # Gemini signatures not sealed yet, by tool_use id
        self.text_signature: str | None = None  # Gemini's text signature, not sealed yet
        self.text = ""  # all text so far (annotations index into it)
        self.block_text_start = 0  # where the open text block began in `text`
        self.finish_reason: Any = "stop"

    # -- blocks ---------------------------------------------------------------------------------------

    def _start(self, answer_id: str) -> bytes:
        self.started = True
        return event("message_start", {"message": {
            "id": message_id(answer_id), "type": "message", "role": "assistant", "model": self.model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": 0}}})

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return event("content_block_delta", {"index": self.index, "delta": delta})

    def _seal(self) -> str:
        """A sealed signature with the Gemini signatures not sealed yet (they are now)."""
        signature = sealed_signature(self.thinking, self.calls, self.text_signature)
        self.calls, self.text_signature = {}, None
        return signature

    def _close(self) -> bytes:
        if self.block is None:
            return b""
        out = b""
        if self.block == "thinking" and not self.signed:
            out = self._delta({"type": "signature_delta", "signature": self._seal()})
        self.block = None
        return out + event("content_block_stop", {"index": self.index})

    def _open(self, kind: str, block: dict[str, Any]) -> bytes:
        out = self._close()
        self.index += 1
        self.block = kind
        if kind == "thinking":
            self.thinking, self.signed = "", False
        elif kind == "text":
            self.block_text_start = len(self.text)
        return out + event("content_block_start", {"index": self.index, "content_block": block})

    def _open_thinking(self) -> bytes:
        return self._open("thinking", {"type": "thinking", "thinking": "", "signature": ""})

    def _pending_signatures(self) -> bytes:
        """Gemini signatures that came after the thinking block closed: an extra thinking block."""
        if not (self.calls or self.text_signature):
            return b""
        return self._open_thinking() + self._close()

    # -- deltas -----------------------------------------------------------------------------------------

    def _reasoning(self, text: str) -> bytes:
        out = b"" if self.block == "thinking" and not self.signed else self._open_thinking()
        self.thinking += text
        return out + self._delta({"type": "thinking_delta", "thinking": text})

    def _claude_block(self, block: Mapping[str, Any]) -> bytes:
        if block.get("type") == "redacted_thinking":
            return (self._open("redacted_thinking", {"type": "redacted_thinking", "data": block.get("data") or ""}) +
                    self._close())
        out = b""
        if block.get("thinking"):
            out += self._reasoning(str(block["thinking"]))
        if block.get("signature"):
            if self.block != "thinking" or self.signed:
                out += self._open_thinking()
            self.signed = True
            out += self._delta({"type": "signature_delta", "signature": str(block["signature"])})
        return out

    def _content(self, text: str) -> bytes:
        out = b"" if self.block == "text" else self._open("text", {"type": "text", "text": ""})
        self.text += text
        return out + self._delta({"type": "text_delta", "text": text})

    def _citations(self, annotations: list[Any]) -> bytes:
        if self.block != "text":
            return b""
        out = []
        for annotation in annotations:
            found = citation(self.text, annotation)
            if found is not None:
                out.append(self._delta({"type": "citations_delta", "citation": found[2]}))
        return b"".join(out)

    def _tool_call(self, call: Mapping[str, Any]) -> bytes:
        position = int(call.get("index") or 0)
        function = call.get("function") or {}
        signature = gemini_signature(call)
        out = b""
        if position not in self.tools:
            self.ids[position] = tool_id(call)
            if signature:
                self.calls[self.ids[position]] = signature
            out += self._close() + self._pending_signatures()
            out += self._open("tool_use", {"type": "tool_use", "id": self.ids[position],
                                           "name": function.get("name") or "", "input": {}})
            self.tools[position] = self.index
        elif signature:
            self.calls[self.ids[position]] = signature
        if function.get("arguments"):
            out += event("content_block_delta", {"index": self.tools[position], "delta": {
                "type": "input_json_delta", "partial_json": function["arguments"]}})
        return out

    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes:
        out: list[bytes] = []
        for chunk in chunks:
            if not self.started:
                out.append(self._start(str(chunk.get("id") or "")))
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content"):
                    out.append(self._reasoning(str(delta["reasoning_content"])))
                for block in delta.get("thinking_blocks") or ():
                    if isinstance(block, Mapping):
                        out.append(self._claude_block(block))
                self.text_signature = gemini_signature(delta) or self.text_signature
                if delta.get("content"):
                    out.append(self._content(str(delta["content"])))
                if isinstance(delta.get("annotations"), list):
                    out.append(self._citations(delta["annotations"]))
                for block in image_blocks(delta.get("images")):
                    out.append(self._open("image", block) + self._close())
                for call in delta.get("tool_calls") or ():
                    if isinstance(call, Mapping):
                        out.append(self._tool_call(call))
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
        return b"".join(out)

    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        out = [] if self.started else [self._start("")]
        out.append(self._close())
        if error is not None:
            out.append(error_event(error))
            return b"".join(out)
        out.append(self._pending_signatures())
        out.append(event("message_delta", {"delta": {"stop_reason": stop_reason(self.finish_reason),
                                                     "stop_sequence": None}, "usage": usage_of(usage)}))
        out.append(event("message_stop", {}))
        return b"".join(out)
