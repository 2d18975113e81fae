"""Google PaLM 2 (type 11): `POST {base}/v1beta2/models/{model}:generateMessage`, key in
`x-goog-api-key`. System messages become the `context`, the others `prompt.messages` (author "0"
for the user, "1" for the model). PaLM cannot stream and reports no usage: a streamed request gets
the whole answer as one chunk (the adaptor reads it as a one-event stream), and the pipeline bills
its local count of the prompt and the answer."""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson

from api.relay.base import Adaptor, RelayMode, StreamChunk, StreamState, TokenUsage
from api.relay.decoders import WholeBody
from api.relay.errors import RelayError
from api.relay.providers.gemini.convert import convert_error
from api.relay.sse import SSEEvent


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or () if isinstance(p, Mapping) and p.get("type") == "text")


class PaLMAdaptor(Adaptor):

    def supports(self, mode: RelayMode) -> bool:
        return mode == RelayMode.CHAT

    def request_url(self, mode: RelayMode | None = None) -> str:
        return f"{self.base_url}/v1beta2/models/{self.meta.model}:generateMessage"

    def request_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.meta.key}

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        context, messages = [], []
        for message in req.get("messages") or ():
            if not isinstance(message, Mapping):
                continue
            if message.get("role") in ("system", "developer"):
                context.append(_text(message.get("content")))
            else:
                author = "1" if message.get("role") == "assistant" else "0"
                messages.append({"author": author, "content": _text(message.get("content"))})
        body: dict[str, Any] = {"prompt": {"messages": messages}}
        if context:
            body["prompt"]["context"] = "\n".join(context)
        for ours, theirs in (("temperature", "temperature"), ("top_p", "topP"), ("top_k", "topK"),
                             ("n", "candidateCount")):
            if ours in req and req[ours] is not None:
                body[theirs] = req[ours]
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        candidates = body.get("candidates") or []
        if not candidates and body.get("filters"):
            reason = (body["filters"][0] or {}).get("reason", "filtered")
            raise RelayError(400, f"the prompt was blocked by PaLM ({reason})", "upstream_error", "content_filter")
        choices = [{"index": i, "message": {"role": "assistant", "content": c.get("content", "")},
                    "finish_reason": "stop"} for i, c in enumerate(candidates)]
        return {"id": f"chatcmpl-palm-{int(time.time() * 1000)}", "object": "chat.completion",
                "created": int(time.time()), "model": self.meta.requested_model or self.meta.model,
                "choices": choices}, None

    def stream_decoder(self, content_type: str) -> WholeBody | None:
        """PaLM answers a stream request with one JSON document: read whole, as a single event."""
        return WholeBody() if content_type == "application/json" else None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        try:
            body = orjson.loads(ev.data)
        except orjson.JSONDecodeError:
            raise RelayError(502, "malformed upstream answer", "upstream_error", "bad_response_body") from None
        answer, _ = self.convert_response(body)
        state.done = True
        return [{"id": answer["id"], "object": "chat.completion.chunk", "created": answer["created"],
                 "model": answer["model"],
                 "choices": [{"index": c["index"], "delta": {"role": "assistant", **c["message"]},
                              "finish_reason": "stop"} for c in answer["choices"]]}]

    def convert_error(self, status: int, body: bytes) -> RelayError:
        return convert_error(status, body)
