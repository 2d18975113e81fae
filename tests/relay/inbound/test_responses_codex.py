# ruff: noqa: F811  (pytest fixtures imported from tests.relay.fakes are test parameters)
"""A Codex-shaped Responses request (its tools: a function, the freeform apply_patch, an MCP namespace,
hosted web search, tools in an `additional_tools` item, or code mode's one freeform `exec` tool;
reasoning summaries and encrypted content asked for, nothing stored) through the openai SDK to a
Claude channel (the strict FakeClaude) and a Gemini 3 channel (the strict FakeGemini), streamed and
not: a two-turn tool loop whose second request sends back the reasoning items with their
encrypted_content, so Claude gets its signed thinking block back before its tool call and Gemini the
signature it issued on its call. Every charge checked to the unit."""
from __future__ import annotations

import base64
from typing import Any

import openai
import orjson
import pytest

from api import keys
from api.services.billing import pricing
from api.upstream.catalogue import ChannelType
from api.upstream.reasoning import ANTHROPIC, GEMINI, unseal
from tests.relay.fakes import add_channel, drain, gateway, make_key, rich_user  # noqa: F401
from tests.upstream.providers.agent_script import AgentView, Turn
from tests.upstream.providers.claude.fake_anthropic import FakeClaude
from tests.upstream.providers.claude.fake_anthropic_models import sign
from tests.upstream.providers.gemini.fake_gemini import FakeGemini
from tests.upstream.providers.kit import consume_logs, sdk

MODEL = "claude-sonnet-4-5-20250929"
THOUGHT = "The bug is in login.py; a patch fixes it."
PATCH = "*** Begin Patch\n*** Update File: login.py\n@@\n-    return None\n+    return user\n*** End Patch\n"
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "shell", "description": "Runs a shell command", "strict": False,
     "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}},
                    "required": ["command"], "additionalProperties": False}},
    {"type": "custom", "name": "apply_patch", "description": "Use the `apply_patch` tool to edit files.",
     "format": {"type": "grammar", "syntax": "lark",
                "definition": 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF'}},
    {"type": "namespace", "name": "mcp__docs", "description": "Project documentation",
     "tools": [{"type": "function", "name": "search", "description": "Search the docs", "strict": False,
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]},
    {"type": "web_search", "external_web_access": True},
]
LITE_TOOLS = {"type": "additional_tools", "role": "developer", "tools": [
    {"type": "namespace", "name": "functions", "description": "", "tools": [
        {"type": "function", "name": "exec_command", "description": "Runs a command in a PTY", "strict": False,
         "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]}]}
PROMPT = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Sandbox: none."}]},
          {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the login bug."}]},
          LITE_TOOLS]


def script(view: AgentView) -> Turn:
    """Patch first; once the patch result is in, say so."""
    if not view.tool_results:
        return Turn(tool={"id": "toolu_01patch", "name": "apply_patch", "input": {"input": PATCH}}, thinking=THOUGHT)
    return Turn(text=f"Patched: {view.tool_results[-1]}", thinking="The patch applied.")


def codex_request(items: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    return {"model": MODEL, "instructions": "You are Codex, a coding agent.", "input": items, "tools": TOOLS,
            "tool_choice": "auto", "parallel_tool_calls": False, "reasoning": {"effort": "medium", "summary": "auto"},
            "store": False, "include": ["reasoning.encrypted_content"], "prompt_cache_key": "session-1",
            "stream": stream}


async def send(client: openai.AsyncOpenAI, body: dict[str, Any]) -> dict[str, Any]:
    """One Codex turn: the final response as Codex records it (the done items of a stream)."""
    if not body["stream"]:
        raw = await client.responses.with_raw_response.create(**body)
        return orjson.loads(raw.content)
    events = [event async for event in await client.responses.create(**body)]
    done = [event.item.to_dict() for event in events if event.type == "response.output_item.done"]
    completed = events[-1]
    assert completed.type == "response.completed"
    final = completed.response.to_dict()
    assert [item["id"] for item in final["output"]] == [item["id"] for item in done]
    return {**final, "output": done}


@pytest.mark.parametrize("stream", [False, True])
async def test_codex_tool_loop_on_a_claude_channel(gateway, aiohttp_server, stream: bool) -> None:
    claude = FakeClaude(script=script, usage={"input_tokens": 900, "output_tokens": 60,
                                              "cache_read_input_tokens": 400})
    claude.server = await aiohttp_server(claude.app())
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.ANTHROPIC), base_url=claude.url,
                      key=claude.key)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        first = await send(client, codex_request(PROMPT, stream))
        reasoning, call = first["output"]
        result = {"type": "custom_tool_call_output", "call_id": call["call_id"], "output": "Success. Updated login.py"}
        history = [*PROMPT, reasoning, call, result]
        second = await send(client, codex_request(history, stream))

    assert (reasoning["type"], reasoning["summary"]) == ("reasoning", [{"type": "summary_text", "text": THOUGHT}])
    assert unseal(reasoning["encrypted_content"]) == (ANTHROPIC, {"blocks": [
        {"type": "thinking", "thinking": THOUGHT, "signature": sign(THOUGHT)}]})
    assert (call["type"], call["name"], call["input"], call["call_id"]) == (
        "custom_tool_call", "apply_patch", PATCH, "toolu_01patch")
    assert second["status"] == "completed"
    assert second["output"][-1]["content"][0]["text"].endswith("Patched: Success. Updated login.py")

    asked = claude.seen[0]["body"]
    functions = {tool["name"]: tool for tool in asked["tools"] if "input_schema" in tool}
    assert list(functions) == ["shell", "apply_patch", "mcp__docs__search", "exec_command"]
    assert functions["apply_patch"]["input_schema"]["properties"] == {"input": {"type": "string"}}
    assert "start: begin_patch hunk+ end_patch" in functions["apply_patch"]["description"]
    assert any(tool.get("type", "").startswith("web_search") for tool in asked["tools"])
    assert asked["system"] and isinstance(asked["max_tokens"], int) and asked["max_tokens"] > 4096
    # The second turn: Claude's own signed thinking block back before its tool call, then the result.
    replayed = claude.seen[1]["body"]["messages"]
    assert replayed[-2] == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": THOUGHT, "signature": sign(THOUGHT)},
        {"type": "tool_use", "id": "toolu_01patch", "name": "apply_patch", "input": {"input": PATCH}}]}
    assert replayed[-1]["role"] == "user" and replayed[-1]["content"][0]["type"] == "tool_result"
    assert replayed[-1]["content"][0]["tool_use_id"] == "toolu_01patch"

    await drain(gateway)
    price = pricing.resolve_price(MODEL)
    expected = pricing.settle_quota(price, 1300, 60, cached_tokens=400)
    logs = await consume_logs(user)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(1300, 60, expected)] * 2
    assert (first["usage"]["input_tokens"], first["usage"]["input_tokens_details"]["cached_tokens"]) == (1300, 400)


GEMINI_MODEL = "gemini-3-pro-preview"
GEMINI_USAGE = {"promptTokenCount": 700, "candidatesTokenCount": 20, "thoughtsTokenCount": 15,
                "cachedContentTokenCount": 500, "totalTokenCount": 735}


def search_script(view: AgentView) -> Turn:
    """Search the MCP docs (thinking first), then answer from what was found."""
    if not view.tool_results:
        return Turn(tool={"id": "", "name": "mcp__docs__search", "input": {"query": "login"}},
                    thinking="Search the docs first.")
    return Turn(text=f"Found: {view.tool_results[-1]}")


@pytest.mark.parametrize("stream", [False, True])
async def test_codex_tool_loop_on_a_gemini_3_channel(gateway, aiohttp_server, stream: bool) -> None:
    options = gateway.server.app[keys.OPTIONS]
    for key, table in (("ModelRatio", {GEMINI_MODEL: 1.0}), ("CompletionRatio", {GEMINI_MODEL: 6}),
                       ("CacheRatio", {GEMINI_MODEL: 0.1})):
        await options.update(key, orjson.dumps(table).decode())
    gemini = FakeGemini(script=search_script, usage=GEMINI_USAGE)
    gemini.server = await aiohttp_server(gemini.app())
    await add_channel(gateway, None, models=GEMINI_MODEL, type=int(ChannelType.GEMINI), base_url=gemini.url,
                      key=gemini.key)
    user = await rich_user()
    token = await make_key(user)
    tools = [tool for tool in TOOLS if tool["type"] != "web_search"]  # Gemini takes no search beside functions
    async with sdk(gateway, token) as client:
        first = await send(client, {**codex_request(PROMPT, stream), "model": GEMINI_MODEL, "tools": tools})
        call = next(item for item in first["output"] if item["type"] == "function_call")
        result = {"type": "function_call_output", "call_id": call["call_id"], "output": "login.py returns None"}
        history = [*PROMPT, *first["output"], result]
        second = await send(client, {**codex_request(history, stream), "model": GEMINI_MODEL, "tools": tools})
    assert (call["namespace"], call["name"], orjson.loads(call["arguments"])) == ("mcp__docs", "search",
                                                                                   {"query": "login"})
    sealed = [unseal(item["encrypted_content"]) for item in first["output"] if item["type"] == "reasoning"]
    issued = base64.b64encode(b"fake-gemini-thought-0").decode()
    assert (GEMINI, {"calls": {call["call_id"]: issued}}) in sealed
    assert second["output"][-1]["content"][0]["text"] == "Found: login.py returns None"
    replayed = [part for content in gemini.seen[1]["body"]["contents"] if content["role"] == "model"
                for part in content["parts"] if "functionCall" in part]
    assert replayed == [{"functionCall": {"name": "mcp__docs__search", "args": {"query": "login"}},
                         "thoughtSignature": issued}]
    await drain(gateway)
    price = pricing.resolve_configured(options, GEMINI_MODEL)
    expected = pricing.settle_quota(price, 700, 35, cached_tokens=500)
    logs = await consume_logs(user)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(700, 35, expected)] * 2


# Codex's code mode (its default model's tools): one freeform `exec` tool that runs a JavaScript
# script, declared in an `additional_tools` item, answered by `custom_tool_call` items whose
# `input` is the script; the request's own `tools` empty.
SCRIPT = 'const out = await tools.exec_command({cmd: "cat login.py"});\ntext(out);\n'
CODE_MODE = {"type": "additional_tools", "role": "developer", "tools": [
    {"type": "custom", "name": "exec", "description": "Run JavaScript in the code-mode runtime.",
     "format": {"type": "grammar", "syntax": "lark", "definition": "start: SOURCE\nSOURCE: /(.|\\n)+/"}}]}
CODE_PROMPT = [PROMPT[1], CODE_MODE]


def code_script(view: AgentView) -> Turn:
    """Run a script first; once its output is in, report it."""
    if not view.tool_results:
        return Turn(tool={"id": "toolu_01exec", "name": "exec", "input": {"input": SCRIPT}}, thinking=THOUGHT)
    return Turn(text=f"login.py: {view.tool_results[-1]}", thinking="The script ran.")


@pytest.mark.parametrize("stream", [False, True])
async def test_codex_code_mode_exec_on_a_claude_channel(gateway, aiohttp_server, stream: bool) -> None:
    claude = FakeClaude(script=code_script, usage={"input_tokens": 500, "output_tokens": 30,
                                                   "cache_read_input_tokens": 200})
    claude.server = await aiohttp_server(claude.app())
    await add_channel(gateway, None, models=MODEL, type=int(ChannelType.ANTHROPIC), base_url=claude.url,
                      key=claude.key)
    user = await rich_user()
    token = await make_key(user)
    async with sdk(gateway, token) as client:
        first = await send(client, {**codex_request(CODE_PROMPT, stream), "tools": []})
        reasoning, call = first["output"]
        result = {"type": "custom_tool_call_output", "call_id": call["call_id"],
                  "output": [{"type": "input_text", "text": "def login(): return user"}]}
        second = await send(client, {**codex_request([*CODE_PROMPT, reasoning, call, result], stream), "tools": []})

    assert (call["type"], call["name"], call["input"], call["call_id"]) == (
        "custom_tool_call", "exec", SCRIPT, "toolu_01exec")
    assert second["status"] == "completed"
    assert second["output"][-1]["content"][0]["text"] == "login.py: def login(): return user"
    (declared,) = claude.seen[0]["body"]["tools"]
    assert declared["name"] == "exec" and declared["input_schema"]["properties"] == {"input": {"type": "string"}}
    assert "start: SOURCE" in declared["description"]
    replayed = claude.seen[1]["body"]["messages"]
    assert replayed[-2]["content"][-1] == {"type": "tool_use", "id": "toolu_01exec", "name": "exec",
                                           "input": {"input": SCRIPT}}
    assert replayed[-1]["content"][0]["tool_use_id"] == "toolu_01exec"
    assert replayed[-1]["content"][0]["content"] == "def login(): return user"  # the script's output as text
    await drain(gateway)
    expected = pricing.settle_quota(pricing.resolve_price(MODEL), 700, 30, cached_tokens=200)
    logs = await consume_logs(user)
    assert [(log.prompt_tokens, log.completion_tokens, log.quota) for log in logs] == [(700, 30, expected)] * 2
