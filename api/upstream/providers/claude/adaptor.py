"""Anthropic Claude (type 14): the Messages API at `{base}/v1/messages`, key in `x-api-key`,
`anthropic-version: 2023-06-01`. The channel's `other`, when set, is sent as `anthropic-beta`
(comma-separated beta flags, e.g. a longer context window)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.upstream.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.providers.claude import answer, convert
from api.upstream.providers.claude.stream import ClaudeStream
from api.upstream.reasoning import CLAUDE_FAMILY
from api.upstream.sse import SSEEvent

ANTHROPIC_VERSION = "2023-06-01"

MODELS: tuple[str, ...] = (
    "claude-fable-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5",
    "claude-opus-5", "claude-sonnet-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6",
    "claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-opus-4-1-20250805",
    "claude-opus-4-20250514", "claude-sonnet-4-20250514", "claude-3-7-sonnet-20250219", "claude-3-5-haiku-20241022",
    "claude-3-haiku-20240307",
)


def beta_flags(*values: str | None) -> list[str]:
    """The beta flags of comma-separated lists, each once, in order."""
    return list(dict.fromkeys(f.strip() for value in values for f in (value or "").split(",") if f.strip()))


class ClaudeAdaptor(Adaptor):
    platform: ClassVar[convert.Platform] = convert.ANTHROPIC_API
    reasoning_family: ClassVar[str] = CLAUDE_FAMILY

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.stream = ClaudeStream(meta.name.answered)

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        return f"{self.base_url}/v1/messages"

    def request_headers(self) -> dict[str, str]:
        headers = {"x-api-key": self.meta.key, "anthropic-version": ANTHROPIC_VERSION}
        flags = beta_flags(self.meta.other)
        if flags:
            headers["anthropic-beta"] = ",".join(flags)
        return headers

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        return convert.convert_request(req, self.meta, self.platform)

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if body.get("type") == "error":
            raise answer.stream_error(body)
        return answer.convert_response(body, self.meta.name.answered)

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        return self.stream.convert(ev.event, ev.data, state)

    def convert_error(self, status: int, body: bytes) -> RelayError:
        return answer.convert_error(status, body)
