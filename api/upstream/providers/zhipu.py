"""Zhipu GLM (type 26): OpenAI's format under `/api/paas/v4` at open.bigmodel.cn or, for Z.ai
accounts, api.z.ai.

v4 takes the console's API key itself as a Bearer token. Its errors are `{"error": {"code", "message"}}`
with Zhipu's business codes (mapped by `v4_error`); a finish reason `sensitive` is OpenAI's
`content_filter`, and `network_error` (inference failed) is an error. `reasoning_effort` becomes
Zhipu's `thinking` switch when the request carries none."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.upstream.base import Passthrough, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import error_body, openai_error
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.sse import SSEEvent

ZHIPU_V4_PATHS: Mapping[RelayMode, str] = {
    RelayMode.CHAT: "/api/paas/v4/chat/completions",
    RelayMode.EMBEDDINGS: "/api/paas/v4/embeddings",
    RelayMode.IMAGES: "/api/paas/v4/images/generations",
}


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
        data = error_body(body)
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, Mapping) and err.get("code") is not None:
            return v4_error(status, err["code"], str(err.get("message") or f"upstream error {err['code']}"))
        return openai_error(status, body)
