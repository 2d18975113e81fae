"""Tencent Hunyuan (type 23), by the form of the channel's key:

- one API key (the Hunyuan console's, no `|`): the OpenAI-compatible endpoint
  `https://api.hunyuan.cloud.tencent.com/v1/chat/completions` and `/v1/embeddings`, the key as a
  Bearer token (`HunyuanOpenAIAdaptor`, chosen by `TencentAdaptor.variant`);
- `appid|secret_id|secret_key`: the TencentCloud API 3.0 action `ChatCompletions` (version
  2023-09-01) at `{base}/`, signed with TC3-HMAC-SHA256 (api/upstream/signing/tc3.py); embeddings
  through the action `GetEmbedding`.

The rest of this note is about API 3.0.

Bodies use Tencent's capitalised names (`Messages`, `Role`, `Content`, `Tools` with `Parameters` as
JSON text, `ToolCalls`); images go in `Contents` (hunyuan-vision). A failure is answered with HTTP
200 and `Response.Error {Code, Message}`; a stream is SSE without an end marker, each event with
`Choices[].Delta`, the last with a `FinishReason` and every one with the running `Usage`."""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

import orjson

from api.upstream.base import (
    Adaptor,
    RelayMeta,
    RelayMode,
    StreamChunk,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
)
from api.upstream.endpoints import EmbeddingsMixin
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, error_body, json_object, openai_error
from api.upstream.providers.common import (
    ChunkWriter,
    chat_answer,
    function_tools,
    image_urls,
    messages_of,
    text_of,
    tool_call,
    usage_from,
)
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.signing import tc3
from api.upstream.sse import SSEEvent

SERVICE = "hunyuan"
VERSION = "2023-09-01"
TC3_BASE_URL = "https://hunyuan.tencentcloudapi.com"
OPENAI_BASE_URL = "https://api.hunyuan.cloud.tencent.com"
OPENAI_PATHS: Mapping[RelayMode, str] = {RelayMode.CHAT: "/v1/chat/completions",
                                         RelayMode.EMBEDDINGS: "/v1/embeddings"}
MODELS = ("hunyuan-2.0-thinking-20251109", "hunyuan-2.0-instruct-20251111", "hunyuan-t1-latest",
          "hunyuan-turbos-latest", "hunyuan-a13b", "hunyuan-large", "hunyuan-standard", "hunyuan-standard-256K",
          "hunyuan-lite", "hunyuan-vision", "hunyuan-turbos-vision", "hunyuan-embedding")
ACTIONS: Mapping[RelayMode, str] = {RelayMode.CHAT: "ChatCompletions", RelayMode.EMBEDDINGS: "GetEmbedding"}
FINISH_REASONS = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "sensitive": "content_filter"}

# Tencent's error codes → (HTTP status, OpenAI error type); credential and account codes feed auto-disable.
_QUOTA = ("ResourceInsufficient.ChargeResourceExhaust", "FailedOperation.ServiceNotActivated",
          "FailedOperation.ServiceStop", "FailedOperation.ServiceStopArrears",
          "FailedOperation.FreeResourcePackExhausted", "FailedOperation.ResourcePackExhausted")


def is_api_key(key: str) -> bool:
    """A Hunyuan console API key (the OpenAI-compatible endpoint), not `appid|secret_id|secret_key`."""
    return "|" not in key


def key_problem(key: str) -> str | None:
    """One API key without spaces, or three non-empty `|`-separated parts without spaces."""
    parts = [p.strip() for p in key.strip().split("|")]
    if len(parts) in (1, 3) and all(p and not any(c.isspace() for c in p) for p in parts):
        return None
    return "channel_key_hunyuan"


class HunyuanOpenAIAdaptor(OpenAIAdaptor):
    """Hunyuan's OpenAI-compatible endpoint (cloud.tencent.com/document/product/1729/111007): OpenAI's
    format, the console's API key as a Bearer token; Tencent's own fields (`enable_enhancement`, …)
    pass as the client sends them. A channel still on API 3.0's default address is sent here."""

    paths: ClassVar[Mapping[RelayMode, str]] = OPENAI_PATHS

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        if self.base_url == TC3_BASE_URL:
            self.base_url = OPENAI_BASE_URL

    def supports(self, mode: RelayMode) -> bool:
        return mode in OPENAI_PATHS and super().supports(mode)

    def request_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.meta.key.strip()}"}


def error_of(code: str, message: str) -> RelayError:
    if code.startswith(("AuthFailure", "UnauthorizedOperation")):
        return RelayError(401, message, "authentication_error", code)
    if code in _QUOTA:
        return RelayError(403, message, "insufficient_quota", code)
    if code.startswith(("LimitExceeded", "RequestLimitExceeded")):
        return RelayError(429, message, "rate_limit_error", code)
    if code.startswith(("InvalidParameter", "MissingParameter", "UnknownParameter", "UnsupportedOperation",
                        "InvalidAction", "OperationDenied")):
        return RelayError(400, message, "invalid_request_error", code)
    return RelayError(500, message, "upstream_error", code or "upstream_error")


def _check(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `Response` object of an answer; its `Error` raised."""
    response = body.get("Response", body)
    if not isinstance(response, Mapping):
        raise RelayError(502, "the upstream answer has no Response object", "upstream_error", "bad_response_body")
    err = response.get("Error")
    if isinstance(err, Mapping):
        raise error_of(str(err.get("Code") or ""), str(err.get("Message") or err.get("Code") or "upstream error"))
    return response


def _usage(usage: Any) -> TokenUsage | None:
    return usage_from(usage.get("PromptTokens"), usage.get("CompletionTokens")) if isinstance(usage, Mapping) else None


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role") or "user")
    content = message.get("content")
    out: dict[str, Any] = {"Role": "system" if role == "developer" else role}
    images = image_urls(content)
    if images:
        out["Contents"] = ([{"Type": "text", "Text": text_of(content)}] if text_of(content) else []) + [
            {"Type": "image_url", "ImageUrl": {"Url": url}} for url in images]
    else:
        out["Content"] = text_of(content)
    if role == "tool":
        out["ToolCallId"] = str(message.get("tool_call_id") or "")
    calls = message.get("tool_calls")
    if role == "assistant" and isinstance(calls, list):
        out["ToolCalls"] = [{"Id": c.get("id") or "", "Type": "function",
                             "Function": {"Name": (c.get("function") or {}).get("name") or "",
                                          "Arguments": (c.get("function") or {}).get("arguments") or "{}"}}
                            for c in calls if isinstance(c, Mapping)]
    return out


def _calls(calls: Any, streamed: bool) -> list[dict[str, Any]]:
    """Tencent's ToolCalls → OpenAI's (stream deltas carry an index, a whole answer's calls none)."""
    out = []
    for i, call in enumerate(calls if isinstance(calls, list) else ()):
        function = call.get("Function") or {}
        out.append(tool_call(str(call.get("Id") or ""), str(function.get("Name") or ""),
                             function.get("Arguments") or "{}", call.get("Index", i) if streamed else None))
    return out


class TencentAdaptor(EmbeddingsMixin, Adaptor):

    @classmethod
    def variant(cls, meta: RelayMeta) -> type[Adaptor]:
        return HunyuanOpenAIAdaptor if is_api_key(meta.key) else cls

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.name.answered)
        self.tool_seen = False

    def supports(self, mode: RelayMode) -> bool:
        return mode in ACTIONS

    def credentials(self) -> tuple[str, str, str]:
        parts = [p.strip() for p in self.meta.key.split("|")]
        if len(parts) != 3:
            raise RelayError.local_error(500, "the channel key must be appid|secret_id|secret_key", "invalid_key")
        return parts[0], parts[1], parts[2]

    def request_url(self, mode: RelayMode | None = None) -> str:
        return self.base_url + "/"

    def request_headers(self) -> dict[str, str]:
        return {}

    def build_request(self, mode: RelayMode, body: Any) -> UpstreamRequest:
        headers = {"Content-Type": "application/json", "X-TC-Action": ACTIONS[mode], "X-TC-Version": VERSION}
        return UpstreamRequest(self.request_url(mode), headers, orjson.dumps(body))

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        _, secret_id, secret_key = self.credentials()
        now = int(time.time())
        assert isinstance(request.body, bytes)
        signed = {"Content-Type": request.headers["Content-Type"], "Host": urlsplit(request.url).netloc,
                  "X-TC-Action": request.headers["X-TC-Action"].lower()}
        request.headers["X-TC-Timestamp"] = str(now)
        request.headers["Authorization"] = tc3.authorization(secret_id, secret_key, SERVICE, now, request.body, signed)

    # -- chat ---------------------------------------------------------------------------------------

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"Model": self.meta.model, "Messages": [_message(m) for m in messages_of(req)],
                                "Stream": bool(req.get("stream"))}
        if isinstance(req.get("temperature"), int | float):
            body["Temperature"] = req["temperature"]
        if isinstance(req.get("top_p"), int | float):
            body["TopP"] = req["top_p"]
        tools = function_tools(req)
        if tools:
            body["Tools"] = [{"Type": "function", "Function": {
                "Name": f["name"], "Description": str(f.get("description") or ""),
                "Parameters": orjson.dumps(f.get("parameters") or {"type": "object", "properties": {}}).decode()}}
                for f in tools]
            choice = req.get("tool_choice")
            if choice in ("none", "auto"):
                body["ToolChoice"] = choice
            elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
                body["ToolChoice"] = "custom"
                name = choice["function"].get("name")
                body["CustomTool"] = next((t for t in body["Tools"] if t["Function"]["Name"] == name), body["Tools"][0])
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        response = _check(body)
        choice = (response.get("Choices") or [{}])[0]
        message = choice.get("Message") or {}
        calls = _calls(message.get("ToolCalls"), streamed=False)
        out: dict[str, Any] = {"role": "assistant", "content": message.get("Content") or ("" if not calls else None)}
        if message.get("ReasoningContent"):
            out["reasoning_content"] = message["ReasoningContent"]
        if calls:
            out["tool_calls"] = calls
        usage = _usage(response.get("Usage"))
        finish = FINISH_REASONS.get(str(choice.get("FinishReason") or "stop"), "stop")
        return chat_answer(str(response.get("Id") or ""), self.meta.name.answered, out, finish,
                           usage, int(response.get("Created") or 0) or None), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        if "Response" in event or "Error" in event:
            _check(event)
        usage = _usage(event.get("Usage"))
        if usage is not None:
            state.usage = usage
        chunks: list[StreamChunk] = []
        for choice in event.get("Choices") or ():
            delta = choice.get("Delta") or {}
            out: dict[str, Any] = {}
            if delta.get("Content"):
                out["content"] = delta["Content"]
            if delta.get("ReasoningContent"):
                out["reasoning_content"] = delta["ReasoningContent"]
            calls = _calls(delta.get("ToolCalls"), streamed=True)
            if calls:
                self.tool_seen = True
                out["tool_calls"] = calls
            finish = choice.get("FinishReason") or None
            if finish:
                state.done = True
            if out or finish:
                reason = FINISH_REASONS.get(finish, "stop") if finish else None
                if reason == "stop" and self.tool_seen:
                    reason = "tool_calls"
                chunks.append(self.writer.chunk(out, reason))
        return chunks

    def convert_error(self, status: int, body: bytes) -> RelayError:
        data = error_body(body)
        if isinstance(data, dict) and isinstance(data.get("Response"), Mapping):
            try:
                _check(data)
            except RelayError as err:
                return err
        return openai_error(status, body)

    # -- embeddings ---------------------------------------------------------------------------------

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        given = req.get("input")
        texts = [given] if isinstance(given, str) else [str(t) for t in given or ()]
        return {"InputList": texts}

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        response = _check(body)
        data = [{"object": "embedding", "index": item.get("Index", i), "embedding": item.get("Embedding") or []}
                for i, item in enumerate(response.get("Data") or ())]
        usage = _usage(response.get("Usage"))
        out: dict[str, Any] = {"object": "list", "data": data, "model": self.meta.name.answered}
        if usage is not None:
            out["usage"] = {"prompt_tokens": usage.prompt_tokens, "total_tokens": usage.prompt_tokens}
            usage = TokenUsage(usage.prompt_tokens, 0)
        return out, usage
