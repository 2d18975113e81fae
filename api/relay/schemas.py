"""OpenAI wire objects used by the relay, as TypedDicts (documentation for readers and type checkers;
at run time they are plain dicts straight from orjson). Only the fields the gateway reads or writes
are listed; everything else passes through untouched."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImageURL(TypedDict, total=False):
    url: str
    detail: Literal["auto", "low", "high"]


class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL | str


ContentPart = TextPart | ImagePart | dict[str, Any]


class FunctionCall(TypedDict, total=False):
    name: str
    arguments: str


class ToolCall(TypedDict, total=False):
    index: int  # streaming deltas only
    id: str
    type: Literal["function"]
    function: FunctionCall


class Message(TypedDict, total=False):
    role: str
    content: str | list[ContentPart] | None
    name: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    reasoning_content: str  # DeepSeek-style reasoning output


class StreamOptions(TypedDict, total=False):
    include_usage: bool


class ChatRequest(TypedDict, total=False):
    model: str
    messages: list[Message]
    stream: bool
    stream_options: StreamOptions
    max_tokens: int
    max_completion_tokens: int
    temperature: float
    top_p: float
    n: int
    stop: str | list[str]
    tools: list[dict[str, Any]]
    tool_choice: str | dict[str, Any]
    user: str


class CompletionRequest(TypedDict, total=False):
    model: str
    prompt: str | list[str] | list[int] | list[list[int]]
    stream: bool
    stream_options: StreamOptions
    max_tokens: int


class EmbeddingRequest(TypedDict, total=False):
    model: str
    input: str | list[str] | list[int] | list[list[int]]
    encoding_format: Literal["float", "base64"]
    dimensions: int


class ImageRequest(TypedDict, total=False):
    model: str
    prompt: str
    n: int
    size: str
    quality: str
    response_format: str


class SpeechRequest(TypedDict, total=False):
    model: str
    input: str
    voice: str
    response_format: str
    speed: float


class RerankRequest(TypedDict, total=False):
    model: str
    query: str
    documents: list[str | dict[str, Any]]
    top_n: int


class PromptTokensDetails(TypedDict, total=False):
    cached_tokens: int
    audio_tokens: int


class CompletionTokensDetails(TypedDict, total=False):
    reasoning_tokens: int
    audio_tokens: int


class Usage(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: NotRequired[PromptTokensDetails]
    completion_tokens_details: NotRequired[CompletionTokensDetails]


class Choice(TypedDict, total=False):
    index: int
    message: Message
    finish_reason: str | None
    text: str  # /v1/completions


class ChatResponse(TypedDict, total=False):
    id: str
    object: str
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    system_fingerprint: str


class ChunkChoice(TypedDict, total=False):
    index: int
    delta: Message
    finish_reason: str | None
    text: str  # /v1/completions streams


class ChatChunk(TypedDict, total=False):
    id: str
    object: str
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None


class ErrorDetail(TypedDict):
    message: str
    type: str
    param: str | None
    code: str | int | None


class ErrorBody(TypedDict):
    error: ErrorDetail
