"""iFlytek Spark (type 18). The key decides the API: an APIPassword (the console's key of the
HTTP API, or `APIKey:APISecret`) is served by Spark's OpenAI-compatible HTTP API
(xunfei_http.py: every model, tools, X1); a WebSocket key `APPID|APISecret|APIKey` keeps the
WebSocket API of the general models, except X1, which it reaches over HTTP as `APIKey:APISecret`.

Over WebSocket: one conversation per request at `wss://spark-api.xf-yun.com` + the version's path,
its URL signed with HMAC-SHA256 (`authorization`, `date` and `host` query parameters). The version
(so the `domain` and the path) comes from the model name (`generalv3.5`, `SparkDesk-v3.5`), else,
for a bare `SparkDesk`, from the channel's `other` (`v3.5`).

We send one JSON message (`header.app_id`, `parameter.chat.domain`, `payload.message.text`,
`payload.functions.text`); Spark answers with frames `{header: {code, message, status}, payload:
{choices: {text: [...]}, usage: {text: {...}}}}`; status 2 marks the last frame, which carries the
usage. The transport hands each frame over as one line (api/upstream/client.py), so a request that is
not streamed reads them all and joins them."""
from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping
from email.utils import formatdate
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from api.upstream.base import (
    Adaptor,
    RelayMeta,
    RelayMode,
    StreamChunk,
    StreamDecoder,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
)
from api.upstream.decoders import NDJSONDecoder
from api.upstream.errors import RelayError
from api.upstream.masking import remember
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.providers.common import ChunkWriter, chat_answer, function_tools, messages_of, text_of, tool_call
from api.upstream.providers.xunfei_http import (
    HTTP_BASE_URL,
    VERSIONS,
    SparkHttpAdaptor,
    error_of,
    is_x1,
    key_problem,
    legacy_parts,
    other_problem,
    spark_model,
    version_of,
)
from api.upstream.sse import SSEEvent

WS_BASE_URL = "wss://spark-api.xf-yun.com"
SIGNED_URL_LIFETIME = 300  # seconds iFlytek accepts a signed date (its clock-skew window)


def signed_url(url: str, api_key: str, api_secret: str, date: str) -> str:
    """The WebSocket URL with iFlytek's HMAC-SHA256 authorisation for this date (RFC 1123, GMT)."""
    parts = urlsplit(url)
    origin = f"host: {parts.netloc}\ndate: {date}\nGET {parts.path} HTTP/1.1"
    signature = base64.b64encode(hmac.new(api_secret.encode(), origin.encode(), hashlib.sha256).digest()).decode()
    authorization = (f'api_key="{api_key}", algorithm="hmac-sha256", headers="host date request-line", '
                     f'signature="{signature}"')
    credential = base64.b64encode(authorization.encode()).decode()
    remember(credential, time.time() + SIGNED_URL_LIFETIME)  # masked wherever an error quotes the URL
    query = urlencode({"authorization": credential, "date": date, "host": parts.netloc})
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{query}"


class SparkWebSocketAdaptor(Adaptor):
    """The WebSocket API, for a channel whose key is `APPID|APISecret|APIKey`."""


    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        if urlsplit(self.base_url).netloc == urlsplit(HTTP_BASE_URL).netloc:  # the HTTP API's default address
            self.base_url = WS_BASE_URL
        self.writer = ChunkWriter(self.meta.name.answered)
        self.tool_seen = False

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    @property
    def version(self) -> str:
        wanted = version_of(self.meta.model, self.meta.other)
        if wanted is None:
            raise RelayError.local_error(500, f"the Spark model {self.meta.model!r} names no version: use a model "
                                         f"name ({', '.join(name for name, _ in VERSIONS.values())}), or set "
                                         "the version of a bare SparkDesk in the channel's settings",
                                         "invalid_channel_setting")
        if wanted not in VERSIONS:
            raise RelayError.local_error(500, f"unknown Spark version {wanted!r} (one of {', '.join(VERSIONS)})",
                                         "invalid_channel_setting")
        return wanted

    def credentials(self) -> tuple[str, str, str]:
        parts = legacy_parts(self.meta.key)
        if parts is None:
            raise RelayError.local_error(500, "the channel key must be appid|api_secret|api_key", "invalid_key")
        return parts[0], parts[1], parts[2]

    def request_url(self, mode: RelayMode | None = None) -> str:
        base = self.base_url
        if base.startswith(("http://", "https://")):
            base = "ws" + base[4:]
        return base + VERSIONS[self.version][1]

    def request_headers(self) -> dict[str, str]:
        return {}

    def build_request(self, mode: RelayMode, body: Any) -> UpstreamRequest:
        return UpstreamRequest(self.request_url(mode), {}, orjson.dumps(body), "GET", transport="websocket")

    async def authorize(self, request: UpstreamRequest, ctx: UpstreamContext) -> None:
        _, api_secret, api_key = self.credentials()
        request.url = signed_url(request.url, api_key, api_secret, formatdate(usegmt=True))

    def stream_decoder(self, content_type: str) -> StreamDecoder | None:
        return NDJSONDecoder()

    def decode_body(self, raw: bytes) -> dict[str, Any]:
        return {"frames": [json_object(line, EVENT_NOT_OBJECT) for line in raw.splitlines() if line.strip()]}

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        app_id = self.credentials()[0]
        chat: dict[str, Any] = {"domain": VERSIONS[self.version][0], "auditing": "default"}
        temperature = req.get("temperature")
        if isinstance(temperature, int | float) and not isinstance(temperature, bool):
            chat["temperature"] = min(1.0, max(0.01, float(temperature)))  # Spark's range is (0, 1]
        top_k = req.get("top_k")
        if isinstance(top_k, int) and not isinstance(top_k, bool):
            chat["top_k"] = min(6, max(1, top_k))
        limit = req.get("max_completion_tokens", req.get("max_tokens"))
        if isinstance(limit, int) and limit > 0:
            chat["max_tokens"] = limit
        text = []
        for message in messages_of(req):
            role = message.get("role")
            role = "system" if role == "developer" else role if role in ("system", "assistant") else "user"
            text.append({"role": role, "content": text_of(message.get("content"))})
        payload: dict[str, Any] = {"message": {"text": text}}
        tools = function_tools(req)
        if tools:
            payload["functions"] = {"text": [{"name": f["name"], "description": str(f.get("description") or ""),
                                              "parameters": f.get("parameters") or {"type": "object",
                                                                                   "properties": {}}}
                                             for f in tools]}
        user = req.get("user")
        header = {"app_id": app_id, **({"uid": user[:32]} if isinstance(user, str) and user else {})}
        return {"header": header, "parameter": {"chat": chat}, "payload": payload}

    @staticmethod
    def _check(frame: Mapping[str, Any]) -> Mapping[str, Any]:
        header = frame.get("header") or {}
        code = header.get("code")
        if code:
            raise error_of(int(code), str(header.get("message") or f"error {code}"))
        return header

    @staticmethod
    def _usage(frame: Mapping[str, Any]) -> TokenUsage | None:
        usage = ((frame.get("payload") or {}).get("usage") or {}).get("text")
        return TokenUsage.from_openai(usage)

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        frames = body.get("frames") or []
        text: list[str] = []
        calls: list[dict[str, Any]] = []
        usage = None
        sid = ""
        for frame in frames:
            header = self._check(frame)
            sid = str(header.get("sid") or sid)
            for item in ((frame.get("payload") or {}).get("choices") or {}).get("text") or ():
                text.append(str(item.get("content") or ""))
                call = item.get("function_call")
                if isinstance(call, Mapping) and call.get("name"):
                    calls.append(tool_call("", str(call["name"]), call.get("arguments") or "{}"))
            usage = self._usage(frame) or usage
        if not frames:
            raise RelayError(502, "the upstream closed the conversation without an answer", "upstream_error",
                             "bad_response_body")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or (None if calls else "")}
        if calls:
            message["tool_calls"] = calls
        return chat_answer(sid, self.meta.name.answered, message,
                           "tool_calls" if calls else "stop", usage), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        frame = json_object(ev.data, EVENT_NOT_OBJECT)
        header = self._check(frame)
        delta: dict[str, Any] = {}
        for item in ((frame.get("payload") or {}).get("choices") or {}).get("text") or ():
            if item.get("content"):
                delta["content"] = delta.get("content", "") + str(item["content"])
            call = item.get("function_call")
            if isinstance(call, Mapping) and call.get("name"):
                self.tool_seen = True
                delta["tool_calls"] = [tool_call("", str(call["name"]), call.get("arguments") or "{}", 0)]
        usage = self._usage(frame)
        if usage is not None:
            state.usage = usage
        finish = None
        if header.get("status") == 2:
            state.done = True
            finish = "tool_calls" if self.tool_seen else "stop"
        return [self.writer.chunk(delta, finish)] if delta or finish else []


class XunfeiAdaptor(SparkHttpAdaptor):
    """The type's entry: the HTTP API, or the WebSocket API for a WebSocket key (see the module)."""


    @classmethod
    def variant(cls, meta: RelayMeta) -> type[Adaptor]:
        if legacy_parts(meta.key) is None or is_x1(spark_model(meta.model, meta.other)):
            return cls
        return SparkWebSocketAdaptor


__all__ = ["VERSIONS", "SparkWebSocketAdaptor", "XunfeiAdaptor", "error_of", "key_problem",
           "other_problem", "signed_url"]
