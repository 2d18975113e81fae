"""Pieces shared by the adaptors of providers with their own chat format: reading OpenAI messages,
and building OpenAI answers and chunks from what the provider returned."""
from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

import orjson

from api.upstream.base import TokenUsage


def text_of(content: Any) -> str:
    """The text of an OpenAI message `content` (a string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def image_urls(content: Any) -> list[str]:
    """The image URLs (http(s) or data:) of an OpenAI message `content`."""
    urls: list[str] = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, Mapping) and part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str) and url:
                urls.append(url)
    return urls


def messages_of(req: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages = req.get("messages")
    return [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []


def function_tools(req: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The `function` objects of the request's tools (legacy `functions` too)."""
    tools = [t.get("function") for t in req.get("tools") or () if isinstance(t, Mapping)]
    functions = req.get("functions")
    legacy: list[Any] = functions if isinstance(functions, list) else []
    return [f for f in [*tools, *legacy] if isinstance(f, Mapping) and f.get("name")]


def arguments_text(raw: Any) -> str:
    """Tool-call arguments as the JSON text OpenAI clients expect."""
    if isinstance(raw, str):
        return raw
    return orjson.dumps(raw if raw is not None else {}).decode()


def tool_call(call_id: str, name: str, arguments: Any, index: int | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"id": call_id or f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                            "function": {"name": name, "arguments": arguments_text(arguments)}}
    if index is not None:
        call["index"] = index
    return call


def chat_answer(answer_id: str, model: str, message: dict[str, Any], finish: str | None,
                usage: TokenUsage | None, created: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": answer_id if answer_id.startswith("chatcmpl-") else f"chatcmpl-{answer_id or uuid.uuid4().hex}",
        "object": "chat.completion", "created": created or int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish or "stop"}],
    }
    if usage is not None:
        body["usage"] = usage.to_openai()
    return body


class ChunkWriter:
    """OpenAI chat.completion.chunk objects of one stream (one id, one model, one timestamp)."""

    __slots__ = ("created", "id", "model", "started")

    def __init__(self, model: str, answer_id: str = "") -> None:
        self.model = model
        self.id = f"chatcmpl-{answer_id or uuid.uuid4().hex}"
        self.created = int(time.time())
        self.started = False

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        if not self.started:
            self.started = True
            delta = {"role": "assistant", **delta}
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def usage_from(prompt: Any, completion: Any) -> TokenUsage | None:
    """A usage from two provider counts; None when both are absent or zero."""
    try:
        p, c = int(prompt or 0), int(completion or 0)
    except (TypeError, ValueError):
        return None
    return TokenUsage(p, c) if p or c else None
