"""Google Gemini (type 24): `{base}/{version}/models/{model}:generateContent`, or
`:streamGenerateContent?alt=sse`, with the key in `x-goog-api-key` (never in the URL). The API
version comes from the channel's `other` (one version, or a JSON table per model), else `v1beta`. Embeddings go
through `:batchEmbedContents`. Image URLs in prompts are fetched by the gateway and inlined
(`prepare`, under api/upstream/media.py's policy); document URLs go as `fileData` (Gemini fetches them).
Conversion: contents.py (messages), schema.py (tool and output schemas), convert.py (the request, as
the model's capability row allows), answer.py and stream.py (the answer), images.py (image output in
chat). `/v1/images/generations` serves Gemini's image models (`:generateContent`, image_generation.py)
and Imagen (`:predict`, imagen.py); `/v1/images/edits` the image models (image_edit.py)."""
from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import aiohttp
import orjson

from api.upstream.base import (
    Adaptor,
    RelayMeta,
    RelayMode,
    StreamChunk,
    StreamState,
    TokenUsage,
    UpstreamContext,
    UpstreamRequest,
)
from api.upstream.decoders import EndOfBody
from api.upstream.endpoints import EmbeddingsMixin, ImageEditsMixin, ImagesMixin
from api.upstream.errors import RelayError
from api.upstream.media import fetch_images
from api.upstream.providers.gemini import convert, image_edit, image_generation, imagen
from api.upstream.providers.gemini.images import is_image_model, is_imagen
from api.upstream.providers.gemini.stream import GeminiStream
from api.upstream.reasoning import GEMINI_FAMILY
from api.upstream.sse import SSEEvent, SSEParser

DEFAULT_VERSION = "v1beta"
IMAGE_MODES = (RelayMode.IMAGES, RelayMode.IMAGES_EDIT)
_VERSION = re.compile(r"^v\d+(alpha|beta)?\d*$")

MODELS: tuple[str, ...] = (
    "gemini-3.1-pro-preview", "gemini-3-flash-preview", "gemini-3.1-flash-lite-preview",
    "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.0-flash", "gemini-2.0-flash-lite",
    "gemini-1.5-pro", "gemini-1.5-flash", "gemini-embedding-001", "text-embedding-004",
    "gemini-3.1-flash-image", "gemini-3-pro-image",  # image models (ai.google.dev/gemini-api/docs/deprecations)
)


class GeminiAdaptor(EmbeddingsMixin, ImagesMixin, ImageEditsMixin, Adaptor):
    prepares: ClassVar[bool] = True
    completes: ClassVar[bool] = True
    reasoning_family: ClassVar[str] = GEMINI_FAMILY
    tool_combination: ClassVar[bool] = True  # built-in tools beside functions (convert.py; not on Vertex AI)

    def __init__(self, meta: RelayMeta) -> None:
        super().__init__(meta)
        self.stream = GeminiStream(meta.name.answered)
        self.requests = 1  # generateContent requests making the answer (`n` images of an image model)
        self.sent: UpstreamRequest | None = None

    def supports(self, mode: RelayMode) -> bool:
        if self.modes is not None and mode not in self.modes:
            return False
        if mode == RelayMode.IMAGES:
            return is_image_model(self.meta.model) or is_imagen(self.meta.model)
        if mode == RelayMode.IMAGES_EDIT:
            return is_image_model(self.meta.model)
        # Imagen only predicts images: chat and embeddings are answered 501 here, not sent to fail upstream
        return mode in (RelayMode.CHAT, RelayMode.EMBEDDINGS) and not is_imagen(self.meta.model)

    @property
    def version(self) -> str:
        """`other`: one version for every model (`v1`), or per model as JSON
        (`{"default": "v1beta", "gemini-1.0-pro": "v1"}`); else v1beta."""
        other = self.meta.other.strip()
        if _VERSION.match(other):
            return other
        if other.startswith("{"):
            try:
                table = orjson.loads(other)
            except orjson.JSONDecodeError:
                table = {}
            for name in (self.meta.model, self.meta.name.requested, "default"):
                value = table.get(name) if isinstance(table, dict) else None
                if isinstance(value, str) and _VERSION.match(value):
                    return value
        return DEFAULT_VERSION

    def request_url(self, mode: RelayMode | None = None) -> str:
        base = f"{self.base_url}/{self.version}/models/{self.meta.model}"
        if (mode or self.meta.mode) == RelayMode.EMBEDDINGS:
            return f"{base}:batchEmbedContents"
        if (mode or self.meta.mode) == RelayMode.IMAGES and is_imagen(self.meta.model):
            return f"{base}:predict"
        if (mode or self.meta.mode) in IMAGE_MODES:  # answered whole, a stream asked for or not
            return f"{base}:generateContent"
        return f"{base}:streamGenerateContent?alt=sse" if self.meta.is_stream else f"{base}:generateContent"

    def request_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.meta.key}

    def build_request(self, mode: RelayMode, body: Mapping[str, Any] | aiohttp.FormData) -> UpstreamRequest:
        self.sent = super().build_request(mode, body)  # its headers get the credential in `authorize`
        return self.sent

    async def prepare(self, body: dict[str, Any], ctx: UpstreamContext) -> None:
        parts = [part for content in [*(body.get("contents") or ()), body.get("systemInstruction") or {}]
                 for part in content.get("parts") or ()
                 if (part.get("inlineData") or {}).get("mimeType") == convert.MEDIA_PLACEHOLDER]
        urls = [part["inlineData"]["data"] for part in parts]
        images = await fetch_images(urls, allow_private=ctx.allow_private_urls)
        for part, (mime, data) in zip(parts, images, strict=True):
            part["inlineData"] = {"mimeType": mime, "data": base64.b64encode(data).decode()}

    async def complete(self, raw: bytes, ctx: UpstreamContext) -> bytes:
        """An image model's `n` images: the requests after the attempt's, their answers joined."""
        if self.meta.mode not in IMAGE_MODES or self.requests < 2 or self.sent is None:
            return raw
        more = await image_generation.more_answers(ctx, self.sent, self.requests - 1, self.convert_error)
        return image_generation.join(raw, more)

    def convert_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        return convert.convert_request(req, self.meta, self.tool_combination)

    def convert_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return convert.convert_response(body, self.meta.name.answered, self.stream.hidden)

    def circulates(self, req: Mapping[str, Any]) -> bool:
        """The tool-combination mode: the search's own toolCall/toolResponse parts (answer.py)."""
        return convert.combined(req, self.meta, self.tool_combination)

    def hidden_parts(self) -> list[dict[str, Any]]:
        return self.stream.hidden  # a whole answer's too (convert_response gathers them there)

    def stream_decoder(self, content_type: str) -> EndOfBody | None:
        return EndOfBody(SSEParser()) if content_type == "text/event-stream" else None

    def convert_stream_event(self, ev: SSEEvent, state: StreamState) -> list[StreamChunk]:
        return self.stream.convert(ev, state)

    def convert_error(self, status: int, body: bytes) -> RelayError:
        return convert.convert_error(status, body)

    # -- images (image_generation.py, imagen.py) -----------------------------------------------------------

    def convert_image_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        if is_imagen(self.meta.model):
            return imagen.convert_request(req, self.meta)
        body, self.requests = image_generation.convert_request(req, self.meta)
        return body

    def convert_image_response(self, body: dict[str, Any]) -> dict[str, Any]:
        """OpenAI's images answer; a Gemini image model's carries its token `usage` (billed by it)."""
        if is_imagen(self.meta.model):
            return imagen.convert_response(body)
        return image_generation.convert_response(body)[0]

    def convert_image_edit_body(self, body: Mapping[str, Any],
                                files: list[tuple[str, str, str, bytes]]) -> dict[str, Any] | None:
        converted, self.requests = image_edit.convert_request(body, files, self.meta)
        return converted

    def convert_image_edit_response(self, body: dict[str, Any]) -> dict[str, Any]:
        return image_generation.convert_response(body)[0]

    # -- embeddings ---------------------------------------------------------------------------------

    def convert_embeddings_request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        texts = req.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise RelayError.local_error(400, "input must be a string or a list of strings", "invalid_input")
        extra = {"outputDimensionality": req["dimensions"]} if isinstance(req.get("dimensions"), int) else {}
        return {"requests": [{"model": f"models/{self.meta.model}", "content": {"parts": [{"text": t}]}, **extra}
                             for t in texts]}

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Gemini reports no token count for embeddings: the local prompt count is billed."""
        data = [{"object": "embedding", "index": i, "embedding": e.get("values") or []}
                for i, e in enumerate(body.get("embeddings") or ())]
        prompt = self.meta.prompt_tokens
        return {"object": "list", "data": data, "model": self.meta.name.answered,
                "usage": {"prompt_tokens": prompt, "total_tokens": prompt}}, TokenUsage(prompt, 0)
