"""Dify (type 37): one Dify app per channel (its app key as the channel key), spoken to at
`{base}/v1/chat-messages`. Dify keeps conversations itself; a stateless OpenAI request becomes one
`query` (the single user message, or the whole transcript with its roles when there are several
turns), images as `files` by URL, `response_mode` streaming or blocking. The stream is SSE with
Dify's events: `message` / `agent_message` (text pieces), `message_replace` (moderated text),
`message_end` (the usage in `metadata.usage`), `error`; workflow, node, thought and ping events
carry nothing for the client."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.upstream.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.providers.common import ChunkWriter, chat_answer, image_urls, messages_of, text_of
from api.upstream.sse import SSEEvent

DEFAULT_USER = "api-gateway"


def query_of(req: Mapping[str, Any]) -> str:
    messages = messages_of(req)
    if len(messages) == 1:
        return text_of(messages[0].get("content"))
    lines = []
    for message in messages:
        role = str(message.get("role") or "user")
        role = "system" if role == "developer" else role
        lines.append(f"{role.upper()}: \n{text_of(message.get('content'))}")
    return "\n".join(lines)


def error_of(event: Mapping[str, Any]) -> RelayError:
    status = event.get("status")
    status = status if isinstance(status, int) and 400 <= status <= 599 else 500
    return RelayError(status, str(event.get("message") or "the Dify app failed"),
                      "upstream_error", str(event.get("code") or "upstream_error"))


class DifyAdaptor(Adaptor):

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.name.answered)

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        return f"{self.base_url}/v1/chat-messages"

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        user = req.get("user")
        body: dict[str, Any] = {"inputs": {}, "query": query_of(req),
                                "response_mode": "streaming" if req.get("stream") else "blocking",
                                "user": user if isinstance(user, str) and user else DEFAULT_USER}
        files = [{"type": "image", "transfer_method": "remote_url", "url": url}
                 for m in messages_of(req) for url in image_urls(m.get("content")) if url.startswith("http")]
        if files:
            body["files"] = files
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if body.get("event") == "error":
            raise error_of(body)
        usage = TokenUsage.from_openai((body.get("metadata") or {}).get("usage"))
        message = {"role": "assistant", "content": str(body.get("answer") or "")}
        return chat_answer(str(body.get("message_id") or body.get("id") or ""),
                           self.meta.name.answered, message, "stop", usage,
                           body.get("created_at") if isinstance(body.get("created_at"), int) else None), usage

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        kind = event.get("event")
        if kind in ("message", "agent_message", "message_replace"):
            text = event.get("answer")
            return [self.writer.chunk({"content": text})] if isinstance(text, str) and text else []
        if kind == "message_end":
            state.done = True
            usage = TokenUsage.from_openai((event.get("metadata") or {}).get("usage"))
            if usage is not None:
                state.usage = usage
            return [self.writer.chunk({}, "stop")]
        if kind == "error":
            raise error_of(event)
        return []
