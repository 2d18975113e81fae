"""MiniMax (type 35): OpenAI's chat format with MiniMax's thinking fields and its in-band errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.upstream.base import Passthrough, StreamChunk, StreamState, TokenUsage
from api.upstream.errors import RelayError
from api.upstream.payloads import EVENT_NOT_OBJECT, error_body, json_object, openai_error
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.sse import SSEEvent


def minimax_error(code: Any, message: str) -> RelayError:
    """MiniMax's `base_resp.status_code` (platform.minimax.io/docs/api-reference/errorcode) → an error."""
    try:
        number = int(code)
    except (TypeError, ValueError):
        number = -1
    text = str(number) if number >= 0 else "upstream_error"
    if number in (1004, 2049):
        return RelayError(401, message, "authentication_error", text)
    if number == 1008:
        return RelayError(403, message, "insufficient_quota", text)
    if number in (1002, 1039, 1041, 2045, 2056):
        return RelayError(429, message, "rate_limit_error", text)
    if number in (1026, 1027, 1042, 2013):
        return RelayError(400, message, "invalid_request_error", text)
    return RelayError(500, message, "upstream_error", text)


def _minimax_failure(body: Mapping[str, Any]) -> RelayError | None:
    """The error a `base_resp` with a status code other than 0 stands for (None when it is 0 or absent)."""
    base = body.get("base_resp")
    if not isinstance(base, Mapping) or not base.get("status_code"):
        return None
    return minimax_error(base["status_code"], str(base.get("status_msg") or f"error {base['status_code']}"))


def _reasoning_read(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """A message or delta whose `reasoning_details` (MiniMax's thinking, with `reasoning_split`) are
    also given as `reasoning_content`; None when it has none."""
    details = message.get("reasoning_details")
    if not isinstance(details, list) or message.get("reasoning_content"):
        return None
    text = "".join(d["text"] for d in details if isinstance(d, Mapping) and isinstance(d.get("text"), str))
    return {**message, "reasoning_content": text} if text else None


def _reasoning_replayed(message: Any) -> Any:
    """An earlier assistant turn's `reasoning_content` as the `reasoning_details` MiniMax takes back."""
    if not isinstance(message, Mapping) or not isinstance(message.get("reasoning_content"), str):
        return message
    out = {k: v for k, v in message.items() if k != "reasoning_content"}
    if message["reasoning_content"] and "reasoning_details" not in message:
        out["reasoning_details"] = [{"type": "reasoning.text", "text": message["reasoning_content"]}]
    return out


class MiniMaxAdaptor(OpenAIAdaptor):
    """MiniMax's OpenAI-compatible chat (platform.minimaxi.com/docs/api-reference/text-chat-openai):
    `/v1/chat/completions` at api.minimaxi.com (China) or api.minimax.io (international), the API
    key as a Bearer token. Thinking is asked apart (`reasoning_split`, unless the client says
    otherwise; without it the thinking is a `<think>` block in `content`), and its
    `reasoning_details` are also given as `reasoning_content`; a client's earlier
    `reasoning_content` goes back as `reasoning_details`, which interleaved thinking needs on tool
    turns. MiniMax may answer HTTP 200 with `base_resp.status_code` other than 0: an error. A stream
    ends at the chunk with a finish reason and the usage, whether or not `[DONE]` follows."""

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        body = super().convert_request(req)
        body.setdefault("reasoning_split", True)
        messages = body.get("messages")
        if isinstance(messages, list) and any(isinstance(m, Mapping) and "reasoning_content" in m for m in messages):
            body["messages"] = [_reasoning_replayed(m) for m in messages]
        return body

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        failure = _minimax_failure(body)
        if failure is not None:
            raise failure
        for choice in body.get("choices") or ():
            message = choice.get("message") if isinstance(choice, dict) else None
            read = _reasoning_read(message) if isinstance(message, Mapping) else None
            if read is not None:
                choice["message"] = read
        return super().convert_response(body)

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        if not ev.is_done and b'"base_resp"' in ev.data:
            failure = _minimax_failure(json_object(ev.data, EVENT_NOT_OBJECT))
            if failure is not None:
                raise failure
        out: list[StreamChunk] = []
        for chunk in super().convert_stream_event(ev, state):
            choices = chunk.chunk.get("choices") if isinstance(chunk, Passthrough) else None
            if chunk.chunk.get("usage") if isinstance(chunk, Passthrough) else False:
                # MiniMax's last chunk: the finish reason with the usage (no `[DONE]` is promised after it)
                state.done = state.done or any(isinstance(c, Mapping) and c.get("finish_reason")
                                               for c in choices or ())
            read = [_reasoning_read(c["delta"]) if isinstance(c, Mapping) and isinstance(c.get("delta"), Mapping)
                    else None for c in choices] if isinstance(choices, list) else []
            if isinstance(chunk, Passthrough) and any(read):
                assert isinstance(choices, list)
                out.append({**chunk.chunk, "choices": [{**c, "delta": r} if r is not None else c
                                                       for c, r in zip(choices, read, strict=True)]})
            else:
                out.append(chunk)
        return out

    def convert_error(self, status: int, body: bytes) -> RelayError:
        data = error_body(body)
        failure = _minimax_failure(data) if isinstance(data, dict) else None
        if failure is not None:
            return failure
        err = openai_error(status, body)
        if err.type == "authorized_error":  # {"type": "error", "error": {"type": "authorized_error", …}}
            err.type = "authentication_error"
        return err
