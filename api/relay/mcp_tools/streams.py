"""A streamed request whose MCP tools the gateway ran: the rounds run whole (each upstream call not
streamed, the tools run between them), then the finished answer is sent as the client's stream,
each item or block in turn with its own events. The client sees nothing until the last round is
answered; what it then reads is what the non-streamed answer holds.

Responses (openai-python types/responses/response_stream_event.py): `response.created`,
`response.in_progress`, per item `response.output_item.added`, its own events (a message's
content part and text; an `mcp_list_tools` item's `response.mcp_list_tools.completed`; an
`mcp_call`'s `response.mcp_call_arguments.done` and `response.mcp_call.completed` or `.failed`; a
function call's arguments), `response.output_item.done`; then `response.completed` (or
`response.incomplete`). Anthropic (its Messages streaming events): `message_start`, per block
`content_block_start` / its deltas / `content_block_stop`, `message_delta`, `message_stop`.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from aiohttp import web

from api.relay.inbound.anthropic_stream import event as anthropic_event
from api.relay.inbound.responses_stream import event as responses_event
from api.relay.mcp_tools.declared import RESPONSES

STREAM_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
                  "Access-Control-Allow-Origin": "*"}


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


async def respond(request: web.Request, fmt: str, body: dict[str, Any], headers: Mapping[str, str]
                  ) -> web.StreamResponse:
    response = web.StreamResponse(status=200, headers={**STREAM_HEADERS, **headers})
    await response.prepare(request)
    frames = responses_frames(body) if fmt == RESPONSES else anthropic_frames(body)
    await response.write(b"".join(frames))
    await response.write_eof()
    return response


# -- Responses ---------------------------------------------------------------------------------------------


def responses_frames(body: dict[str, Any]) -> Iterator[bytes]:
    sequence = iter(range(1_000_000))

    def emit(kind: str, **data: Any) -> bytes:
        return responses_event(kind, next(sequence), data)

    opening = {**body, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    yield emit("response.created", response=opening)
    yield emit("response.in_progress", response=opening)
    for index, item in enumerate(body["output"]):
        yield from _item_frames(emit, index, item)
    ending = "response.incomplete" if body.get("status") == "incomplete" else "response.completed"
    yield emit(ending, response=body)


def _item_frames(emit: Any, index: int, item: Mapping[str, Any]) -> Iterator[bytes]:
    kind, item_id = item.get("type"), item.get("id")
    at = {"output_index": index, "item_id": item_id}
    if kind == "message":
        yield emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress",
                                                                            "content": []})
        for part_index, part in enumerate(item.get("content") or ()):
            empty = {**part, "text": ""} if part.get("type") == "output_text" else part
            yield emit("response.content_part.added", **at, content_index=part_index, part=empty)
            if part.get("type") == "output_text":
                text = str(part.get("text") or "")
                yield emit("response.output_text.delta", **at, content_index=part_index, delta=text, logprobs=[])
                yield emit("response.output_text.done", **at, content_index=part_index, text=text, logprobs=[])
            yield emit("response.content_part.done", **at, content_index=part_index, part=part)
    elif kind == "mcp_list_tools":
        yield emit("response.output_item.added", output_index=index, item={**item, "tools": []})
        yield emit("response.mcp_list_tools.in_progress", **at)
        yield emit("response.mcp_list_tools.completed", **at)
    elif kind == "mcp_call":
        yield emit("response.output_item.added", output_index=index,
                   item={**item, "status": "in_progress", "output": None, "error": None})
        yield emit("response.mcp_call.in_progress", **at)
        yield emit("response.mcp_call_arguments.done", **at, arguments=item.get("arguments") or "")
        yield emit("response.mcp_call.failed" if item.get("error") else "response.mcp_call.completed", **at)
    elif kind == "function_call":
        yield emit("response.output_item.added", output_index=index, item={**item, "arguments": "",
                                                                            "status": "in_progress"})
        arguments = item.get("arguments") or ""
        yield emit("response.function_call_arguments.delta", **at, delta=arguments)
        yield emit("response.function_call_arguments.done", **at, arguments=arguments)
    else:  # reasoning and the other calls: whole
        yield emit("response.output_item.added", output_index=index, item=item)
    yield emit("response.output_item.done", output_index=index, item=item)


# -- Anthropic ---------------------------------------------------------------------------------------------


def anthropic_frames(body: dict[str, Any]) -> Iterator[bytes]:
    usage = body.get("usage") or {}
    opening = {**body, "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {**usage, "output_tokens": 0}}
    yield anthropic_event("message_start", {"message": opening})
    for index, block in enumerate(body.get("content") or ()):
        yield from _block_frames(index, block)
    yield anthropic_event("message_delta", {"delta": {"stop_reason": body.get("stop_reason"),
                                                      "stop_sequence": body.get("stop_sequence")}, "usage": usage})
    yield anthropic_event("message_stop", {})


def _block_frames(index: int, block: Mapping[str, Any]) -> Iterator[bytes]:
    kind = block.get("type")

    def delta(value: dict[str, Any]) -> bytes:
        return anthropic_event("content_block_delta", {"index": index, "delta": value})

    if kind == "text":
        yield anthropic_event("content_block_start", {"index": index, "content_block": {
            **block, "text": "", **({"citations": []} if "citations" in block else {})}})
        yield delta({"type": "text_delta", "text": str(block.get("text") or "")})
    elif kind == "thinking":
        yield anthropic_event("content_block_start", {"index": index, "content_block": {
            "type": "thinking", "thinking": "", "signature": ""}})
        if block.get("thinking"):
            yield delta({"type": "thinking_delta", "thinking": str(block["thinking"])})
        yield delta({"type": "signature_delta", "signature": str(block.get("signature") or "")})
    elif kind in ("tool_use", "mcp_tool_use"):
        yield anthropic_event("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
        yield delta({"type": "input_json_delta", "partial_json": dumps(block.get("input") or {})})
    else:  # redacted thinking, mcp_tool_result: whole
        yield anthropic_event("content_block_start", {"index": index, "content_block": block})
    yield anthropic_event("content_block_stop", {"index": index})
