"""The answer of a request whose MCP tools the gateway ran, in the client's format: each round's own
output (reasoning, text) rendered by the client's inbound as usual, the MCP calls of that round after
it, then the last round's answer; the usage is the sum of the rounds'.

- Responses: an `mcp_list_tools` item per declared server first ({id, server_label, tools: [{name,
  description, input_schema, annotations}], error}), then `mcp_call` items ({id, server_label, name,
  arguments, output, error, status}; `error` an McpToolCallError: mcp_protocol_error {code,
  message}, mcp_tool_execution_error {content}, http_error {code, message}) — openai-python
  types/responses/response_output_item.py `McpListTools`, `McpCall`, mcp_tool_call_error.py;
- Anthropic: `mcp_tool_use` {id, name, server_name, input} and `mcp_tool_result` {tool_use_id,
  is_error, content: [text blocks]} blocks (anthropic-sdk-python types/beta/beta_mcp_tool_use_block.py,
  beta_mcp_tool_result_block.py).

Rounds bound reached: the last round's calls are not run; the answer ends with what it has and a
text saying so (Responses: `status: "incomplete"`, `incomplete_details.reason: "mcp_max_rounds"`).
"""
from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.relay.inbound.base import Inbound
from api.relay.inbound.responses_output import message_item
from api.relay.mcp_tools.declared import RESPONSES
from api.relay.mcp_tools.offer import Offer
from api.relay.mcp_tools.running import Ran

INCOMPLETE_REASON = "mcp_max_rounds"
# Responses items of calls the client runs (they come after the MCP calls of their round)
CLIENT_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")


@dataclass(slots=True)
class Step:
    """One model round: its answer (the internal form) and the MCP calls run after it."""

    answer: Mapping[str, Any]
    ran: list[Ran] = field(default_factory=list)


def without_calls(answer: Mapping[str, Any], names: Collection[str]) -> dict[str, Any]:
    """The answer without its calls of the tools named (ended as a plain answer when none is left)."""
    choices = list(answer.get("choices") or [{}])
    choice = dict(choices[0])
    message = dict(choice.get("message") or {})
    calls = [c for c in message.get("tool_calls") or () if (c.get("function") or {}).get("name") not in names]
    if calls:
        message["tool_calls"] = calls
    else:
        message.pop("tool_calls", None)
        if choice.get("finish_reason") == "tool_calls":
            choice["finish_reason"] = "stop"
    choice["message"] = message
    return {**answer, "choices": [choice, *choices[1:]]}


def add_usage(total: dict[str, Any], usage: Any) -> None:
    """Sum a round's usage (OpenAI's chat usage, nested details included) into `total`."""
    if not isinstance(usage, Mapping):
        return
    for key, value in usage.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            total[key] = int(total.get(key) or 0) + value
        elif isinstance(value, Mapping):
            add_usage(total.setdefault(key, {}), value)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def stopped_text(rounds: int) -> str:
    return (f"[The gateway stopped after {rounds} rounds of MCP tool calls (McpMaxRounds): the model's last "
            "calls were not run.]")


def final_body(inbound: Inbound, fmt: str, offer: Offer, steps: list[Step], usage: dict[str, Any],
               stopped: int = 0) -> dict[str, Any]:
    """The client's answer (`stopped`: the rounds bound, when it was reached)."""
    names = offer.functions.keys()
    last = without_calls(steps[-1].answer, names)
    last["usage"] = usage
    body = inbound.render(last)
    if fmt == RESPONSES:
        return _responses(inbound, body, offer, steps, stopped)
    return _anthropic(inbound, body, steps, names, stopped)


def _responses(inbound: Inbound, body: dict[str, Any], offer: Offer, steps: list[Step],
               stopped: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {"id": _new_id("mcpl"), "type": "mcp_list_tools", "server_label": declared.label, "tools": tools,
         "error": None} for declared, tools in offer.listings]
    for step in steps[:-1]:
        rendered = inbound.render(without_calls(step.answer, offer.functions.keys()))
        output.extend(item for item in rendered["output"] if not _empty_message(item))
        output.extend(mcp_call(ran) for ran in step.ran)
    final = [item for item in body["output"] if not (stopped and _empty_message(item))]
    own = [item for item in final if item.get("type") not in CLIENT_CALLS]
    output.extend([*own, *(mcp_call(ran) for ran in steps[-1].ran), *(i for i in final if i not in own)])
    if stopped:
        output.append(message_item(stopped_text(stopped)))
        body["status"] = "incomplete"
        body["incomplete_details"] = {"reason": INCOMPLETE_REASON}
    body["output"] = output
    return body


def _empty_message(item: Mapping[str, Any]) -> bool:
    return item.get("type") == "message" and not any(
        isinstance(part, Mapping) and part.get("text") for part in item.get("content") or ())


def mcp_call(ran: Ran) -> dict[str, Any]:
    return {"id": _new_id("mcp"), "type": "mcp_call", "server_label": ran.offered.declared.label,
            "name": ran.offered.listed, "arguments": ran.arguments,
            "output": None if ran.failed else ran.output, "error": ran.error,
            "status": "failed" if ran.failed else "completed", "approval_request_id": None}


def _anthropic(inbound: Inbound, body: dict[str, Any], steps: list[Step], names: Collection[str],
               stopped: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for step in steps[:-1]:
        rendered = inbound.render(without_calls(step.answer, names))
        content.extend(block for block in rendered["content"] if not _empty_text(block))
        for ran in step.ran:
            content.extend(mcp_blocks(ran))
    final = [block for block in body["content"] if not (stopped and _empty_text(block))]
    content.extend(block for block in final if block.get("type") != "tool_use")
    for ran in steps[-1].ran:  # run beside calls of the client's own tools, which end the turn
        content.extend(mcp_blocks(ran))
    content.extend(block for block in final if block.get("type") == "tool_use")
    if stopped:
        content.append({"type": "text", "text": stopped_text(stopped)})
    body["content"] = content
    return body


def _empty_text(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and not block.get("text")


def mcp_blocks(ran: Ran) -> list[dict[str, Any]]:
    call_id = ran.call_id.removeprefix("toolu_").removeprefix("call_")
    use_id = f"mcptoolu_{call_id}"
    try:
        arguments = orjson.loads(ran.arguments) if ran.arguments.strip() else {}
    except orjson.JSONDecodeError:
        arguments = {}
    return [{"type": "mcp_tool_use", "id": use_id, "name": ran.offered.listed,
             "server_name": ran.offered.declared.label, "input": arguments if isinstance(arguments, dict) else {}},
            {"type": "mcp_tool_result", "tool_use_id": use_id, "is_error": ran.failed, "content": ran.content}]
