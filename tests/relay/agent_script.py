"""What a scripted upstream model says next, whatever the provider's format.

Each strict fake (OpenAI, Claude, Gemini, …) reduces the request it received to an `AgentView` in
its own format's terms, asks its `script` (when one is set) for the next `Turn`, and answers that
turn in its own format (text, a tool call, reasoning), streamed or not, with its usual usage. This is
how the real coding-agent CLIs are driven through a tool loop in the tests: the same script behind
every provider.
"""
from __future__ import annotations

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
