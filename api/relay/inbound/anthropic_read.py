"""An Anthropic Messages request → the internal form (api/upstream/reasoning.py), losing nothing that
form can carry and saying what it cannot (`notices`).

Messages: `system` (a string or text blocks) and `role: "system"` messages (Claude Code sends them
mid-conversation, with tool additions and removals and a per-turn `output_config`) stay system
messages where they stand; content blocks stay apart as parts, each with its `cache_control`;
images, documents (base64 PDF, plain text, URL, custom content) → image and file parts;
`tool_result` blocks → `tool` messages (text and images, `is_error` said in the text); assistant
`thinking` blocks: a Claude signature → `thinking_blocks` as sent, one of ours (sealed) → the state
of the provider it came from (Gemini's signatures back on their calls, or the reasoning text alone).

Request: tools (anthropic_tools.py: custom tools, and the client-run Anthropic tools — bash, text editor, memory —
with their documented input schemas) → function tools; `web_search_*` → the hosted `web_search`;
other server tools are noticed; `thinking` as given, `reasoning_effort` from `output_config.effort`
or the budget; `output_config.format` → `response_format`; `output_config`'s other fields kept
under `output_config` for Claude channels.
"""
from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.inbound.anthropic_tools import cached, read_tool, tool_choice
from api.relay.inbound.base import assistant_message, collapse, note
from api.upstream.chat import ChatMessage, ChatTool, ContentPart, FileRef, ToolCall
from api.upstream.reasoning import ANTHROPIC, GEMINI, TEXT, unseal, with_gemini_signature

# Top-level fields no other provider has: noticed when the request is converted.
CLAUDE_ONLY = ("service_tier", "container", "context_management", "mcp_servers", "inference_geo")


def effort_of(budget: int) -> str:
    """The effort nearest to a thinking budget (tokens)."""
    return "low" if budget < 4096 else "medium" if budget < 16384 else "high"


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, Mapping)]


def _data_url(media_type: str, data: str) -> str:
    return f"data:{media_type};base64,{data}"


def _image(block: Mapping[str, Any], notices: list[str]) -> ContentPart | None:
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    if source.get("type") == "base64":
        url = _data_url(str(source.get("media_type") or "image/png"), str(source.get("data") or ""))
    elif source.get("type") == "url":
        url = str(source.get("url") or "")
    else:  # a Files API id: only Anthropic can read it
        note(notices, f"image.{source.get('type')}")
        return None
    return cached(block, {"type": "image_url", "image_url": {"url": url}})


def _plain_file(text: str) -> FileRef:
    return {"file_data": _data_url("text/plain", base64.b64encode(text.encode()).decode())}


def _document(block: Mapping[str, Any], notices: list[str]) -> ContentPart | None:
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    kind = source.get("type")
    file: FileRef
    if kind == "base64":
        file = {"file_data": _data_url(str(source.get("media_type") or "application/pdf"),
                                       str(source.get("data") or ""))}
    elif kind == "text":
        file = _plain_file(str(source.get("data") or ""))
    elif kind == "url":
        file = {"file_url": str(source.get("url") or "")}
    elif kind == "content":
        inner = _blocks(source.get("content"))
        if any(b.get("type") != "text" for b in inner):
            note(notices, "document.content.image")
        file = _plain_file("\n\n".join(str(b.get("text") or "") for b in inner if b.get("type") == "text"))
    else:
        note(notices, f"document.{kind}")
        return None
    part: ContentPart = {"type": "file", "file": file}
    meta = {k: block[k] for k in ("title", "context", "citations") if block.get(k) is not None}
    if meta:
        part["document"] = meta
    return cached(block, part)


def _search_result(block: Mapping[str, Any]) -> ContentPart:
    texts = "\n".join(str(b.get("text") or "") for b in _blocks(block.get("content")) if b.get("type") == "text")
    heading = f"{block.get('title') or ''} ({block.get('source') or ''})"
    return cached(block, {"type": "text", "text": f"{heading}\n{texts}"})


def content_part(block: Mapping[str, Any], notices: list[str]) -> ContentPart | None:
    """One user-side content block → an internal part (None: nothing the internal form holds)."""
    kind = block.get("type")
    if kind == "text":
        return cached(block, {"type": "text", "text": str(block.get("text") or "")})
    if kind == "image":
        return _image(block, notices)
    if kind == "document":
        return _document(block, notices)
    if kind == "search_result":
        return _search_result(block)
    if kind not in ("thinking", "redacted_thinking", "tool_reference"):
        note(notices, f"messages.{kind}")
    return None


def _tool_message(block: Mapping[str, Any], notices: list[str]) -> ChatMessage:
    raw = block.get("content")
    parts = [p for b in _blocks(raw) if (p := content_part(b, notices)) is not None]
    if block.get("is_error"):  # the internal form has no error flag: the text says it
        if parts and parts[0]["type"] == "text":
            parts[0] = {**parts[0], "text": f"Error: {parts[0]['text']}"}
        else:
            parts.insert(0, {"type": "text", "text": "Error"})
    message: ChatMessage = {"role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""),
                            "content": collapse(parts) if parts else ""}
    return cached(block, message)


def _system_parts(blocks: list[Mapping[str, Any]], block: Mapping[str, Any] | None = None) -> list[ContentPart]:
    parts = [cached(b, {"type": "text", "text": str(b.get("text") or "")}) for b in blocks if b.get("type") == "text"]
    if block is not None and parts:
        cached(block, parts[-1])
    return parts


class Reader:
    """Reads one request's messages; collects what applies request-wide on the way (tools added or
    removed mid-conversation, the last per-turn effort)."""

    def __init__(self, notices: list[str]) -> None:
        self.notices = notices
        self.added: list[Mapping[str, Any]] = []  # tool definitions added by system messages
        self.removed: set[str] = set()  # tool names removed by system messages (and not added again)
        self.effort: str | None = None

    def messages(self, body: Mapping[str, Any]) -> list[ChatMessage]:
        out: list[ChatMessage] = []
        system = body.get("system")
        if isinstance(system, str) and system:
            out.append({"role": "system", "content": system})
        elif isinstance(system, list) and (parts := _system_parts(_blocks(system))):
            out.append({"role": "system", "content": collapse(parts)})
        messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        for position, message in enumerate(messages):
            role = message.get("role")
            if role == "assistant":
                out.append(self.assistant(_blocks(message.get("content"))))
            elif role == "system":
                # A turn-scoped system message is gone once a user turn follows it.
                if not (message.get("clear_at") == "next_user_message" and position < last_user):
                    out.extend(self.system(message))
            else:
                out.extend(self.user(_blocks(message.get("content"))))
        control = body.get("cache_control")
        if isinstance(control, Mapping) and out:
            _cache_last(out[-1], control)
        return out

    def system(self, message: Mapping[str, Any]) -> list[ChatMessage]:
        config = message.get("output_config")
        if isinstance(config, Mapping) and isinstance(config.get("effort"), str):
            self.effort = config["effort"]
        blocks = _blocks(message.get("content"))
        for block in blocks:
            self.tool_change(block)
        parts = _system_parts(blocks)
        return [{"role": "system", "content": collapse(parts)}] if parts else []

    def tool_change(self, block: Mapping[str, Any]) -> None:
        kind = block.get("type")
        if kind not in ("tool_addition", "tool_removal"):
            return
        tool = block.get("tool")
        tool = tool if isinstance(tool, Mapping) else {}
        definition = tool.get("definition")
        name = str((definition.get("name") if isinstance(definition, Mapping) else tool.get("name")) or "")
        if kind == "tool_removal":
            self.removed.add(name)
            return
        self.removed.discard(name)
        if isinstance(definition, Mapping):
            self.added.append(definition)

    def user(self, blocks: list[Mapping[str, Any]]) -> list[ChatMessage]:
        """Tool results first (as `tool` messages, answering the calls before them), then the rest
        as a user message; a `mid_conv_system` block becomes a system message where it stands."""
        out = [_tool_message(b, self.notices) for b in blocks if b.get("type") == "tool_result"]
        parts: list[ContentPart] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                continue
            if kind == "mid_conv_system":
                if parts:
                    out.append({"role": "user", "content": collapse(parts)})
                    parts = []
                inner = _blocks(block.get("content"))
                for change in inner:
                    self.tool_change(change)
                system = _system_parts(inner, block)
                if system:
                    out.append({"role": "system", "content": collapse(system)})
            elif (part := content_part(block, self.notices)) is not None:
                parts.append(part)
        if parts:
            out.append({"role": "user", "content": collapse(parts)})
        return out

    def assistant(self, blocks: list[Mapping[str, Any]]) -> ChatMessage:
        parts: list[ContentPart] = []
        calls: list[ToolCall] = []
        thinking: list[dict[str, Any]] = []
        reasoning: list[str] = []
        signatures: dict[str, str] = {}  # Gemini's, by call id
        text_signature: str | None = None
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                parts.append(cached(block, {"type": "text", "text": str(block.get("text") or "")}))
            elif kind == "tool_use":
                arguments = orjson.dumps(block.get("input") or {}).decode()
                calls.append({"id": str(block.get("id") or ""), "type": "function", "function": {
                    "name": str(block.get("name") or ""), "arguments": arguments}})
            elif kind == "redacted_thinking":
                thinking.append(dict(block))
            elif kind == "thinking":
                text = str(block.get("thinking") or "")
                sealed = unseal(block.get("signature"))
                if sealed is None and block.get("signature"):
                    thinking.append(dict(block))  # Claude's own, as sent
                elif sealed is not None and sealed[0] == ANTHROPIC:
                    thinking.extend(b for b in sealed[1].get("blocks") or () if isinstance(b, dict))
                elif sealed is not None and sealed[0] == GEMINI:
                    found = sealed[1].get("calls")
                    signatures.update({str(k): str(v) for k, v in (found or {}).items()} if isinstance(found, dict)
                                      else {})
                    text_signature = text_signature or sealed[1].get("text")
                elif sealed is not None and sealed[0] == TEXT and not text:
                    text = str(sealed[1].get("text") or "")
                reasoning.append(text)
            else:
                note(self.notices, f"messages.{kind}")
        for call in calls:
            with_gemini_signature(call, signatures.get(call["id"]))
        return assistant_message(parts, calls, reasoning, thinking,
                                 text_signature if isinstance(text_signature, str) else None)


def _cache_last(message: ChatMessage, control: Mapping[str, Any]) -> None:
    """A top-level `cache_control` marks the last cacheable block: the last message's last part."""
    content = message.get("content")
    if isinstance(content, str) and content:
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(control)}]
    elif isinstance(content, list) and content and "cache_control" not in content[-1]:
        content[-1] = {**content[-1], "cache_control": dict(control)}


def read_tools(body: Mapping[str, Any], reader: Reader) -> list[ChatTool]:
    declared = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
    tools = [t for raw in [*declared, *reader.added] if (t := read_tool(raw, reader.notices)) is not None]
    if reader.removed:
        tools = [t for t in tools if (t.get("function") or {}).get("name") not in reader.removed]
    return tools


# -- reasoning and output -------------------------------------------------------------------------------


def read_output(body: Mapping[str, Any], turn_effort: str | None) -> dict[str, Any]:
    """`thinking` as given; `reasoning_effort` from the last per-turn effort, `output_config.effort`
    or the thinking budget; `output_config.format` → `response_format`; the rest of `output_config`
    under its own name (for Claude channels only)."""
    out: dict[str, Any] = {}
    thinking = body.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive", "disabled"):
        out["thinking"] = dict(thinking)
    config = body.get("output_config")
    config = config if isinstance(config, Mapping) else {}
    effort = turn_effort or config.get("effort")
    budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
    if isinstance(effort, str) and effort:
        out["reasoning_effort"] = effort
    elif isinstance(thinking, Mapping) and thinking.get("type") == "enabled" and isinstance(budget, int):
        out["reasoning_effort"] = effort_of(budget)
    fmt = config.get("format")
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), Mapping):
        out["response_format"] = {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt["schema"]}}
    rest = {k: v for k, v in config.items() if k not in ("effort", "format")}
    if rest:
        out["output_config"] = rest
    return out


def read_request(body: Mapping[str, Any], notices: list[str]) -> dict[str, Any]:
    """The whole Messages body → the internal chat body (without `stream`)."""
    reader = Reader(notices)
    out: dict[str, Any] = {"model": body.get("model"), "messages": reader.messages(body)}
    for name in ("max_tokens", "temperature", "top_p", "top_k"):
        if body.get(name) is not None:
            out[name] = body[name]
    stop = body.get("stop_sequences")
    if isinstance(stop, list) and stop:
        out["stop"] = stop
    tools = read_tools(body, reader)
    if tools:
        out["tools"] = tools
        choice = body.get("tool_choice")
        converted = tool_choice(choice)
        if converted is not None:
            out["tool_choice"] = converted
        if isinstance(choice, Mapping) and choice.get("disable_parallel_tool_use"):
            out["parallel_tool_calls"] = False
    out.update(read_output(body, reader.effort))
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, Mapping) else None
    if isinstance(user, str) and user:
        out["user"] = user
    for name in CLAUDE_ONLY:
        if body.get(name) is not None:
            note(notices, name)
    return out
