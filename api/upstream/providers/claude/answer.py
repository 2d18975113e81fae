"""A Claude answer → the pipeline's OpenAI chat completion (pure), and Claude's errors.

Text blocks → `content` (joined as they came, server tool blocks left out: the answer text is what
the model wrote), thinking → `reasoning_content` and `thinking_blocks` (signatures as Claude made
them, redacted blocks kept), tool_use → `tool_calls`, web citations → OpenAI `url_citation`
annotations over the text they cite. Usage in OpenAI's convention: prompt = input + cache reads +
cache writes, the one-hour writes counted apart (prompt-caching, "1-hour cache duration").
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson

from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError
from api.upstream.providers.claude.messages import as_mapping

STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length"}
ERROR_STATUSES = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
                  "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
                  "overloaded_error": 503}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(usage: Any) -> TokenUsage | None:
    if not isinstance(usage, Mapping):
        return None
    read = _int(usage.get("cache_read_input_tokens"))
    by_ttl = as_mapping(usage.get("cache_creation"))
    one_hour = _int(by_ttl.get("ephemeral_1h_input_tokens"))
    write = _int(usage.get("cache_creation_input_tokens")) or (_int(by_ttl.get("ephemeral_5m_input_tokens"))
                                                               + one_hour)
    prompt = _int(usage.get("input_tokens")) + read + write
    completion = _int(usage.get("output_tokens"))
    if not prompt and not completion:
        return None
    details = as_mapping(usage.get("output_tokens_details"))
    return TokenUsage(prompt, completion, cached_tokens=read, reasoning_tokens=_int(details.get("thinking_tokens")),
                      cache_creation_tokens=write, cache_creation_1h_tokens=min(one_hour, write))


def annotation(citation: Any, start: int, end: int) -> dict[str, Any] | None:
    """A Claude citation → an OpenAI `url_citation` over [start, end) of the content (web results
    only: document citations have no URL to point to)."""
    if not isinstance(citation, Mapping) or not isinstance(citation.get("url"), str):
        return None
    return {"type": "url_citation", "url_citation": {"start_index": start, "end_index": end,
                                                     "url": citation["url"], "title": citation.get("title") or ""}}


def thinking_block(block: Mapping[str, Any]) -> dict[str, Any] | None:
    if block.get("type") == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking") or "", "signature": block.get("signature") or ""}
    if block.get("type") == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data") or ""}
    return None


def tool_call(block: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": block.get("id", ""), "type": "function",
            "function": {"name": block.get("name", ""), "arguments": orjson.dumps(block.get("input") or {}).decode()}}


def convert_response(body: Mapping[str, Any], model: str) -> tuple[dict[str, Any], TokenUsage | None]:
    texts: list[str] = []
    reasoning: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    offset = 0
    for block in body.get("content") or ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text") or "")
            texts.append(text)
            for citation in block.get("citations") or ():
                found = annotation(citation, offset, offset + len(text))
                if found is not None:
                    annotations.append(found)
            offset += len(text)
        elif kind in ("thinking", "redacted_thinking"):
            thinking.append(thinking_block(block) or {})
            if kind == "thinking" and block.get("thinking"):
                reasoning.append(str(block["thinking"]))
        elif kind == "tool_use":
            calls.append(tool_call(block))
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts or not calls else None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if thinking:
        message["thinking_blocks"] = thinking
    if calls:
        message["tool_calls"] = calls
    if annotations:
        message["annotations"] = annotations
    usage = usage_of(body.get("usage"))
    answer: dict[str, Any] = {
        "id": f"chatcmpl-{body.get('id', '')}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "choices": [{"index": 0, "message": message,
                                     "finish_reason": STOP_REASONS.get(body.get("stop_reason") or "", "stop")}],
    }
    if usage is not None:
        answer["usage"] = usage.to_openai()
    return answer, usage


# -- errors -------------------------------------------------------------------------------------------


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
