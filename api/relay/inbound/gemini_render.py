"""The internal answer → Gemini's `candidates`, whole and streamed.

Parts: `reasoning_content` → a `thought` part; text (kept apart) with Gemini's text signature on
the first text part; tool calls → whole `functionCall` parts with their own Gemini signatures.
State another provider must get back rides as a (wrapped, sealed) `thoughtSignature`, because
Gemini CLI keeps signatures on the parts it sends back but drops thought parts: Claude's thinking
blocks on the first functionCall part (or the first text part when there are no calls), and
reasoning that has no signature (DeepSeek's, which must come back with tool turns) on the first
functionCall part.

A stream sends each chunk's thought and text parts as they come; Claude's thinking blocks complete
before the text starts, so they ride on the first text part, or else on the first functionCall
part. Function calls are sent whole, with their signatures, in the last answer. Images the model
drew (`images`, data: URLs) are inlineData parts, as Gemini answers them.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.inbound.base import StreamWriter
from api.relay.inbound.gemini_read import wrap
from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import call_arguments
from api.upstream.providers.gemini.images import image_part
from api.upstream.reasoning import ANTHROPIC, TEXT, gemini_signature, seal

FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY", "tool_calls": "STOP",
                  "function_call": "STOP"}
STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
            409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
            501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def usage_metadata(usage: TokenUsage) -> dict[str, int]:
    meta = {"promptTokenCount": usage.prompt_tokens,
            "candidatesTokenCount": usage.completion_tokens - usage.reasoning_tokens,
            "totalTokenCount": usage.total_tokens}
    if usage.cached_tokens:
        meta["cachedContentTokenCount"] = usage.cached_tokens
    if usage.reasoning_tokens:
        meta["thoughtsTokenCount"] = usage.reasoning_tokens
    return meta


def google_error(err: RelayError, request_id: str) -> dict[str, Any]:
    message = f"{err.message} (request id: {request_id})" if request_id else err.message
    return {"error": {"code": err.status, "message": message, "status": STATUSES.get(err.status, "UNKNOWN")}}


def claude_seal(blocks: list[dict[str, Any]]) -> str:
    return wrap(seal(ANTHROPIC, {"blocks": blocks}))



def call_part(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    found: dict[str, Any] = {"name": function.get("name") or "", "args": call_arguments(function.get("arguments"))}
    if call.get("id"):
        found["id"] = str(call["id"])
    part: dict[str, Any] = {"functionCall": found}
    signature = gemini_signature(call)
    if signature:
        part["thoughtSignature"] = signature
    return part


def text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    return [{"text": str(p.get("text") or "")} for p in content or ()
            if isinstance(p, Mapping) and p.get("type") == "text" and p.get("text")]


def claude_thinking(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks = message.get("thinking_blocks")
    return ([dict(b) for b in blocks if isinstance(b, Mapping) and b.get("type") in ("thinking", "redacted_thinking")]
            if isinstance(blocks, list) else [])


def carry(parts: list[dict[str, Any]], signature: str) -> None:
    """Put an envelope on the first functionCall part, else the first text part, else a new one."""
    target = (next((p for p in parts if "functionCall" in p), None) or
              next((p for p in parts if "text" in p and not p.get("thought")), None))
    if target is None:
        parts.append(target := {"text": ""})
    target["thoughtSignature"] = signature


def drawn(images: Any) -> list[dict[str, Any]]:
    """Images the model drew (`images`, data: URLs) → inlineData parts, with their signatures."""
    parts = [image_part(image) for image in images] if isinstance(images, list) else []
    return [part for part in parts if part is not None]


def parts_of(message: Mapping[str, Any], thoughts: bool = True) -> list[dict[str, Any]]:
    """One internal message → Gemini parts."""
    parts: list[dict[str, Any]] = []
    reasoning = str(message.get("reasoning_content") or "")
    if reasoning and thoughts:
        parts.append({"text": reasoning, "thought": True})
    texts = text_parts(message.get("content"))
    text_signature = gemini_signature(message)
    if texts and text_signature:
        texts[0]["thoughtSignature"] = text_signature
    parts.extend(texts)
    parts.extend(drawn(message.get("images")))
    calls = [call_part(c) for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
    parts.extend(calls)
    blocks = claude_thinking(message)
    if blocks:
        carry(parts, claude_seal(blocks))
    elif reasoning and calls and "thoughtSignature" not in calls[0]:
        calls[0]["thoughtSignature"] = wrap(seal(TEXT, {"text": reasoning}))
    return parts


class GeminiStreamWriter(StreamWriter):
    """Chunks → Gemini stream answers (one per chunk), as SSE (`alt=sse`) or one JSON array."""

    def __init__(self, model: str, sse: bool, thoughts: bool = True) -> None:
        self.model = model
        self.sse = sse
        self.thoughts = thoughts
        self.content_type = "text/event-stream" if sse else "application/json"
        self.sent = 0
        self.calls: dict[int, dict[str, Any]] = {}  # tool-call index → the call so far
        self.finish_reason: Any = "stop"
        self.reasoning = ""  # all reasoning text so far
        self.block_text = ""  # reasoning text of the Claude thinking block not complete yet
        self.blocks: list[dict[str, Any]] = []  # Claude's complete thinking blocks, not sent yet
        self.blocks_sent = False

    def _frame(self, obj: Mapping[str, Any]) -> bytes:
        data = orjson.dumps(obj)
        self.sent += 1
        if self.sse:
            return b"data: " + data + b"\r\n\r\n"
        return (b"[" if self.sent == 1 else b",\r\n") + data

    def _claude_block(self, block: Mapping[str, Any]) -> None:
        if block.get("type") == "redacted_thinking":
            self.blocks.append(dict(block))
        elif block.get("signature"):
            self.blocks.append({"type": "thinking", "thinking": str(block.get("thinking") or self.block_text),
                                "signature": str(block["signature"])})
            self.block_text = ""

    def _call(self, call: Mapping[str, Any]) -> None:
        slot = self.calls.setdefault(int(call.get("index") or 0), {"id": "", "function": {"name": "", "arguments": ""}})
        function = call.get("function") or {}
        slot["id"] = slot["id"] or str(call.get("id") or "")
        slot["function"]["name"] += function.get("name") or ""
        slot["function"]["arguments"] += function.get("arguments") or ""
        if gemini_signature(call):
            slot["extra_content"] = call["extra_content"]

    def _parts(self, delta: Mapping[str, Any]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        reasoning = str(delta.get("reasoning_content") or "")
        self.reasoning += reasoning
        self.block_text += reasoning
        if reasoning and self.thoughts:
            parts.append({"text": reasoning, "thought": True})
        for block in delta.get("thinking_blocks") or ():
            if isinstance(block, Mapping):
                self._claude_block(block)
        signature = gemini_signature(delta)
        if delta.get("content") or signature:
            text: dict[str, Any] = {"text": str(delta.get("content") or "")}
            if signature:
                text["thoughtSignature"] = signature
            elif self.blocks and not self.blocks_sent:
                text["thoughtSignature"] = claude_seal(self.blocks)
                self.blocks, self.blocks_sent = [], True
            parts.append(text)
        parts.extend(drawn(delta.get("images")))
        for call in delta.get("tool_calls") or ():
            if isinstance(call, Mapping):
                self._call(call)
        return parts

    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes:
        out: list[bytes] = []
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                parts = self._parts(choice.get("delta") or {})
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
                if parts:
                    out.append(self._frame({"candidates": [{"content": {"role": "model", "parts": parts},
                                                            "index": 0}], "modelVersion": self.model}))
        return b"".join(out)

    def _last_parts(self) -> list[dict[str, Any]]:
        parts = [call_part(call) for _, call in sorted(self.calls.items())]
        if self.blocks:
            carry(parts, claude_seal(self.blocks))
        elif self.reasoning and parts and not self.blocks_sent and "thoughtSignature" not in parts[0]:
            parts[0]["thoughtSignature"] = wrap(seal(TEXT, {"text": self.reasoning}))
        return parts or [{"text": ""}]

    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        if error is not None:
            frame = self._frame(google_error(error, ""))
            return frame if self.sse else frame + b"]"
        last = self._frame({"candidates": [{"content": {"role": "model", "parts": self._last_parts()},
                                            "finishReason": FINISH_REASONS.get(self.finish_reason, "STOP"),
                                            "index": 0}],
                            "usageMetadata": usage_metadata(usage), "modelVersion": self.model})
        return last if self.sse else last + b"]"
