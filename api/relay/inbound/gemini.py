"""Google's Gemini API in, for `google-genai` and Gemini CLI: `POST /v1beta/models/{model}:generateContent`,
`:streamGenerateContent` (SSE with `alt=sse`, else one streamed JSON array), `:countTokens`,
`:embedContent`, `:batchEmbedContents`, `GET /v1beta/models[/{model}]`, and the same under `/v1`.
The key comes in `x-goog-api-key` (or `?key=`, or `Authorization`).

Request → chat: `systemInstruction` → a system message; `contents` (user/model turns with text,
inline and file data, functionCall and functionResponse parts) → messages (a function response
answers the latest call of that name); `functionDeclarations` and `toolConfig`; `generationConfig`
(temperature, topP, topK, maxOutputTokens, stopSequences, candidateCount, seed, penalties, JSON
output with its schema, thinking budget). Answer → `candidates` with text, thought and
functionCall parts, `finishReason` and `usageMetadata`. A Gemini channel (type 24) gets the body
as sent and its answer is relayed untouched."""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.base import TokenUsage
from api.relay.errors import ChannelCannotServe, RelayError
from api.relay.inbound.base import Inbound, StreamWriter
from models.enums import ChannelType

FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY", "tool_calls": "STOP",
                  "function_call": "STOP"}
STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
            409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
            501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
CHOICES = {"AUTO": "auto", "ANY": "required", "NONE": "none"}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return "".join(str(p.get("text") or "") for p in content.get("parts") or () if isinstance(p, Mapping))
    return ""


def convert_contents(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    system = _text_of(body.get("systemInstruction") or body.get("system_instruction"))
    if system:
        messages.append({"role": "system", "content": system})
    calls: dict[str, list[str]] = {}  # function name → ids of its calls not answered yet
    for turn in body.get("contents") or ():
        if not isinstance(turn, Mapping):
            continue
        role = "assistant" if turn.get("role") == "model" else "user"
        parts = [p for p in turn.get("parts") or () if isinstance(p, Mapping)]
        content: list[dict[str, Any]] = []
        tool_calls: list[dict[str, Any]] = []
        for part in parts:
            if part.get("thought"):
                continue
            if "text" in part:
                content.append({"type": "text", "text": str(part["text"])})
            elif isinstance(part.get("inlineData"), Mapping):
                data = part["inlineData"]
                content.append({"type": "image_url", "image_url": {
                    "url": f"data:{data.get('mimeType') or 'image/png'};base64,{data.get('data') or ''}"}})
            elif isinstance(part.get("fileData"), Mapping):
                content.append({"type": "image_url", "image_url": {"url": str(part["fileData"].get("fileUri") or "")}})
            elif isinstance(part.get("functionCall"), Mapping):
                call = part["functionCall"]
                call_id = str(call.get("id") or f"call_{uuid.uuid4().hex[:24]}")
                calls.setdefault(str(call.get("name") or ""), []).append(call_id)
                tool_calls.append({"id": call_id, "type": "function", "function": {
                    "name": str(call.get("name") or ""), "arguments": orjson.dumps(call.get("args") or {}).decode()}})
            elif isinstance(part.get("functionResponse"), Mapping):
                answer = part["functionResponse"]
                name = str(answer.get("name") or "")
                pending = calls.get(name) or []
                call_id = str(answer.get("id") or (pending.pop(0) if pending else f"call_{name}"))
                messages.append({"role": "tool", "tool_call_id": call_id,
                                 "content": orjson.dumps(answer.get("response") or {}).decode()})
        if tool_calls:
            text = "".join(p["text"] for p in content if p["type"] == "text")
            messages.append({"role": "assistant", "content": text or None, "tool_calls": tool_calls})
        elif content:
            plain = all(p["type"] == "text" for p in content)
            messages.append({"role": role, "content": "".join(p["text"] for p in content) if plain else content})
    return messages


def _tool_choice(config: Any) -> Any:
    calling = config.get("functionCallingConfig") if isinstance(config, Mapping) else None
    if not isinstance(calling, Mapping):
        return None
    allowed = calling.get("allowedFunctionNames")
    if calling.get("mode") == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
        return {"type": "function", "function": {"name": allowed[0]}}
    return CHOICES.get(str(calling.get("mode")))


def usage_metadata(usage: TokenUsage) -> dict[str, int]:
    meta = {"promptTokenCount": usage.prompt_tokens,
            "candidatesTokenCount": usage.completion_tokens - usage.reasoning_tokens,
            "totalTokenCount": usage.total_tokens}
    if usage.cached_tokens:
        meta["cachedContentTokenCount"] = usage.cached_tokens
    if usage.reasoning_tokens:
        meta["thoughtsTokenCount"] = usage.reasoning_tokens
    return meta


def google_error(err: RelayError, request_id: str) -> dict[str, Any]:
    message = f"{err.message} (request id: {request_id})" if request_id else err.message
    return {"error": {"code": err.status, "message": message, "status": STATUSES.get(err.status, "UNKNOWN")}}


class GeminiInbound(Inbound):
    name: ClassVar[str] = "gemini"
    query_key: ClassVar[bool] = True  # Google's clients may send the key as `?key=`
    native_types: ClassVar[frozenset[int]] = frozenset({ChannelType.GEMINI})

    def __init__(self, body: dict[str, Any], request: Any, model: str = "", stream: bool = False,
                 sse: bool = True) -> None:
        super().__init__(body, request)
        self.model = model
        self.stream = stream
        self.sse = sse
        raw_tools = body.get("tools")
        tools: list[Any] = raw_tools if isinstance(raw_tools, list) else []
        self.builtin_tools = sorted({k for t in tools if isinstance(t, Mapping) for k in t
                                     if k not in ("functionDeclarations", "function_declarations")})

    @property
    def openai(self) -> dict[str, Any]:
        body = self.body
        out: dict[str, Any] = {"model": self.model, "messages": convert_contents(body)}
        config = body.get("generationConfig") or {}
        for theirs, ours in (("temperature", "temperature"), ("topP", "top_p"), ("topK", "top_k"),
                             ("maxOutputTokens", "max_tokens"), ("candidateCount", "n"), ("seed", "seed"),
                             ("presencePenalty", "presence_penalty"), ("frequencyPenalty", "frequency_penalty")):
            if config.get(theirs) is not None:
                out[ours] = config[theirs]
        if config.get("stopSequences"):
            out["stop"] = config["stopSequences"]
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseSchema") or config.get("responseJsonSchema")
            out["response_format"] = ({"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
                                      if schema else {"type": "json_object"})
        thinking = config.get("thinkingConfig")
        if isinstance(thinking, Mapping) and isinstance(thinking.get("thinkingBudget"), int):
            budget = thinking["thinkingBudget"]
            if budget > 0:
                out["reasoning_effort"] = "low" if budget < 4096 else "medium" if budget < 16384 else "high"
        declarations = [d for t in body.get("tools") or () if isinstance(t, Mapping)
                        for d in t.get("functionDeclarations") or t.get("function_declarations") or ()]
        if declarations:
            out["tools"] = [{"type": "function", "function": {
                "name": d.get("name") or "", "description": d.get("description") or "",
                "parameters": d.get("parameters") or d.get("parametersJsonSchema") or {"type": "object",
                                                                                        "properties": {}}}}
                for d in declarations if isinstance(d, Mapping)]
            choice = _tool_choice(body.get("toolConfig"))
            if choice is not None:
                out["tool_choice"] = choice
        if self.stream:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out

    def native(self, channel_type: int) -> bool:
        # The adaptor asks for SSE when it streams: a client that wants the JSON array is converted.
        return channel_type in self.native_types and (self.sse or not self.stream)

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        return self.body  # the model travels in the URL

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        if self.builtin_tools:
            raise ChannelCannotServe(
                400, f"the tools {', '.join(self.builtin_tools)} are Google's own: this model is served by a channel "
                "of another provider, which can only call function declarations", "invalid_request_error",
                "unsupported_tool", local=True)
        return body

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        candidates = []
        for choice in answer.get("choices") or ():
            message = choice.get("message") or {}
            candidates.append({"content": {"role": "model", "parts": parts_of(message)},
                               "finishReason": FINISH_REASONS.get(choice.get("finish_reason") or "stop", "STOP"),
                               "index": choice.get("index", 0)})
        usage = TokenUsage.from_openai(answer.get("usage")) or TokenUsage()
        return {"candidates": candidates, "usageMetadata": usage_metadata(usage), "modelVersion": self.model,
                "responseId": str(answer.get("id") or "").removeprefix("chatcmpl-")}

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        return GeminiStreamWriter(self.model, self.sse)

    def error_frame(self, err: RelayError) -> bytes:
        return b"data: " + orjson.dumps(google_error(err, "")) + b"\r\n\r\n"

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        return google_error(err, request_id)


def parts_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.get("reasoning_content"):
        parts.append({"text": message["reasoning_content"], "thought": True})
    if message.get("content"):
        parts.append({"text": message["content"]})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            args = orjson.loads(function.get("arguments") or "{}")
        except orjson.JSONDecodeError:
            args = {}
        parts.append({"functionCall": {"name": function.get("name") or "", "args": args if isinstance(args, dict)
                                       else {}}})
    return parts


class GeminiStreamWriter(StreamWriter):
    """Chat chunks → Gemini stream answers (one per chunk), as SSE (`alt=sse`) or one JSON array.
    Tool-call arguments arrive in pieces: a functionCall part is sent whole when its call is done."""

    def __init__(self, model: str, sse: bool) -> None:
        self.model = model
        self.sse = sse
        self.content_type = "text/event-stream" if sse else "application/json"
        self.sent = 0
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason = "stop"

    def _frame(self, obj: Mapping[str, Any]) -> bytes:
        data = orjson.dumps(obj)
        self.sent += 1
        if self.sse:
            return b"data: " + data + b"\r\n\r\n"
        return (b"[" if self.sent == 1 else b",\r\n") + data

    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes:
        out: list[bytes] = []
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                message: dict[str, Any] = {}
                if delta.get("reasoning_content"):
                    message["reasoning_content"] = delta["reasoning_content"]
                if delta.get("content"):
                    message["content"] = delta["content"]
                for call in delta.get("tool_calls") or ():
                    slot = self.calls.setdefault(int(call.get("index") or 0), {"name": "", "arguments": ""})
                    function = call.get("function") or {}
                    slot["name"] += function.get("name") or ""
                    slot["arguments"] += function.get("arguments") or ""
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
                if message:
                    out.append(self._frame({"candidates": [{"content": {"role": "model", "parts": parts_of(message)},
                                                            "index": 0}], "modelVersion": self.model}))
        return b"".join(out)

    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        if error is not None:
            frame = self._frame(google_error(error, ""))
            return frame if self.sse else frame + b"]"
        calls = [{"function": call} for _, call in sorted(self.calls.items())]
        parts = parts_of({"tool_calls": calls}) if calls else [{"text": ""}]
        last = self._frame({"candidates": [{"content": {"role": "model", "parts": parts},
                                            "finishReason": FINISH_REASONS.get(self.finish_reason, "STOP"),
                                            "index": 0}],
                            "usageMetadata": usage_metadata(usage), "modelVersion": self.model})
        return last if self.sse else last + b"]"


class GeminiEmbedInbound(Inbound):
    """`:embedContent` (one content) and `:batchEmbedContents` (`requests`) → embeddings."""

    name: ClassVar[str] = "gemini"
    query_key: ClassVar[bool] = True

    def __init__(self, body: dict[str, Any], request: Any, model: str = "", batch: bool = False) -> None:
        super().__init__(body, request)
        self.model = model
        self.batch = batch

    @property
    def openai(self) -> dict[str, Any]:
        requests = self.body.get("requests") if self.batch else [self.body]
        texts = [_text_of(r.get("content")) for r in requests or () if isinstance(r, Mapping)]
        out: dict[str, Any] = {"model": self.model, "input": texts}
        first = (requests or [{}])[0]
        if isinstance(first, Mapping) and isinstance(first.get("outputDimensionality"), int):
            out["dimensions"] = first["outputDimensionality"]
        return out

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        vectors = [{"values": item.get("embedding") or []} for item in answer.get("data") or ()]
        return {"embeddings": vectors} if self.batch else {"embedding": vectors[0] if vectors else {"values": []}}

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        return google_error(err, request_id)
