"""OpenAI's Responses API in: `POST /v1/responses`, streamed (the typed event stream) and not,
stateless: nothing is stored, so `previous_response_id` is refused with the reason, and every
answer says `store: false`.

Request → chat: `instructions` → a system message; `input` (a string, or items: messages with
input_text / input_image / output_text parts, function_call and function_call_output items;
reasoning items are dropped) → messages; function `tools` and `tool_choice`; `max_output_tokens`,
sampling, `reasoning.effort`, `text.format` (JSON schema / JSON object) → `response_format`.
Answer → a `response` with reasoning, message and function_call output items and its usage.
An OpenAI channel (type 1) gets the body as sent at `/v1/responses` (built-in tools included) and
its events are relayed untouched; the other channels cannot run OpenAI's built-in tools, so a
request that asks for them is refused there."""
from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.base import (
    EVENT_NOT_OBJECT,
    AnswerReader,
    StreamChunk,
    StreamState,
    TokenUsage,
    json_object,
    openai_error,
)
from api.relay.errors import ChannelCannotServe, RelayError
from api.relay.inbound.base import Inbound, StreamWriter
from api.relay.sse import SSEEvent
from models.enums import ChannelType

ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error",
               404: "invalid_request_error", 429: "rate_limit_error"}


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _content(parts: Any) -> str | list[dict[str, Any]]:
    if isinstance(parts, str):
        return parts
    out: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            out.append({"type": "text", "text": str(part.get("text") or "")})
        elif kind == "input_image":
            url = part.get("image_url") or part.get("url")
            if isinstance(url, str) and url:
                image: dict[str, Any] = {"url": url}
                if part.get("detail"):
                    image["detail"] = part["detail"]
                out.append({"type": "image_url", "image_url": image})
    if all(p["type"] == "text" for p in out):
        return "".join(p["text"] for p in out)
    return out


def convert_input(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.append({"role": "system", "content": body["instructions"]})
    given = body.get("input")
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
        return messages
    for item in given if isinstance(given, list) else ():
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type") or "message"
        if kind == "message":
            role = str(item.get("role") or "user")
            messages.append({"role": role, "content": _content(item.get("content"))})
        elif kind == "function_call":
            call = {"id": str(item.get("call_id") or ""), "type": "function",
                    "function": {"name": str(item.get("name") or ""), "arguments": str(item.get("arguments") or "")}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": str(item.get("call_id") or ""),
                             "content": output if isinstance(output, str) else orjson.dumps(output).decode()})
    return messages


def usage_of(usage: TokenUsage) -> dict[str, Any]:
    return {"input_tokens": usage.prompt_tokens, "input_tokens_details": {"cached_tokens": usage.cached_tokens},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.total_tokens}


def read_usage(usage: Any) -> TokenUsage | None:
    """A Responses `usage` object → TokenUsage (None when absent or all zero)."""
    if not isinstance(usage, Mapping):
        return None
    prompt, completion = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    if not prompt and not completion:
        return None
    cached = int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)
    reasoning = int((usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)
    return TokenUsage(prompt, completion, cached, reasoning)


class ResponsesInbound(Inbound):
    name: ClassVar[str] = "responses"
    native_types: ClassVar[frozenset[int]] = frozenset({ChannelType.OPENAI})
    native_path: ClassVar[str] = "/v1/responses"

    def __init__(self, body: dict[str, Any], request: Any) -> None:
        super().__init__(body, request)
        self.response_id = _id("resp")
        self.created = int(time.time())
        raw_tools = body.get("tools")
        tools: list[Any] = raw_tools if isinstance(raw_tools, list) else []
        self.builtin_tools = sorted({str(t.get("type")) for t in tools if isinstance(t, Mapping)
                                     and t.get("type") != "function"})
        if body.get("previous_response_id"):
            raise RelayError.local_error(
                400, "previous_response_id is not supported: this gateway stores no responses; send the whole "
                "conversation in `input` (its reasoning and function_call items included)",
                "previous_response_not_supported", "invalid_request_error")

    @property
    def openai(self) -> dict[str, Any]:
        body = self.body
        out: dict[str, Any] = {"model": body.get("model"), "messages": convert_input(body)}
        if body.get("max_output_tokens") is not None:
            out["max_tokens"] = body["max_output_tokens"]
        for name in ("temperature", "top_p", "parallel_tool_calls", "user"):
            if body.get(name) is not None:
                out[name] = body[name]
        if body.get("stream") is True:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
        functions = [t for t in tools if t.get("type") == "function"]
        if functions:
            out["tools"] = [{"type": "function", "function": {
                "name": t.get("name") or "", "description": t.get("description") or "",
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
                **({"strict": t["strict"]} if isinstance(t.get("strict"), bool) else {})}} for t in functions]
            choice = body.get("tool_choice")
            if isinstance(choice, Mapping) and choice.get("type") == "function":
                out["tool_choice"] = {"type": "function", "function": {"name": choice.get("name") or ""}}
            elif choice in ("auto", "none", "required"):
                out["tool_choice"] = choice
        reasoning = body.get("reasoning")
        if isinstance(reasoning, Mapping) and reasoning.get("effort"):
            out["reasoning_effort"] = reasoning["effort"]
        fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), Mapping) else None
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            out["response_format"] = {"type": "json_schema", "json_schema": {
                k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}}
        elif isinstance(fmt, Mapping) and fmt.get("type") == "json_object":
            out["response_format"] = {"type": "json_object"}
        return out

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        if self.builtin_tools:
            raise ChannelCannotServe(
                400, f"the tools {', '.join(self.builtin_tools)} are OpenAI's own: this model is served by a "
                "channel of another provider, which can only call function tools", "invalid_request_error",
                "unsupported_tool", local=True)
        return body

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        return {**self.body, "model": upstream_model, "store": False}

    def native_reader(self, adaptor: AnswerReader) -> AnswerReader:
        return ResponsesReader()

    def _response(self, model: str, status: str, output: list[dict[str, Any]],
                  usage: TokenUsage | None, incomplete: str | None = None) -> dict[str, Any]:
        body = self.body
        return {
            "id": self.response_id, "object": "response", "created_at": self.created, "status": status,
            "model": model, "output": output, "usage": usage_of(usage) if usage is not None else None,
            "error": None, "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
            "parallel_tool_calls": body.get("parallel_tool_calls", True), "previous_response_id": None,
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None}, "store": False,
            "temperature": body.get("temperature", 1.0), "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
            "top_p": body.get("top_p", 1.0), "truncation": "disabled", "metadata": body.get("metadata") or {},
            "user": body.get("user"),
        }

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        choice = (answer.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        output: list[dict[str, Any]] = []
        if message.get("reasoning_content"):
            output.append({"type": "reasoning", "id": _id("rs"), "status": "completed",
                           "summary": [{"type": "summary_text", "text": message["reasoning_content"]}]})
        if message.get("content"):
            output.append({"type": "message", "id": _id("msg"), "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            output.append({"type": "function_call", "id": _id("fc"), "call_id": call.get("id") or _id("call"),
                           "name": function.get("name") or "", "arguments": function.get("arguments") or "",
                           "status": "completed"})
        length = choice.get("finish_reason") == "length"
        return self._response(str(answer.get("model") or self.body.get("model")),
                              "incomplete" if length else "completed", output,
                              TokenUsage.from_openai(answer.get("usage")), "max_output_tokens" if length else None)

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        return ResponsesStreamWriter(self, model)

    def error_frame(self, err: RelayError) -> bytes:
        return ResponsesStreamWriter(self, "").error(err)

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        body = err.to_body(request_id)
        if err.status >= 500 and body["error"]["type"] == "new_api_error":
            body["error"]["type"] = "server_error"
        return body


class ResponsesReader:
    """Reads what an OpenAI channel answers at /v1/responses (relayed untouched): the usage, and
    the output as chat chunks for the pipeline's count."""

    def decode_body(self, raw: bytes) -> dict[str, Any]:
        return json_object(raw)

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        text = "".join(part.get("text") or "" for item in body.get("output") or () if item.get("type") == "message"
                       for part in item.get("content") or ())
        answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
        return answer, read_usage(body.get("usage"))

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        kind = event.get("type") or ev.event
        if kind in ("response.output_text.delta", "response.reasoning_summary_text.delta",
                    "response.function_call_arguments.delta"):
            key = "content" if kind == "response.output_text.delta" else (
                "reasoning_content" if "reasoning" in kind else "arguments")
            return [{"choices": [{"index": 0, "delta": {key: str(event.get("delta") or "")}}]}]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            state.done = True
            usage = read_usage((event.get("response") or {}).get("usage"))
            if usage is not None:
                state.usage = usage
            if kind == "response.failed":
                error = (event.get("response") or {}).get("error") or {}
                raise RelayError(500, str(error.get("message") or "the response failed"), "upstream_error",
                                 str(error.get("code") or "response_failed"))
            return [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        if kind == "error":
            raise openai_error(500, orjson.dumps({"error": event}))
        return [{"choices": []}] if kind == "response.created" else []


def event(kind: str, sequence: int, data: Mapping[str, Any]) -> bytes:
    return (b"event: " + kind.encode() + b"\ndata: " +
            orjson.dumps({"type": kind, "sequence_number": sequence, **data}) + b"\n\n")


class ResponsesStreamWriter(StreamWriter):
    """Chat chunks → the Responses event stream: created, in_progress, then per output item
    added / deltas / done, and completed with the usage."""

    def __init__(self, inbound: ResponsesInbound, model: str) -> None:
        self.inbound = inbound
        self.model = model
        self.sequence = 0
        self.started = False
        self.items: list[dict[str, Any]] = []  # output items so far (the open one last)
        self.open: str | None = None  # reasoning, message, function_call
        self.calls: dict[int, int] = {}  # chat tool-call index → output index
        self.finish_reason = "stop"

    def _event(self, kind: str, data: Mapping[str, Any]) -> bytes:
        out = event(kind, self.sequence, data)
        self.sequence += 1
        return out

    def _start(self) -> bytes:
        self.started = True
        shell = self.inbound._response(self.model, "in_progress", [], None)
        return self._event("response.created", {"response": shell}) + self._event(
            "response.in_progress", {"response": shell})

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        index, item = len(self.items) - 1, self.items[-1]
        out = b""
        if self.open == "reasoning":
            text = item["summary"][0]["text"]
            out += self._event("response.reasoning_summary_text.done", {
                "item_id": item["id"], "output_index": index, "summary_index": 0, "text": text})
            out += self._event("response.reasoning_summary_part.done", {
                "item_id": item["id"], "output_index": index, "summary_index": 0, "part": item["summary"][0]})
        elif self.open == "message":
            part = item["content"][0]
            out += self._event("response.output_text.done", {
                "item_id": item["id"], "output_index": index, "content_index": 0, "text": part["text"]})
            out += self._event("response.content_part.done", {
                "item_id": item["id"], "output_index": index, "content_index": 0, "part": part})
        else:
            out += self._event("response.function_call_arguments.done", {
                "item_id": item["id"], "output_index": index, "arguments": item["arguments"]})
        item["status"] = "completed"
        out += self._event("response.output_item.done", {"output_index": index, "item": item})
        self.open = None
        return out

    def _add(self, kind: str, item: dict[str, Any]) -> bytes:
        out = self._close()
        self.items.append(item)
        self.open = kind
        index = len(self.items) - 1
        out += self._event("response.output_item.added", {"output_index": index, "item": {
            **item, **({"summary": []} if kind == "reasoning" else {}),
            **({"content": []} if kind == "message" else {})}})
        if kind == "reasoning":
            out += self._event("response.reasoning_summary_part.added", {
                "item_id": item["id"], "output_index": index, "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}})
        elif kind == "message":
            out += self._event("response.content_part.added", {
                "item_id": item["id"], "output_index": index, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}})
        return out

    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes:
        out: list[bytes] = [] if self.started else [self._start()]
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content"):
                    if self.open != "reasoning":
                        out.append(self._add("reasoning", {"type": "reasoning", "id": _id("rs"), "status":
                                                           "in_progress", "summary": [
                                                               {"type": "summary_text", "text": ""}]}))
                    item = self.items[-1]
                    item["summary"][0]["text"] += delta["reasoning_content"]
                    out.append(self._event("response.reasoning_summary_text.delta", {
                        "item_id": item["id"], "output_index": len(self.items) - 1, "summary_index": 0,
                        "delta": delta["reasoning_content"]}))
                if delta.get("content"):
                    if self.open != "message":
                        out.append(self._add("message", {"type": "message", "id": _id("msg"), "status":
                                                         "in_progress", "role": "assistant", "content": [
                                                             {"type": "output_text", "text": "", "annotations": []}]}))
                    item = self.items[-1]
                    item["content"][0]["text"] += delta["content"]
                    out.append(self._event("response.output_text.delta", {
                        "item_id": item["id"], "output_index": len(self.items) - 1, "content_index": 0,
                        "delta": delta["content"]}))
                for call in delta.get("tool_calls") or ():
                    position = int(call.get("index") or 0)
                    function = call.get("function") or {}
                    if position not in self.calls:
                        out.append(self._add("function_call", {
                            "type": "function_call", "id": _id("fc"), "call_id": call.get("id") or _id("call"),
                            "name": function.get("name") or "", "arguments": "", "status": "in_progress"}))
                        self.calls[position] = len(self.items) - 1
                    index = self.calls[position]
                    if function.get("arguments"):
                        self.items[index]["arguments"] += function["arguments"]
                        out.append(self._event("response.function_call_arguments.delta", {
                            "item_id": self.items[index]["id"], "output_index": index,
                            "delta": function["arguments"]}))
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
        return b"".join(out)

    def error(self, err: RelayError) -> bytes:
        return self._event("error", {"code": str(err.code or err.type), "message": err.message, "param": None})

    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        out = [] if self.started else [self._start()]
        out.append(self._close())
        if error is not None:
            out.append(self.error(error))
            return b"".join(out)
        length = self.finish_reason == "length"
        response = self.inbound._response(self.model, "incomplete" if length else "completed", self.items, usage,
                                          "max_output_tokens" if length else None)
        out.append(self._event("response.incomplete" if length else "response.completed", {"response": response}))
        return b"".join(out)
