"""The tools of a Responses request in the internal (chat) form, and the model's calls back in the
Responses items the client expects.

What clients send, as Codex and the openai SDK define it:
- `function` tools: `{name, description, parameters, strict, defer_loading}` (openai-python
  types/responses/function_tool_param.py);
- `namespace` groups: `{type: "namespace", name, description, tools: [function | custom]}`
  (openai-python types/responses/namespace_tool_param.py; Codex codex-rs/tools/src/responses_api.rs
  `ResponsesApiNamespace`, used for MCP servers and Codex's own tool groups). Codex routes a call by
  the `namespace` and `name` fields of the `function_call` item taken apart
  (codex-rs/core/src/tools/router.rs `build_tool_call`: `ToolName::new(namespace, name)`), and
  `functions` is the default namespace whose members may be called by their bare name
  (codex-rs/protocol/src/tool_name.rs `DEFAULT_FUNCTION_NAMESPACE`);
- `custom` (freeform) tools: `{name, description, format: {type: "text"} | {type: "grammar",
  syntax: "lark" | "regex", definition}}` answered by `custom_tool_call` items with a raw `input`
  string (openai-python types/responses/custom_tool_param.py, response_custom_tool_call.py; Codex's
  freeform apply_patch is one, codex-rs/tools/src/responses_api.rs `FreeformTool`);
- `local_shell`, answered by `local_shell_call` items whose `action` is `{type: "exec", command,
  env, timeout_ms, user, working_directory}` (openai-python types/responses/response_input_item_param.py
  `LocalShellCallAction`; Codex codex-rs/protocol/src/models.rs `LocalShellExecAction`);
- `tool_search` run by the client (`execution: "client"`), a function answered by
  `tool_search_call` items;
- hosted tools OpenAI runs itself: `web_search` (and `web_search_preview`, dated variants), which
  the internal form carries as `{"type": "web_search"}`; the others (file_search, image_generation,
  code_interpreter, computer_use_preview, mcp, shell, apply_patch, server-run tool_search) no other
  provider runs, so a converted request leaves them out with a notice.

Tools may also come inside `additional_tools` input items (Codex's "Responses Lite" sends its tools
that way, codex-rs/tools/src/tool_spec.rs `create_tools_json_for_responses_lite`): they are read
like the top-level ones.
"""
from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from api.upstream.chat import ChatTool, FunctionSpec

DEFAULT_NAMESPACE = "functions"  # Codex: members callable by their bare name
NAMESPACE_JOIN = "__"  # flat name of a namespaced tool: <namespace>__<name> (Codex's own MCP spelling)
MAX_NAME = 64  # the strictest provider limit on a tool name (OpenAI, Claude, Gemini)
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
WEB_SEARCH_TYPES = re.compile(r"^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$")
# Fields of OpenAI's web_search tool the internal form carries (reasoning.py); the others are noted.
WEB_SEARCH_KEPT = {"type", "filters", "user_location"}
# Settings every provider's search has anyway (live web access: Codex sends it on every request).
WEB_SEARCH_DEFAULTS: dict[str, Any] = {"external_web_access": True}
LOCAL_SHELL = "local_shell"
# Tool search run by the client (Codex: it loads deferred MCP tools, codex-rs/tools/src/tool_spec.rs
# `ToolSpec::ToolSearch`): a call is a `tool_search_call` item with an `arguments` object, answered
# by a `tool_search_output` item listing the tools it loaded (openai-python
# types/responses/response_tool_search_call.py, tool_search_tool_param.py).
TOOL_SEARCH = "tool_search"
LOCAL_SHELL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "array", "items": {"type": "string"},
                    "description": "The command and its arguments, e.g. [\"ls\", \"-la\"]."},
        "working_directory": {"type": "string", "description": "The directory to run the command in."},
        "timeout_ms": {"type": "integer", "description": "How long the command may run, in milliseconds."},
        "env": {"type": "object", "additionalProperties": {"type": "string"},
                "description": "Environment variables to set for the command."},
        "user": {"type": "string", "description": "The user to run the command as."},
    },
    "required": ["command"],
}


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def flat_name(name: str, namespace: str | None = None) -> str:
    """The one function name a provider without namespaces sees for a (namespace, name) pair:
    safe characters only, at most 64 of them (a hash keeps long names apart)."""
    full = name if not namespace or namespace == DEFAULT_NAMESPACE else f"{namespace}{NAMESPACE_JOIN}{name}"
    safe = _NAME_UNSAFE.sub("_", full) or "tool"
    if len(safe) > MAX_NAME:
        digest = hashlib.sha1(full.encode()).hexdigest()[:8]
        safe = f"{safe[:MAX_NAME - 9]}_{digest}"
    return safe


@dataclass(frozen=True, slots=True)
class Declared:
    """A tool as the client declared it: what its calls are answered as."""

    kind: str  # "function", "custom" or "local_shell"
    name: str
    namespace: str | None = None


def custom_description(description: str, fmt: Any) -> str:
    """A custom tool's description for a function-calling model: its one string parameter, and the
    grammar that string must follow."""
    text = description.strip()
    if isinstance(fmt, Mapping) and fmt.get("type") == "grammar" and fmt.get("definition"):
        syntax = str(fmt.get("syntax") or "lark")
        rule = (f"Put the whole input in the `input` string. It must follow this {syntax} grammar "
                f"exactly:\n```\n{fmt['definition']}\n```")
    else:
        rule = "Put the whole input, as free-form text, in the `input` string."
    return f"{text}\n\n{rule}" if text else rule


class ToolMap:
    """The request's tools in the internal form, and the way back from a flat name to the tool."""

    def __init__(self, notices: list[str]) -> None:
        self.notices = notices
        self.tools: list[ChatTool] = []
        self.declared: dict[str, Declared] = {}

    def read(self, tools: Iterable[Any]) -> None:
        for tool in tools:
            if isinstance(tool, Mapping):
                self._tool(tool)

    def _tool(self, tool: Mapping[str, Any], namespace: str | None = None, group: str = "") -> None:
        kind = str(tool.get("type") or "")
        if kind == "namespace" and namespace is None:
            inner = tool.get("tools")
            for member in inner if isinstance(inner, list) else ():
                if isinstance(member, Mapping):
                    self._tool(member, str(tool.get("name") or ""), str(tool.get("description") or ""))
        elif kind in ("function", "custom"):
            self._function(tool, kind, namespace, group)
        elif kind == LOCAL_SHELL:
            self._add(Declared(LOCAL_SHELL, LOCAL_SHELL), {
                "name": LOCAL_SHELL, "description": "Run a command on the user's machine and read its output.",
                "parameters": LOCAL_SHELL_PARAMETERS})
        elif kind == TOOL_SEARCH and tool.get("execution") == "client":
            self._add(Declared(TOOL_SEARCH, TOOL_SEARCH), {
                "name": TOOL_SEARCH, "description": str(tool.get("description") or "Search for more tools."),
                "parameters": tool.get("parameters") or {"type": "object", "properties": {}}})
        elif WEB_SEARCH_TYPES.match(kind):
            self._web_search(tool)
        else:
            self.note(f"tools.{kind or 'unknown'}")

    def _function(self, tool: Mapping[str, Any], kind: str, namespace: str | None, group: str) -> None:
        name = str(tool.get("name") or "")
        description = str(tool.get("description") or "")
        if kind == "custom":
            description = custom_description(description, tool.get("format"))
            parameters: Any = {"type": "object", "properties": {"input": {"type": "string"}},
                               "required": ["input"], "additionalProperties": False}
        else:
            parameters = tool.get("parameters") or {"type": "object", "properties": {}}
        if namespace and namespace != DEFAULT_NAMESPACE and group.strip():
            description = f"{description}\n\n({namespace}: {group.strip()})" if description else group.strip()
        function: FunctionSpec = {"name": flat_name(name, namespace), "description": description,
                                  "parameters": parameters}
        if kind == "function" and isinstance(tool.get("strict"), bool):
            function["strict"] = tool["strict"]
        self._add(Declared(kind, name, namespace or None), function)

    def _web_search(self, tool: Mapping[str, Any]) -> None:
        hosted: dict[str, Any] = {"type": "web_search"}
        filters = tool.get("filters")
        if isinstance(filters, Mapping) and filters.get("allowed_domains"):
            hosted["allowed_domains"] = list(filters["allowed_domains"])
        if isinstance(tool.get("user_location"), Mapping):
            hosted["user_location"] = dict(tool["user_location"])
        for field in sorted(set(tool) - WEB_SEARCH_KEPT):
            if tool[field] is not None and tool[field] != WEB_SEARCH_DEFAULTS.get(field, ...):
                self.note(f"tools.web_search.{field}")
        if not any(t.get("type") == "web_search" for t in self.tools):
            self.tools.append(hosted)

    def _add(self, declared: Declared, function: FunctionSpec) -> None:
        flat = function["name"]
        if flat in self.declared:  # declared twice (additional_tools repeated in the history): the first wins
            return
        self.declared[flat] = declared
        self.tools.append({"type": "function", "function": function})

    def note(self, what: str) -> None:
        if what not in self.notices:
            self.notices.append(what)

    def flat(self, name: str, namespace: str | None = None) -> str:
        return flat_name(name, namespace)

    def find(self, flat: str) -> Declared:
        """The declared tool behind a function name the model called (a plain function if unknown)."""
        return self.declared.get(flat) or Declared("function", flat)

    def tool_choice(self, choice: Any) -> Any:
        """Responses `tool_choice` → the chat form (None: leave it out)."""
        if choice in ("auto", "none", "required"):
            return choice
        if not isinstance(choice, Mapping):
            return None
        kind = choice.get("type")
        if kind in ("function", "custom") and choice.get("name"):
            return {"type": "function", "function": {
                "name": self.flat(str(choice["name"]), choice.get("namespace") or None)}}
        if kind == LOCAL_SHELL:
            return {"type": "function", "function": {"name": LOCAL_SHELL}}
        if kind == "allowed_tools":
            return self._allowed(choice)
        self.note(f"tool_choice.{kind or 'unknown'}")
        return None

    def _allowed(self, choice: Mapping[str, Any]) -> Any:
        """`allowed_tools`: the tools outside the list are left out, and its mode is the choice."""
        names: set[str] = set()
        for tool in choice.get("tools") or ():
            if isinstance(tool, Mapping) and tool.get("name"):
                names.add(self.flat(str(tool["name"]), tool.get("namespace") or None))
            elif isinstance(tool, Mapping) and tool.get("type") == LOCAL_SHELL:
                names.add(LOCAL_SHELL)
        self.tools = [t for t in self.tools if t.get("type") != "function" or t["function"]["name"] in names]
        mode = choice.get("mode")
        return mode if mode in ("auto", "required") else None

    # -- the way back ------------------------------------------------------------------------------

    def call_item(self, call: Mapping[str, Any], status: str = "completed") -> dict[str, Any]:
        """An internal tool call → the Responses item the client declared the tool for."""
        function = call.get("function") or {}
        declared = self.find(str(function.get("name") or ""))
        call_id = str(call.get("id") or new_id("call"))
        arguments = str(function.get("arguments") or "")
        if declared.kind == "custom":
            item: dict[str, Any] = {"type": "custom_tool_call", "id": new_id("ctc"), "call_id": call_id,
                                    "name": declared.name, "input": custom_input(arguments), "status": status}
        elif declared.kind == LOCAL_SHELL:
            return {"type": "local_shell_call", "id": new_id("lsh"), "call_id": call_id, "status": status,
                    "action": shell_action(arguments)}
        elif declared.kind == TOOL_SEARCH:
            parsed = _arguments(arguments)
            return {"type": "tool_search_call", "id": new_id("tsc"), "call_id": call_id, "execution": "client",
                    "arguments": parsed if isinstance(parsed, Mapping) else {}, "status": status}
        else:
            item = {"type": "function_call", "id": new_id("fc"), "call_id": call_id, "name": declared.name,
                    "arguments": arguments, "status": status}
        if declared.namespace:
            item["namespace"] = declared.namespace
        return item


def _arguments(raw: str) -> Any:
    try:
        return orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return None


def custom_input(arguments: str) -> str:
    """The raw input of a custom tool from the function arguments the model wrote ({"input": …});
    arguments that are not that object are the input themselves."""
    parsed = _arguments(arguments)
    if isinstance(parsed, Mapping):
        if isinstance(parsed.get("input"), str):
            return str(parsed["input"])
        strings = [v for v in parsed.values() if isinstance(v, str)]
        if len(parsed) == 1 and strings:
            return strings[0]
    return arguments


def shell_action(arguments: str) -> dict[str, Any]:
    """The `exec` action of a local_shell_call from the function arguments the model wrote."""
    parsed = _arguments(arguments)
    given: Mapping[str, Any] = parsed if isinstance(parsed, Mapping) else {}
    command = given.get("command")
    if isinstance(command, str):
        command = [command]
    env = given.get("env")
    return {"type": "exec", "command": [str(c) for c in command] if isinstance(command, list) else [],
            "env": {str(k): str(v) for k, v in env.items()} if isinstance(env, Mapping) else {},
            "timeout_ms": given.get("timeout_ms") if isinstance(given.get("timeout_ms"), int) else None,
            "user": given.get("user") if isinstance(given.get("user"), str) else None,
            "working_directory": given.get("working_directory")
            if isinstance(given.get("working_directory"), str) else None}


def shell_arguments(action: Any) -> str:
    """A local_shell_call's action (from the history) → the function arguments of the internal call."""
    given: Mapping[str, Any] = action if isinstance(action, Mapping) else {}
    return orjson.dumps({k: v for k, v in given.items() if k != "type" and v is not None}).decode()
