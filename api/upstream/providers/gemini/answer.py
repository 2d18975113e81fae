"""Gemini's GenerateContentResponse → the internal form (pure; streamed chunks in stream.py).

- `thought` parts → reasoning_content; other text parts → content; `functionCall` parts → tool calls
  (Gemini gives them no id unless it made one: a stable id is derived from the position and the call).
- Thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): a `functionCall` part's
  `thoughtSignature` → that tool call's `extra_content.google.thought_signature`; a text part's → the
  message's `extra_content` (api/upstream/reasoning.py), so the next turn can send each one back.
- `groundingMetadata` of a Google Search answer → `annotations` (`url_citation`, OpenAI's shape; Gemini
  counts segment offsets in bytes, converted to characters): ai.google.dev/gemini-api/docs/google-search.
- `inlineData` image parts → `message.images` (images.py: OpenRouter's shape).
- `toolCall` / `toolResponse` parts (a built-in tool's own run, shown in the tool-combination mode:
  ai.google.dev/gemini-api/docs/tool-combination) are left out of the client's answer (the search's
  result is in the text and its groundingMetadata) and gathered apart, each part whole (with its own
  `thoughtSignature`) and where it stood (`at`, below): the next turn must send them back ("Turn 2:
  Manually build history to circulate both tool and function context", the page's example; a
  `ToolCall` is passed "back to the API in a subsequent turn within a Content message, along with the
  corresponding ToolResponse": google-genai's types), which the gateway does from its kept state
  (api/relay/kept_reasoning.py) for clients that never saw them.
- usageMetadata → usage: thoughts are completion tokens, `cachedContentTokenCount` (part of the prompt)
  the cache reads, tool-use prompt tokens part of the prompt; the IMAGE modality's counts of
  `promptTokensDetails` and `candidatesTokensDetails` (ai.google.dev/api/generate-content#UsageMetadata)
  the input and output image tokens (billed at ImageRatio and ImageOutputRatio).
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError
from api.upstream.providers.gemini.images import image_entry
from api.upstream.reasoning import with_gemini_signature

FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
                  "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
                  "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
                  "IMAGE_SAFETY": "content_filter", "MALFORMED_FUNCTION_CALL": "stop"}


def modality_tokens(details: Any, modality: str) -> int:
    """The tokens of one modality in usageMetadata's `promptTokensDetails` or `candidatesTokensDetails`."""
    return sum(int(d.get("tokenCount") or 0) for d in details if isinstance(d, Mapping)
               and d.get("modality") == modality) if isinstance(details, list) else 0


def usage_of(meta: Any) -> TokenUsage | None:
    if not isinstance(meta, Mapping):
        return None
    prompt = int(meta.get("promptTokenCount") or 0) + int(meta.get("toolUsePromptTokenCount") or 0)
    thoughts = int(meta.get("thoughtsTokenCount") or 0)
    completion = int(meta.get("candidatesTokenCount") or 0) + thoughts
    if not prompt and not completion:
        return None
    return TokenUsage(prompt, completion, cached_tokens=int(meta.get("cachedContentTokenCount") or 0),
                      reasoning_tokens=thoughts,
                      image_tokens=min(modality_tokens(meta.get("promptTokensDetails"), "IMAGE"), prompt),
                      image_output_tokens=min(modality_tokens(meta.get("candidatesTokensDetails"), "IMAGE"),
                                              completion))


def call_id(index: int, call: Mapping[str, Any]) -> str:
    given = call.get("id")
    if isinstance(given, str) and given:
        return given
    digest = hashlib.sha256(orjson.dumps(call, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]
    return f"call_{index}_{digest}"


def tool_call(index: int, part: Mapping[str, Any]) -> dict[str, Any]:
    """The internal tool call of a functionCall part (with its signature)."""
    call = part["functionCall"]
    out = {"id": call_id(index, call), "type": "function",
           "function": {"name": call.get("name", ""), "arguments": orjson.dumps(call.get("args") or {}).decode()}}
    return with_gemini_signature(out, part.get("thoughtSignature"))


@dataclass(slots=True)
class Parts:
    """What a candidate's parts say, in the internal form's terms."""

    text: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    signature: str | None = None  # the message's: its text part's signature
    hidden: list[dict[str, Any]] = field(default_factory=list)  # a built-in tool's own parts: {"at", "part"}
    own: bool = False  # whether a part the client gets (text, image, call) came before

    def read(self, parts: Any, first_call: int = 0, own: bool = False) -> Parts:
        """`first_call`, `own`: the calls and whether own parts came before (a stream's earlier chunks).
        A hidden part's `at` is where the internal form can put it back: 0 before everything, else
        1 + the number of calls before it (after the text, before that call: contents.py `placed`)."""
        self.own = own
        for part in parts or ():
            if not isinstance(part, Mapping):
                continue
            if "functionCall" in part:
                self.calls.append(tool_call(first_call + len(self.calls), part))
                self.own = True
                continue
            if "toolCall" in part or "toolResponse" in part:  # a built-in tool's own run (tool combination)
                self.hidden.append({"at": 1 + first_call + len(self.calls) if self.own else 0, "part": dict(part)})
                continue
            if "inlineData" in part:
                image = image_entry(part)  # its signature stays on it
                if image is not None:
                    self.images.append(image)
                    self.own = True
                continue
            if part.get("thought"):
                self.thoughts.append(part.get("text") or "")
            elif "text" in part:
                self.text.append(part["text"])
                self.own = self.own or bool(part["text"])
            signature = part.get("thoughtSignature")
            if isinstance(signature, str) and signature and (self.signature is None or not part.get("thought")):
                self.signature = signature
        return self


def citations(metadata: Any, text: str) -> list[dict[str, Any]]:
    """url_citation annotations of a candidate's groundingMetadata, offsets in characters of `text`."""
    if not isinstance(metadata, Mapping):
        return []
    chunks = [c.get("web") or {} for c in metadata.get("groundingChunks") or () if isinstance(c, Mapping)]
    encoded = text.encode()
    out: list[dict[str, Any]] = []
    for support in metadata.get("groundingSupports") or ():
        segment = support.get("segment") or {} if isinstance(support, Mapping) else {}
        start = len(encoded[:int(segment.get("startIndex") or 0)].decode(errors="ignore"))
        end = len(encoded[:int(segment.get("endIndex") or 0)].decode(errors="ignore"))
        for index in support.get("groundingChunkIndices") or ():
            web = chunks[index] if isinstance(index, int) and 0 <= index < len(chunks) else {}
            if web.get("uri"):
                out.append({"type": "url_citation", "url_citation": {
                    "url": web["uri"], "title": web.get("title") or "", "start_index": start, "end_index": end}})
    if not out:
        out = [{"type": "url_citation", "url_citation": {"url": c["uri"], "title": c.get("title") or "",
                                                         "start_index": 0, "end_index": 0}}
               for c in chunks if c.get("uri")]
    return out


def finish_reason(candidate: Mapping[str, Any], calls: bool) -> str | None:
    reason = candidate.get("finishReason")
    if not reason:
        return None
    if calls and reason == "STOP":
        return "tool_calls"
    return FINISH_REASONS.get(reason, "stop")


def _message(candidate: Mapping[str, Any], hidden: list[dict[str, Any]] | None) -> dict[str, Any]:
    parts = Parts().read((candidate.get("content") or {}).get("parts"))
    if hidden is not None:
        hidden += parts.hidden
    text = "".join(parts.text)
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not parts.calls else None}
    if parts.thoughts:
        message["reasoning_content"] = "".join(parts.thoughts)
    if parts.calls:
        message["tool_calls"] = parts.calls
    if parts.images:
        message["images"] = parts.images
    cited = citations(candidate.get("groundingMetadata"), text)
    if cited:
        message["annotations"] = cited
    return with_gemini_signature(message, parts.signature)


def convert_response(body: Mapping[str, Any], model: str,
                     hidden: list[dict[str, Any]] | None = None) -> tuple[dict[str, Any], TokenUsage | None]:
    """A prompt blocked by Gemini's filters (no candidates, `promptFeedback.blockReason`) is answered
    as an empty message with finish reason `content_filter`, as OpenAI does for filtered content.
    `hidden` gets the first candidate's built-in tool parts (see the module's docstring)."""
    choices = []
    for index, candidate in enumerate(body.get("candidates") or ()):
        message = _message(candidate, hidden if index == 0 else None)
        choices.append({"index": candidate.get("index", index), "message": message,
                        "finish_reason": finish_reason(candidate, bool(message.get("tool_calls"))) or "stop"})
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
