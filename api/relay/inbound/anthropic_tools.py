"""The tools of an Anthropic Messages request → internal tools.

Custom tools → function tools (with `strict` and `cache_control`). Anthropic's client-run tools
(bash, text editor, memory: the client executes them, Claude only knows their shape) → function
tools with their documented input schemas, so any model may call them. `web_search_*` (any version)
→ the hosted `{"type": "web_search"}` with its limits. The other server tools (web fetch, code
execution, tool search, …) only Anthropic runs: left out, and said (`notices`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, overload

from api.relay.inbound.base import note
from api.upstream.chat import ChatMessage, ChatTool, ContentPart, FunctionSpec, FunctionTool

_STR = {"type": "string"}
_INT = {"type": "integer"}
_LINES = {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2}
# The input schemas of Anthropic's client-run tools, as documented (platform.claude.com/docs/
# agents-and-tools/tool-use/{bash-tool,text-editor-tool,memory-tool}): the client runs them, so any
# model may call them once it is told their shape.
BASH_SCHEMA = {"type": "object", "properties": {"command": _STR, "restart": {"type": "boolean"}}}
EDITOR_COMMANDS = ["view", "create", "str_replace", "insert"]
MEMORY_SCHEMA = {"type": "object", "required": ["command"], "properties": {
    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "delete", "rename"]},
    "path": _STR, "view_range": _LINES, "file_text": _STR, "old_str": _STR, "new_str": _STR, "insert_line": _INT,
    "insert_text": _STR, "old_path": _STR, "new_path": _STR}}
DESCRIPTIONS = {
    "bash": "Run a command in a persistent bash session (restart: true restarts the session).",
    "editor": "View, create and edit text files: view (path, view_range), create (path, file_text), "
              "str_replace (path, old_str, new_str), insert (path, insert_line, new_str).",
    "memory": "Read and write files under /memories that persist across conversations.",
}


Cacheable = ContentPart | ChatMessage | FunctionTool | dict[str, Any]  # a part, a tool message or a tool


@overload
def cached(block: Mapping[str, Any], part: ContentPart) -> ContentPart: ...
@overload
def cached(block: Mapping[str, Any], part: ChatMessage) -> ChatMessage: ...
@overload
def cached(block: Mapping[str, Any], part: FunctionTool) -> FunctionTool: ...
@overload
def cached(block: Mapping[str, Any], part: dict[str, Any]) -> dict[str, Any]: ...


def cached(block: Mapping[str, Any], part: Cacheable) -> Cacheable:
    control = block.get("cache_control")
    if isinstance(control, Mapping):
        part["cache_control"] = dict(control)
    return part


def _function(name: str, description: str, schema: Any, tool: Mapping[str, Any]) -> FunctionTool:
    function: FunctionSpec = {"name": name, "parameters": schema if isinstance(schema, Mapping) else {
        "type": "object", "properties": {}}}
    if description:
        function["description"] = description
    if isinstance(tool.get("strict"), bool):
        function["strict"] = tool["strict"]
    return cached(tool, {"type": "function", "function": function})


def _editor_schema(kind: str) -> dict[str, Any]:
    commands = EDITOR_COMMANDS + (["undo_edit"] if kind in ("text_editor_20241022", "text_editor_20250124") else [])
    return {"type": "object", "required": ["command", "path"], "properties": {
        "command": {"type": "string", "enum": commands}, "path": _STR, "view_range": _LINES, "file_text": _STR,
        "old_str": _STR, "new_str": _STR, "insert_line": _INT}}


def read_tool(tool: Mapping[str, Any], notices: list[str]) -> ChatTool | None:
    """One Messages tool → an internal tool (None, noticed, for a server tool only Anthropic runs)."""
    kind = str(tool.get("type") or "custom")
    name = str(tool.get("name") or "")
    if kind == "custom":
        return _function(name, str(tool.get("description") or ""), tool.get("input_schema"), tool)
    if kind.startswith("web_search_"):
        hosted: dict[str, Any] = {"type": "web_search"}
        for key in ("max_uses", "allowed_domains", "blocked_domains", "user_location"):
            if tool.get(key) is not None:
                hosted[key] = tool[key]
        return hosted
    if kind.startswith("bash_"):
        return _function(name or "bash", DESCRIPTIONS["bash"], BASH_SCHEMA, tool)
    if kind.startswith("text_editor_"):
        return _function(name or "str_replace_based_edit_tool", DESCRIPTIONS["editor"], _editor_schema(kind), tool)
    if kind.startswith("memory_"):
        return _function(name or "memory", DESCRIPTIONS["memory"], MEMORY_SCHEMA, tool)
    note(notices, f"tools.{kind}")
    return None


def tool_choice(choice: Any) -> Any:
    if not isinstance(choice, Mapping):
        return None
    if choice.get("type") == "tool":
        return {"type": "function", "function": {"name": str(choice.get("name") or "")}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(choice.get("type")))
