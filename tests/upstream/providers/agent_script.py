"""What a scripted upstream model says next, whatever the provider's format.

Each strict fake (OpenAI, Claude, Gemini, …) reduces the request it received to an `AgentView` in
its own format's terms, asks its `script` (when one is set) for the next `Turn`, and answers that
turn in its own format (text, a tool call, reasoning), streamed or not, with its usual usage. This is
how the real coding-agent CLIs are driven through a tool loop in the tests: the same script behind
every provider.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentView:
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # declared function tools: name → JSON schema
    tool_results: list[str] = field(default_factory=list)  # texts of the tool results so far, in order
    user_texts: list[str] = field(default_factory=list)  # texts of the user turns, in order
    turns: int = 0  # assistant turns so far


@dataclass
class Turn:
    text: str = ""
    tool: dict[str, Any] | None = None  # {"id", "name", "input"}: the model calls this tool
    thinking: str = ""  # reasoning the model shows before it answers


Script = Callable[[AgentView], Turn]


# -- the read-a-file tool loop: the same two turns whichever CLI asks --------------------------------
# Each CLI's own tool for reading a file, and the arguments that read `path` with it:
# Claude Code's `Read` {file_path}, Gemini CLI's and Qwen Code's `read_file` {file_path} (older
# releases: {absolute_path}) and opencode's `read` {filePath} read the file; Codex has no read tool,
# so its shell runs `cat` (`exec_command` {cmd} in current releases, `shell_command` {command: str}
# and `shell` {command: [argv]} before).
ReadCall = Callable[[dict[str, Any], str], dict[str, Any]]


def _path_argument(schema: dict[str, Any], path: str) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {"absolute_path" if "absolute_path" in properties and "file_path" not in properties else "file_path": path}


READERS: dict[str, ReadCall] = {
    "Read": _path_argument,
    "read_file": _path_argument,
    "read": lambda _schema, path: {"filePath": path},
    "exec_command": lambda _schema, path: {"cmd": f"cat {shlex.quote(path)}"},
    "shell_command": lambda _schema, path: {"command": f"cat {shlex.quote(path)}"},
    "shell": lambda _schema, path: {"command": ["cat", path]},
}
READ_CALL_ID = "call_read_1"


def read_call(view: AgentView, path: str) -> dict[str, Any] | None:
    """The tool call that reads `path` with the first read tool the client declared, or None."""
    for name, arguments in READERS.items():
        if name in view.tools:
            return {"id": READ_CALL_ID, "name": name, "input": arguments(view.tools[name], path)}
    return None


def read_file_script(path: str, thinking: str = "") -> Script:
    """First turn: call the client's read tool on `path` (after `thinking`, when given); once a tool
    result is there: answer quoting the last one. A request declaring no read tool is answered in text."""

    def script(view: AgentView) -> Turn:
        if view.tool_results:
            return Turn(text=f'The file says: "{view.tool_results[-1]}"')
        call = read_call(view, path)
        if call is None:
            return Turn(text="I have no tool to read files with.")
        return Turn(tool=call, thinking=thinking)

    return script


@dataclass
class Recorded:
    """A script that keeps each view it was shown and each turn it answered, in order."""

    script: Script
    views: list[AgentView] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)

    def __call__(self, view: AgentView) -> Turn:
        turn = self.script(view)
        self.views.append(view)
        self.turns.append(turn)
        return turn
