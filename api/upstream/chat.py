"""The internal chat form's messages, as types: OpenAI's chat-completions messages with the additions
api/upstream/reasoning.py describes. The inbound formats (api/relay/inbound) build them, so the
checker sees every key and value they write; at run time they are plain dicts.

The adaptors (api/upstream/providers) read the form as `Mapping[str, Any]`: the same body also comes
straight from an OpenAI client, checked only for the fields the gateway reads (api/relay/validate.py).
"""
from __future__ import annotations

from typing import Any, Required, TypedDict

CacheControl = dict[str, Any]  # Anthropic's breakpoint, e.g. {"type": "ephemeral", "ttl": "1h"}
ExtraContent = dict[str, Any]  # {"google": {"thought_signature": "…"}}


class ImageURL(TypedDict, total=False):
    url: Required[str]
    detail: str


class FileRef(TypedDict, total=False):
    file_data: str  # data:<mime>;base64,…
    file_url: str
    filename: str


class InputAudio(TypedDict):
    data: str
    format: str


class ContentPart(TypedDict, total=False):
    """A part of a message's content: text, image_url, input_audio or file."""

    type: Required[str]
    text: str
    image_url: ImageURL
    input_audio: InputAudio
    file: FileRef
    document: dict[str, Any]  # a document's title, context, citations
    cache_control: CacheControl


Content = str | list[ContentPart]


class FunctionCall(TypedDict):
    name: str
    arguments: str  # JSON


class ToolCall(TypedDict, total=False):
    id: Required[str]
    type: Required[str]  # "function"
    function: Required[FunctionCall]
    extra_content: ExtraContent


class ChatMessage(TypedDict, total=False):
    role: Required[str]  # system, developer, user, assistant, tool
    content: Content | None
    name: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    reasoning_content: str
    thinking_blocks: list[dict[str, Any]]  # Claude's own blocks, as Claude made them
    extra_content: ExtraContent
    cache_control: CacheControl


class FunctionSpec(TypedDict, total=False):
    name: Required[str]
    description: str
    parameters: Any  # a JSON Schema, as the client gave it
    strict: bool


class FunctionTool(TypedDict, total=False):
    type: Required[str]  # "function"
    function: Required[FunctionSpec]
    cache_control: CacheControl


# A request's tool: a function, or a hosted tool ({"type": "web_search", "max_uses"?, "allowed_domains"?,
# "user_location"?, …}), which every target maps to its own or drops with a notice.
ChatTool = FunctionTool | dict[str, Any]
