"""Reasoning state that must survive a conversion, and the internal form that carries it.

The pipeline's internal form is OpenAI's chat-completions body, with these additions (every target
adaptor maps them to its provider's fields or removes them; none reaches a provider that does not
take it):

Messages
- `system`/`developer` messages stay where they stand (a system message mid-conversation is not
  turned into a user message); content is a string or a list of parts kept apart (never joined).
- parts: `{"type": "text", "text"}`, `{"type": "image_url", "image_url": {"url"}}`,
  `{"type": "file", "file": {"file_data": "data:<mime>;base64,…", "filename"?}}` or
  `{"type": "file", "file": {"file_url": "https://…"}}` (documents, PDFs), each with an optional
  `cache_control` (Anthropic's breakpoint, e.g. `{"type": "ephemeral", "ttl": "1h"}`) and, for a
  document, an optional `document: {"title", "context", "citations"}`.
- `reasoning_content`: the turn's visible reasoning text, whoever produced it.
- `thinking_blocks`: Claude's own blocks, `{"type": "thinking", "thinking", "signature"}` or
  `{"type": "redacted_thinking", "data"}`, signatures as Claude made them (valid on Anthropic,
  Bedrock and Vertex alike). Only ever sent back to Claude.
- `tool_calls[i].extra_content.google.thought_signature`: the Gemini signature of that call's
  `functionCall` part (Gemini's own OpenAI-compatible convention); `extra_content.google.
  thought_signature` on the message: the signature of its first text part. Only sent back to Gemini.
- `gemini_server_parts` on an assistant message: the `toolCall`/`toolResponse` parts of Gemini's
  tool-combination mode, whole, each `{"at", "part"}` (api/upstream/providers/gemini/answer.py),
  put back by the gateway from its kept state (api/relay/kept_reasoning.py). Only sent to the
  Gemini API in that mode.
- `tool` messages: `content` may be a list of parts (text, images); `cache_control` allowed.

Request
- `tools[i]` may carry `cache_control`; hosted tools are `{"type": "web_search", …}` (OpenAI's
  Responses name; `max_uses`, `allowed_domains`, `user_location` when given): each target maps it
  to its own (Claude `web_search_20250305`, Gemini `googleSearch`) or drops it with a notice.
- `reasoning_effort` (`none` … `max`), and `thinking` as Claude spells it (`{"type": "enabled",
  "budget_tokens"}`, `{"type": "adaptive"}`, `{"type": "disabled"}`) when the client gave a budget or a
  switch: the target's capability row (api/services/configuration/capabilities.py) decides which one it sends.
- `top_k`; `response_format` (`json_schema` with a JSON Schema, never Gemini's dialect).

Stream chunks carry the same additions in `delta`: `reasoning_content`, `thinking_blocks` (a
block's `signature` or a redacted block arrives as its own delta: `{"type": "thinking",
"thinking": "", "signature": "…", "index": n}`, `index` numbering the turn's blocks, which the
openai SDK's stream accumulator needs once there are two), and `extra_content` on tool-call deltas.

Formats with no field of their own for another provider's state (a Claude client receiving Gemini's
signatures, a Gemini client receiving Claude's thinking blocks, a Responses client receiving either)
get it sealed in an opaque string the client sends back unchanged: a thinking block's `signature`,
a part's `thoughtSignature`, a reasoning item's `encrypted_content`. `seal` makes one; `unseal`
reads one back (None for anything else, which then belongs to the provider that made it). A sealed
value is not base64, which google-genai requires of a `thoughtSignature`: the Gemini format wraps it
(api/relay/inbound/gemini_read.py `wrap`/`unwrap`).
"""
from __future__ import annotations

import base64
import binascii
from typing import Any, overload

import orjson

from api.upstream.chat import ChatMessage, ToolCall

SEAL_PREFIX = "gwr1."
# Which provider a sealed state goes back to.
ANTHROPIC = "anthropic"  # thinking blocks (payload: {"blocks": [...]})
GEMINI = "gemini"  # thought signatures (payload: {"calls": {call id: signature}, "text": signature})
TEXT = "text"  # visible reasoning only, nobody's signature (payload: {"text": ...})
# What Gemini 3 takes in place of a thought signature on a function call it did not make itself
# (history from another model): ai.google.dev/gemini-api/docs/thought-signatures (FAQ).
GEMINI_SKIP_SIGNATURE = "skip_thought_signature_validator"
GEMINI_SERVER_PARTS = "gemini_server_parts"  # an assistant message's hidden tool-combination parts
# The families of adaptors whose state is kept for clients that drop it (Adaptor.reasoning_family).
CLAUDE_FAMILY = "claude"
GEMINI_FAMILY = "gemini"


def seal(provider: str, payload: dict[str, Any]) -> str:
    raw = orjson.dumps({"p": provider, "d": payload})
    return SEAL_PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unseal(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(provider, payload) of a sealed state; None when `value` is not one of ours."""
    if not isinstance(value, str) or not value.startswith(SEAL_PREFIX):
        return None
    text = value[len(SEAL_PREFIX):]
    try:
        data = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("p"), str) or not isinstance(data.get("d"), dict):
        return None
    return data["p"], data["d"]


def is_sealed(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(SEAL_PREFIX)


def gemini_signature(call: Any) -> str | None:
    """The Gemini thought signature recorded on an internal tool call (or message), if any."""
    if not isinstance(call, dict):
        return None
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    signature = google.get("thought_signature") if isinstance(google, dict) else None
    return signature if isinstance(signature, str) and signature else None


Signed = ToolCall | ChatMessage | dict[str, Any]  # a tool call, a message, or an answer's (a delta, …)


@overload
def with_gemini_signature(target: ToolCall, signature: str | None) -> ToolCall: ...
@overload
def with_gemini_signature(target: ChatMessage, signature: str | None) -> ChatMessage: ...
@overload
def with_gemini_signature(target: dict[str, Any], signature: str | None) -> dict[str, Any]: ...


def with_gemini_signature(target: Signed, signature: str | None) -> Signed:
    """`target` (a tool call or a message) carrying a Gemini thought signature."""
    if signature:
        target["extra_content"] = {"google": {"thought_signature": signature}}
    return target
