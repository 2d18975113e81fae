"""A request as Claude Code sends it (about 17 KB: a system prompt in blocks, 15 tools with their
input schemas, a tool loop of a few turns), for measuring what checking a body costs."""
from __future__ import annotations

from typing import Any

_S = {"type": "string"}
_I = {"type": "integer"}
_B = {"type": "boolean"}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description, "input_schema": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#"}}


def _described(kind: dict[str, Any], text: str) -> dict[str, Any]:
    return {**kind, "description": text}


TODO = {"type": "object", "properties": {"content": {"type": "string", "minLength": 1},
                                         "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                                         "activeForm": {"type": "string", "minLength": 1}},
        "required": ["content", "status", "activeForm"], "additionalProperties": False}
EDIT = {"type": "object", "properties": {"old_string": _S, "new_string": _S, "replace_all": {**_B, "default": False}},
        "required": ["old_string", "new_string"], "additionalProperties": False}
LONG = ("Use this tool when the task needs it. It reads the workspace, never changes files it was not asked to "
        "change, and reports what it did. Prefer it over shell equivalents; call several in one message when "
        "they do not depend on each other. ")
TOOLS = [
    _tool("Task", "Launch a new agent to handle complex, multi-step tasks autonomously. " + LONG * 3, {
        "description": _described(_S, "A short (3-5 word) description of the task"),
        "prompt": _described(_S, "The task for the agent to perform"),
        "subagent_type": _described(_S, "The type of specialized agent to use for this task")},
        ["description", "prompt", "subagent_type"]),
    _tool("Bash", "Executes a given bash command in a persistent shell session. " + LONG * 4, {
        "command": _described(_S, "The command to execute"),
        "timeout": _described({"type": "number"}, "Optional timeout in milliseconds (max 600000)"),
        "description": _described(_S, "Clear, concise description of what this command does in 5-10 words"),
        "run_in_background": _described(_B, "Set to true to run this command in the background")}, ["command"]),
    _tool("Glob", "Fast file pattern matching tool that works with any codebase size. " + LONG, {
        "pattern": _described(_S, "The glob pattern to match files against"),
        "path": _described(_S, "The directory to search in")}, ["pattern"]),
    _tool("Grep", "A powerful search tool built on ripgrep. " + LONG * 2, {
        "pattern": _described(_S, "The regular expression pattern to search for in file contents"),
        "path": _described(_S, "File or directory to search in"), "glob": _described(_S, "Glob pattern to filter"),
        "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
        "-B": _described({"type": "number"}, "Lines before"), "-A": _described({"type": "number"}, "Lines after"),
        "-C": _described({"type": "number"}, "Context lines"), "-n": _described(_B, "Line numbers"),
        "-i": _described(_B, "Case insensitive"), "type": _described(_S, "File type to search"),
        "head_limit": _described({"type": "number"}, "Limit output"),
        "multiline": _described(_B, "Enable multiline mode")}, ["pattern"]),
    _tool("LS", "Lists files and directories in a given path. " + LONG, {
        "path": _described(_S, "The absolute path to the directory to list"),
        "ignore": {"type": "array", "items": _S, "description": "List of glob patterns to ignore"}}, ["path"]),
    _tool("ExitPlanMode", "Use this tool when you are in plan mode and have finished presenting your plan. " + LONG, {
        "plan": _described(_S, "The plan you came up with")}, ["plan"]),
    _tool("Read", "Reads a file from the local filesystem. " + LONG * 2, {
        "file_path": _described(_S, "The absolute path to the file to read"),
        "offset": _described({"type": "number"}, "The line number to start reading from"),
        "limit": _described({"type": "number"}, "The number of lines to read")}, ["file_path"]),
    _tool("Edit", "Performs exact string replacements in files. " + LONG * 2, {
        "file_path": _described(_S, "The absolute path to the file to modify"),
        "old_string": _described(_S, "The text to replace"), "new_string": _described(_S, "The replacement"),
        "replace_all": {**_B, "default": False}}, ["file_path", "old_string", "new_string"]),
    _tool("MultiEdit", "Makes multiple edits to a single file in one operation. " + LONG, {
        "file_path": _described(_S, "The absolute path to the file to modify"),
        "edits": {"type": "array", "items": EDIT, "minItems": 1}}, ["file_path", "edits"]),
    _tool("Write", "Writes a file to the local filesystem. " + LONG, {
        "file_path": _described(_S, "The absolute path to the file to write"),
        "content": _described(_S, "The content to write to the file")}, ["file_path", "content"]),
    _tool("NotebookEdit", "Completely replaces the contents of a specific cell in a Jupyter notebook. " + LONG, {
        "notebook_path": _S, "cell_id": _S, "new_source": _S,
        "cell_type": {"type": "string", "enum": ["code", "markdown"]},
        "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"]}}, ["notebook_path", "new_source"]),
    _tool("WebFetch", "Fetches content from a specified URL and processes it using an AI model. " + LONG, {
        "url": {"type": "string", "format": "uri"}, "prompt": _S}, ["url", "prompt"]),
    _tool("TodoWrite", "Use this tool to create and manage a structured task list. " + LONG * 3, {
        "todos": {"type": "array", "items": TODO, "description": "The updated todo list"}}, ["todos"]),
    _tool("WebSearch", "Allows Claude to search the web and use the results. " + LONG, {
        "query": {"type": "string", "minLength": 2},
        "allowed_domains": {"type": "array", "items": _S}, "blocked_domains": {"type": "array", "items": _S}},
        ["query"]),
    _tool("BashOutput", "Retrieves output from a running or completed background bash shell. " + LONG, {
        "bash_id": _S, "filter": _S}, ["bash_id"]),
]
SYSTEM = [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {"type": "text", "text": "You are an interactive CLI tool that helps users with software engineering tasks. "
     + LONG * 12, "cache_control": {"type": "ephemeral"}},
]


def claude_code_request(model: str = "claude-sonnet-4-5-20250929") -> dict[str, Any]:
    """The body of one turn of a Claude Code tool loop."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/work/app/main.py"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01",
              "content": [{"type": "text", "text": "def main():\n    print('hello')\n" * 20}]}
    return {
        "model": model, "max_tokens": 32000, "stream": True, "system": SYSTEM, "tools": TOOLS,
        "metadata": {"user_id": "user_0123456789abcdef_account__session_0123"},
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>\nUse the context below.\n</system-reminder>"},
                {"type": "text", "text": "Fix the greeting in main.py so it says hello world."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "I'll read the file first."}, call]},
            {"role": "user", "content": [result]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "The file prints hello; change it.", "signature": "EqQBCkYIBxgCKkBs"},
                {"type": "tool_use", "id": "toolu_02", "name": "Edit", "input": {
                    "file_path": "/work/app/main.py", "old_string": "print('hello')",
                    "new_string": "print('hello world')"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02",
                                          "content": "The file /work/app/main.py has been updated.",
                                          "cache_control": {"type": "ephemeral"}}]},
        ],
    }
