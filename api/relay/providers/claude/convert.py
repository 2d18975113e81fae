"""OpenAI chat completions ↔ Anthropic's Messages API, both ways, streamed and not (pure functions;
also used by the Bedrock and Vertex AI adaptors).

Request: system and developer messages → `system`; `tool` messages → user `tool_result` blocks;
assistant `tool_calls` → `tool_use` blocks; consecutive messages of one role merged (Claude wants
them alternating); images as data: URLs → base64 sources, http(s) URLs → URL sources (Claude fetches
them itself); tools and tool_choice; `stop` → `stop_sequences`; sampling parameters copied when
present (explicit zeros kept); `max_tokens` required by Claude, so a per-model default when the
client sets none; `reasoning_effort` → extended thinking with a token budget. Claude has no JSON
mode: `response_format` becomes an instruction at the end of the system prompt.

Answer: text → `content`, thinking → `reasoning_content`, tool_use → `tool_calls`; stop reasons
mapped; usage in OpenAI's convention (prompt = input + cache reads + cache writes).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.base import TokenUsage
from api.relay.errors import RelayError

STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                "refusal": "content_filter", "pause_turn": "stop"}
THINKING_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384}
JSON_INSTRUCTION = "Respond with a single valid JSON object and nothing else."


def default_max_tokens(model: str) -> int:
    if any(part in model for part in ("claude-3-5", "claude-3-7", "sonnet-4", "opus-4", "haiku-4")):
        return 8192
    return 4096


# -- request ----------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def _image(url: str) -> dict[str, Any]:
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header[5:].split(";")[0] or "image/png"
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    if url.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": url}}
    raise RelayError.local_error(400, "image_url must be a data: URL or an http(s) URL", "invalid_image_url")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str):
                blocks.append(_image(url))
    return blocks


def _arguments(raw: Any) -> Any:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = orjson.loads(raw or "{}")
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def convert_messages(messages: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """(Claude messages with alternating roles, system texts)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            text = _text(message.get("content"))
            if text:
                system.append(text)
        elif role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": str(message.get("tool_call_id") or ""),
                          "content": _text(message.get("content")) or ""}])
        elif role == "assistant":
            blocks = _blocks(message.get("content"))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                blocks.append({"type": "tool_use", "id": call.get("id") or "", "name": function.get("name") or "",
                               "input": _arguments(function.get("arguments"))})
            add("assistant", blocks)
        else:
            add("user", _blocks(message.get("content")))
    return out, system


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    result: dict[str, Any] | None = None
    if choice == "auto":
        result = {"type": "auto"}
    elif choice == "required":
        result = {"type": "any"}
    elif choice == "none":
        result = {"type": "none"}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        result = {"type": "tool", "name": choice["function"].get("name", "")}
    if parallel is False:
        result = {**(result or {"type": "auto"}), "disable_parallel_tool_use": True}
    return result


def convert_request(req: Mapping[str, Any], model: str) -> dict[str, Any]:
    messages, system = convert_messages(req.get("messages"))
    body: dict[str, Any] = {"model": model, "messages": messages}
    fmt = req.get("response_format")
    if isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema"):
        schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None
        system.append(JSON_INSTRUCTION + (f" It must match this JSON schema: {orjson.dumps(schema).decode()}"
                                          if schema else ""))
    if system:
        body["system"] = "\n\n".join(system)
    max_tokens = req.get("max_completion_tokens", req.get("max_tokens"))
    body["max_tokens"] = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else default_max_tokens(model)
    for name in ("temperature", "top_p", "top_k"):
        if name in req and req[name] is not None:
            body[name] = req[name]
    stop = req.get("stop")
    if isinstance(stop, str):
        body["stop_sequences"] = [stop]
    elif isinstance(stop, list) and stop:
        body["stop_sequences"] = [s for s in stop if isinstance(s, str)]
    if req.get("stream"):
        body["stream"] = True
    tools = [t["function"] for t in req.get("tools") or ()
             if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)]
    if tools:
        body["tools"] = [{"name": f.get("name", ""), "description": f.get("description", ""),
                          "input_schema": f.get("parameters") or {"type": "object", "properties": {}}}
                         for f in tools]
        choice = _tool_choice(req.get("tool_choice"), req.get("parallel_tool_calls"))
        if choice:
            body["tool_choice"] = choice
    thinking = req.get("thinking")
    effort = req.get("reasoning_effort")
    if isinstance(thinking, Mapping):
        body["thinking"] = dict(thinking)
    elif isinstance(effort, str) and effort in THINKING_BUDGETS:
        budget = THINKING_BUDGETS[effort]
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if body["max_tokens"] <= budget:
            body["max_tokens"] = budget + default_max_tokens(model)
    if isinstance(body.get("thinking"), Mapping) and body["thinking"].get("type") == "enabled":
        body.pop("temperature", None)  # Claude refuses a temperature with thinking on
        body.pop("top_k", None)
    user = req.get("user")
    if isinstance(user, str) and user:
        body["metadata"] = {"user_id": user}
    return body


# -- answer -----------------------------------------------------------------------------------------


def usage_of(usage: Any) -> TokenUsage | None:
    if not isinstance(usage, Mapping):
        return None
    read = int(usage.get("cache_read_input_tokens") or 0)
    write = int(usage.get("cache_creation_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + read + write
    completion = int(usage.get("output_tokens") or 0)
    if not prompt and not completion:
        return None
    return TokenUsage(prompt, completion, cached_tokens=read, cache_creation_tokens=write)


def convert_response(body: Mapping[str, Any], model: str) -> tuple[dict[str, Any], TokenUsage | None]:
    text: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in body.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            text.append(block.get("text") or "")
        elif kind == "thinking":
            thinking.append(block.get("thinking") or "")
        elif kind == "tool_use":
            calls.append({"id": block.get("id", ""), "type": "function",
                          "function": {"name": block.get("name", ""),
                                       "arguments": orjson.dumps(block.get("input") or {}).decode()}})
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if thinking:
        message["reasoning_content"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    usage = usage_of(body.get("usage"))
    answer: dict[str, Any] = {
        "id": f"chatcmpl-{body.get('id', '')}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "choices": [{"index": 0, "message": message,
                                     "finish_reason": STOP_REASONS.get(body.get("stop_reason") or "", "stop")}],
    }
    if usage is not None:
        answer["usage"] = usage.to_openai()
    return answer, usage


# -- errors -----------------------------------------------------------------------------------------

ERROR_STATUSES = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
                  "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
                  "overloaded_error": 503}


def convert_error(status: int, raw: bytes) -> RelayError:
    try:
        data = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        data = None
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, Mapping):
        message = raw[:300].decode("utf-8", "replace").strip() if raw and not raw.lstrip().startswith(b"<") else ""
        return RelayError(503 if status == 529 else status, message or f"bad response status code {status}",
                          "upstream_error", "bad_response_status_code")
    kind = str(err.get("type") or "upstream_error")
    if status == 529 or kind == "overloaded_error":
        status = 503
    return RelayError(status, str(err.get("message") or kind), kind, kind)


def stream_error(payload: Mapping[str, Any]) -> RelayError:
    inner = payload.get("error")
    err: Mapping[str, Any] = inner if isinstance(inner, Mapping) else payload
    kind = str(err.get("type") or "api_error")
    return RelayError(ERROR_STATUSES.get(kind, 500), str(err.get("message") or kind), kind, kind)
