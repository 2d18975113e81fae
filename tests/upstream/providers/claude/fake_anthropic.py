"""A fake Anthropic Messages API (`POST /v1/messages`), strict about what Claude refuses, per model,
in Anthropic's error shape. Also the model behind the Bedrock and Vertex AI fakes (`problem()`
checks a body for a platform, `message()` / `events()` answer it; the transport differs).

Each rule cites where it is documented (short references are pages under
https://platform.claude.com/docs/en/: build-with-claude/…, models/…). It answers JSON or the SSE
event stream (message_start, content_block_start/delta/stop with text, thinking + signature,
redacted_thinking, tool_use, server_tool_use and web_search_tool_result, citations, message_delta,
message_stop), with usage (cache reads and writes, by TTL when configured). Thinking blocks it emits
are signed (HMAC of their text); a replayed block with a missing or altered signature is refused.
With a `script`, what it answers comes from the script (tests/upstream/providers/agent_script.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.upstream.providers.agent_script import AgentView, Script, Turn
from tests.upstream.providers.claude.fake_anthropic_models import (
    EFFORTS,
    Model,
    block_events,
    model_rules,
    sign,
    thinking_on,
    web_search_blocks,
)

REPLY = "Hello from Claude, in pieces."
THINKING = "The user wants a short greeting."
API_VERSIONS = {"2023-06-01", "2026-10-21"}  # the gateway's own, and the current SDK's
# Top-level request fields of the Messages API (api.md, MessageCreateParams); others →
# "Extra inputs are not permitted".
FIELDS = {"model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream", "temperature", "top_p",
          "top_k", "tools", "tool_choice", "thinking", "output_config", "cache_control", "container",
          "context_management", "mcp_servers", "service_tier", "inference_geo"}
# Bedrock: model in the URL, stream by the action, version and betas in the body
# (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html).
# Vertex: model in the URL, version in the body (DOCS/build-with-claude/claude-on-vertex-ai).
PLATFORM_FIELDS = {"anthropic": FIELDS, "bedrock": (FIELDS - {"model", "stream"}) | {"anthropic_version",
                                                                                    "anthropic_beta"},
                   "vertex": (FIELDS - {"model"}) | {"anthropic_version"}}
HISTORY_RESULT = re.compile(r"\[the tool \S+ returned: (.*)\]$", re.S)  # how the gateway tells one
BLOCK_TYPES = {"text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
               "redacted_thinking", "server_tool_use", "web_search_tool_result"}
def _text_of(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text"]


@dataclass
class FakeClaude:
    key: str = "sk-ant-upstream"
    reply: str = REPLY
    thinking: str = THINKING  # what it thinks when thinking is on
    redacted: bool = False  # also answer a redacted_thinking block when thinking
    tool: dict[str, Any] | None = None  # {"id", "name", "input"}: answer with a tool call
    usage: dict[str, Any] = field(default_factory=lambda: {"input_tokens": 21, "output_tokens": 9})
    fail_status: int | None = None
    fail_type: str = "api_error"
    cut_after: int | None = None  # stream: drop the connection after this many text deltas
    script: Script | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/messages", self.messages)
        return app

    # -- validation, as Claude does it -----------------------------------------------------------

    def problem(self, body: dict[str, Any], platform: str = "anthropic", model: str | None = None) -> str | None:
        rules = model_rules(model or str(body.get("model") or ""))
        for name in body:
            if name not in PLATFORM_FIELDS[platform]:
                return f"{name}: Extra inputs are not permitted"
        limit = body.get("max_tokens")
        if not isinstance(limit, int) or limit < 1:
            return "max_tokens: Field required"
        if limit > rules.max_output:
            return (f"max_tokens: {limit} > {rules.max_output}, which is the maximum allowed number of output "
                    f"tokens for {model or body.get('model')}")
        if "system" in body and not isinstance(body["system"], str | list):
            return "system: Input should be a valid string or a list of text blocks"
        for check in (self._thinking, self._sampling, self._tools, self._output_config):
            found = check(body, rules, platform)
            if found:
                return found
        return self._messages(body, rules, platform)

    @staticmethod
    def _thinking(body: dict[str, Any], rules: Model, platform: str) -> str | None:
        thinking = body.get("thinking")
        if thinking is None:
            return None
        kind = thinking.get("type")
        if kind not in ("enabled", "adaptive", "disabled") or (kind == "enabled" and not rules.budget) or (
                kind == "adaptive" and not rules.adaptive) or (kind == "disabled" and not rules.disable):
            # DOCS/models/opus-5-5/whats-new-opus-5-5 (the error's wording), adaptive-thinking
            return (f'"thinking.type.{kind}" is not supported for this model. Use "thinking.type.adaptive" and '
                    '"output_config.effort" to control thinking behavior.' if rules.adaptive else
                    f'"thinking.type.{kind}" is not supported for this model.')
        effort = (body.get("output_config") or {}).get("effort")
        if kind == "disabled" and rules.off_effort_max and effort in EFFORTS[EFFORTS.index(rules.off_effort_max) + 1:]:
            return f"thinking may not be disabled at effort {effort}"  # opus-5/migration-guide
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:  # extended-thinking: budget_tokens ≥ 1024
                return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            if budget >= body["max_tokens"]:
                return "`max_tokens` must be greater than `thinking.budget_tokens`"
        return None

    @staticmethod
    def _sampling(body: dict[str, Any], rules: Model, platform: str) -> str | None:
        if thinking_on(body, rules):  # extended-thinking, "Feature compatibility"
            if body.get("temperature", 1) != 1:
                return "`temperature` may only be set to 1 when thinking is enabled"
            if "top_k" in body:
                return "`top_k` is not supported when thinking is enabled"
            if not 0.95 <= body.get("top_p", 1) <= 1:
                return "`top_p` must be between 0.95 and 1 when thinking is enabled"
        if rules.sampling == "none":  # sonnet-5/overview: non-default sampling values → 400
            for name in ("temperature", "top_p", "top_k"):
                if name in body and not (name != "top_k" and body[name] == 1):
                    return f"`{name}` is not supported for this model"
        if rules.sampling == "exclusive" and "temperature" in body and "top_p" in body:
            return "`temperature` and `top_p` cannot both be specified for this model. Please use only one."
        return None

    @staticmethod
    def _tools(body: dict[str, Any], rules: Model, platform: str) -> str | None:
        for i, tool in enumerate(body.get("tools") or ()):
            kind = tool.get("type", "custom")
            if kind == "web_search_20250305" and platform != "bedrock":  # web-search-tool; absent on Bedrock
                continue
            if kind != "custom":
                return f"tools.{i}: Input tag '{kind}' found using 'type' does not match any of the expected tags"
            if not tool.get("name") or not isinstance(tool.get("input_schema"), dict):
                return f"tools.{i}: a custom tool needs a name and an input_schema"
            if tool.get("strict") and not rules.structured:
                return f"tools.{i}.strict: strict tool use is not supported for this model"
        choice = (body.get("tool_choice") or {}).get("type")
        if choice in ("any", "tool"):
            if rules.never_forced:  # opus-5-5/whats-new-opus-5-5: forced tool use returns an error
                return "tool_choice: forced tool use is not supported for this model; use \"auto\" or \"none\""
            if thinking_on(body, rules):  # extended-thinking: only auto or none while thinking
                return "Thinking may not be enabled when tool_choice forces tool use."
        return None

    @staticmethod
    def _output_config(body: dict[str, Any], rules: Model, platform: str) -> str | None:
        config = body.get("output_config") or {}
        for name in config:
            if name not in ("effort", "format"):
                return f"output_config.{name}: Extra inputs are not permitted"
        if "effort" in config and config["effort"] not in rules.efforts:  # effort
            return f"output_config.effort: {config['effort']!r} is not supported for this model"
        if "format" in config:
            if platform == "vertex":  # partner-models/claude/structured_outputs: off by organization policy
                return "structured outputs are disabled by constraints/vertexai.allowedPartnerModelFeatures"
            if not rules.structured or config["format"].get("type") != "json_schema":
                return "output_config.format: structured outputs are not supported for this model"
        return None

    def _messages(self, body: dict[str, Any], rules: Model, platform: str) -> str | None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        expected, calls = "user", set[str]()
        for i, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if role == "system":  # mid-conversation-system-messages: right after a user turn, Claude API only
                if platform != "anthropic":
                    return f"messages.{i}.role: Input should be 'user' or 'assistant'"
                if not rules.system_messages:
                    return "role 'system' is not supported on this model"
                if i == 0 or messages[i - 1].get("role") != "user":
                    return f"messages.{i}: a system message must follow a user turn"
                continue
            if role != expected:
                return f"messages.{i}: roles must alternate between user and assistant, starting with user"
            expected = "assistant" if role == "user" else "user"
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            found = self._blocks(i, role, blocks, calls)
            if found:
                return found
            if role == "user" and calls:  # tool-use: each call answered in the next user turn
                return f"messages.{i}: `tool_use` ids were found without `tool_result` blocks: {sorted(calls)}"
            calls = {b["id"] for b in blocks if b.get("type") == "tool_use"} if role == "assistant" else set()
        if messages[-1].get("role") == "assistant" and not rules.prefill:
            return "This model does not support assistant message prefill. The conversation must end with a user " \
                   "message"
        # With a budget every turn thinks, and its thinking must come back with its tool results
        # (extended-thinking, "Preserving thinking blocks"); adaptive thinking may skip a turn's, except
        # on a 5.x model thinking by its default, which thinks every turn (models/opus-5-5/
        # whats-new-opus-5-5; the refusal as Opus 5.5 words it: "messages.1.content.0.type: Expected
        # thinking or redacted_thinking, but found text").
        kind = (body.get("thinking") or {}).get("type")
        if kind == "enabled" or (rules.thinks_by_default and thinking_on(body, rules)):
            final = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
            content = final.get("content") if final else None
            if isinstance(content, list) and any(b.get("type") == "tool_use" for b in content) and \
                    content[0].get("type") not in ("thinking", "redacted_thinking"):
                at = messages.index(final)
                return (f"messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `"
                        + content[0].get("type") + "`. When "
                        "`thinking` is enabled, a final `assistant` message must start with a thinking block.")
        return None

    @staticmethod
    def _blocks(i: int, role: str, blocks: list[dict[str, Any]], calls: set[str]) -> str | None:
        for j, block in enumerate(blocks):
            kind = block.get("type")
            where = f"messages.{i}.content.{j}"
            if kind not in BLOCK_TYPES:
                return f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags"
            if kind == "text" and not block.get("text"):
                return "messages: text content blocks must be non-empty"
            if kind in ("thinking", "redacted_thinking", "tool_use") and role != "assistant":
                return f"{where}: `{kind}` blocks are only allowed in assistant messages"
            if kind == "thinking" and (not block.get("signature") or block["signature"] != sign(block["thinking"])):
                return f"{where}: Invalid `signature` in `thinking` block"
            if kind == "redacted_thinking" and block.get("data") != "redacted:" + sign("redacted"):
                return f"{where}: Invalid `data` in `redacted_thinking` block"
            if kind == "tool_result":
                if any(b.get("type") != "tool_result" for b in blocks[:j]):
                    return f"{where}: tool_result blocks must come first in the user message"
                if block.get("tool_use_id") not in calls:  # tool-use: every result answers a call
                    return (f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                            f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                            "`tool_use` block in the previous message.")
                calls.discard(block["tool_use_id"])
            if kind == "document" and block.get("source", {}).get("type") not in ("base64", "text", "url", "content"):
                return f"{where}.source: unknown document source"
        return None

    def error(self, status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)

    # -- answers ---------------------------------------------------------------------------------

    def turn(self, body: dict[str, Any]) -> Turn:
        if self.script is None:
            return Turn(self.reply, self.tool, self.thinking)
        view = AgentView()
        for tool in body.get("tools") or ():
            if tool.get("type", "custom") == "custom":
                view.tools[tool["name"]] = tool.get("input_schema") or {}
        for message in body.get("messages") or ():
            content = message.get("content")
            if message.get("role") == "assistant":
                view.turns += 1
            elif message.get("role") == "user":
                for block in content if isinstance(content, list) else ():
                    if block.get("type") == "tool_result":
                        view.tool_results.append("".join(_text_of(block.get("content"))))
                    elif block.get("type") == "text" and (said := HISTORY_RESULT.match(block.get("text") or "")):
                        view.tool_results.append(said.group(1))  # a result told as history is read as one
                view.user_texts.extend(t for t in _text_of(content) if t)
        return self.script(view)

    def content(self, body: dict[str, Any], model: str | None = None) -> list[dict[str, Any]]:
        rules = model_rules(model or str(body.get("model") or ""))
        turn = self.turn(body)
        blocks: list[dict[str, Any]] = []
        if thinking_on(body, rules):
            thought = turn.thinking or self.thinking
            blocks.append({"type": "thinking", "thinking": thought, "signature": sign(thought)})
            if self.redacted:
                blocks.append({"type": "redacted_thinking", "data": "redacted:" + sign("redacted")})
        if any(t.get("type") == "web_search_20250305" for t in body.get("tools") or ()) and not turn.tool:
            blocks += web_search_blocks()
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        if turn.tool:
            blocks.append({"type": "tool_use", **turn.tool})
        return blocks

    def message(self, body: dict[str, Any], model: str | None = None) -> dict[str, Any]:
        content = self.content(body, model)
        usage = dict(self.usage)
        if any(b["type"] == "server_tool_use" for b in content):
            usage["server_tool_use"] = {"web_search_requests": 1}
        return {"id": "msg_01fake", "type": "message", "role": "assistant", "model": model or body.get("model"),
                "content": content, "stop_reason": "tool_use" if content and content[-1]["type"] == "tool_use"
                else "end_turn",
                "stop_sequence": None, "usage": usage}

    def events(self, body: dict[str, Any], model: str | None = None) -> list[dict[str, Any]]:
        """The stream's events, in order (each has its `type`)."""
        message = self.message(body, model)
        start_usage = {k: v for k, v in self.usage.items() if k != "output_tokens"} | {"output_tokens": 1}
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None,
                                                  "usage": start_usage}}, {"type": "ping"}]
        for index, block in enumerate(message["content"]):
            events += block_events(index, block)
        events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                       "usage": {"output_tokens": self.usage["output_tokens"]}})
        events.append({"type": "message_stop"})
        return events

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.seen.append({"headers": dict(request.headers), "body": body})
        if request.headers.get("x-api-key") != self.key:
            return self.error(401, "authentication_error", "invalid x-api-key")
        if request.headers.get("anthropic-version") not in API_VERSIONS:
            return self.error(400, "invalid_request_error", "anthropic-version: header is required")
        problem = self.problem(body)
        if problem:
            return self.error(400, "invalid_request_error", problem)
        if self.fail_status:
            return self.error(self.fail_status, self.fail_type, f"fake failure {self.fail_status}")
        if not body.get("stream"):
            return web.json_response(self.message(body))
        return await self.stream(request, self.events(body))

    async def stream(self, request: web.Request, events: list[dict[str, Any]]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        deltas = 0
        for event in events:
            if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
                deltas += 1
                if self.cut_after is not None and deltas > self.cut_after:
                    if request.transport is not None:
                        request.transport.close()
                    return resp
            await resp.write(f"event: {event['type']}\ndata: ".encode() + orjson.dumps(event) + b"\n\n")
        return resp
