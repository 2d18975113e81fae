"""The clients' own formats in (Anthropic Messages, Gemini, OpenAI Responses) beside OpenAI's chat
completions, which is the pipeline's internal representation.

An `Inbound` is built per request from the client's body: `openai` is the same request as an
OpenAI chat-completions body (what the pipeline prices, counts, limits and hands to any channel's
adaptor), `render` turns the pipeline's OpenAI answer back into the client's format, `writer` a
stream writer that turns OpenAI chunks into the client's framing (event names, end frame, usage
frame), and `error_body` shapes errors. When the chosen channel speaks the client's format natively
(`native_types`), the pipeline sends `native_body` unconverted and relays the upstream's bytes as
they come, reading only the usage.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from aiohttp import web

from api.relay.validate import check_depth
from api.upstream import catalogue
from api.upstream.base import AnswerReader, TokenUsage
from api.upstream.chat import ChatMessage, Content, ContentPart, ToolCall
from api.upstream.errors import RelayError
from api.upstream.reasoning import with_gemini_signature

# The route's Inbound class, set on the request before the key is checked (errors take its shape).
REQUEST_INBOUND = web.RequestKey("relay_inbound", type)


class StreamWriter(ABC):
    """OpenAI chunks in, the client's stream frames out (bytes, written as they come)."""

    content_type: str = "text/event-stream"

    @abstractmethod
    def frames(self, chunks: list[Mapping[str, Any]]) -> bytes: ...

    @abstractmethod
    def finish(self, usage: TokenUsage, error: RelayError | None) -> bytes:
        """The end of the stream: closing frames with the usage; `error` when it was cut short."""


class Inbound(ABC):
    name: ClassVar[str]  # recorded in the consume log
    client_format: ClassVar[str] = ""  # the catalogue's name of this format (a row's `native`)
    query_key: ClassVar[bool] = False  # the key may come as the query parameter `key` (Google's clients)
    # The body as sent, checked before it is read (api/relay/inbound/shapes.py): raises validate.Invalid.
    check = staticmethod(check_depth)

    def __init__(self, body: dict[str, Any], request: web.Request) -> None:
        self.body = body
        self.request = request
        # What reading the client's body left out for a converted attempt (a hosted tool no provider
        # here runs, …): said in `X-Gateway-Dropped` and the log with the adaptor's own notices. An
        # inbound sets them per attempt (`for_channel`) and clears them for a native one (`native_body`).
        self.notices: list[str] = []
        # Set while the gateway runs some of the request's tools itself (MCP tools inside model
        # requests, api/relay/mcp_tools): every attempt is converted (the upstream must not see the
        # client's MCP declarations), and each answer is handed over in the internal form before it
        # is rendered.
        self.on_answer: Callable[[Mapping[str, Any]], None] | None = None

    @property
    @abstractmethod
    def openai(self) -> dict[str, Any]:
        """The request as an OpenAI chat-completions body (model and `stream` included)."""

    def native(self, channel_type: int, model: str = "") -> bool:
        """Whether a channel of this type takes the body unconverted (`model`: the channel's name for it)."""
        return catalogue.provider(channel_type).serves_native(self.client_format, model)

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        """The client's own body for a channel of its format, with the channel's model name."""
        return {**self.body, "model": upstream_model}

    # Where a native channel takes the body, when not at its adaptor's own URL for the mode.
    native_path: ClassVar[str | None] = None

    def native_reader(self, adaptor: AnswerReader) -> AnswerReader:
        """What reads a native channel's answer for its usage (the adaptor, when it speaks this format)."""
        return adaptor

    def native_headers(self, channel: Mapping[str, str]) -> dict[str, str]:
        """Headers of the client's that travel to a native channel (beta flags, API version), given
        the ones the channel's adaptor set."""
        return {}

    @abstractmethod
    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        """The pipeline's OpenAI chat completion → the client's answer."""

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        """The OpenAI body as a channel of this type gets it (fields only some formats take dropped)."""
        return body

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        """The stream writer of a format whose requests stream."""
        raise TypeError(f"{type(self).__name__} requests do not stream")

    def error_frame(self, err: RelayError) -> bytes:
        """The frame that tells a client its (relayed) stream was cut short."""
        raise TypeError(f"{type(self).__name__} requests do not stream")

    @classmethod
    @abstractmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]: ...


# -- building the internal form (api/upstream/reasoning.py), shared by the client formats -----------------


def note(notices: list[str], what: str) -> None:
    """Record once that reading the client's body left `what` out."""
    if what not in notices:
        notices.append(what)


def collapse(parts: list[ContentPart]) -> Content:
    """One plain text part → its text; anything else stays a list of parts."""
    if len(parts) == 1 and parts[0]["type"] == "text" and "cache_control" not in parts[0]:
        return str(parts[0]["text"])
    return parts


def assistant_message(parts: list[ContentPart], calls: list[ToolCall], reasoning: list[str],
                      thinking_blocks: list[dict[str, Any]], text_signature: str | None) -> ChatMessage:
    """An assistant turn in the internal form: its content, tool calls, reasoning text, Claude's
    thinking blocks and the Gemini signature of its first text part."""
    message: ChatMessage = {"role": "assistant", "content": collapse(parts) if parts else None if calls else ""}
    if calls:
        message["tool_calls"] = calls
    if any(reasoning):
        message["reasoning_content"] = "".join(reasoning)
    if thinking_blocks:
        message["thinking_blocks"] = thinking_blocks
    return with_gemini_signature(message, text_signature)
