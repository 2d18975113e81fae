"""A fake OpenAI Responses API (`POST /v1/responses`, `POST /v1/responses/compact`), strict about
what OpenAI refuses, answering JSON or the typed event stream with usage, driven by a `script`
(tests/upstream/providers/agent_script.py) like the other agent fakes.

Refused as OpenAI refuses it (each rule cites where the behaviour is documented or reported):
- a wrong key: 401 `invalid_api_key`;
- chat-completions fields (`messages`, `max_tokens`, `max_completion_tokens`): 400
  `unsupported_parameter` "In the Responses API, this parameter has moved …" (MuiseDestiny/zotero-gpt#502);
- no `model`: 400 `missing_required_parameter`;
- an input item of an unknown type (the types of openai-python types/responses/response_input_item_param.py);
- a reasoning item whose `encrypted_content` OpenAI did not make: 400 `invalid_encrypted_content`
  "The encrypted content … could not be verified." (openai/codex#8145);
- a reasoning item without `encrypted_content` while `store` is false: 404 "Item with id … not
  found. Items are not persisted when `store` is set to false." (can1357/oh-my-pi#41);
- a tool output whose call is not in the input: 400 "No tool call found for function call output
  with call_id …" (microsoft/vscode#320060, vercel/ai#8216);
- on /responses/compact, parameters outside the compact endpoint's (openai-python
  types/responses/response_compact_params.py; what Codex sends, codex-rs/codex-api/src/common.rs
  `CompactionInput`): 400 `unknown_parameter`.
`serves_responses` / `serves_compact` False take the route away (aiohttp's plain 404, as an
OpenAI-compatible server without the Responses API answers).
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.upstream.providers.agent_script import AgentView, Script, Turn
from tests.upstream.providers.kit import FakeBase

CHAT_ONLY = ("messages", "max_tokens", "max_completion_tokens")
INPUT_TYPES = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "local_shell_call_output", "additional_tools", "compaction", "item_reference",
    "web_search_call", "file_search_call", "computer_call", "computer_call_output", "image_generation_call",
    "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "tool_search_call", "tool_search_output", "shell_call", "shell_call_output", "apply_patch_call",
    "apply_patch_call_output", "compaction_trigger", "program", "program_output"})
COMPACT_PARAMS = frozenset({
    "model", "input", "instructions", "previous_response_id", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "service_tier", "tools", "parallel_tool_calls", "reasoning", "text"})
CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
         "local_shell_call": "local_shell_call_output"}


@dataclass
class FakeResponses(FakeBase):
    key: str = "sk-upstream-secret"
    reply: str = "Done, from the Responses API."
    usage: dict[str, Any] = field(default_factory=lambda: {
        "input_tokens": 40, "input_tokens_details": {"cached_tokens": 16}, "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 52})
    script: Script | None = None
    serves_responses: bool = True
    serves_compact: bool = True
    seen: list[dict[str, Any]] = field(default_factory=list)
    issued: set[str] = field(default_factory=set)  # encrypted contents this fake made

    def app(self) -> web.Application:
        app = web.Application()
        if self.serves_responses:
            app.router.add_post("/v1/responses", self.responses)
        if self.serves_compact:
            app.router.add_post("/v1/responses/compact", self.compact)
        return app

    # -- validation, as OpenAI does it -------------------------------------------------------------

    @staticmethod
    def error(status: int, message: str, code: str | None, param: str | None = None) -> web.Response:
        return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                            "code": code}}, status=status)

    def problem(self, body: dict[str, Any]) -> web.Response | None:
        for name in CHAT_ONLY:
            if name in body:
                return self.error(400, f"Unsupported parameter: '{name}'. In the Responses API, this parameter "
                                  "has moved to 'max_output_tokens'.", "unsupported_parameter", name)
        if not body.get("model"):
            return self.error(400, "Missing required parameter: 'model'.", "missing_required_parameter", "model")
        items = body.get("input") if isinstance(body.get("input"), list) else []
        calls: set[str] = set()
        for i, item in enumerate(items):
            kind = item.get("type") or "message"
            if kind not in INPUT_TYPES:
                return self.error(400, f"Invalid value: '{kind}'.", "invalid_value", f"input[{i}].type")
            if kind == "reasoning":
                sealed = item.get("encrypted_content")
                if sealed is None and body.get("store") is False:
                    return self.error(404, f"Item with id '{item.get('id')}' not found. Items are not persisted "
                                      "when `store` is set to false.", None, "input")
                if sealed is not None and sealed not in self.issued:
                    return self.error(400, f"The encrypted content {str(sealed)[:8]}... could not be verified.",
                                      "invalid_encrypted_content")
            if kind == "compaction" and item.get("encrypted_content") not in self.issued:
                return self.error(400, "The encrypted content of the compaction item could not be verified.",
                                  "invalid_encrypted_content")
            if kind in CALLS:
                calls.add(str(item.get("call_id")))
            if kind in CALLS.values() and str(item.get("call_id") or item.get("id")) not in calls:
                return self.error(400, "No tool call found for function call output with call_id "
                                  f"{item.get('call_id')}.", None, "input")
        return None

    # -- what the model says next ------------------------------------------------------------------

    def view(self, body: dict[str, Any]) -> AgentView:
        view = AgentView()
        tools = list(body.get("tools") or [])
        items = body.get("input") if isinstance(body.get("input"), list) else []
        tools += [t for item in items if item.get("type") == "additional_tools" for t in item.get("tools") or ()]
        for tool in tools:
            members = tool.get("tools") if tool.get("type") == "namespace" else [tool]
            prefix = f"{tool['name']}." if tool.get("type") == "namespace" else ""
            for member in members or ():
                if member.get("type") in ("function", "custom"):
                    view.tools[prefix + member["name"]] = member.get("parameters") or member.get("format") or {}
        if isinstance(body.get("input"), str):
            view.user_texts.append(body["input"])
        for item in items:
            kind = item.get("type") or "message"
            if kind == "message" and item.get("role") == "user":
                content = item.get("content")
                view.user_texts.append(content if isinstance(content, str) else "".join(
                    p.get("text") or "" for p in content or ()))
            elif kind in CALLS.values():
                view.tool_results.append(str(item.get("output")))
            elif kind == "message" and item.get("role") == "assistant" or kind in CALLS:
                view.turns += 1
        return view

    def turn(self, body: dict[str, Any]) -> Turn:
        return self.script(self.view(body)) if self.script is not None else Turn(text=self.reply)

    def output(self, turn: Turn) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.thinking:
            sealed = f"gAAAA{secrets.token_hex(8)}"
            self.issued.add(sealed)
            items.append({"type": "reasoning", "id": f"rs_{secrets.token_hex(4)}", "encrypted_content": sealed,
                          "summary": [{"type": "summary_text", "text": turn.thinking}]})
        if turn.text:
            items.append({"type": "message", "id": f"msg_{secrets.token_hex(4)}", "status": "completed",
                          "role": "assistant", "content": [{"type": "output_text", "text": turn.text,
                                                            "annotations": []}]})
        if turn.tool:
            namespace, _, name = turn.tool["name"].rpartition(".")
            call = {"type": "function_call", "id": f"fc_{secrets.token_hex(4)}", "call_id": turn.tool["id"],
                    "name": name, "arguments": orjson.dumps(turn.tool["input"]).decode(), "status": "completed"}
            items.append({**call, "namespace": namespace} if namespace else call)
        return items

    def response(self, body: dict[str, Any], output: list[dict[str, Any]], status: str) -> dict[str, Any]:
        return {"id": "resp_upstream", "object": "response", "created_at": 1, "status": status,
                "model": body["model"], "output": output, "usage": self.usage if status == "completed" else None,
                "store": body.get("store", True)}

    # -- the endpoints -----------------------------------------------------------------------------

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.seen.append({"path": request.path, "headers": dict(request.headers), "body": body})
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return self.error(401, "Incorrect API key provided.", "invalid_api_key")
        refused = self.problem(body)
        if refused is not None:
            return refused
        output = self.output(self.turn(body))
        if not body.get("stream"):
            return web.json_response(self.response(body, output, "completed"))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i, (kind, data) in enumerate(self.events(body, output)):
            await resp.write(f"event: {kind}\ndata: ".encode() + orjson.dumps(
                {"type": kind, "sequence_number": i, **data}) + b"\n\n")
        return resp

    def events(self, body: dict[str, Any], output: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        shell = self.response(body, [], "in_progress")
        events: list[tuple[str, dict[str, Any]]] = [("response.created", {"response": shell}),
                                                    ("response.in_progress", {"response": shell})]
        for index, item in enumerate(output):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                events += [("response.output_item.added", {"output_index": index, "item": {**item, "content": []}}),
                           ("response.content_part.added", {"item_id": item["id"], "output_index": index,
                                                            "content_index": 0, "part": {
                                                                "type": "output_text", "text": "", "annotations": []}}),
                           ("response.output_text.delta", {"item_id": item["id"], "output_index": index,
                                                           "content_index": 0, "delta": text}),
                           ("response.output_text.done", {"item_id": item["id"], "output_index": index,
                                                          "content_index": 0, "text": text})]
            elif item["type"] == "function_call":
                events += [("response.output_item.added", {"output_index": index, "item": {**item, "arguments": ""}}),
                           ("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": index,
                                                                       "delta": item["arguments"]})]
            else:
                events.append(("response.output_item.added", {"output_index": index, "item": {**item, "summary": []}}))
            events.append(("response.output_item.done", {"output_index": index, "item": item}))
        events.append(("response.completed", {"response": self.response(body, output, "completed")}))
        return events

    async def compact(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seen.append({"path": request.path, "headers": dict(request.headers), "body": body})
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return self.error(401, "Incorrect API key provided.", "invalid_api_key")
        unknown = sorted(set(body) - COMPACT_PARAMS)
        if unknown:
            return self.error(400, f"Unknown parameter: '{unknown[0]}'.", "unknown_parameter", unknown[0])
        refused = self.problem(body)
        if refused is not None:
            return refused
        items = body.get("input") if isinstance(body.get("input"), list) else []
        users = [{"type": "message", "id": f"msg_{secrets.token_hex(4)}", "status": "completed", "role": "user",
                  "content": [{"type": "input_text", "text": i["content"]}] if isinstance(i["content"], str)
                  else i["content"]}
                 for i in items if (i.get("type") or "message") == "message" and i.get("role") == "user"]
        sealed = f"gAAAA{secrets.token_hex(8)}"
        self.issued.add(sealed)
        return web.json_response({"id": "resp_compacted", "object": "response.compaction", "created_at": 1,
                                  "output": [*users, {"type": "compaction", "id": "cmp_upstream",
                                                      "encrypted_content": sealed}], "usage": self.usage})
