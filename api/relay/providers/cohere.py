"""Cohere (type 34): chat through the v1 Chat API (`{base}/v1/chat`: the last user turn as
`message`, the rest as `chat_history` with USER/CHATBOT/SYSTEM/TOOL roles, system text as
`preamble`, tools with `parameter_definitions`, results of the last tool calls as `tool_results`),
streamed as newline-delimited JSON events (`stream-start`, `text-generation`,
`tool-calls-generation`, `stream-end` with the usage in `response.meta`); and rerank (`/v1/rerank`,
already in the Jina/OpenAI-style shape). A model name ending in `-internet` is sent without the
suffix and with the web-search connector."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.base import (
    EVENT_NOT_OBJECT,
    Adaptor,
    RelayMeta,
    RelayMode,
    RerankMixin,
    StreamChunk,
    StreamDecoder,
    StreamState,
    TokenUsage,
    call_arguments,
    json_object,
)
from api.relay.decoders import NDJSONDecoder
from api.relay.errors import RelayError
from api.relay.providers.common import ChunkWriter, chat_answer, function_tools, messages_of, text_of, tool_call
from api.relay.sse import SSEEvent
from models.enums import ChannelType

FINISH_REASONS = {"COMPLETE": "stop", "STOP_SEQUENCE": "stop", "MAX_TOKENS": "length", "ERROR_TOXIC": "content_filter",
                  "ERROR_LIMIT": "length", "TOOL_CALL": "tool_calls"}
JSON_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "array": "list",
              "object": "dict"}
INTERNET_SUFFIX = "-internet"



def _tool(function: Mapping[str, Any]) -> dict[str, Any]:
    schema = function.get("parameters") or {}
    given = schema.get("required")
    required = {r for r in given if isinstance(r, str)} if isinstance(given, list) else set()
    properties = schema.get("properties")
    definitions = {}
    for name, prop in (properties.items() if isinstance(properties, Mapping) else ()):
        prop = prop if isinstance(prop, Mapping) else {}
        kind = prop.get("type")
        definitions[name] = {"description": str(prop.get("description") or ""),
                             "type": JSON_TYPES.get(kind, "str") if isinstance(kind, str) else "str",
                             "required": name in required}
    return {"name": function["name"], "description": str(function.get("description") or ""),
            "parameter_definitions": definitions}


def _usage(meta: Any) -> TokenUsage | None:
    if not isinstance(meta, Mapping):
        return None
    units = meta.get("billed_units") or meta.get("tokens") or {}
    prompt, completion = int(units.get("input_tokens") or 0), int(units.get("output_tokens") or 0)
    return TokenUsage(prompt, completion) if prompt or completion else None


def _calls(calls: Any) -> list[dict[str, Any]]:
    return [tool_call("", str(c.get("name") or ""), c.get("parameters") or {}, i)
            for i, c in enumerate(calls if isinstance(calls, list) else ()) if isinstance(c, Mapping)]


class CohereAdaptor(RerankMixin, Adaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.COHERE
    default_base_url: ClassVar[str] = "https://api.cohere.ai"
    models: ClassVar[tuple[str, ...]] = (
        "command-a-03-2025", "command-r-plus-08-2024", "command-r-08-2024", "command-r7b-12-2024", "command-r-plus",
        "command-r", "command", "command-light", "rerank-v3.5", "rerank-english-v3.0", "rerank-multilingual-v3.0",
    )

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.requested_model or self.meta.model)
        self.tool_seen = False

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.RERANK)

    def request_url(self, mode: RelayMode | None = None) -> str:
        return self.base_url + ("/v1/rerank" if (mode or self.meta.mode) == RelayMode.RERANK else "/v1/chat")

    def stream_decoder(self, content_type: str) -> StreamDecoder | None:
        return NDJSONDecoder() if content_type in ("application/stream+json", "application/x-ndjson") else None

    # -- chat ---------------------------------------------------------------------------------------

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        model = self.meta.model
        body: dict[str, Any] = {}
        if model.endswith(INTERNET_SUFFIX):
            model = model[: -len(INTERNET_SUFFIX)]
            body["connectors"] = [{"id": "web-search"}]
        body["model"] = model
        history: list[dict[str, Any]] = []
        preamble: list[str] = []
        calls_by_id: dict[str, dict[str, Any]] = {}
        pending_results: list[dict[str, Any]] = []  # tool results since the last assistant turn
        for message in messages_of(req):
            role = message.get("role")
            text = text_of(message.get("content"))
            if role in ("system", "developer"):
                if history:
                    history.append({"role": "SYSTEM", "message": text})
                else:
                    preamble.append(text)
            elif role == "tool":
                call = calls_by_id.get(str(message.get("tool_call_id") or ""), {"name": "", "parameters": {}})
                pending_results.append({"call": call, "outputs": [{"result": text}]})
            elif role == "assistant":
                if pending_results:
                    history.append({"role": "TOOL", "tool_results": pending_results})
                    pending_results = []
                entry: dict[str, Any] = {"role": "CHATBOT", "message": text}
                calls = []
                for call in message.get("tool_calls") or ():
                    function = call.get("function") or {}
                    calls.append({"name": str(function.get("name") or ""),
                                  "parameters": call_arguments(function.get("arguments"))})
                    calls_by_id[str(call.get("id") or "")] = calls[-1]
                if calls:
                    entry["tool_calls"] = calls
                history.append(entry)
            else:
                if pending_results:
                    history.append({"role": "TOOL", "tool_results": pending_results})
                    pending_results = []
                history.append({"role": "USER", "message": text})
        if pending_results:  # the conversation ends with tool results: they are this turn's input
            body["message"] = ""
            body["tool_results"] = pending_results
        elif history and history[-1]["role"] == "USER":
            body["message"] = history.pop()["message"]
        else:
            body["message"] = ""
        if history:
            body["chat_history"] = history
        if preamble:
            body["preamble"] = "\n".join(preamble)
        for ours, theirs in (("temperature", "temperature"), ("top_p", "p"), ("top_k", "k"), ("seed", "seed"),
                             ("frequency_penalty", "frequency_penalty"), ("presence_penalty", "presence_penalty")):
            value = req.get(ours)
            if isinstance(value, int | float) and not isinstance(value, bool):
                body[theirs] = value
        limit = req.get("max_completion_tokens", req.get("max_tokens"))
        if isinstance(limit, int) and limit > 0:
            body["max_tokens"] = limit
        stop = req.get("stop")
        if isinstance(stop, str) or isinstance(stop, list) and stop:
            body["stop_sequences"] = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)]
        tools = function_tools(req)
        if tools and req.get("tool_choice") != "none":
            body["tools"] = [_tool(f) for f in tools]
        if req.get("stream"):
            body["stream"] = True
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        calls = _calls(body.get("tool_calls"))
        for call in calls:
            call.pop("index", None)
        message: dict[str, Any] = {"role": "assistant", "content": body.get("text") or ("" if not calls else None)}
        if calls:
            message["tool_calls"] = calls
        usage = _usage(body.get("meta"))
        finish = "tool_calls" if calls else FINISH_REASONS.get(str(body.get("finish_reason")), "stop")
        return chat_answer(str(body.get("generation_id") or body.get("response_id") or ""),
                           self.meta.requested_model or self.meta.model, message, finish, usage), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        kind = event.get("event_type")
        if kind == "text-generation" and event.get("text"):
            return [self.writer.chunk({"content": event["text"]})]
        if kind == "tool-calls-generation":
            calls = _calls(event.get("tool_calls"))
            if calls:
                self.tool_seen = True
                return [self.writer.chunk({"tool_calls": calls})]
            return []
        if kind == "stream-end":
            state.done = True
            response = event.get("response") or {}
            usage = _usage(response.get("meta"))
            if usage is not None:
                state.usage = usage
            reason = str(event.get("finish_reason") or "COMPLETE")
            if reason == "ERROR":
                raise RelayError(500, str(response.get("text") or "the upstream stream ended with an error"),
                                 "upstream_error", "stream_error")
            return [self.writer.chunk({}, "tool_calls" if self.tool_seen else FINISH_REASONS.get(reason, "stop"))]
        return []  # stream-start, search and citation events, tool-calls-chunk (the whole calls follow)

    # -- rerank -------------------------------------------------------------------------------------

    def convert_rerank_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Cohere bills search units, not tokens: the pipeline bills the local count of the query and documents."""
        results = [{"index": r.get("index"), "relevance_score": r.get("relevance_score"),
                    **({"document": r["document"]} if r.get("document") is not None else {})}
                   for r in body.get("results") or () if isinstance(r, Mapping)]
        return {"id": body.get("id"), "model": self.meta.requested_model or self.meta.model, "results": results,
                "meta": body.get("meta") or {}}, None
