"""OpenAI (type 1) and the base of every OpenAI-format provider."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from api.relay.base import (
    EVENT_NOT_OBJECT,
    STREAM_OPTIONS_CHANNEL_TYPES,
    Adaptor,
    AudioMixin,
    BalanceMixin,
    CompletionsMixin,
    EmbeddingsMixin,
    Fetch,
    ImagesMixin,
    ModerationsMixin,
    Passthrough,
    StreamChunk,
    StreamState,
    TokenUsage,
    balance_number,
    json_object,
)
from api.relay.sse import SSEEvent
from models.enums import ChannelType

# Types whose upstream answers OpenAI's dashboard billing API.
OPENAI_BILLING_TYPES = frozenset({ChannelType.OPENAI, ChannelType.AZURE, ChannelType.CUSTOM})


class OpenAIAdaptor(CompletionsMixin, EmbeddingsMixin, ModerationsMixin, ImagesMixin, AudioMixin, BalanceMixin,
                    Adaptor):
    channel_type: ClassVar[ChannelType] = ChannelType.OPENAI
    default_base_url: ClassVar[str] = "https://api.openai.com"
    models: ClassVar[tuple[str, ...]] = (
        "gpt-3.5-turbo",
        "gpt-3.5-turbo-0125",
        "gpt-3.5-turbo-instruct",
        "gpt-4",
        "gpt-4-turbo",
        "gpt-4o",
        "gpt-4o-mini",
        "chatgpt-4o-latest",
        "o1",
        "o1-mini",
        "o3-mini",
        "text-embedding-3-small",
        "text-embedding-3-large",
        "text-embedding-ada-002",
        "text-moderation-latest",
        "dall-e-2",
        "dall-e-3",
        "whisper-1",
        "tts-1",
        "tts-1-hd",
    )

    def request_headers(self) -> dict[str, str]:
        headers = super().request_headers()
        if self.meta.organization:
            headers["OpenAI-Organization"] = self.meta.organization
        return headers

    def has_balance(self) -> bool:
        """OpenAI's billing API (and the resellers that copy it); not the other compatible providers."""
        return self.meta.channel_type in OPENAI_BILLING_TYPES

    def billing_base(self) -> str:
        """Where OpenAI's billing API lives for this channel (the origin for a custom full URL)."""
        return self.base_url

    async def query_balance(self, fetch: Fetch) -> float:
        """OpenAI's dashboard billing API: hard limit minus the usage of the last 100 days (USD)."""
        base = self.billing_base()
        sub = await fetch(self.get(f"{base}/v1/dashboard/billing/subscription"))
        limit = balance_number(sub.get("hard_limit_usd"), "hard_limit_usd")
        today = datetime.now(UTC).date()
        start, end = today - timedelta(days=100), today + timedelta(days=1)
        usage = await fetch(self.get(f"{base}/v1/dashboard/billing/usage?start_date={start}&end_date={end}"))
        return round(limit - balance_number(usage.get("total_usage"), "total_usage") / 100, 6)

    @property
    def supports_stream_options(self) -> bool:
        return self.meta.channel_type in STREAM_OPTIONS_CHANNEL_TYPES

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """Copy with the upstream model; every other field (explicit 0/False included) untouched.
        A stream asks for the final usage chunk where the provider supports `stream_options`; the
        field is removed everywhere else (and from non-stream requests, which OpenAI rejects)."""
        body = self._with_model(req)
        if body.get("stream") and self.supports_stream_options:
            options = body.get("stream_options")
            body["stream_options"] = {**(options if isinstance(options, Mapping) else {}), "include_usage": True}
        else:
            body.pop("stream_options", None)
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return body, TokenUsage.from_openai(body.get("usage"))

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        """Forward each chunk verbatim (no re-encoding); read usage, and hide the usage-only final
        chunk from a client that did not ask for it."""
        if ev.is_done:
            state.done = True
            return []
        chunk = json_object(ev.data, EVENT_NOT_OBJECT)
        if "error" in chunk and not chunk.get("choices"):
            raise self.convert_error(500, ev.data)
        usage = chunk.get("usage")
        if usage:
            parsed = TokenUsage.from_openai(usage)
            if parsed is not None:
                state.usage = parsed
            if not chunk.get("choices") and not state.include_usage:
                return []
        return [Passthrough(ev.data, chunk)]
