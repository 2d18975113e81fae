"""iFlytek Spark's OpenAI-compatible HTTP API (type 18 with an APIPassword key): `POST
/v1/chat/completions` for the general models (`lite`, `generalv3`, `pro-128k`, `generalv3.5`,
`max-32k`, `4.0Ultra`) and `POST /v2/chat/completions` for the reasoning model X1 (`x1`), with
`Authorization: Bearer <APIPassword>` (or `APIKey:APISecret`, which the X1 page also takes).

What differs from OpenAI's wire format: every answer and stream event carries `code` (0 = success,
else one of the error codes of the WebSocket API, with `message`); a function call comes back as one
object unless `tool_calls_switch` is set (we set it); a /v1 stream has no `finish_reason` and puts
the usage on its last content event; only the documented parameters are sent, `content` always text.
The legacy model names (`SparkDesk-v3.5`) and a version in the channel's `other` name the models
too."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from api.upstream.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, error_body, json_object, openai_error
from api.upstream.providers.common import ChunkWriter, chat_answer, function_tools, messages_of, text_of, tool_call
from api.upstream.sse import SSEEvent

HTTP_BASE_URL = "https://spark-api-open.xf-yun.com"
# version (the WebSocket API's path, and the legacy model names' suffix) → (model name, WebSocket path)
VERSIONS: Mapping[str, tuple[str, str]] = {
    "v1.1": ("lite", "/v1.1/chat"),
    "v3.1": ("generalv3", "/v3.1/chat"),
    "v3.1-128k": ("pro-128k", "/chat/pro-128k"),
    "v3.5": ("generalv3.5", "/v3.5/chat"),
    "v3.5-32k": ("max-32k", "/chat/max-32k"),
    "v4.0": ("4.0Ultra", "/v4.0/chat"),
}
_NAME_VERSIONS = {name.lower(): version for version, (name, _) in VERSIONS.items()}
_LEGACY_NAME = re.compile(r"^sparkdesk(?:-(v\d\.\d(?:-\d+k)?))?$", re.IGNORECASE)
# Output limits (max_tokens) by model: 4096 for Lite and Pro-128K, 8192 for the others, 32768 for X1.
MAX_TOKENS = {"lite": 4096, "pro-128k": 4096, "x1": 32768}
DEFAULT_MAX_TOKENS = 8192
# The request fields the HTTP API documents, copied when the client sent them.
COPIED = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "response_format", "tool_choice")
HANDLED = frozenset({"model", "messages", "stream", "stream_options", "user", "top_k", "max_tokens",
                     "max_completion_tokens", "tools", *COPIED})
CREDENTIAL_CODES = frozenset({10005, 10313, 11200})  # app id or authorisation refused
RATE_CODES = frozenset({11201, 11202, 11203})
REQUEST_CODES = frozenset({10003, 10004, 10013, 10014, 10019, 10021, 10907, 10163, 10160, 10161, 10162, 10222})


def error_of(code: int, message: str) -> RelayError:
    """One of Spark's error codes (shared by its WebSocket and HTTP APIs) as an OpenAI error."""
    if code in CREDENTIAL_CODES:
        return RelayError(401, message, "authentication_error", code)
    if code in RATE_CODES:
        return RelayError(429, message, "rate_limit_error", code)
    if code in REQUEST_CODES:
        return RelayError(400, message, "invalid_request_error", code)
    return RelayError(500, message, "upstream_error", code)


def version_of(model: str, other: str = "") -> str | None:
    """The Spark version a model name names (`generalv3.5`, `SparkDesk-v3.5`); for a bare `SparkDesk`
    the channel's `other`; None for any other name."""
    name = model.strip().lower()
    if name in _NAME_VERSIONS:
        return _NAME_VERSIONS[name]
    found = _LEGACY_NAME.match(name)
    if found is None:
        return None
    return (found.group(1) or other.strip()).lower() or None


def spark_model(model: str, other: str = "") -> str:
    """The name the HTTP API knows a model by: a legacy name's version becomes its model name."""
    version = version_of(model, other)
    return VERSIONS[version][0] if version is not None and version in VERSIONS else model


def is_x1(model: str) -> bool:
    return model.lower().startswith("x1")


def legacy_parts(key: str) -> list[str] | None:
    """The parts of a WebSocket key `APPID|APISecret|APIKey`; None for an HTTP key (an APIPassword)."""
    if "|" not in key:
        return None
    parts = [p.strip() for p in key.split("|")]
    return parts if len(parts) == 3 and all(parts) else None


_NO_SPACE = re.compile(r"^\S+$")


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def key_problem(key: str) -> str | None:
    """An APIPassword (or `APIKey:APISecret`), or a WebSocket key `APPID|APISecret|APIKey`."""
    key = key.strip()
    if "|" in key:
        parts = legacy_parts(key)
        return None if parts and all(_NO_SPACE.match(p) for p in parts) else "channel_key_spark"
    return None if _NO_SPACE.match(key) else "channel_key_spark"


def other_problem(other: str) -> str | None:
    """Empty, or the version a bare `SparkDesk` model name means on this channel."""
    other = other.strip().lower()
    return None if not other or other in VERSIONS else "channel_spark_other_invalid"


def _tool_calls(raw: Any, stream: bool) -> list[dict[str, Any]]:
    """Spark's tool calls (one object, or a list with `tool_calls_switch`) in OpenAI's form."""
    calls = [raw] if isinstance(raw, Mapping) else raw if isinstance(raw, list) else []
    out = []
    for i, call in enumerate(c for c in calls if isinstance(c, Mapping)):
        function = _obj(call.get("function"))
        index = call.get("index") if isinstance(call.get("index"), int) else i
        if stream and not function.get("name"):  # a later piece of a call's arguments
            out.append({"index": index, "function": {"arguments": str(function.get("arguments") or "")}})
            continue
        out.append(tool_call(str(call.get("id") or ""), str(function.get("name") or ""),
                             function.get("arguments") or "{}", index if stream else None))
    return out


class SparkHttpAdaptor(Adaptor):

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        if self.base_url.startswith(("ws://", "wss://")):  # a channel that spoke the WebSocket API before
            self.base_url = HTTP_BASE_URL
        self.upstream = spark_model(meta.model, meta.other)
        self.writer = ChunkWriter(meta.name.answered)
        self.tool_seen = False
        self.finished = False

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        return self.base_url + ("/v2/chat/completions" if is_x1(self.upstream) else "/v1/chat/completions")

    def request_headers(self) -> dict[str, str]:
        parts = legacy_parts(self.meta.key)
        token = f"{parts[2]}:{parts[1]}" if parts else self.meta.key.strip()  # APIKey:APISecret
        return {"Authorization": f"Bearer {token}"}

    # -- the request ------------------------------------------------------------------------------

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.upstream, "messages": [self._message(m) for m in messages_of(req)]}
        for name in COPIED:
            if req.get(name) is not None:
                body[name] = req[name]
        if req.get("stream"):
            body["stream"] = True
        user = req.get("user")
        if isinstance(user, str) and user:
            body["user"] = user
        top_k = req.get("top_k")
        if isinstance(top_k, int) and not isinstance(top_k, bool):
            body["top_k"] = min(6, max(1, top_k))
        limit = req.get("max_completion_tokens", req.get("max_tokens"))
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            cap = MAX_TOKENS.get(self.upstream.lower(), DEFAULT_MAX_TOKENS)
            if limit > cap:
                self.meta.drop("max_tokens:clamped")
            body["max_tokens"] = min(limit, cap)
        tools = function_tools(req)
        if tools:
            body["tools"] = [{"type": "function", "function": {
                "name": str(f["name"]), "description": str(f.get("description") or f["name"]),
                "parameters": f.get("parameters") or {"type": "object", "properties": {}}}} for f in tools]
            body["tool_calls_switch"] = True  # tool calls as a list, as OpenAI sends them
        elif "tool_choice" in body:
            del body["tool_choice"]
        for name in req:
            if name not in HANDLED and req[name] is not None:
                self.meta.drop(name)
        return body

    @staticmethod
    def _message(message: Mapping[str, Any]) -> dict[str, Any]:
        role = message.get("role")
        role = {"developer": "system", "function": "tool"}.get(str(role), role)
        if role not in ("system", "user", "assistant", "tool"):
            role = "user"
        out: dict[str, Any] = {"role": role, "content": text_of(message.get("content"))}
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            out["tool_calls"] = [{"id": c.get("id"), "type": "function", "function": c.get("function")}
                                 for c in calls if isinstance(c, Mapping)]
        if role == "tool" and message.get("tool_call_id"):
            out["tool_call_id"] = message["tool_call_id"]
        return out

    # -- the answer -------------------------------------------------------------------------------

    def convert_error(self, status: int, body: bytes) -> RelayError:
        data = error_body(body)
        if isinstance(data, dict) and isinstance(data.get("code"), int) and data["code"] and "error" not in data:
            return error_of(data["code"], str(data.get("message") or f"error {data['code']}"))
        return openai_error(status, body)

    def _check(self, data: Mapping[str, Any]) -> None:
        code = data.get("code")
        if "error" in data and not data.get("choices"):
            raise self.convert_error(400, orjson.dumps(data))
        if isinstance(code, int) and code:
            raise error_of(code, str(data.get("message") or f"error {code}"))

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        self._check(body)
        choices = body.get("choices") if isinstance(body.get("choices"), list) else []
        choice = _obj(choices[0] if choices else None)
        got = _obj(choice.get("message"))
        calls = _tool_calls(got.get("tool_calls"), stream=False)
        message: dict[str, Any] = {"role": "assistant", "content": got.get("content") or (None if calls else "")}
        if got.get("reasoning_content"):
            message["reasoning_content"] = got["reasoning_content"]
        if calls:
            message["tool_calls"] = calls
        finish = choice.get("finish_reason") or ("tool_calls" if calls else "stop")
        usage = TokenUsage.from_openai(body.get("usage"))
        answer_id = str(body.get("id") or body.get("sid") or "")
        return chat_answer(answer_id, self.meta.name.answered, message, finish, usage), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        if ev.is_done:
            state.done = True
            return [] if self.finished else [self._finish(None)]
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        self._check(event)
        delta: dict[str, Any] = {}
        finish = None
        for choice in event.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            got = _obj(choice.get("delta"))
            for name in ("reasoning_content", "content"):
                if got.get(name):
                    delta[name] = str(got[name])
            calls = _tool_calls(got.get("tool_calls"), stream=True)
            if calls:
                self.tool_seen = True
                delta["tool_calls"] = calls
            finish = choice.get("finish_reason") or None
        usage = TokenUsage.from_openai(event.get("usage"))
        if usage is not None:  # Spark's last event (a /v1 stream names no finish reason)
            state.usage = usage
            finish = finish or ("tool_calls" if self.tool_seen else "stop")
        if self.finished:
            return [self.writer.chunk(delta)] if delta else []
        if finish:
            return [self._finish(finish, delta)]
        return [self.writer.chunk(delta)] if delta else []

    def _finish(self, finish: str | None, delta: dict[str, Any] | None = None) -> StreamChunk:
        self.finished = True
        reason = "tool_calls" if self.tool_seen and finish in (None, "stop") else finish or "stop"
        return self.writer.chunk(delta or {}, reason)
