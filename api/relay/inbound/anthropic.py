"""Anthropic's Messages API in: `POST /v1/messages` (streamed and not) and
`POST /v1/messages/count_tokens`, for the `anthropic` SDK and Claude Code.

The request is read into the internal form (anthropic_read.py), answers are rendered back
(anthropic_render.py, anthropic_stream.py).

A channel of Claude's own format (Anthropic, Vertex AI's Claude models, and Bedrock except its
event-stream answers) gets the body as sent, with what the platform needs in it
(Adaptor.native_request) and the client's `anthropic-version` and `anthropic-beta`; its answer is
relayed untouched. Only thinking blocks another provider produced (their signature is sealed: Claude
would refuse it) are removed first; when that leaves the last assistant tool_use turn without its
leading thinking block while thinking is on, thinking is switched off for that request (and the
client told in `X-Gateway-Dropped`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from api.relay.inbound.anthropic_read import read_request
from api.relay.inbound.anthropic_render import render_message
from api.relay.inbound.anthropic_stream import ERROR_TYPES, AnthropicStreamWriter, error_event
from api.relay.inbound.base import Inbound, StreamWriter, note
from api.relay.inbound.shapes import check_anthropic
from api.services.configuration.capability_lookup import capability
from api.upstream import catalogue
from api.upstream.errors import RelayError
from api.upstream.provider import ANTHROPIC
from api.upstream.providers.claude.messages import flatten_open_tool_turn
from api.upstream.reasoning import is_sealed

THINKING_BLOCKS = ("thinking", "redacted_thinking")


def _foreign(block: Any) -> bool:
    """A block another provider's state made (a thinking block or a citation we sealed)."""
    if not isinstance(block, Mapping):
        return False
    if block.get("type") == "thinking":
        return is_sealed(block.get("signature"))
    citations = block.get("citations")
    return isinstance(citations, list) and any(isinstance(c, Mapping) and is_sealed(c.get("encrypted_index"))
                                               for c in citations)


def _cleaned(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The assistant message without foreign blocks (None when it keeps nothing)."""
    blocks = []
    for block in message["content"]:
        if isinstance(block, Mapping) and block.get("type") == "thinking" and is_sealed(block.get("signature")):
            continue
        if _foreign(block):  # a text block: its text stays, our citations go
            block = {k: v for k, v in block.items() if k != "citations"}
        blocks.append(block)
    return {**message, "content": blocks} if blocks else None


def without_foreign_state(messages: Any) -> list[Any] | None:
    """`messages` with other providers' thinking blocks and our citations removed; None when there
    are none (the common case: the body then goes as it is)."""
    if not isinstance(messages, list):
        return None
    found = [i for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "assistant"
             and isinstance(m.get("content"), list) and any(_foreign(b) for b in m["content"])]
    if not found:
        return None
    out = list(messages)
    for i in reversed(found):
        cleaned = _cleaned(messages[i])
        if cleaned is None:
            del out[i]
        else:
            out[i] = cleaned
    return out


def lacks_leading_thinking(messages: list[Any]) -> bool:
    """Whether the last assistant turn calls tools without a thinking block first (which Claude
    refuses while thinking is on)."""
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            content = message.get("content")
            if not isinstance(content, list) or not content:
                return False
            first = content[0]
            calls = any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in content)
            return calls and not (isinstance(first, Mapping) and first.get("type") in THINKING_BLOCKS)
    return False


class AnthropicInbound(Inbound):
    name: ClassVar[str] = "anthropic"
    client_format: ClassVar[str] = ANTHROPIC
    check = staticmethod(check_anthropic)

    def __init__(self, body: dict[str, Any], request: Any) -> None:
        super().__init__(body, request)
        self.reading: list[str] = []  # what reading into the internal form left out

    @property
    def openai(self) -> dict[str, Any]:
        self.reading.clear()
        out = read_request(self.body, self.reading)
        if self.body.get("stream") is True:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out

    def native(self, channel_type: int, model: str = "") -> bool:
        name = model or str(self.body.get("model") or "")
        return catalogue.provider(channel_type).serves_native(ANTHROPIC, name)

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        """The body as sent (the same object when the model name is the same), without other
        providers' thinking blocks and our citations when there are any."""
        self.notices.clear()
        body = self.body
        messages = without_foreign_state(body.get("messages"))
        current = messages if messages is not None else list(body.get("messages") or ())
        if lacks_leading_thinking(current) and (cap := capability(upstream_model)).thinks_by_default and (
                "none" not in cap.efforts):  # a model that always thinks (it has no "none" effort)
            # A model that always thinks refuses a tool turn without its thinking (another model answered
            # it, after a fallback): that turn and its results go as text, never with forged thinking.
            self.notices.append("thinking")
            return {**body, "model": upstream_model, "messages": flatten_open_tool_turn(current)}
        if messages is None:
            return body if body.get("model") == upstream_model else {**body, "model": upstream_model}
        out = {**body, "model": upstream_model, "messages": messages}
        thinking = body.get("thinking")
        if (isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
                and lacks_leading_thinking(messages)):
            if capability(upstream_model).thinks_by_default:
                out["thinking"] = {"type": "disabled"}
            else:
                del out["thinking"]
            self.notices.append("thinking")
        return out

    def native_headers(self, channel: Mapping[str, str]) -> dict[str, str]:
        """The client's API version, and its beta flags added to the channel's own."""
        headers = {}
        version = self._header("anthropic-version")
        if version:
            headers["anthropic-version"] = version
        given = self._header("anthropic-beta")
        flags = [f.strip() for value in (channel.get("anthropic-beta") or "", given) for f in value.split(",")
                 if f.strip()]
        if flags:
            headers["anthropic-beta"] = ",".join(dict.fromkeys(flags))
        return headers

    def _header(self, name: str) -> str:
        """A header of the client's as it can travel upstream: one with bytes that are not ASCII (not
        UTF-8, kept by aiohttp as surrogates) is left out and said."""
        value = self.request.headers.get(name) or ""
        if value.isascii():
            return value
        note(self.notices, name)
        return ""

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        return render_message(answer, self.body.get("model"))

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        """What reading left out is said; `output_config`'s other fields go to Claude channels only."""
        self.notices[:] = self.reading
        if ANTHROPIC in catalogue.provider(channel_type).native or "output_config" not in body:
            return body
        self.notices.extend(f"output_config.{k}" for k in body["output_config"])
        return {k: v for k, v in body.items() if k != "output_config"}

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        return AnthropicStreamWriter(model, prompt_tokens)

    def error_frame(self, err: RelayError) -> bytes:
        return error_event(err)

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(err.status, "api_error")
        message = f"{err.message} (request id: {request_id})" if request_id else err.message
        return {"type": "error", "error": {"type": kind, "message": message}}
