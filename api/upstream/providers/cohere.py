"""Cohere (type 34) through its v2 API (docs.cohere.com/reference/chat, /reference/chat-stream,
/reference/rerank, /reference/embed):

- chat at `{base}/v2/chat`: OpenAI-like `messages` (system, user, assistant, tool), JSON-schema
  `tools`, assistant `tool_calls` (the text written alongside them is Cohere's `tool_plan`), tool
  results by `tool_call_id`; `p`/`k` for top_p/top_k, `stop_sequences`, `response_format` (a JSON
  schema as `json_schema`), `thinking` for the reasoning models. Streams are SSE events
  (`message-start`, `content-delta` with text or thinking, `tool-plan-delta`, `tool-call-start`/
  `-delta`/`-end`, `message-end` with the finish reason and the usage); the usage billed is Cohere's
  `billed_units` (its `tokens` count the template it adds around the prompt, which it does not bill).
- rerank at `{base}/v2/rerank` (documents as strings; no documents in the answer, so the gateway
  puts them back when asked) and embeddings at `{base}/v2/embed` (float embeddings, `input_type`).

Web-search connectors (the `-internet` model names of v1) were deprecated on 2025-09-15
(docs.cohere.com/changelog/2025-09-15-major-command-deprecations) and v2 has none: such a model is
refused with a 400 that says why, before any upstream call.
"""
from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.services.configuration.capabilities import EFFORT_BUDGETS
from api.upstream.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.endpoints import EmbeddingsMixin, RerankMixin
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.providers.common import (
    ChunkWriter,
    arguments_text,
    chat_answer,
    function_tools,
    messages_of,
    text_of,
    tool_call,
)
from api.upstream.sse import SSEEvent

FINISH_REASONS = {"COMPLETE": "stop", "STOP_SEQUENCE": "stop", "MAX_TOKENS": "length", "TOOL_CALL": "tool_calls"}
FAILED_FINISHES = {"ERROR": 500, "TIMEOUT": 504}  # a generation that ended without an answer
INTERNET_SUFFIX = "-internet"
# Models that think (docs.cohere.com/docs/reasoning; command-a-plus and north-mini-code list Reasoning).
REASONING_PREFIXES = ("command-a-reasoning", "command-a-plus", "north-")
EMBED_INPUT_TYPES = frozenset({"search_document", "search_query", "classification", "clustering", "image"})
MAX_STOP_SEQUENCES = 5
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "insufficient_quota",
               404: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error"}


def _usage(usage: Any) -> TokenUsage | None:
    """Cohere's `usage` (chat) or `meta` (rerank, embed): `billed_units` first, `tokens` otherwise."""
    if not isinstance(usage, Mapping):
        return None
    for name in ("billed_units", "tokens"):
        units = usage.get(name)
        if isinstance(units, Mapping):
            prompt, completion = int(units.get("input_tokens") or 0), int(units.get("output_tokens") or 0)
            if prompt or completion:
                return TokenUsage(prompt, completion)
    return None


def _clamped(value: Any, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return min(max(float(value), low), high)


class CohereAdaptor(EmbeddingsMixin, RerankMixin, Adaptor):
    paths: ClassVar[Mapping[RelayMode, str]] = {
        RelayMode.CHAT: "/v2/chat", RelayMode.RERANK: "/v2/rerank", RelayMode.EMBEDDINGS: "/v2/embed"}

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.name.answered)
        self.calls = 0  # tool calls started in this stream
        self.documents: list[str] = []  # the rerank request's, for `return_documents`
        self.return_documents = False
        self.encoding = "float"

    def thinks(self) -> bool:
        return self.meta.model.startswith(REASONING_PREFIXES)

    # -- chat ---------------------------------------------------------------------------------------

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        model = self.meta.model
        if model.endswith(INTERNET_SUFFIX):
            raise RelayError.local_error(
                400, f"the model {model} used Cohere's web-search connector, which Cohere retired (deprecated "
                     f"2025-09-15) and its v2 API does not have: ask {model[: -len(INTERNET_SUFFIX)]} and give it "
                     "a search tool of your own", "model_not_supported")
        body: dict[str, Any] = {"model": model, "messages": self._messages(req)}
        self._sampling(req, body)
        no_parameters = {"type": "object", "properties": {}}
        tools: list[dict[str, Any]] = [
            {"type": "function", "function": {"name": f["name"], "description": str(f.get("description") or ""),
                                              "parameters": f.get("parameters") or no_parameters}}
            for f in function_tools(req)]
        for tool in req.get("tools") or ():
            if isinstance(tool, Mapping) and tool.get("type") not in (None, "function"):
                self.meta.drop(f"tools.{tool.get('type')}")
        choice = req.get("tool_choice")
        # The Command R models predate `tool_choice`: "only compatible with models Command-r7b and newer"
        # (reference/chat). There "none" is kept by offering no tools; a forced call cannot be.
        no_tool_choice = model == "command-r" or model.startswith("command-r-")
        if tools and no_tool_choice and choice == "none":
            tools = []
        elif tools and no_tool_choice and choice not in (None, "auto"):
            self.meta.drop("tool_choice")
        elif tools and choice == "none":
            body["tool_choice"] = "NONE"
        elif tools and choice == "required":
            body["tool_choice"] = "REQUIRED"
        elif tools and isinstance(choice, Mapping):  # one named function: only that one, and it must be called
            name = (choice.get("function") or {}).get("name")
            tools = [t for t in tools if t["function"]["name"] == name] or tools
            body["tool_choice"] = "REQUIRED"
        if tools:
            body["tools"] = tools
        fmt = req.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema"):
            if tools:  # "not supported when used in combinations with the documents or tools parameters"
                self.meta.drop("response_format")
            else:
                schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None
                body["response_format"] = {"type": "json_object", **({"json_schema": schema} if schema else {})}
        thinking = self._thinking(req)
        if thinking is not None:
            body["thinking"] = thinking
        if req.get("stream"):
            body["stream"] = True
        return body

    def _messages(self, req: Mapping[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for message in messages_of(req):
            role = message.get("role")
            content = message.get("content")
            if role in ("system", "developer"):
                out.append({"role": "system", "content": text_of(content)})
            elif role == "tool":
                out.append({"role": "tool", "tool_call_id": str(message.get("tool_call_id") or ""),
                            "content": text_of(content)})
            elif role == "assistant":
                out.append(self._assistant(message))
            else:
                out.append({"role": "user", "content": self._user_content(content)})
        return out

    def _user_content(self, content: Any) -> str | list[dict[str, Any]]:
        if not isinstance(content, list):
            return text_of(content)
        parts: list[dict[str, Any]] = []
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text":
                parts.append({"type": "text", "text": str(part.get("text") or "")})
            elif kind == "image_url":
                image = part.get("image_url")
                image = image if isinstance(image, Mapping) else {"url": image}
                parts.append({"type": "image_url",
                              "image_url": {k: image[k] for k in ("url", "detail") if image.get(k)}})
            elif kind:
                self.meta.drop(f"content.{kind}")
        return parts

    def _assistant(self, message: Mapping[str, Any]) -> dict[str, Any]:
        text = text_of(message.get("content"))
        calls = [{"id": str(c.get("id") or ""), "type": "function",
                  "function": {"name": str((c.get("function") or {}).get("name") or ""),
                               "arguments": arguments_text((c.get("function") or {}).get("arguments"))}}
                 for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
        out: dict[str, Any] = {"role": "assistant"}
        if calls:  # what the model wrote before calling tools is its tool plan
            out["tool_calls"] = calls
            if text:
                out["tool_plan"] = text
            return out
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning and self.thinks():
            out["content"] = [{"type": "thinking", "thinking": reasoning}, {"type": "text", "text": text}]
        else:
            out["content"] = text
        return out

    def _sampling(self, req: Mapping[str, Any], body: dict[str, Any]) -> None:
        """OpenAI's sampling fields under Cohere's names and ranges (reference/chat: temperature 0-1,
        p 0.01-0.99, k 0-500, penalties 0-1, at most five stop sequences)."""
        for ours, theirs, low, high in (("temperature", "temperature", 0, 1), ("top_p", "p", 0.01, 0.99),
                                        ("frequency_penalty", "frequency_penalty", 0, 1),
                                        ("presence_penalty", "presence_penalty", 0, 1)):
            value = _clamped(req.get(ours), low, high)
            if value is None:
                continue
            if value != req[ours]:
                self.meta.drop(f"{ours}:clamped")
            body[theirs] = value if value != req[ours] else req[ours]  # an int stays an int
        top_k = req.get("top_k")
        if isinstance(top_k, int) and not isinstance(top_k, bool):
            body["k"] = min(max(top_k, 0), 500)
        seed = req.get("seed")
        if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
            body["seed"] = seed
        limit = req.get("max_completion_tokens", req.get("max_tokens"))
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            body["max_tokens"] = limit
        stop = req.get("stop")
        stops = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)] if isinstance(
            stop, list) else []
        if len(stops) > MAX_STOP_SEQUENCES:
            self.meta.drop(f"stop beyond {MAX_STOP_SEQUENCES}")
        if stops:
            body["stop_sequences"] = stops[:MAX_STOP_SEQUENCES]
        for name in ("logprobs", "logit_bias", "top_logprobs"):  # Cohere's logprobs are not OpenAI's: not asked
            if req.get(name) not in (None, False):
                self.meta.drop(name)
        if isinstance(req.get("n"), int) and req["n"] > 1:
            self.meta.drop("n")

    def _thinking(self, req: Mapping[str, Any]) -> dict[str, Any] | None:
        """`thinking` (Claude's spelling) or `reasoning_effort` → Cohere's `thinking` (reference/chat:
        `{type: enabled|disabled, token_budget}`), for the models that think."""
        asked = req.get("thinking")
        effort = req.get("reasoning_effort")
        if not isinstance(asked, Mapping) and not isinstance(effort, str):
            return None
        if not self.thinks():
            self.meta.drop("thinking" if isinstance(asked, Mapping) else "reasoning_effort")
            return None
        if isinstance(asked, Mapping):
            if asked.get("type") == "disabled":
                return {"type": "disabled"}
            budget = asked.get("budget_tokens")
            return {"type": "enabled", **({"token_budget": budget} if isinstance(budget, int) and budget > 0 else {})}
        if effort == "none":
            return {"type": "disabled"}
        budget = EFFORT_BUDGETS.get(str(effort)) if effort in ("minimal", "low", "medium") else None
        return {"type": "enabled", **({"token_budget": budget} if budget else {})}

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        reason = str(body.get("finish_reason") or "COMPLETE")
        if reason in FAILED_FINISHES:
            raise RelayError(FAILED_FINISHES[reason], f"the upstream generation ended with {reason}",
                             "upstream_error", "generation_failed")
        found = body.get("message")
        answer: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        blocks = [b for b in answer.get("content") or () if isinstance(b, Mapping)]
        text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        reasoning = "".join(str(b.get("thinking") or "") for b in blocks if b.get("type") == "thinking")
        calls = [tool_call(str(c.get("id") or ""), str((c.get("function") or {}).get("name") or ""),
                           (c.get("function") or {}).get("arguments") or "{}")
                 for c in answer.get("tool_calls") or () if isinstance(c, Mapping)]
        message: dict[str, Any] = {"role": "assistant", "content": (answer.get("tool_plan") or text or None)
                                   if calls else text}
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = calls
        usage = _usage(body.get("usage"))
        finish = "tool_calls" if calls else FINISH_REASONS.get(reason, "stop")
        return chat_answer(str(body.get("id") or ""), self.meta.name.answered, message, finish,
                           usage), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        if ev.is_done:
            state.done = True
            return []
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        kind = event.get("type")
        message = ((event.get("delta") or {}).get("message") or {}) if isinstance(event.get("delta"), Mapping) else {}
        if kind == "content-delta":
            content = message.get("content") or {}
            if content.get("thinking"):
                return [self.writer.chunk({"reasoning_content": content["thinking"]})]
            return [self.writer.chunk({"content": content["text"]})] if content.get("text") else []
        if kind == "tool-plan-delta":
            return [self.writer.chunk({"content": message["tool_plan"]})] if message.get("tool_plan") else []
        if kind == "tool-call-start":
            call = message.get("tool_calls") or {}
            function = call.get("function") or {}
            self.calls += 1
            started = tool_call(str(call.get("id") or ""), str(function.get("name") or ""),
                                function.get("arguments") or "", self.calls - 1)
            return [self.writer.chunk({"tool_calls": [started]})]
        if kind == "tool-call-delta":
            arguments = ((message.get("tool_calls") or {}).get("function") or {}).get("arguments")
            if not arguments or not self.calls:
                return []
            piece = {"index": self.calls - 1, "function": {"arguments": arguments}}
            return [self.writer.chunk({"tool_calls": [piece]})]
        if kind == "message-end":
            state.done = True
            delta = event.get("delta") or {}
            usage = _usage(delta.get("usage"))
            if usage is not None:
                state.usage = usage
            reason = str(delta.get("finish_reason") or "COMPLETE")
            if reason in FAILED_FINISHES:
                raise RelayError(FAILED_FINISHES[reason], str(delta.get("error") or f"the upstream stream ended with "
                                                                                    f"{reason}"),
                                 "upstream_error", "stream_error")
            return [self.writer.chunk({}, "tool_calls" if self.calls else FINISH_REASONS.get(reason, "stop"))]
        return []  # message-start, content-start/-end, tool-call-end, citations, debug

    def convert_error(self, status: int, body: bytes) -> RelayError:
        """Cohere answers errors as `{"message": …}` with the HTTP status (reference/chat, Errors)."""
        err = super().convert_error(status, body)
        err.type = ERROR_TYPES.get(status, err.type)
        if status == 401:
            err.code = "invalid_api_key"
        elif status == 404 and "model" in err.message:
            err.code = "model_not_found"
        return err

    # -- rerank -------------------------------------------------------------------------------------

    def convert_rerank_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """v2 takes documents as strings only (reference/rerank): `{text}` objects give their text,
        other objects their JSON. `return_documents` is not Cohere's any more: answered here."""
        self.documents = [d if isinstance(d, str) else str(d["text"]) if isinstance(d, Mapping) and isinstance(
            d.get("text"), str) else orjson.dumps(d).decode() for d in req.get("documents") or ()]
        self.return_documents = req.get("return_documents") is True
        body: dict[str, Any] = {"model": self.meta.model, "query": req.get("query"), "documents": self.documents}
        for name in ("top_n", "max_tokens_per_doc"):
            if isinstance(req.get(name), int) and not isinstance(req.get(name), bool):
                body[name] = req[name]
        return body

    def convert_rerank_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Cohere bills rerank in search units, not tokens: the pipeline bills its local count of the
        query and the documents."""
        results = []
        for r in body.get("results") or ():
            if not isinstance(r, Mapping):
                continue
            result = {"index": r.get("index"), "relevance_score": r.get("relevance_score")}
            index = r.get("index")
            if self.return_documents and isinstance(index, int) and 0 <= index < len(self.documents):
                result["document"] = {"text": self.documents[index]}
            results.append(result)
        return {"id": body.get("id"), "model": self.meta.name.answered, "results": results,
                "meta": body.get("meta") or {}}, None

    # -- embeddings ---------------------------------------------------------------------------------

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        texts = req.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise RelayError.local_error(400, "input must be a string or a list of strings (Cohere embeds text, "
                                              "not token ids)", "invalid_input")
        self.encoding = "base64" if req.get("encoding_format") == "base64" else "float"
        input_type = req.get("input_type")
        body: dict[str, Any] = {
            "model": self.meta.model, "texts": texts, "embedding_types": ["float"],
            "input_type": input_type if input_type in EMBED_INPUT_TYPES else "search_document"}
        if isinstance(req.get("dimensions"), int):
            body["output_dimension"] = req["dimensions"]
        return body

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        vectors = (body.get("embeddings") or {}).get("float") or []
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if self.encoding == "base64"
                 else v} for i, v in enumerate(vectors) if isinstance(v, list)]
        usage = _usage(body.get("meta")) or TokenUsage(self.meta.prompt_tokens, 0)
        return {"object": "list", "data": data, "model": self.meta.name.answered,
                "usage": {"prompt_tokens": usage.prompt_tokens, "total_tokens": usage.prompt_tokens}}, usage
