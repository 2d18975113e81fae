"""Anthropic's Messages API in: `POST /v1/messages` (streamed and not) and
`POST /v1/messages/count_tokens`, for the `anthropic` SDK and Claude Code.

Request → OpenAI: `system` (text or blocks) → a system message; user `tool_result` blocks → `tool`
messages; assistant `tool_use` blocks → `tool_calls`; images (base64 or URL) → `image_url` parts;
`tools` (`input_schema`) and `tool_choice`; `stop_sequences`, sampling and `max_tokens`; extended
thinking → `thinking` for Claude-format channels, `reasoning_effort` for the others. Answer →
a `message` with text, thinking and tool_use blocks, its stop reason and usage (input without the
cache counts, as Anthropic reports it). Streams are Anthropic's events: message_start,
content_block_start/delta/stop, message_delta (stop reason, usage), message_stop; a stream cut short
ends with an `error` event. A Claude channel (type 14) gets the body as sent, with the client's
`anthropic-version` and `anthropic-beta`, and its events are relayed untouched."""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.base import TokenUsage
from api.relay.errors import RelayError
from api.relay.inbound.base import Inbound, StreamWriter
from models.enums import ChannelType

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
                "content_filter": "refusal"}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               503: "overloaded_error", 529: "overloaded_error"}
CLAUDE_FORMAT_TYPES = frozenset({ChannelType.ANTHROPIC, ChannelType.AWS, ChannelType.VERTEX_AI})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text") or "" for b in content or () if isinstance(b, Mapping) and b.get("type") == "text")


def _image(source: Mapping[str, Any]) -> dict[str, Any] | None:
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type') or 'image/png'};base64,{source.get('data') or ''}"
    elif source.get("type") == "url":
        url = str(source.get("url") or "")
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _parts(blocks: list[Mapping[str, Any]]) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block.get("text") or ""})
        elif block.get("type") == "image" and isinstance(block.get("source"), Mapping):
            image = _image(block["source"])
            if image:
                parts.append(image)
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def convert_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        out.append({"role": "system", "content": _text(system)})
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        blocks = [b for b in content or () if isinstance(b, Mapping)]
        if role == "assistant":
            calls = [{"id": b.get("id") or "", "type": "function", "function": {
                "name": b.get("name") or "", "arguments": orjson.dumps(b.get("input") or {}).decode()}}
                for b in blocks if b.get("type") == "tool_use"]
            entry: dict[str, Any] = {"role": "assistant", "content": _text(blocks) or (None if calls else "")}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                result = block.get("content")
                text = result if isinstance(result, str) else _text(result)
                if block.get("is_error"):
                    text = f"Error: {text}"
                out.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""), "content": text})
        rest = [b for b in blocks if b.get("type") in ("text", "image")]
        if rest:
            out.append({"role": "user", "content": _parts(rest)})
    return out


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, Mapping):
        return None
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name") or ""}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))


def effort(budget: int) -> str:
    return "low" if budget < 4096 else "medium" if budget < 16384 else "high"


class AnthropicInbound(Inbound):
    name: ClassVar[str] = "anthropic"
    native_types: ClassVar[frozenset[int]] = frozenset({ChannelType.ANTHROPIC})

    @property
    def openai(self) -> dict[str, Any]:
        body = self.body
        out: dict[str, Any] = {"model": body.get("model"), "messages": convert_messages(body)}
        for name in ("max_tokens", "temperature", "top_p", "top_k"):
            if body.get(name) is not None:
                out[name] = body[name]
        stop = body.get("stop_sequences")
        if isinstance(stop, list) and stop:
            out["stop"] = stop
        if body.get("stream") is True:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        tools = [t for t in body.get("tools") or () if isinstance(t, Mapping) and t.get("type") in (None, "custom")]
        if tools:
            out["tools"] = [{"type": "function", "function": {
                "name": t.get("name") or "", "description": t.get("description") or "",
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}} for t in tools]
            choice = _tool_choice(body.get("tool_choice"))
            if choice is not None:
                out["tool_choice"] = choice
            if isinstance(body.get("tool_choice"), Mapping) and body["tool_choice"].get("disable_parallel_tool_use"):
                out["parallel_tool_calls"] = False
        thinking = body.get("thinking")
        if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
            out["thinking"] = dict(thinking)  # Claude-format channels (for_channel drops it for the others)
            out["reasoning_effort"] = effort(int(thinking.get("budget_tokens") or 0))
        user = (body.get("metadata") or {}).get("user_id") if isinstance(body.get("metadata"), Mapping) else None
        if isinstance(user, str) and user:
            out["user"] = user
        return out

    def native_headers(self, channel: Mapping[str, str]) -> dict[str, str]:
        """The client's API version, and its beta flags added to the channel's own."""
        headers = {}
        version = self.request.headers.get("anthropic-version")
        if version:
            headers["anthropic-version"] = version
        flags = [f.strip() for value in (channel.get("anthropic-beta"), self.request.headers.get("anthropic-beta"))
                 for f in (value or "").split(",") if f.strip()]
        if flags:
            headers["anthropic-beta"] = ",".join(dict.fromkeys(flags))
        return headers

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        choice = (answer.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        content: list[dict[str, Any]] = []
        if message.get("reasoning_content"):
            content.append({"type": "thinking", "thinking": message["reasoning_content"], "signature": ""})
        if message.get("content"):
            content.append({"type": "text", "text": message["content"]})
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            content.append({"type": "tool_use", "id": call.get("id") or f"toolu_{uuid.uuid4().hex[:24]}",
                            "name": function.get("name") or "", "input": _input(function.get("arguments"))})
        usage = TokenUsage.from_openai(answer.get("usage")) or TokenUsage()
        return {"id": _message_id(answer.get("id")), "type": "message", "role": "assistant",
                "model": answer.get("model") or self.body.get("model"), "content": content,
                "stop_reason": STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn"),
                "stop_sequence": None, "usage": usage_of(usage)}

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        """Claude-format channels take thinking and top_k as they are; the others get an effort and
        no top_k (OpenAI refuses both fields)."""
        if channel_type in CLAUDE_FORMAT_TYPES or not ({"thinking", "top_k"} & body.keys()):
            return body
        return {k: v for k, v in body.items() if k not in ("thinking", "top_k")}

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        return AnthropicStreamWriter(model, prompt_tokens)

    def error_frame(self, err: RelayError) -> bytes:
        return error_event(err)

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(err.status, "api_error")
        message = f"{err.message} (request id: {request_id})" if request_id else err.message
        return {"type": "error", "error": {"type": kind, "message": message}}


def _message_id(answer_id: Any) -> str:
    text = str(answer_id or "")
    if text.startswith("chatcmpl-msg_"):
        return text.removeprefix("chatcmpl-")
    return f"msg_{text.removeprefix('chatcmpl-') or uuid.uuid4().hex}"


def _input(arguments: Any) -> Any:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        value = orjson.loads(arguments or "{}")
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def usage_of(usage: TokenUsage) -> dict[str, int]:
    return {"input_tokens": max(0, usage.prompt_tokens - usage.cached_tokens - usage.cache_creation_tokens),
            "output_tokens": usage.completion_tokens, "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation_input_tokens": usage.cache_creation_tokens}


def event(kind: str, data: Mapping[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + b"\n\n"


def error_event(err: RelayError) -> bytes:
    return event("error", {"error": {"type": ERROR_TYPES.get(err.status, "api_error"), "message": err.message}})


class AnthropicStreamWriter(StreamWriter):
    """OpenAI chunks → Anthropic's stream events (one content block open at a time)."""

    def __init__(self, model: str, prompt_tokens: int) -> None:
        self.model = model
        self.prompt_tokens = prompt_tokens
        self.started = False
        self.block: str | None = None  # kind of the open block: text, thinking, tool_use
        self.index = -1
        self.tools: dict[int, int] = {}  # OpenAI tool-call index → block index
        self.finish_reason = "stop"

    def _start(self, answer_id: str) -> bytes:
        self.started = True
        return event("message_start", {"message": {
            "id": _message_id(answer_id), "type": "message", "role": "assistant", "model": self.model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": 0}}})

    def _close(self) -> bytes:
        if self.block is None:
            return b""
        self.block = None
        return event("content_block_stop", {"index": self.index})

    def _open(self, kind: str, block: dict[str, Any]) -> bytes:
        out = self._close()
        self.index += 1
        self.block = kind
        return out + event("content_block_start", {"index": self.index, "content_block": block})

    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes:
        out: list[bytes] = []
        for chunk in chunks:
            if not self.started:
                out.append(self._start(str(chunk.get("id") or "")))
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content"):
                    if self.block != "thinking":
                        out.append(self._open("thinking", {"type": "thinking", "thinking": "", "signature": ""}))
                    out.append(event("content_block_delta", {"index": self.index, "delta": {
                        "type": "thinking_delta", "thinking": delta["reasoning_content"]}}))
                if delta.get("content"):
                    if self.block != "text":
                        out.append(self._open("text", {"type": "text", "text": ""}))
                    out.append(event("content_block_delta", {"index": self.index, "delta": {
                        "type": "text_delta", "text": delta["content"]}}))
                for call in delta.get("tool_calls") or ():
                    position = int(call.get("index") or 0)
                    function = call.get("function") or {}
                    if position not in self.tools:
                        out.append(self._open("tool_use", {"type": "tool_use", "id": call.get("id") or
                                                           f"toolu_{uuid.uuid4().hex[:24]}",
                                                           "name": function.get("name") or "", "input": {}}))
                        self.tools[position] = self.index
                    if function.get("arguments"):
                        out.append(event("content_block_delta", {"index": self.tools[position], "delta": {
                            "type": "input_json_delta", "partial_json": function["arguments"]}}))
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
        return b"".join(out)

    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        out = [] if self.started else [self._start(f"msg_{uuid.uuid4().hex}")]
        out.append(self._close())
        if error is not None:
            out.append(error_event(error))
            return b"".join(out)
        out.append(event("message_delta", {
            "delta": {"stop_reason": STOP_REASONS.get(self.finish_reason, "end_turn"), "stop_sequence": None},
            "usage": usage_of(usage)}))
        out.append(event("message_stop", {}))
        return b"".join(out)

