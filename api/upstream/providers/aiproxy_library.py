"""AI Proxy knowledge base (type 21): questions answered from one of the account's document
libraries, `POST {base}/api/library/ask` with the key in `Api-Key` and the library's ID (the
channel's `other`) as `libraryId`. The last user message is the question; the answer's source
documents are appended to it as a Markdown list. The stream is SSE of `{content, finish,
documents}` pieces (the documents come with `finish: true`); no token counts are reported, so the
pipeline bills its own count. The account's balance is AIProxy's."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.upstream.base import Adaptor, RelayMeta, RelayMode, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, json_object
from api.upstream.providers.common import ChunkWriter, chat_answer, messages_of, text_of
from api.upstream.providers.compatible import AIProxyBalanceMixin
from api.upstream.sse import SSEEvent

# The library's error codes about the key or the account (the others are about the question).
CREDENTIAL_CODES = frozenset({401, 403, 1001, 1002})


def documents_text(documents: Any) -> str:
    items = [d for d in documents if isinstance(d, Mapping)] if isinstance(documents, list) else []
    if not items:
        return ""
    lines = [f"- [{d.get('title') or d.get('url') or 'document'}]({d.get('url') or ''})" for d in items]
    return "\n\nReferences:\n" + "\n".join(lines)


def error_of(body: Mapping[str, Any]) -> RelayError:
    code = body.get("errCode")
    message = str(body.get("message") or body.get("errMsg") or f"the library refused the question (code {code})")
    if code in CREDENTIAL_CODES:
        return RelayError(401, message, "authentication_error", str(code))
    return RelayError(500, message, "upstream_error", str(code) if code is not None else "upstream_error")


class AIProxyLibraryAdaptor(AIProxyBalanceMixin, Adaptor):

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.writer = ChunkWriter(self.meta.name.answered)

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        return f"{self.base_url}/api/library/ask"

    def request_headers(self) -> dict[str, str]:
        return {"Api-Key": self.meta.key}

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        library = self.meta.other.strip()
        if not library:
            raise RelayError.local_error(500, "the channel has no knowledge-base ID (its other setting)",
                                         "invalid_channel_setting")
        users = [m for m in messages_of(req) if m.get("role") == "user"]
        query = text_of(users[-1].get("content")) if users else ""
        return {"model": self.meta.model, "query": query, "libraryId": library, "stream": bool(req.get("stream"))}

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        if not body.get("success"):
            raise error_of(body)
        content = str(body.get("answer") or "") + documents_text(body.get("documents"))
        return chat_answer("", self.meta.name.answered,
                           {"role": "assistant", "content": content}, "stop", None), None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        if ev.is_done:
            state.done = True
            return []
        event = json_object(ev.data, EVENT_NOT_OBJECT)
        if event.get("errCode"):
            raise error_of(event)
        text = str(event.get("content") or "")
        if event.get("finish"):
            state.done = True
            text += documents_text(event.get("documents"))
            return [self.writer.chunk({"content": text} if text else {}, "stop")]
        return [self.writer.chunk({"content": text})] if text else []
