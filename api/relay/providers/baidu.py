"""Baidu ERNIE / Qianfan (type 15): chat at `{base}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}`
and embeddings at `…/embeddings/{endpoint}`, each with `?access_token=`; the token is exchanged from
the key `ak|sk` at `{base}/oauth/2.0/token` (client credentials), cached per key until shortly
before its `expires_in` (the process credential cache refreshes it in the background).

The body has `messages` (user/assistant, and `function` for tool results), `system` apart, and
`functions`; the answer carries `result`, `function_call` and `usage`. A failure is answered with
HTTP 200 and `{error_code, error_msg}`; a stream is SSE of whole answers-so-far pieces (`result`
is the new text), the last with `is_end: true`, and no end marker."""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import orjson

from api.relay.base import (
    EVENT_NOT_OBJECT,
    Adaptor,
    EmbeddingsMixin,
    RelayMeta,
    RelayMode,
    StreamChunk,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
    json_object,
    openai_error,
)
from api.relay.credentials import Credential
from api.relay.errors import RelayError
from api.relay.providers.common import (
    ChunkWriter,
    arguments_text,
    chat_answer,
    function_tools,
    messages_of,
    text_of,
    tool_call,
)
from api.relay.signing import baidu
from api.relay.sse import SSEEvent

# Model name → the endpoint name in the URL (the rest: the model name in lower case).
ENDPOINTS: Mapping[str, str] = {
    "ERNIE-4.0-8K": "completions_pro", "ERNIE-4.0": "completions_pro", "ERNIE-Bot-4": "completions_pro",
    "ERNIE-Bot": "completions", "ERNIE-3.5-8K": "completions", "ERNIE-Bot-turbo": "eb-instant",
    "ERNIE-Lite-8K-0922": "eb-instant", "ERNIE-Bot-8K": "ernie_bot_8k", "ERNIE-Speed": "ernie_speed",
    "ERNIE-Speed-8K": "ernie_speed", "ERNIE-Speed-128K": "ernie-speed-128k", "ERNIE-Lite-8K": "ernie-lite-8k",
    "ERNIE-Lite-8K-0308": "ernie-lite-8k", "ERNIE-Tiny-8K": "ernie-tiny-8k", "ERNIE-4.0-Turbo-8K": "ernie-4.0-turbo-8k",
    "BLOOMZ-7B": "bloomz_7b1", "Embedding-V1": "embedding-v1", "bge-large-zh": "bge_large_zh",
    "bge-large-en": "bge_large_en", "tao-8k": "tao_8k",
}
FINISH_REASONS = {"normal": "stop", "stop": "stop", "length": "length", "content_filter": "content_filter",
                  "function_call": "tool_calls"}
TOKEN_ERRORS = frozenset({110, 111})  # access token invalid / expired: exchange again
CREDENTIAL_ERRORS = frozenset({13, 14, 15, 6})  # bad ak/sk, no such app, no permission
RATE_ERRORS = frozenset({4, 17, 18, 19, 336501, 336502})


def error_of(code: Any, message: str) -> RelayError:
    try:
        number = int(code)
    except (TypeError, ValueError):
        number = -1
    if number in CREDENTIAL_ERRORS:
        return RelayError(401, message, "authentication_error", number)
    if number in TOKEN_ERRORS:
        return RelayError(500, message, "upstream_error", number)  # retried with a fresh token
    if number in RATE_ERRORS:
        return RelayError(429, message, "rate_limit_error", number)
    if 336001 <= number <= 336199:
        return RelayError(400, message, "invalid_request_error", number)
    return RelayError(500, message, "upstream_error", number if number >= 0 else "upstream_error")


def _convert_messages(req: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool call id → function name (Baidu names the function of a result)
    for message in messages_of(req):
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(text_of(message.get("content")))
            continue
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            out.append({"role": "function", "name": names.get(call_id, message.get("name") or ""),
                        "content": text_of(message.get("content"))})
            continue
        entry: dict[str, Any] = {"role": "assistant" if role == "assistant" else "user",
                                 "content": text_of(message.get("content"))}
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            function = calls[0].get("function") or {}
            names.update({str(c.get("id")): str((c.get("function") or {}).get("name") or "") for c in calls})
            entry["function_call"] = {"name": function.get("name") or "",
                                      "arguments": arguments_text(function.get("arguments"))}
        out.append(entry)
    return out, "\n".join(s for s in system if s)


class BaiduAdaptor(EmbeddingsMixin, Adaptor):

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.requested_model or self.meta.model)
        self.ctx: UpstreamContext | None = None

    def supports(self, mode: RelayMode) -> bool:
        return mode in (RelayMode.CHAT, RelayMode.EMBEDDINGS)

    def request_url(self, mode: RelayMode | None = None) -> str:
        kind = "embeddings" if (mode or self.meta.mode) == RelayMode.EMBEDDINGS else "chat"
        model = self.meta.model
        endpoint = ENDPOINTS.get(model, model.lower())
        return f"{self.base_url}/rpc/2.0/ai_custom/v1/wenxinworkshop/{kind}/{quote(endpoint, safe='')}"

    def request_headers(self) -> dict[str, str]:
        return {}

    # -- the access token ---------------------------------------------------------------------------

    @property
    def cache_key(self) -> str:
        return "baidu:" + hashlib.sha256(f"{self.base_url}|{self.meta.key}".encode()).hexdigest()

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        self.ctx = ctx
        base, key = self.base_url, self.meta.key

        async def exchange() -> Credential:
            return await baidu.exchange(ctx.http, base, key, ctx.credentials.clock())

        token = await ctx.credentials.get(self.cache_key, exchange)
        request.url += ("&" if "?" in request.url else "?") + "access_token=" + quote(token, safe="")

    def _check(self, body: Mapping[str, Any]) -> None:
        code = body.get("error_code")
        if code:
            err = error_of(code, str(body.get("error_msg") or f"error {code}"))
            if err.code in TOKEN_ERRORS and self.ctx is not None:
                self.ctx.credentials.forget(self.cache_key)
            raise err

    # -- chat ---------------------------------------------------------------------------------------

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        messages, system = _convert_messages(req)
        body: dict[str, Any] = {"messages": messages}
        if system:
            body["system"] = system
        if req.get("stream"):
            body["stream"] = True
        for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"),
                             ("frequency_penalty", "penalty_score")):
            value = req.get(ours)
            if isinstance(value, int | float) and not isinstance(value, bool):
                body[theirs] = value
        if "penalty_score" in body:  # Baidu's range is 1.0–2.0
            body["penalty_score"] = min(2.0, max(1.0, 1.0 + float(body["penalty_score"]) / 2))
        limit = req.get("max_completion_tokens", req.get("max_tokens"))
        if isinstance(limit, int) and limit > 0:
            body["max_output_tokens"] = max(2, limit)
        stop = req.get("stop")
        if isinstance(stop, str) or isinstance(stop, list) and stop:
            body["stop"] = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)]
        if isinstance(req.get("user"), str) and req["user"]:
            body["user_id"] = req["user"]
        tools = function_tools(req)
        if tools:
            body["functions"] = [{"name": f["name"], "description": str(f.get("description") or ""),
                                  "parameters": f.get("parameters") or {"type": "object", "properties": {}}}
                                 for f in tools]
        return body

    def _message(self, body: Mapping[str, Any]) -> dict[str, Any]:
        call = body.get("function_call")
        message: dict[str, Any] = {"role": "assistant", "content": body.get("result") or ""}
        if isinstance(call, Mapping) and call.get("name"):
            message["tool_calls"] = [tool_call("", str(call["name"]), call.get("arguments") or "{}")]
            message["content"] = body.get("result") or None
        return message

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        self._check(body)
        usage = TokenUsage.from_openai(body.get("usage"))
        message = self._message(body)
        finish = "tool_calls" if "tool_calls" in message else FINISH_REASONS.get(str(body.get("finish_reason")), "stop")
        return chat_answer(str(body.get("id") or ""), self.meta.requested_model or self.meta.model, message, finish,
                           usage, body.get("created") if isinstance(body.get("created"), int) else None), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        self._check(event)
        usage = TokenUsage.from_openai(event.get("usage"))
        if usage is not None:
            state.usage = usage
        delta: dict[str, Any] = {}
        if event.get("result"):
            delta["content"] = event["result"]
        call = event.get("function_call")
        if isinstance(call, Mapping) and call.get("name"):
            delta["tool_calls"] = [tool_call("", str(call["name"]), call.get("arguments") or "{}", 0)]
        finish = None
        if event.get("is_end"):
            state.done = True
            finish = "tool_calls" if call else FINISH_REASONS.get(str(event.get("finish_reason")), "stop")
        return [self.writer.chunk(delta, finish)] if delta or finish else []

    def convert_error(self, status: int, body: bytes) -> RelayError:
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict) and data.get("error_code"):
            return error_of(data["error_code"], str(data.get("error_msg") or ""))
        return openai_error(status, body)

    # -- embeddings ---------------------------------------------------------------------------------

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        given = req.get("input")
        return {"input": [given] if isinstance(given, str) else [str(t) for t in given or ()]}

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        self._check(body)
        usage = TokenUsage.from_openai(body.get("usage"))
        out = {"object": "list", "model": self.meta.requested_model or self.meta.model,
               "data": [{"object": "embedding", "index": item.get("index", i), "embedding": item.get("embedding") or []}
                        for i, item in enumerate(body.get("data") or ())],
               "usage": {"prompt_tokens": usage.prompt_tokens if usage else 0,
                         "total_tokens": usage.prompt_tokens if usage else 0}}
        return out, usage
