"""The internal answer → an Anthropic `message` (and what the stream writer shares with it).

Claude's own thinking blocks go back as they are. Reasoning that has no Claude signature becomes a
thinking block whose signature is sealed (api/upstream/reasoning.py): Gemini's thought signatures (by
tool_use id, and the text's) when the answer came with them, else the visible text alone — never an
empty signature, which Claude would refuse on the next turn. Annotations (URL citations) become
`web_search_result_location` citations on the cited spans; their `encrypted_index` is sealed, so
the native path can recognise and remove them before they reach Claude. Images the model drew
(`message.images`, data: URLs: a Gemini image model's) become image blocks with a base64 source.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from api.upstream.base import TokenUsage
from api.upstream.payloads import call_arguments
from api.upstream.reasoning import GEMINI, TEXT, gemini_signature, seal

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
                "content_filter": "refusal"}
# What a citation we made carries instead of Claude's encrypted index.
OUR_INDEX = seal(TEXT, {})


def stop_reason(finish_reason: Any) -> str:
    return STOP_REASONS.get(str(finish_reason or "stop"), "end_turn")


def message_id(answer_id: Any) -> str:
    text = str(answer_id or "")
    if text.startswith("chatcmpl-msg_"):
        return text.removeprefix("chatcmpl-")
    return f"msg_{text.removeprefix('chatcmpl-') or uuid.uuid4().hex}"


def tool_id(call: Mapping[str, Any]) -> str:
    return str(call.get("id") or f"toolu_{uuid.uuid4().hex[:24]}")



def sealed_signature(reasoning: str, calls: Mapping[str, str], text: str | None) -> str:
    """The signature of a thinking block Claude did not write: Gemini's signatures when there are
    any (so the next turn gives them back to Gemini), else the reasoning text alone."""
    if calls or text:
        payload: dict[str, Any] = {}
        if calls:
            payload["calls"] = dict(calls)
        if text:
            payload["text"] = text
        return seal(GEMINI, payload)
    return seal(TEXT, {"text": reasoning})


def thinking_block(text: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": signature}


def claude_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Claude thinking blocks an internal message carries (well-formed ones only)."""
    blocks = message.get("thinking_blocks")
    return [dict(b) for b in blocks if isinstance(b, Mapping) and (
        (b.get("type") == "thinking" and b.get("signature")) or (b.get("type") == "redacted_thinking" and b.get("data"))
    )] if isinstance(blocks, list) else []


# -- usage --------------------------------------------------------------------------------------------


def answer_usage(usage: Any) -> TokenUsage:
    """An internal answer's usage, with the cache writes when the answer reports them."""
    parsed = TokenUsage.from_openai(usage) or TokenUsage()
    if not isinstance(usage, Mapping):
        return parsed
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    written = (usage.get("cache_creation_input_tokens") or details.get("cache_creation_tokens") or
               details.get("cache_write_tokens"))
    breakdown = usage.get("cache_creation")
    hour = breakdown.get("ephemeral_1h_input_tokens") if isinstance(breakdown, Mapping) else None
    if isinstance(written, int) and written > 0:
        parsed.cache_creation_tokens = written
        parsed.cache_creation_1h_tokens = hour if isinstance(hour, int) else 0
    return parsed


def usage_of(usage: TokenUsage) -> dict[str, Any]:
    """Anthropic's usage: input without the cache counts, and the cache writes by lifetime."""
    out: dict[str, Any] = {
        "input_tokens": max(0, usage.prompt_tokens - usage.cached_tokens - usage.cache_creation_tokens),
        "output_tokens": usage.completion_tokens, "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": usage.cache_creation_tokens}
    if usage.cache_creation_tokens:
        hour = min(usage.cache_creation_1h_tokens, usage.cache_creation_tokens)
        out["cache_creation"] = {"ephemeral_5m_input_tokens": usage.cache_creation_tokens - hour,
                                 "ephemeral_1h_input_tokens": hour}
    return out


# -- text and citations ------------------------------------------------------------------------------


def citation(text: str, annotation: Any) -> tuple[int, int, dict[str, Any]] | None:
    """An OpenAI `url_citation` annotation → (start, end, Anthropic citation) over `text`."""
    found = annotation.get("url_citation") if isinstance(annotation, Mapping) else None
    if not isinstance(found, Mapping) or not found.get("url"):
        return None
    start, end = found.get("start_index"), found.get("end_index")
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        start, end = 0, len(text)
    return start, end, {"type": "web_search_result_location", "url": str(found["url"]),
                        "title": found.get("title"), "cited_text": text[start:end], "encrypted_index": OUR_INDEX}


def text_blocks(text: str, annotations: Any) -> list[dict[str, Any]]:
    """Text blocks for a text and its annotations: each cited span its own block with citations."""
    found = [c for a in annotations if (c := citation(text, a)) is not None] if isinstance(annotations, list) else []
    spans = sorted(found, key=lambda span: (span[0], span[1]))
    if not spans:
        return [{"type": "text", "text": text}] if text else []
    blocks: list[dict[str, Any]] = []
    position = 0
    for start, end, cited in spans:
        if start < position and blocks and "citations" in blocks[-1]:
            blocks[-1]["citations"].append(cited)  # overlapping: cited by the span already made
            continue
        if start > position:
            blocks.append({"type": "text", "text": text[position:start]})
        blocks.append({"type": "text", "text": text[start:end], "citations": [cited]})
        position = end
    if position < len(text):
        blocks.append({"type": "text", "text": text[position:]})
    return blocks


def _texts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return text_blocks(content, message.get("annotations"))
    return [{"type": "text", "text": str(p.get("text") or "")} for p in content or ()
            if isinstance(p, Mapping) and p.get("type") == "text" and p.get("text")]


def image_blocks(images: Any) -> list[dict[str, Any]]:
    """`message.images` (or a delta's) → Anthropic image blocks ({type: base64, media_type, data})."""
    blocks: list[dict[str, Any]] = []
    for image in images if isinstance(images, list) else ():
        found = image.get("image_url") if isinstance(image, Mapping) else None
        url = found.get("url") if isinstance(found, Mapping) else None
        if isinstance(url, str) and url.startswith("data:"):
            header, _, data = url.partition(",")
            blocks.append({"type": "image", "source": {"type": "base64",
                                                       "media_type": header[5:].split(";")[0], "data": data}})
    return blocks


# -- the message ---------------------------------------------------------------------------------------


def render_message(answer: Mapping[str, Any], model: Any) -> dict[str, Any]:
    choice = (answer.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    calls = [c for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
    ids = [tool_id(c) for c in calls]
    content: list[dict[str, Any]] = claude_blocks(message)
    if not content:
        reasoning = str(message.get("reasoning_content") or "")
        signatures = {i: s for i, c in zip(ids, calls, strict=True) if (s := gemini_signature(c))}
        text_signature = gemini_signature(message)
        if reasoning or signatures or text_signature:
            content.append(thinking_block(reasoning, sealed_signature(reasoning, signatures, text_signature)))
    content.extend(_texts(message))
    content.extend(image_blocks(message.get("images")))
    for call_id, call in zip(ids, calls, strict=True):
        function = call.get("function") or {}
        content.append({"type": "tool_use", "id": call_id, "name": function.get("name") or "",
                        "input": call_arguments(function.get("arguments"))})
    return {"id": message_id(answer.get("id")), "type": "message", "role": "assistant",
            "model": answer.get("model") or model, "content": content,
            "stop_reason": stop_reason(choice.get("finish_reason")), "stop_sequence": None,
            "usage": usage_of(answer_usage(answer.get("usage")))}
