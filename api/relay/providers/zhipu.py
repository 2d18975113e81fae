"""Zhipu: GLM (type 26), OpenAI's format under `/api/paas/v4` at open.bigmodel.cn or, for Z.ai
accounts, api.z.ai; and ChatGLM (type 16), the v3 model API (`/api/paas/v3/model-api/{model}/invoke`,
`/sse-invoke` for streams).

v4 takes the console's API key itself as a Bearer token. Its errors are `{"error": {"code", "message"}}`
with Zhipu's business codes (mapped by `v4_error`); a finish reason `sensitive` is OpenAI's
`content_filter`, and `network_error` (inference failed) is an error. `reasoning_effort` becomes
Zhipu's `thinking` switch when the request carries none.

v3 is authorised by a JWT signed from the key `id.secret` (api/relay/signing/zhipu.py), cached per
channel key and renewed before it expires, sent bare.

v3 bodies: `prompt` (user/assistant turns) and sampling; the answer is `{code, msg, success, data:
{choices, usage}}` with HTTP 200 even on failure; the stream is SSE with `event: add` (the text as
plain data, several lines joined), `event: finish` followed by a `meta:` field holding the usage
(our decoder passes it on as an event named `meta`), and `error` / `interrupted` events."""
from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.base import (
    Adaptor,
    Passthrough,
    RelayMeta,
    RelayMode,
    StreamChunk,
    StreamDecoder,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
    openai_error,
)
from api.relay.credentials import Credential
from api.relay.errors import RelayError
from api.relay.providers.common import ChunkWriter, chat_answer, messages_of, text_of
from api.relay.providers.openai import OpenAIAdaptor
from api.relay.signing import zhipu
from api.relay.sse import SSEEvent, SSEParser

ZHIPU_V4_PATHS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "/api/paas/v4/chat/completions",
    RelayMode.EMBEDDINGS: "/api/paas/v4/embeddings",
    RelayMode.IMAGES: "/api/paas/v4/images/generations",
}


async def jwt(ctx: UpstreamContext, key: str) -> str:
    async def sign() -> Credential:
        return zhipu.token(key, time.time())

    return await ctx.credentials.get("zhipu:" + hashlib.sha256(key.encode()).hexdigest(), sign)


def key_problem(key: str) -> str | None:
    """A v4 channel's key is one API key as the console shows it (no spaces)."""
    return None if key.strip() and not any(c.isspace() for c in key.strip()) else "channel_key_zhipu_v4"


def v4_error(status: int, code: Any, message: str) -> RelayError:
    """Zhipu's business codes (docs.bigmodel.cn/cn/api/api-code, docs.z.ai/api-reference/api-code):
    1000–1004 authentication, 1110–1121 account (1113: in arrears, 1120: not reachable), 1210–1261
    request, 1301 content filter, 1302–1313 rate, quota and plan limits."""
    try:
        number = int(code)
    except (TypeError, ValueError):
        return openai_error(status, orjson.dumps({"error": {"message": message, "code": code}}))
    text = str(number)
    if 1000 <= number <= 1004:
        return RelayError(401, message, "authentication_error", text)
    if number == 1113:
        return RelayError(403, message, "insufficient_quota", text)
    if number in (1110, 1111, 1112, 1121):
        return RelayError(403, message, "permission_error", text)
    if number == 1211:
        return RelayError(404, message, "invalid_request_error", "model_not_found")
    if 1200 <= number <= 1301:
        return RelayError(400, message, "invalid_request_error", text)
    if 1302 <= number <= 1313:
        return RelayError(429, message, "rate_limit_error", text)
    return RelayError(status if status >= 400 else 500, message, "upstream_error", text)


class ZhipuV4Adaptor(OpenAIAdaptor):
    paths: ClassVar[Mapping[RelayMode, str]] = ZHIPU_V4_PATHS

    def supports(self, mode: RelayMode) -> bool:
        return mode in ZHIPU_V4_PATHS

    def request_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.meta.key.strip()}"}

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body = super().convert_request(req)
        effort = body.pop("reasoning_effort", None) if self.meta.mode == RelayMode.CHAT else None
        if isinstance(effort, str) and "thinking" not in body:
            body["thinking"] = {"type": "disabled" if effort == "none" else "enabled"}
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if self.meta.mode == RelayMode.CHAT and isinstance(body.get("choices"), list):
            for choice in body["choices"]:
                self._finish(choice)
        return super().convert_response(body)

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        chunks = super().convert_stream_event(ev, state)
        out: list[StreamChunk] = []
        for chunk in chunks:
            choices = chunk.chunk.get("choices") if isinstance(chunk, Passthrough) else None
            if isinstance(chunk, Passthrough) and isinstance(choices, list) and any(
                    isinstance(c, Mapping) and c.get("finish_reason") in ("sensitive", "network_error")
                    for c in choices):
                changed = dict(chunk.chunk)
                changed["choices"] = [self._finish(dict(c)) if isinstance(c, Mapping) else c for c in choices]
                out.append(changed)
            else:
                out.append(chunk)
        return out

    @staticmethod
    def _finish(choice: dict[str, Any]) -> dict[str, Any]:
        """Zhipu's own finish reasons: `sensitive` → `content_filter`; `network_error` raised."""
        if choice.get("finish_reason") == "sensitive":
            choice["finish_reason"] = "content_filter"
        elif choice.get("finish_reason") == "network_error":
            raise RelayError(502, "the model's inference failed (finish reason network_error)", "upstream_error",
                             "network_error")
        return choice

    def convert_error(self, status: int, body: bytes) -> RelayError:
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            data = None
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, Mapping) and err.get("code") is not None:
            return v4_error(status, err["code"], str(err.get("message") or f"upstream error {err['code']}"))
        return openai_error(status, body)


# -- v3 ---------------------------------------------------------------------------------------------


def v3_error(code: Any, message: str) -> RelayError:
    """Zhipu's business codes: 1000–1112 authentication and account, 1113 arrears, 1200s request,
    1301 content filter, 1302–1305 rate and load."""
    try:
        number = int(code)
    except (TypeError, ValueError):
        number = -1
    if 1000 <= number <= 1112:
        return RelayError(401, message, "authentication_error", str(number))
    if number == 1113:
        return RelayError(403, message, "insufficient_quota", str(number))
    if 1302 <= number <= 1305:
        return RelayError(429, message, "rate_limit_error", str(number))
    if 1200 <= number <= 1301:
        return RelayError(400, message, "invalid_request_error", str(number))
    return RelayError(500, message, "upstream_error", str(number) if number >= 0 else "upstream_error")


class V3EventParser(SSEParser):
    """SSE with Zhipu's extra `meta:` field: after the event it belongs to, an event named `meta`
    whose data is that field."""

    __slots__ = ("_meta",)

    def __init__(self) -> None:
        super().__init__()
        self._meta: bytes | None = None

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if line[:5] == b"meta:":
            self._meta = line[5:].strip()
            return
        if not line and self._meta is not None and not self._data:
            self._data.append(b"")  # an event carrying only meta is still dispatched
        before = len(events)
        super()._line(line, events)
        if len(events) > before and self._meta is not None:
            events.append(SSEEvent(self._meta, "meta"))
            self._meta = None


def _answer_text(content: Any) -> str:
    """v3 answers quote their text as a JSON string literal (`"\\" Hello\\""`)."""
    if not isinstance(content, str):
        return ""
    if len(content) >= 2 and content[0] == content[-1] == '"':
        try:
            value = orjson.loads(content)
        except orjson.JSONDecodeError:
            return content[1:-1]
        return value if isinstance(value, str) else content
    return content


class ZhipuV3Adaptor(Adaptor):

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.requested_model or self.meta.model)

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        action = "sse-invoke" if self.meta.is_stream else "invoke"
        return f"{self.base_url}/api/paas/v3/model-api/{self.meta.model}/{action}"

    def request_headers(self) -> dict[str, str]:
        return {"Accept": "text/event-stream" if self.meta.is_stream else "application/json"}

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        request.headers["Authorization"] = await jwt(ctx, self.meta.key)

    def stream_decoder(self, content_type: str) -> StreamDecoder | None:
        return V3EventParser() if content_type == "text/event-stream" else None

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        prompt: list[dict[str, str]] = []
        for message in messages_of(req):
            role = message.get("role")
            text = text_of(message.get("content"))
            if role in ("system", "developer"):  # v3 knows user and assistant turns only
                turns = [("user", text), ("assistant", "OK.")]
            else:
                turns = [("assistant" if role == "assistant" else "user", text)]
            for turn_role, turn_text in turns:
                if prompt and prompt[-1]["role"] == turn_role:
                    prompt[-1]["content"] += "\n" + turn_text
                else:
                    prompt.append({"role": turn_role, "content": turn_text})
        body: dict[str, Any] = {"prompt": prompt}
        for name in ("temperature", "top_p"):
            value = req.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                body[name] = value
        if req.get("stream"):
            body["incremental"] = True
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if not body.get("success") or body.get("code") != 200:
            raise v3_error(body.get("code"), str(body.get("msg") or "upstream error"))
        data = body.get("data") or {}
        choices = data.get("choices") or [{}]
        usage = TokenUsage.from_openai(data.get("usage"))
        message = {"role": "assistant", "content": "".join(_answer_text(c.get("content")) for c in choices)}
        return chat_answer(str(data.get("task_id") or ""), self.meta.requested_model or self.meta.model, message,
                           "stop", usage), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        kind = ev.event or "add"
        if kind == "add":
            text = ev.data.decode("utf-8", "replace")
            return [self.writer.chunk({"content": text})] if text else []
        if kind == "finish":
            state.done = True
            text = ev.data.decode("utf-8", "replace")
            return [self.writer.chunk({"content": text} if text else {}, "stop")]
        if kind == "meta":
            try:
                meta = orjson.loads(ev.data)
            except orjson.JSONDecodeError:
                return []
            usage = TokenUsage.from_openai(meta.get("usage")) if isinstance(meta, dict) else None
            if usage is not None:
                state.usage = usage
            return []
        if kind in ("error", "interrupted"):
            raise RelayError(500, ev.data.decode("utf-8", "replace") or f"upstream stream {kind}", "upstream_error",
                             "stream_" + kind)
        return []

    def convert_error(self, status: int, body: bytes) -> RelayError:
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "code" in data and "msg" in data:
            return v3_error(data["code"], str(data["msg"]))
        return openai_error(status, body)
