"""Google's Gemini API in, for `google-genai` and Gemini CLI: `POST /v1beta/models/{model}:generateContent`,
`:streamGenerateContent` (SSE with `alt=sse`, else one streamed JSON array), `:countTokens`,
`:embedContent`, `:batchEmbedContents`, `GET /v1beta/models[/{model}]`, and the same under `/v1`.
The key comes in `x-goog-api-key` (or `?key=`, or `Authorization`).

The request is read into the internal form (gemini_read.py, gemini_schema.py), answers are rendered
back (gemini_render.py). Google's own tools (code execution, URL context, …) no other provider runs
are left out and said in `X-Gateway-Dropped`; Google Search becomes the hosted web search. A Gemini
channel (type 24) gets the body as sent and its answer is relayed untouched — except for thought
signatures this gateway sealed (a turn a Claude channel answered), which Gemini would refuse: they
become Gemini's documented stand-in for a signature it did not make."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from api.relay.inbound.base import Inbound, StreamWriter
from api.relay.inbound.gemini_read import is_ours, pick, read_request, texts_of
from api.relay.inbound.gemini_render import (
    FINISH_REASONS,
    GeminiStreamWriter,
    google_error,
    parts_of,
    usage_metadata,
)
from api.relay.inbound.shapes import check_gemini
from api.upstream import catalogue
from api.upstream.base import TokenUsage
from api.upstream.errors import RelayError
from api.upstream.provider import GEMINI
from api.upstream.reasoning import GEMINI_SKIP_SIGNATURE

SIGNATURE_KEYS = ("thoughtSignature", "thought_signature")


def _without_ours(part: Any) -> Any:
    if not isinstance(part, Mapping) or not any(is_ours(part.get(k)) for k in SIGNATURE_KEYS):
        return part
    return {k: GEMINI_SKIP_SIGNATURE if k in SIGNATURE_KEYS and is_ours(v) else v for k, v in part.items()}


def without_our_signatures(contents: Any) -> list[Any] | None:
    """`contents` with every thought signature we sealed replaced by Gemini's stand-in; None when
    there is none (the common case: the body then goes as it is)."""
    if not isinstance(contents, list):
        return None
    changed = False
    out: list[Any] = []
    for turn in contents:
        parts = pick(turn, "parts")
        if isinstance(parts, list) and any(_without_ours(p) is not p for p in parts):
            turn = {**turn, "parts": [_without_ours(p) for p in parts]}
            changed = True
        out.append(turn)
    return out if changed else None


class GeminiInbound(Inbound):
    name: ClassVar[str] = "gemini"
    query_key: ClassVar[bool] = True  # Google's clients may send the key as `?key=`
    client_format: ClassVar[str] = GEMINI
    check = staticmethod(check_gemini)

    def __init__(self, body: dict[str, Any], request: Any, model: str = "", stream: bool = False,
                 sse: bool = True) -> None:
        super().__init__(body, request)
        self.model = model
        self.stream = stream
        self.sse = sse
        self.reading: list[str] = []  # what reading into the internal form left out

    @property
    def openai(self) -> dict[str, Any]:
        self.reading.clear()
        out = read_request(self.body, self.model, self.reading)
        if self.stream:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out

    @property
    def thoughts(self) -> bool:
        """Whether the client wants thought parts (not when it said includeThoughts: false)."""
        config = pick(pick(self.body, "generationConfig"), "thinkingConfig")
        return pick(config, "includeThoughts") is not False

    def native(self, channel_type: int, model: str = "") -> bool:
        # The adaptor asks for SSE when it streams: a client that wants the JSON array is converted.
        return catalogue.provider(channel_type).serves_native(GEMINI, model) and (self.sse or not self.stream)

    def native_body(self, upstream_model: str) -> dict[str, Any]:
        """The body as sent (the model travels in the URL), our sealed signatures replaced."""
        self.notices.clear()
        contents = without_our_signatures(self.body.get("contents"))
        return self.body if contents is None else {**self.body, "contents": contents}

    def for_channel(self, body: dict[str, Any], channel_type: int) -> dict[str, Any]:
        self.notices[:] = self.reading
        return body

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        candidates = []
        for choice in answer.get("choices") or ():
            message = choice.get("message") or {}
            candidates.append({"content": {"role": "model", "parts": parts_of(message, self.thoughts)},
                               "finishReason": FINISH_REASONS.get(choice.get("finish_reason") or "stop", "STOP"),
                               "index": choice.get("index", 0)})
        usage = TokenUsage.from_openai(answer.get("usage")) or TokenUsage()
        return {"candidates": candidates, "usageMetadata": usage_metadata(usage), "modelVersion": self.model,
                "responseId": str(answer.get("id") or "").removeprefix("chatcmpl-")}

    def writer(self, model: str, prompt_tokens: int) -> StreamWriter:
        return GeminiStreamWriter(self.model, self.sse, self.thoughts)

    def error_frame(self, err: RelayError) -> bytes:
        return b"data: " + orjson.dumps(google_error(err, "")) + b"\r\n\r\n"

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        return google_error(err, request_id)


class GeminiEmbedInbound(Inbound):
    """`:embedContent` (one content) and `:batchEmbedContents` (`requests`) → embeddings."""

    name: ClassVar[str] = "gemini"
    query_key: ClassVar[bool] = True

    def __init__(self, body: dict[str, Any], request: Any, model: str = "", batch: bool = False) -> None:
        super().__init__(body, request)
        self.model = model
        self.batch = batch

    @property
    def openai(self) -> dict[str, Any]:
        requests = self.body.get("requests") if self.batch else [self.body]
        texts = ["".join(p["text"] for p in texts_of(r.get("content"))) for r in requests or ()
                 if isinstance(r, Mapping)]
        out: dict[str, Any] = {"model": self.model, "input": texts}
        first = (requests or [{}])[0]
        dimensions = pick(first, "outputDimensionality")
        if isinstance(dimensions, int):
            out["dimensions"] = dimensions
        return out

    def render(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        vectors = [{"values": item.get("embedding") or []} for item in answer.get("data") or ()]
        return {"embeddings": vectors} if self.batch else {"embedding": vectors[0] if vectors else {"values": []}}

    @classmethod
    def error_body(cls, err: RelayError, request_id: str) -> dict[str, Any]:
        return google_error(err, request_id)
