"""The relay's endpoints as the seam knows them: `RelayMode`, one member per endpoint with OpenAI's
path for it and the capability an adaptor needs to serve it. The capabilities are opt-in mixins, one
per kind of endpoint beyond chat, whose default implementations speak OpenAI's format; an adaptor
without the mode's mixin does not serve it (`Adaptor.supports`) and the pipeline answers 501.

What the relay does with an endpoint (its routes, check, prompt count, how its answer is read, its
billing) is the endpoint's row in api/relay/modes.py, which says how a new endpoint is added."""
from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

from api.services.billing.records import TokenUsage


def with_model(adaptor: Any, req: Mapping[str, Any]) -> dict[str, Any]:
    """The body with the upstream model: a mixin's `self` is an adaptor (base.Adaptor._with_model)."""
    body: dict[str, Any] = adaptor._with_model(req)
    return body


class CompletionsMixin:
    """/v1/completions through convert_request / convert_response / convert_stream_event."""


class EmbeddingsMixin:
    def convert_embeddings_request(self: Any, req: Mapping[str, Any]) -> dict[str, Any]:
        return with_model(self, req)

    def convert_embeddings_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return body, TokenUsage.from_openai(body.get("usage"))


class ModerationsMixin:
    def convert_moderations_request(self: Any, req: Mapping[str, Any]) -> dict[str, Any]:
        return with_model(self, req)

    def convert_moderations_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        return body, None  # moderations report no usage: billed on the local prompt count


class ImagesMixin:
    # The upstream bills the images it produced, not the `n` asked for (DashScope): a per-image price
    # is then paid for the images the answer delivered when fewer came (api/relay/billing.images_billed).
    bills_produced_images: ClassVar[bool] = False

    def convert_image_request(self: Any, req: Mapping[str, Any]) -> dict[str, Any]:
        """OpenAI's body; `stream` and `partial_images` only to a type that serves OpenAI's image API in
        full (the catalogue's `image_edits`): another answers whole, told to the client as the stream's
        completed events (api/relay/image_stream.whole_as_events)."""
        body = with_model(self, req)
        provider = getattr(self, "provider", None)
        if not (provider is not None and provider.image_edits):
            body.pop("stream", None)
            body.pop("partial_images", None)
        return body

    def convert_image_response(self, body: dict[str, Any]) -> dict[str, Any]:
        return body  # billed per image (pricing.image_quota), not by tokens


class ImageEditsMixin:
    """/v1/images/edits: the form's text fields as OpenAI takes them (its image and mask parts are
    forwarded untouched by the pipeline), the model named as the channel sends it."""

    def convert_image_edit_fields(self: Any, fields: Mapping[str, str]) -> dict[str, str]:
        return {**fields, "model": self.meta.name.sent}

    def convert_image_edit_body(self, body: Mapping[str, Any],
                                files: list[tuple[str, str, str, bytes]]) -> dict[str, Any] | None:
        """A JSON body made of the checked fields (`body`) and the file parts (name, filename, content
        type, bytes), for an upstream that takes edits as JSON (Gemini's image models); None: the form."""
        return None

    def convert_image_edit_response(self, body: dict[str, Any]) -> dict[str, Any]:
        return body


class AudioMixin:
    """Speech (JSON in, audio bytes out) and transcription/translation (multipart form in)."""

    def convert_speech_request(self: Any, req: Mapping[str, Any]) -> dict[str, Any]:
        return with_model(self, req)

    def convert_transcription_fields(self: Any, fields: Mapping[str, str]) -> dict[str, str]:
        """The form's text fields (the file part is forwarded untouched by the pipeline)."""
        out = dict(fields)
        if self.meta.name.upstream:
            out["model"] = self.meta.name.upstream
        return out


class RerankMixin:
    def convert_rerank_request(self: Any, req: Mapping[str, Any]) -> dict[str, Any]:
        return with_model(self, req)

    def convert_rerank_response(self, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
        """Jina/Cohere style `usage` or SiliconFlow's `meta.tokens` → usage."""
        usage = TokenUsage.from_openai(body.get("usage"))
        if usage is None:
            tokens = (body.get("meta") or {}).get("tokens") or {}
            prompt = int(tokens.get("input_tokens") or 0)
            completion = int(tokens.get("output_tokens") or 0)
            usage = TokenUsage(prompt, completion) if prompt or completion else None
        return body, usage


class RelayMode(StrEnum):
    """An endpoint of the relay: its name, OpenAI's path for it (what an adaptor's `paths` start from,
    and under /v1 the route the relay serves it on; "" = neither) and the mixin an adaptor must have to
    serve it (None: every adaptor does)."""

    path: str
    capability: type | None

    def __new__(cls, value: str, path: str = "", capability: type | None = None) -> RelayMode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.path = path
        member.capability = capability
        return member

    CHAT = "chat", "/v1/chat/completions"
    COMPLETIONS = "completions", "/v1/completions", CompletionsMixin
    EMBEDDINGS = "embeddings", "/v1/embeddings", EmbeddingsMixin
    MODERATIONS = "moderations", "/v1/moderations", ModerationsMixin
    IMAGES = "images", "/v1/images/generations", ImagesMixin
    IMAGES_EDIT = "images_edit", "/v1/images/edits", ImageEditsMixin
    SPEECH = "speech", "/v1/audio/speech", AudioMixin
    TRANSCRIPTION = "transcription", "/v1/audio/transcriptions", AudioMixin
    TRANSLATION = "translation", "/v1/audio/translations", AudioMixin
    RERANK = "rerank", "/v1/rerank", RerankMixin
    REALTIME = "realtime"  # a /v1/realtime WebSocket session (api/relay/realtime): no adaptor call
    TASK = "task"  # a task submission (Midjourney, Suno: api/relay/tasks), its task adaptor's call
    VIDEO = "video"  # a video task submission (/v1/videos: api/relay/tasks), its task adaptor's call


# OpenAI's paths, the default of every adaptor's `paths`.
OPENAI_PATHS: Mapping[RelayMode, str] = {mode: mode.path for mode in RelayMode if mode.path}
