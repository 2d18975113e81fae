"""The adaptor of a type the chat pipeline never relays: task types (Midjourney, Suno), relayed by
api/relay/tasks/, and retired types (their providers switched the API off). It serves no mode, so
the pipeline answers 501 (and tries another channel first); it never sends anything upstream."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.upstream.base import Adaptor, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.sse import SSEEvent


class UnservedAdaptor(Adaptor):
    def supports(self, mode: RelayMode) -> bool:
        return False

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        raise NotImplementedError

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        raise NotImplementedError
