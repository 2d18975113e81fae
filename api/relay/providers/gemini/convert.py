"""OpenAI chat completions ↔ Gemini's generateContent, both ways, streamed and not (pure functions;
also used by Vertex AI's Gemini models).

Request: system and developer messages → `systemInstruction`; roles user/model, consecutive ones
merged; images: data: URLs → `inlineData` (http(s) URLs are fetched and inlined by the adaptor's
`prepare` step, under the media policy); tools → `functionDeclarations` with the JSON-schema keys
Gemini refuses removed; tool_choice → `toolConfig`; assistant tool calls → `functionCall` parts and
tool messages → `functionResponse` parts (named after the call they answer); `response_format` →
`responseMimeType`/`responseSchema`; stop, sampling, max tokens, n → `generationConfig` (explicit
zeros kept); `reasoning_effort` → `thinkingConfig` with thoughts included.

Answer: text parts → content, `thought` parts → reasoning_content, functionCall parts → tool calls
(Gemini gives them no id: a stable one is made from the position and the call); finish reasons
mapped; usageMetadata → usage (thoughts are completion tokens, cached content is cache reads).
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.base import TokenUsage
from api.relay.errors import RelayError

SAFETY_CATEGORIES = ("HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
                     "HARM_CATEGORY_DANGEROUS_CONTENT", "HARM_CATEGORY_CIVIC_INTEGRITY")
SAFETY_SETTINGS = [{"category": c, "threshold": "BLOCK_NONE"} for c in SAFETY_CATEGORIES]
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
                  "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
                  "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
                  "IMAGE_SAFETY": "content_filter", "MALFORMED_FUNCTION_CALL": "stop"}
THINKING_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
# JSON-schema keys that Gemini's Schema object does not accept.
UNSUPPORTED_SCHEMA_KEYS = frozenset({"additionalProperties", "$schema", "strict", "$id", "$ref", "$defs",
                                     "definitions", "patternProperties", "unevaluatedProperties", "examples",
                                     "const", "default", "title"})
MEDIA_PLACEHOLDER = "gateway:fetch"  # an inlineData whose bytes `prepare` fetches from `url`


def clean_schema(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: clean_schema(v) for k, v in schema.items() if k not in UNSUPPORTED_SCHEMA_KEYS}
    if isinstance(schema, list):
        return [clean_schema(v) for v in schema]
    return schema


def _image(url: str) -> dict[str, Any]:
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        return {"inlineData": {"mimeType": header[5:].split(";")[0] or "image/png", "data": data}}
    if url.startswith(("http://", "https://")):
        return {"inlineData": {"mimeType": MEDIA_PLACEHOLDER, "data": url}}
    raise RelayError.local_error(400, "image_url must be a data: URL or an http(s) URL", "invalid_image_url")


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and part.get("text"):
            parts.append({"text": part["text"]})
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str):
                parts.append(_image(url))
    return parts


def _json_object(text: Any) -> dict[str, Any]:
    if isinstance(text, Mapping):
        return dict(text)
    raw = text if isinstance(text, str) else "".join(
        p.get("text", "") for p in text or () if isinstance(p, Mapping))
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {"content": raw}
    return value if isinstance(value, dict) else {"content": value}


def convert_contents(messages: Any) -> tuple[list[dict[str, Any]], list[str]]:
    contents: list[dict[str, Any]] = []
    system: list[str] = []
    names: dict[str, str] = {}  # tool call id → function name

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(p["text"] for p in _parts(message.get("content")) if "text" in p)
        elif role == "assistant":
            parts = _parts(message.get("content"))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                names[str(call.get("id") or "")] = function.get("name") or ""
                parts.append({"functionCall": {"name": function.get("name") or "",
                                               "args": _json_object(function.get("arguments") or "{}")}})
            add("model", parts)
        elif role == "tool":
            name = names.get(str(message.get("tool_call_id") or ""), message.get("name") or "")
            add("user", [{"functionResponse": {"name": name, "response": _json_object(message.get("content"))}}])
        else:
            add("user", _parts(message.get("content")))
    return contents, system


def _tool_config(choice: Any) -> dict[str, Any] | None:
    if choice == "auto":
        return {"functionCallingConfig": {"mode": "AUTO"}}
    if choice == "none":
        return {"functionCallingConfig": {"mode": "NONE"}}
    if choice == "required":
        return {"functionCallingConfig": {"mode": "ANY"}}
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice["function"].get("name")]}}
    return None


def convert_request(req: Mapping[str, Any], model: str) -> dict[str, Any]:
    contents, system = convert_contents(req.get("messages"))
    body: dict[str, Any] = {"contents": contents, "safetySettings": SAFETY_SETTINGS}
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    config: dict[str, Any] = {}
    for ours, theirs in (("temperature", "temperature"), ("top_p", "topP"), ("top_k", "topK"),
                         ("presence_penalty", "presencePenalty"), ("frequency_penalty", "frequencyPenalty"),
                         ("seed", "seed"), ("n", "candidateCount")):
        if ours in req and req[ours] is not None:
            config[theirs] = req[ours]
    max_tokens = req.get("max_completion_tokens", req.get("max_tokens"))
    if isinstance(max_tokens, int) and max_tokens > 0:
        config["maxOutputTokens"] = max_tokens
    stop = req.get("stop")
    if stop:
        config["stopSequences"] = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)]
    fmt = req.get("response_format")
    if isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema"):
        config["responseMimeType"] = "application/json"
        schema = (fmt.get("json_schema") or {}).get("schema")
        if fmt.get("type") == "json_schema" and isinstance(schema, Mapping):
            config["responseSchema"] = clean_schema(schema)
    effort = req.get("reasoning_effort")
    if isinstance(effort, str) and effort in THINKING_BUDGETS:
        config["thinkingConfig"] = {"thinkingBudget": THINKING_BUDGETS[effort], "includeThoughts": True}
    if config:
        body["generationConfig"] = config
    functions = [t["function"] for t in req.get("tools") or () if isinstance(t, Mapping)
                 and isinstance(t.get("function"), Mapping)]
    if functions:
        body["tools"] = [{"functionDeclarations": [
            {"name": f.get("name", ""), "description": f.get("description", ""),
             **({"parameters": clean_schema(f["parameters"])} if f.get("parameters") else {})}
            for f in functions]}]
        tool_config = _tool_config(req.get("tool_choice"))
        if tool_config:
            body["toolConfig"] = tool_config
    return body


# -- answer -----------------------------------------------------------------------------------------


def usage_of(meta: Any) -> TokenUsage | None:
    if not isinstance(meta, Mapping):
        return None
    prompt = int(meta.get("promptTokenCount") or 0) + int(meta.get("toolUsePromptTokenCount") or 0)
    thoughts = int(meta.get("thoughtsTokenCount") or 0)
    completion = int(meta.get("candidatesTokenCount") or 0) + thoughts
    if not prompt and not completion:
        return None
    return TokenUsage(prompt, completion, cached_tokens=int(meta.get("cachedContentTokenCount") or 0),
                      reasoning_tokens=thoughts)


def call_id(index: int, call: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(orjson.dumps(call, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]
    return f"call_{index}_{digest}"


def candidate_parts(candidate: Mapping[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """(text, thoughts, tool calls) of one candidate."""
    text: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in (candidate.get("content") or {}).get("parts") or ():
        if "functionCall" in part:
            call = part["functionCall"]
            calls.append({"id": call_id(len(calls), call), "type": "function",
                          "function": {"name": call.get("name", ""),
                                       "arguments": orjson.dumps(call.get("args") or {}).decode()}})
        elif part.get("thought"):
            thoughts.append(part.get("text") or "")
        elif "text" in part:
            text.append(part["text"])
    return "".join(text), "".join(thoughts), calls


def finish_reason(candidate: Mapping[str, Any], calls: list[Any]) -> str | None:
    reason = candidate.get("finishReason")
    if not reason:
        return None
    if calls and reason == "STOP":
        return "tool_calls"
    return FINISH_REASONS.get(reason, "stop")


def convert_response(body: Mapping[str, Any], model: str) -> tuple[dict[str, Any], TokenUsage | None]:
    """A prompt blocked by Gemini's filters (no candidates, `promptFeedback.blockReason`) is answered
    as an empty message with finish reason `content_filter`, as OpenAI does for filtered content."""
    choices = []
    for index, candidate in enumerate(body.get("candidates") or ()):
        text, thoughts, calls = candidate_parts(candidate)
        message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
        if thoughts:
            message["reasoning_content"] = thoughts
        if calls:
            message["tool_calls"] = calls
        choices.append({"index": candidate.get("index", index), "message": message,
                        "finish_reason": finish_reason(candidate, calls) or "stop"})
    if not choices:
        choices.append({"index": 0, "message": {"role": "assistant", "content": ""},
                        "finish_reason": "content_filter"})
    usage = usage_of(body.get("usageMetadata"))
    answer: dict[str, Any] = {"id": f"chatcmpl-{body.get('responseId', '')}", "object": "chat.completion",
                              "created": int(time.time()), "model": model, "choices": choices}
    if usage is not None:
        answer["usage"] = usage.to_openai()
    return answer, usage


# -- errors -----------------------------------------------------------------------------------------

STATUS_CODES = {"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "UNAUTHENTICATED": 401,
                "PERMISSION_DENIED": 403, "NOT_FOUND": 404, "RESOURCE_EXHAUSTED": 429, "INTERNAL": 500,
                "UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504}


def convert_error(status: int, raw: bytes) -> RelayError:
    try:
        data = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, list) and data:  # streamGenerateContent without alt=sse answers a JSON array
        data = data[0]
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, Mapping):
        text = raw[:300].decode("utf-8", "replace").strip() if raw and not raw.lstrip().startswith(b"<") else ""
        return RelayError(status, text or f"bad response status code {status}", "upstream_error",
                          "bad_response_status_code")
    message = str(err.get("message") or "")
    code = str(err.get("status") or "")
    details = " ".join(str(d.get("reason") or "") for d in err.get("details") or () if isinstance(d, Mapping))
    if "API_KEY_INVALID" in details or "API key not valid" in message or "API key expired" in message:
        return RelayError(401, message, "authentication_error", "invalid_api_key")
    if code == "PERMISSION_DENIED":
        return RelayError(403, message, "permission_error", code)
    return RelayError(status or STATUS_CODES.get(code, 500), message or code, "upstream_error", code or None)
