"""What each Claude model takes, for the fakes of Anthropic, Bedrock and Vertex AI, each rule with
where it is documented (short references are pages under https://platform.claude.com/docs/en/);
the signatures of the thinking blocks the fakes emit; a content block as Anthropic's stream events.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass, replace
from typing import Any

import orjson

DOCS = "https://platform.claude.com/docs/en"
SIGNING_KEY = b"fake-claude-signing-key"

EFFORTS_45 = ("low", "medium", "high")
EFFORTS_46 = ("low", "medium", "high", "max")
EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class Model:
    """What one model takes (DOCS/about-claude/models/overview and each model's migration guide)."""

    max_output: int
    budget: bool = False  # thinking.type "enabled" + budget_tokens (extended-thinking)
    adaptive: bool = False  # thinking.type "adaptive" (adaptive-thinking)
    disable: bool = True  # thinking.type "disabled" (refused on Opus 5.5, Sonnet 5.5, Fable: opus-5-5/migration-guide)
    off_effort_max: str | None = None  # disabled only up to this effort (Opus 5, Haiku 5.5: opus-5/migration-guide)
    thinks_by_default: bool = False  # 5.x (sonnet-5/overview: "adaptive thinking on by default")
    efforts: tuple[str, ...] = ()  # output_config.effort (effort; Sonnet 4.5 takes none)
    sampling: str = "any"  # "exclusive": temperature+top_p refused (4.5, 4.6); "none": 4.7+ (opus-4-7 guide)
    never_forced: bool = False  # forced tool_choice refused outright (opus-5-5/whats-new-opus-5-5)
    system_messages: bool = False  # role "system" mid-conversation (Opus 4.8+: mid-conversation-system-messages)
    structured: bool = False  # output_config.format (structured-outputs: 4.5 and later)
    prefill: bool = True  # a final assistant turn (refused from 4.6: sonnet-5-5/migration-guide)


BUDGET = Model(64000, budget=True)
MODEL_45 = Model(64000, budget=True, sampling="exclusive", structured=True)
MODEL_46 = Model(128000, budget=True, adaptive=True, efforts=EFFORTS_46, sampling="exclusive", structured=True,
                 prefill=False)
MODEL_47 = Model(128000, adaptive=True, efforts=EFFORTS, sampling="none", structured=True, prefill=False)
MODEL_5 = Model(128000, adaptive=True, efforts=EFFORTS, sampling="none", structured=True, prefill=False,
                thinks_by_default=True, off_effort_max="high", system_messages=True)
MODEL_ALWAYS = Model(128000, adaptive=True, efforts=EFFORTS, sampling="none", structured=True, prefill=False,
                     thinks_by_default=True, disable=False, never_forced=True, system_messages=True)
MODELS: dict[str, Model] = {
    "claude-3-haiku": Model(4096), "claude-3-opus": Model(4096), "claude-3-5": Model(8192),
    "claude-3-7-sonnet": BUDGET, "claude-sonnet-4": BUDGET, "claude-opus-4": Model(32000, budget=True),
    "claude-sonnet-4-5": MODEL_45, "claude-haiku-4-5": MODEL_45, "claude-opus-4-5": Model(
        64000, budget=True, sampling="exclusive", structured=True, efforts=EFFORTS_45),
    "claude-opus-4-6": MODEL_46, "claude-sonnet-4-6": replace(MODEL_46, max_output=64000),
    "claude-opus-4-7": MODEL_47, "claude-opus-4-8": replace(MODEL_47, system_messages=True),
    "claude-opus-5": MODEL_5, "claude-sonnet-5": MODEL_5, "claude-haiku-5": MODEL_5,
    "claude-opus-5-5": MODEL_ALWAYS, "claude-sonnet-5-5": MODEL_ALWAYS, "claude-fable-5": MODEL_ALWAYS,
}


def model_rules(model: str) -> Model:
    """The rules of a model named as on any platform (`us.anthropic.…-v1:0`, `…@20250514`)."""
    name = re.sub(r"^(?:[a-z]+\.)?anthropic\.|-v\d+(?::\d+)?$|@.*$", "", model)
    name = re.sub(r"-v\d+(?::\d+)?$", "", name)
    found = max((p for p in MODELS if name.startswith(p)), key=len, default=None)
    assert found is not None, f"the fake knows no model {model}"
    return MODELS[found]


def sign(text: str) -> str:
    """The signature of a thinking block the fakes emit (valid on Anthropic, Bedrock and Vertex alike)."""
    return base64.b64encode(hmac.new(SIGNING_KEY, text.encode(), hashlib.sha256).digest()).decode()


def thinking_on(body: dict[str, Any], rules: Model) -> bool:
    kind = (body.get("thinking") or {}).get("type")
    return kind in ("enabled", "adaptive") or (rules.thinks_by_default and kind != "disabled")



SEARCH_URL, SEARCH_TITLE = "https://example.com/weather", "Weather today"


def web_search_blocks() -> list[dict[str, Any]]:
    """A web search the model ran itself, and a cited sentence (web-search-tool, "Response")."""
    return [
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "weather"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            {"type": "web_search_result", "url": SEARCH_URL, "title": SEARCH_TITLE, "encrypted_content": "enc",
             "page_age": "1 day"}]},
        {"type": "text", "text": "It is sunny.", "citations": [
            {"type": "web_search_result_location", "url": SEARCH_URL, "title": SEARCH_TITLE,
             "encrypted_index": "idx", "cited_text": "Sunny all day."}]},
    ]


def block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    """One content block as stream events (streaming: content_block_start, deltas, stop)."""
    kind = block["type"]
    empty = {"text": {"type": "text", "text": ""}, "thinking": {"type": "thinking", "thinking": ""},
             "tool_use": {**block, "input": {}}, "server_tool_use": {**block, "input": {}}}.get(kind, block)
    events: list[dict[str, Any]] = [{"type": "content_block_start", "index": index, "content_block": empty}]

    def delta(payload: dict[str, Any]) -> None:
        events.append({"type": "content_block_delta", "index": index, "delta": payload})

    if kind == "text":
        for citation in block.get("citations") or ():
            delta({"type": "citations_delta", "citation": citation})
        words = block["text"].split(" ")
        for i, word in enumerate(words):
            delta({"type": "text_delta", "text": word + (" " if i < len(words) - 1 else "")})
    elif kind == "thinking":
        delta({"type": "thinking_delta", "thinking": block["thinking"]})
        delta({"type": "signature_delta", "signature": block["signature"]})
    elif kind in ("tool_use", "server_tool_use"):
        raw = orjson.dumps(block["input"]).decode()
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2:]):
            delta({"type": "input_json_delta", "partial_json": part})
    events.append({"type": "content_block_stop", "index": index})
    return events
