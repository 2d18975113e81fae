"""The pipeline's answer (internal chat form) → Responses output items, and usage both ways.

A turn's provider state travels in the reasoning item's `encrypted_content`, which Codex asks for
(`include: ["reasoning.encrypted_content"]`, codex-rs/core/src/client.rs) and sends back with the
next request: Claude's thinking blocks (ANTHROPIC), Gemini's thought signatures by call id
(GEMINI), or the visible reasoning alone (TEXT), sealed by api/upstream/reasoning.py. Its `summary`
is the visible reasoning (`reasoning_content`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from api.relay.inbound.responses_tools import ToolMap, new_id
from api.upstream.base import TokenUsage
from api.upstream.reasoning import ANTHROPIC, GEMINI, TEXT, gemini_signature, seal

INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


@dataclass
class ProviderState:
    """A turn's reasoning state as it is gathered (whole, or as a stream brings it)."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)
    text_signature: str | None = None

    def __bool__(self) -> bool:
        return bool(self.blocks or self.calls or self.text_signature)

    def sealed(self, text: str) -> str | None:
        """The envelope for a reasoning item: the provider's own state, else the visible text."""
        if self.blocks:
            return seal(ANTHROPIC, {"blocks": self.blocks})
        if self.calls or self.text_signature:
            payload: dict[str, Any] = {"calls": dict(self.calls)}
            if self.text_signature:
                payload["text"] = self.text_signature
            return seal(GEMINI, payload)
        return seal(TEXT, {"text": text}) if text else None

    @classmethod
    def of(cls, message: Mapping[str, Any]) -> ProviderState:
        blocks = [dict(b) for b in message.get("thinking_blocks") or () if isinstance(b, Mapping)]
        calls = {str(c.get("id")): sig for c in message.get("tool_calls") or ()
                 if (sig := gemini_signature(c)) is not None}
        return cls(blocks, calls, gemini_signature(message))


def reasoning_item(text: str, state: ProviderState, status: str = "completed") -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": new_id("rs"),
                            "summary": [{"type": "summary_text", "text": text}] if text else [],
                            "status": status}
    sealed = state.sealed(text)
    if sealed is not None:
        item["encrypted_content"] = sealed
    return item


def message_item(text: str, status: str = "completed", annotations: list[dict[str, Any]] | None = None
                 ) -> dict[str, Any]:
    return {"type": "message", "id": new_id("msg"), "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": annotations or []}]}


def annotations_of(given: Any) -> list[dict[str, Any]]:
    """Chat `url_citation` annotations (web search citations) → the output text's annotations
    (openai-python types/responses/response_output_text.py `AnnotationURLCitation`)."""
    out: list[dict[str, Any]] = []
    for annotation in given if isinstance(given, list) else ():
        cited = annotation.get("url_citation") if isinstance(annotation, Mapping) else None
        if isinstance(cited, Mapping) and cited.get("url"):
            out.append({"type": "url_citation", "start_index": int(cited.get("start_index") or 0),
                        "end_index": int(cited.get("end_index") or 0), "url": str(cited["url"]),
                        "title": str(cited.get("title") or "")})
    return out


def text_of(content: Any) -> str:
    """An answer's content (a string, or parts) as the one text of an output message."""
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text") or "") for p in content or () if isinstance(p, Mapping)
                   and p.get("type") == "text")


def output_items(message: Mapping[str, Any], tools: ToolMap) -> list[dict[str, Any]]:
    """One answer message → its reasoning, message and tool-call items, in that order."""
    output: list[dict[str, Any]] = []
    reasoning = str(message.get("reasoning_content") or "")
    state = ProviderState.of(message)
    if reasoning or state:
        output.append(reasoning_item(reasoning, state))
    text = text_of(message.get("content"))
    if text:
        output.append(message_item(text, annotations=annotations_of(message.get("annotations"))))
    output.extend(tools.call_item(call) for call in message.get("tool_calls") or () if isinstance(call, Mapping))
    return output


def usage_of(usage: TokenUsage) -> dict[str, Any]:
    """TokenUsage → a Responses `usage` object (openai-python types/responses/response_usage.py)."""
    return {"input_tokens": usage.prompt_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens,
                                     "cache_write_tokens": usage.cache_creation_tokens},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.total_tokens}


def read_usage(usage: Any) -> TokenUsage | None:
    """A Responses `usage` object → TokenUsage (None when absent or all zero)."""
    if not isinstance(usage, Mapping):
        return None
    prompt, completion = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    if not prompt and not completion:
        return None
    details = usage.get("input_tokens_details") or {}
    cached, written = int(details.get("cached_tokens") or 0), int(details.get("cache_write_tokens") or 0)
    reasoning = int((usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)
    return TokenUsage(prompt, completion, cached, reasoning, cache_creation_tokens=written)
