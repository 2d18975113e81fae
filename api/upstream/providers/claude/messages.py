"""The internal form's messages (api/upstream/reasoning.py) → Claude's `system` and `messages` (pure).

- Leading system and developer messages → `system` text blocks, one per part, `cache_control` kept.
- Later ones stay where they stand: as a `{"role": "system"}` message where the platform and model
  take one (right after a user turn), else as a user-turn text block marked `<system>…</system>`.
- Text parts are separate blocks (never joined); `cache_control` on a part, or on a whole message
  (its last block), is kept; images (data: → base64, http(s) → url); file parts → `document` blocks
  (base64 PDF, plain text, URL) with their title, context and citations setting.
- `tool` messages → `tool_result` blocks (text and images kept apart, `is_error`), first in the user turn.
- Assistant turns: Claude's own `thinking_blocks` first (signatures untouched), text, `tool_use`.
- Roles alternate: consecutive user (or assistant) content is merged into one turn.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from api.upstream.errors import RelayError
from api.upstream.payloads import call_arguments
from api.upstream.reasoning import is_sealed

Block = dict[str, Any]
Drop = Callable[[str], None]
SYSTEM_ROLES = ("system", "developer")
# Models that take `{"role": "system"}` messages after a user turn: Claude Opus 4.8 and later
# (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages; earlier models
# answer "role 'system' is not supported on this model").
_SYSTEM_MESSAGE_MODELS = ("claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5", "claude-fable-5",
                          "claude-mythos-5")


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one (fields of a client's body are untrusted)."""
    return value if isinstance(value, Mapping) else {}


def takes_system_messages(base_model: str) -> bool:
    return base_model.startswith(_SYSTEM_MESSAGE_MODELS)


def marked_system(text: str) -> str:
    """A system instruction carried inside a user turn, marked as such."""
    return f"<system>\n{text}\n</system>"


# -- parts → blocks -----------------------------------------------------------------------------------


def _with_cache(block: Block, part: Mapping[str, Any]) -> Block:
    control = part.get("cache_control")
    if isinstance(control, Mapping):
        block["cache_control"] = dict(control)
    return block


def image_block(url: str) -> Block:
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header[5:].split(";")[0] or "image/png"
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    if url[:8].lower().startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": url}}
    raise RelayError.local_error(400, "image_url must be a data: URL or an http(s) URL", "invalid_image_url")


def _document_source(file: Mapping[str, Any]) -> Block | None:
    url = file.get("file_url")
    if isinstance(url, str) and url[:8].lower().startswith(("http://", "https://")):
        return {"type": "url", "url": url}
    data = file.get("file_data")
    if not isinstance(data, str) or not data.startswith("data:"):
        return None
    header, _, payload = data.partition(",")
    media_type = header[5:].split(";")[0].lower()
    if media_type == "application/pdf":
        return {"type": "base64", "media_type": media_type, "data": payload}
    if media_type.startswith("text/"):
        try:
            text = base64.b64decode(payload).decode("utf-8") if ";base64" in header else payload
        except (binascii.Error, UnicodeDecodeError):
            return None
        return {"type": "text", "media_type": "text/plain", "data": text}
    return None


def _file_block(part: Mapping[str, Any], drop: Drop) -> Block | None:
    file = as_mapping(part.get("file"))
    data = file.get("file_data")
    if isinstance(data, str) and data.startswith("data:image/"):
        return image_block(data)
    source = _document_source(file)
    if source is None:
        drop("file")  # a file id, or a type Claude does not read (PDF and plain text only)
        return None
    block: Block = {"type": "document", "source": source}
    extra = as_mapping(part.get("document"))
    title = extra.get("title") or file.get("filename")
    if isinstance(title, str) and title:
        block["title"] = title
    if isinstance(extra.get("context"), str) and extra["context"]:
        block["context"] = extra["context"]
    citations = extra.get("citations")
    if isinstance(citations, Mapping):
        block["citations"] = {"enabled": bool(citations.get("enabled"))}
    elif isinstance(citations, bool):
        block["citations"] = {"enabled": citations}
    return block


def part_blocks(content: Any, drop: Drop, text_only: bool = False) -> list[Block]:
    """A message's content (a string or parts) → Claude blocks, each part its own block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        block: Block | None = None
        if kind == "text":
            text = part.get("text")
            block = {"type": "text", "text": text} if isinstance(text, str) and text else None
        elif text_only:
            drop(f"system.{kind}")
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            block = image_block(url) if isinstance(url, str) else None
        elif kind == "file":
            block = _file_block(part, drop)
        else:
            drop(f"content.{kind}")
        if block is not None:
            blocks.append(_with_cache(block, part))
    return blocks


def _message_cache(blocks: list[Block], message: Mapping[str, Any]) -> list[Block]:
    """A `cache_control` set on the whole message marks its last block."""
    if blocks and isinstance(message.get("cache_control"), Mapping) and "cache_control" not in blocks[-1]:
        blocks[-1] = _with_cache(dict(blocks[-1]), message)
    return blocks



def thinking_of(message: Mapping[str, Any]) -> list[Block]:
    """Claude's own thinking blocks on an assistant message (a block with no signature, or with one
    sealed for another provider, never goes to Claude). A streamed turn's one signed block comes back
    with its text in `reasoning_content` (the stream gave the text there and the signature apart)."""
    blocks: list[Block] = []
    given = [b for b in message.get("thinking_blocks") or () if isinstance(b, Mapping)]
    reasoning = message.get("reasoning_content")
    if (len(given) == 1 and given[0].get("type") == "thinking" and not given[0].get("thinking") and
            isinstance(reasoning, str) and reasoning):
        given = [{**given[0], "thinking": reasoning}]
    for block in given:
        if block.get("type") == "thinking":
            signature = block.get("signature")
            if isinstance(signature, str) and signature and not is_sealed(signature):
                blocks.append({"type": "thinking", "thinking": str(block.get("thinking") or ""),
                               "signature": signature})
        elif block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str) and block["data"]:
            blocks.append({"type": "redacted_thinking", "data": block["data"]})
    return blocks


def _assistant(message: Mapping[str, Any], drop: Drop) -> list[Block]:
    blocks = thinking_of(message) + _message_cache(part_blocks(message.get("content"), drop), message)
    for call in message.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        function = as_mapping(call.get("function"))
        blocks.append({"type": "tool_use", "id": str(call.get("id") or ""), "name": str(function.get("name") or ""),
                       "input": call_arguments(function.get("arguments"))})
    return blocks


def _tool_result(message: Mapping[str, Any], drop: Drop) -> Block:
    content = message.get("content")
    block: Block = {"type": "tool_result", "tool_use_id": str(message.get("tool_call_id") or "")}
    if isinstance(content, list):
        block["content"] = [b for b in part_blocks(content, drop) if b["type"] in ("text", "image", "document")]
    else:
        block["content"] = content if isinstance(content, str) else ""
    if message.get("is_error") is True:
        block["is_error"] = True
    return _with_cache(block, message)


# -- turns --------------------------------------------------------------------------------------------


class Turns:
    """Claude's messages as they are built: user and assistant turns merged, system messages apart."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, role: str, blocks: list[Block]) -> None:
        if not blocks:
            return
        last = self.items[-1] if self.items else None
        if last is not None and last["role"] == role:
            if role == "user":
                _insert_user(last["content"], blocks)
            else:
                last["content"].extend(blocks)
        else:
            self.items.append({"role": role, "content": list(blocks)})

    def placed(self, system_role: bool) -> list[dict[str, Any]]:
        """The final messages: a system message stays one where it follows a user turn and no user
        turn follows it (when `system_role`); otherwise its text joins the nearest user turn, marked."""
        out = Turns()
        items = self.items
        for i, item in enumerate(items):
            if item["role"] != "system":
                out.add(item["role"], item["content"])
                continue
            before = out.items[-1]["role"] if out.items else None
            after = items[i + 1]["role"] if i + 1 < len(items) else None
            if system_role and before == "user" and after != "user":
                out.items.append(item)
            else:
                out.add("user", [{**b, "text": marked_system(b["text"])} for b in item["content"]])
        return out.items


def _insert_user(content: list[Block], blocks: list[Block]) -> None:
    """Tool results go before any other block of a user turn (Claude wants them first)."""
    for block in blocks:
        if block["type"] == "tool_result":
            at = next((i for i, b in enumerate(content) if b["type"] != "tool_result"), len(content))
            content.insert(at, block)
        else:
            content.append(block)


def convert_messages(messages: Any, drop: Drop, system_role: bool) -> tuple[list[Block], list[dict[str, Any]]]:
    """(system blocks, Claude messages)."""
    system: list[Block] = []
    turns = Turns()
    leading = True
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in SYSTEM_ROLES:
            blocks = _message_cache(part_blocks(message.get("content"), drop, text_only=True), message)
            if leading:
                system.extend(blocks)
            else:
                turns.add("system", blocks)
            continue
        leading = False
        if role == "tool":
            turns.add("user", [_tool_result(message, drop)])
        elif role == "assistant":
            turns.add("assistant", _assistant(message, drop))
        else:
            turns.add("user", _message_cache(part_blocks(message.get("content"), drop), message))
    return system, turns.placed(system_role)


def strip_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without thinking blocks (sent when thinking is off for this request)."""
    out = []
    for message in messages:
        if message["role"] == "assistant":
            content = [b for b in message["content"] if b["type"] not in ("thinking", "redacted_thinking")]
            if content:
                out.append({**message, "content": content})
        else:
            out.append(message)
    return _merge_users(out)


def _merge_users(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if out and message["role"] == "user" and out[-1]["role"] == "user":
            out[-1] = {**out[-1], "content": [*out[-1]["content"], *message["content"]]}
        else:
            out.append(message)
    return out


def open_tool_turn_lacks_thinking(messages: list[dict[str, Any]]) -> bool:
    """Whether the last assistant turn calls a tool without starting with a thinking block (Claude
    refuses that with a thinking budget, where every turn thinks: the turn's thinking must come back
    with its tool results — build-with-claude/extended-thinking, "Preserving thinking blocks")."""
    for message in reversed(messages):
        if message["role"] == "assistant":
            content = message["content"]
            calls = any(b["type"] == "tool_use" for b in content)
            return calls and content[0]["type"] not in ("thinking", "redacted_thinking")
    return False


def flatten_open_tool_turn(messages: list[Any]) -> list[Any]:
    """The last assistant turn's tool calls, and the results that answer them, as plain text: a turn
    another model answered (a fallback) or whose thinking the client dropped carries no thinking of
    Claude's, and a model that thinks every turn refuses such a tool turn; as text it is history, which
    every model accepts (thinking never goes back forged). The messages before it are untouched."""
    last = next((i for i in range(len(messages) - 1, -1, -1)
                 if isinstance(messages[i], Mapping) and messages[i].get("role") == "assistant"), None)
    if last is None or not isinstance(messages[last].get("content"), list):
        return messages
    names: dict[str, str] = {}
    content: list[Block] = []
    for block in messages[last]["content"]:
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            names[str(block.get("id"))] = str(block.get("name"))
            arguments = orjson.dumps(block.get("input") or {}).decode()
            content.append({"type": "text", "text": f"[called the tool {block.get('name')} with {arguments}]"})
        else:
            content.append(block)
    out = [*messages[:last], {**messages[last], "content": content}]
    for message in messages[last + 1:]:
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
            out.append(message)
            continue
        blocks: list[Block] = []
        for block in message["content"]:
            if not isinstance(block, Mapping) or block.get("type") != "tool_result":
                blocks.append(block)
                continue
            name = names.get(str(block.get("tool_use_id")), "tool")
            result = block.get("content")
            parts = [result] if isinstance(result, str) else [
                str(b.get("text", "")) for b in result or () if isinstance(b, Mapping) and b.get("type") == "text"]
            blocks.append({"type": "text", "text": f"[the tool {name} returned: {' '.join(parts)}]"})
            if isinstance(result, list):
                blocks.extend(b for b in result if isinstance(b, dict) and b.get("type") in ("image", "document"))
        out.append({**message, "content": blocks})
    return out

