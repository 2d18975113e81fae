"""Responses streams: the typed event stream written from the pipeline's chat chunks, and the reader
of a native channel's own event stream (relayed untouched, read for its usage).

Event names and payloads as OpenAI sends them and the clients read them (openai-python
types/responses/response_stream_event.py; Codex codex-rs/codex-api/src/sse/responses.rs reads
`response.output_item.done` items and the usage of `response.completed`): created, in_progress,
then per output item `output_item.added`, its deltas, its `.done` events and `output_item.done`
(a reasoning item's `encrypted_content` is set at its done), and `response.completed` (or
`response.incomplete`) with the whole response. A custom tool's input arrives whole at its close
(`custom_tool_call_input.delta` / `.done`), a local_shell_call's action and a tool_search_call's
arguments at their close.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from api.relay.inbound.base import StreamWriter
from api.relay.inbound.responses_output import INCOMPLETE, ProviderState, annotations_of, message_item, read_usage
from api.relay.inbound.responses_tools import ToolMap, new_id
from api.upstream.base import StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object, openai_error
from api.upstream.reasoning import gemini_signature
from api.upstream.sse import SSEEvent

# The response object around the output: (status, output items, usage, incomplete reason) → response.
Envelope = Callable[[str, list[dict[str, Any]], TokenUsage | None, str | None], dict[str, Any]]


def event(kind: str, sequence: int, data: Mapping[str, Any]) -> bytes:
    return (b"event: " + kind.encode() + b"\ndata: " +
            orjson.dumps({"type": kind, "sequence_number": sequence, **data}) + b"\n\n")


class ResponsesStreamWriter(StreamWriter):
    """Chat chunks → the Responses event stream."""

    def __init__(self, envelope: Envelope, tools: ToolMap) -> None:
        self.envelope = envelope
        self.tools = tools
        self.sequence = 0
        self.started = False
        self.items: list[dict[str, Any]] = []  # output items so far (the open one last)
        self.open: str | None = None  # kind of the open item: reasoning, message, function_call, …
        self.calls: dict[int, int] = {}  # chat tool-call index → output index
        self.arguments: dict[int, str] = {}  # output index → the arguments written so far
        self.finish_reason = "stop"
        self.state = ProviderState()  # the turn's provider state, as it arrives
        self.sealed = ProviderState()  # the part of it already sent in a reasoning item
        self.thinking = ""  # reasoning text since the last thinking block ended

    def _event(self, kind: str, data: Mapping[str, Any]) -> bytes:
        out = event(kind, self.sequence, data)
        self.sequence += 1
        return out

    def _start(self) -> bytes:
        self.started = True
        shell = self.envelope("in_progress", [], None, None)
        return self._event("response.created", {"response": shell}) + self._event(
            "response.in_progress", {"response": shell})

    # -- provider state ----------------------------------------------------------------------------

    def _unsealed(self) -> ProviderState:
        """The provider state not sent yet (it goes into the next reasoning item that closes)."""
        state, sent = self.state, self.sealed
        return ProviderState(state.blocks[len(sent.blocks):],
                             {k: v for k, v in state.calls.items() if k not in sent.calls},
                             state.text_signature if state.text_signature != sent.text_signature else None)

    def _mark_sealed(self) -> None:
        self.sealed = ProviderState(list(self.state.blocks), dict(self.state.calls), self.state.text_signature)

    def _thinking_blocks(self, blocks: Any) -> None:
        """A thinking block's end (its signature) or a redacted block, as the stream delivers them."""
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "thinking" and block.get("signature"):
                self.state.blocks.append({"type": "thinking", "thinking": block.get("thinking") or self.thinking,
                                          "signature": block["signature"]})
                self.thinking = ""
            elif block.get("type") == "redacted_thinking":
                self.state.blocks.append(dict(block))

    # -- items -------------------------------------------------------------------------------------

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        index, item, kind = len(self.items) - 1, self.items[-1], self.open
        self.open = None
        out = b""
        if kind == "reasoning":
            text = item["summary"][0]["text"] if item["summary"] else ""
            if item["summary"]:
                out += self._event("response.reasoning_summary_text.done", {
                    "item_id": item["id"], "output_index": index, "summary_index": 0, "text": text})
                out += self._event("response.reasoning_summary_part.done", {
                    "item_id": item["id"], "output_index": index, "summary_index": 0, "part": item["summary"][0]})
            sealed = self._unsealed().sealed(text)
            if sealed is not None:
                item["encrypted_content"] = sealed
            self._mark_sealed()
        elif kind == "message":
            part = item["content"][0]
            out += self._event("response.output_text.done", {
                "item_id": item["id"], "output_index": index, "content_index": 0, "text": part["text"],
                "logprobs": []})
            out += self._event("response.content_part.done", {
                "item_id": item["id"], "output_index": index, "content_index": 0, "part": part})
        else:
            out += self._close_call(index, item)
        item["status"] = "completed"
        return out + self._event("response.output_item.done", {"output_index": index, "item": item})

    def _close_call(self, index: int, item: dict[str, Any]) -> bytes:
        """The tool call's final events; custom and local-shell calls take their final form here."""
        raw = self.arguments.get(index, "")
        call = {"id": item["call_id"], "function": {"name": item.pop("flat"), "arguments": raw}}
        final = self.tools.call_item(call, "in_progress")
        final["id"] = item["id"]
        item.clear()
        item.update(final)
        if item["type"] == "function_call":
            return self._event("response.function_call_arguments.done", {
                "item_id": item["id"], "output_index": index, "arguments": raw})
        if item["type"] == "custom_tool_call":
            return self._event("response.custom_tool_call_input.delta", {
                "item_id": item["id"], "output_index": index, "delta": item["input"]}) + self._event(
                "response.custom_tool_call_input.done", {
                    "item_id": item["id"], "output_index": index, "input": item["input"]})
        return self._event("response.output_item.added", {"output_index": index, "item": item})

    def _add(self, kind: str, item: dict[str, Any], announce: bool = True) -> bytes:
        out = self._close()
        self.items.append(item)
        self.open = kind
        index = len(self.items) - 1
        if not announce:
            return out
        out += self._event("response.output_item.added", {"output_index": index, "item": {
            k: v for k, v in item.items() if k != "flat"}})
        if kind == "message":
            out += self._event("response.content_part.added", {
                "item_id": item["id"], "output_index": index, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}})
        return out

    def _reasoning(self, text: str) -> bytes:
        out = b""
        if self.open != "reasoning":
            out += self._add("reasoning", {"type": "reasoning", "id": new_id("rs"), "summary": [],
                                           "status": "in_progress"})
        if not text:
            return out
        item, index = self.items[-1], len(self.items) - 1
        if not item["summary"]:
            item["summary"].append({"type": "summary_text", "text": ""})
            out += self._event("response.reasoning_summary_part.added", {
                "item_id": item["id"], "output_index": index, "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}})
        item["summary"][0]["text"] += text
        self.thinking += text
        return out + self._event("response.reasoning_summary_text.delta", {
            "item_id": item["id"], "output_index": index, "summary_index": 0, "delta": text})

    def _text(self, text: str) -> bytes:
        out = b""
        if self.open != "message":
            out += self._add("message", {**message_item("", "in_progress")})
        item, index = self.items[-1], len(self.items) - 1
        item["content"][0]["text"] += text
        return out + self._event("response.output_text.delta", {
            "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text, "logprobs": []})

    def _annotations(self, annotations: list[dict[str, Any]]) -> bytes:
        """Citations of the text written so far (they come once their text is complete)."""
        index = next((i for i in range(len(self.items) - 1, -1, -1) if self.items[i]["type"] == "message"), None)
        if index is None:
            return b""
        item, out = self.items[index], b""
        part = item["content"][0]
        for annotation in annotations:
            part["annotations"].append(annotation)
            out += self._event("response.output_text.annotation_added", {
                "item_id": item["id"], "output_index": index, "content_index": 0,
                "annotation_index": len(part["annotations"]) - 1, "annotation": annotation})
        return out

    def _call(self, call: Mapping[str, Any]) -> bytes:
        out = b""
        position = int(call.get("index") or 0)
        function = call.get("function") or {}
        if position not in self.calls:
            flat = str(function.get("name") or "")
            kind = self.tools.find(flat).kind
            shell = {**self.tools.call_item({"id": call.get("id"), "function": {"name": flat}}, "in_progress"),
                     "flat": flat}
            if kind == "custom":
                shell["input"] = ""
            out += self._add(kind, shell, announce=kind in ("function", "custom"))
            self.calls[position] = len(self.items) - 1
        index = self.calls[position]
        signature = gemini_signature(call)
        if signature:
            self.state.calls[self.items[index]["call_id"]] = signature
        delta = str(function.get("arguments") or "")
        if delta:
            self.arguments[index] = self.arguments.get(index, "") + delta
            if (self.items[index]["type"] == "function_call" and self.open is not None
                    and index == len(self.items) - 1):
                self.items[index]["arguments"] += delta
                out += self._event("response.function_call_arguments.delta", {
                    "item_id": self.items[index]["id"], "output_index": index, "delta": delta})
        return out

    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes:
        out: list[bytes] = [] if self.started else [self._start()]
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content") or delta.get("thinking_blocks"):
                    out.append(self._reasoning(str(delta.get("reasoning_content") or "")))
                    self._thinking_blocks(delta.get("thinking_blocks"))
                signature = gemini_signature(delta)
                if signature:
                    self.state.text_signature = signature
                if delta.get("content"):
                    out.append(self._text(str(delta["content"])))
                if delta.get("annotations"):
                    out.append(self._annotations(annotations_of(delta["annotations"])))
                for call in delta.get("tool_calls") or ():
                    out.append(self._call(call))
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
        return b"".join(out)

    def error(self, err: RelayError) -> bytes:
        return self._event("error", {"code": str(err.code or err.type), "message": err.message, "param": None})

    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        out = [] if self.started else [self._start()]
        out.append(self._close())
        if self._unsealed():  # state that came after its reasoning item closed (a Gemini call's signature)
            out.append(self._add("reasoning", {"type": "reasoning", "id": new_id("rs"), "summary": [],
                                               "status": "in_progress"}))
            out.append(self._close())
        if error is not None:
            out.append(self.error(error))
            failed = self.envelope("failed", self.items, usage, None)
            # The response's error codes are OpenAI's short list (openai-python types/responses/response_error.py).
            code = "rate_limit_exceeded" if error.status == 429 else "server_error"
            failed["error"] = {"code": code, "message": error.message}
            out.append(self._event("response.failed", {"response": failed}))
            return b"".join(out)
        reason = INCOMPLETE.get(self.finish_reason)
        response = self.envelope("incomplete" if reason else "completed", self.items, usage, reason)
        out.append(self._event("response.incomplete" if reason else "response.completed", {"response": response}))
        return b"".join(out)


class ResponsesReader:
    """Reads what a native channel answers at its Responses endpoint (relayed untouched): the usage,
    and the output as chat chunks for the pipeline's own count."""

    def decode_body(self, raw: bytes) -> dict[str, Any]:
        return json_object(raw)

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        text = "".join(part.get("text") or "" for item in body.get("output") or () if item.get("type") == "message"
                       for part in item.get("content") or () if isinstance(part, Mapping))
        answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
        return answer, read_usage(body.get("usage"))

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        data = json_object(ev.data, EVENT_NOT_OBJECT)
        kind = data.get("type") or ev.event
        delta = str(data.get("delta") or "")
        if kind == "response.output_text.delta":
            return [{"choices": [{"index": 0, "delta": {"content": delta}}]}]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [{"choices": [{"index": 0, "delta": {"reasoning_content": delta}}]}]
        if kind in ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta"):
            call = {"index": int(data.get("output_index") or 0), "function": {"arguments": delta}}
            return [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            state.done = True
            usage = read_usage((data.get("response") or {}).get("usage"))
            if usage is not None:
                state.usage = usage
            if kind == "response.failed":
                error = (data.get("response") or {}).get("error") or {}
                raise RelayError(500, str(error.get("message") or "the response failed"), "upstream_error",
                                 str(error.get("code") or "response_failed"))
            return [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        if kind == "error":
            raise openai_error(500, orjson.dumps({"error": data}))
        return [{"choices": []}] if kind == "response.created" else []
