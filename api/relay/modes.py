"""What differs between the relay's endpoints, one row per mode: the pipeline (handler.py) reads the
row and has no per-mode branches of its own. An adaptor's paths and capabilities (which modes it
serves) stay with the adaptor (base.py)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from api.relay.form_shape import TRANSCRIPTION, TRANSLATION, FormShape
from api.relay.image_edit_form import EDIT_FORM, check_edit_form
from api.upstream.base import Adaptor, AnswerReader, RelayMode, TokenUsage
from api.upstream.endpoints import (
    AudioMixin,
    EmbeddingsMixin,
    ImageEditsMixin,
    ImagesMixin,
    ModerationsMixin,
    RerankMixin,
)
from api.upstream.image_usage import image_usage
from api.upstream.tokenizer import count_chat_request, count_input, count_speech_input, count_text

if TYPE_CHECKING:
    from api.relay.job import Form

Body = Mapping[str, Any]


class Billing(StrEnum):
    """How a request is priced: one strategy each in api/relay/billing.py."""

    TOKENS = "tokens"  # prompt and completion tokens
    IMAGES = "images"  # per image, by size and quality; by the image tokens an image model reports
    SPEECH = "speech"  # by the characters to speak
    TRANSCRIPTION = "transcription"  # by the text heard
    TASK = "task"  # a task's per-call price, charged once the upstream took it (api/relay/tasks)
    VIDEO = "video"  # a video task: per second of video (or per video), charged once the upstream took it
    REALTIME = "realtime"  # each response of a Realtime session, text and audio tokens at their own ratios


def text_field(body: Body, name: str) -> str:
    """The field when it is a string, else ""."""
    value = body.get(name)
    return value if isinstance(value, str) else ""


def _rerank_prompt(body: Body) -> int:
    docs = [d if isinstance(d, str) else (d.get("text") or "") for d in body.get("documents") or ()
            if isinstance(d, str | dict)]
    return count_text(text_field(body, "query")) + count_input(docs)


def _nothing(body: Body) -> int:
    return 0


Convert = Callable[[Adaptor, Body], dict[str, Any]]
Read = Callable[[AnswerReader, dict[str, Any]], tuple[dict[str, Any], TokenUsage | None]]


def _chat(adaptor: Adaptor, body: Body) -> dict[str, Any]:
    return adaptor.convert_request(body)


def _answer(adaptor: AnswerReader, data: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
    return adaptor.convert_response(data)


FormFields = Callable[[Adaptor, Mapping[str, str]], dict[str, str]]
FormBody = Callable[[Adaptor, Body, list[tuple[str, str, str, bytes]]], dict[str, Any] | None]


def _audio_fields(adaptor: Adaptor, fields: Mapping[str, str]) -> dict[str, str]:
    return cast(AudioMixin, adaptor).convert_transcription_fields(fields)


def _images(data: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage | None]:
    """An images answer: the usage an image model reports (gpt-image), None for the others."""
    return data, image_usage(data.get("usage"))


@dataclass(frozen=True, slots=True)
class Mode:
    default_model: str = ""  # when the body names no model
    streamable: bool = False  # `"stream": true` is honoured
    form: FormShape | None = None  # the body is a form of this shape (audio, image edits), not JSON
    text: bool = False  # the answer is generated text: usage the upstream did not report is counted from it
    count_prompt: Callable[[Body], int] = _nothing  # prompt tokens, before the upstream answers
    convert: Convert | None = None  # the client's body → the upstream's (None: a form, see upstream_form)
    read: Read | None = None  # a complete JSON answer → (the client's body, reported usage); None: not JSON
    billing: Billing = Billing.TOKENS
    form_fields: FormFields | None = None  # a form's text fields → the upstream's (its files go as they came)
    form_body: FormBody | None = None  # a form → a JSON body, for an upstream that takes it so (else None)
    check_form: Callable[[dict[str, Any], Form], None] | None = None  # a form's checks, before anything is charged
    events: bool = False  # a stream of named events relayed as they come (api/relay/image_stream.py), not chunks

    @property
    def multipart(self) -> bool:
        return self.form is not None


MODES: Mapping[RelayMode, Mode] = {
    RelayMode.CHAT: Mode(streamable=True, text=True, count_prompt=count_chat_request, convert=_chat, read=_answer),
    RelayMode.COMPLETIONS: Mode(streamable=True, text=True, count_prompt=lambda body: count_input(body.get("prompt")),
                                convert=_chat, read=_answer),
    RelayMode.EMBEDDINGS: Mode(
        count_prompt=lambda body: count_input(body.get("input")),
        convert=lambda a, body: cast(EmbeddingsMixin, a).convert_embeddings_request(body),
        read=lambda a, data: cast(EmbeddingsMixin, a).convert_embeddings_response(data)),
    RelayMode.MODERATIONS: Mode(
        default_model="text-moderation-latest", count_prompt=lambda body: count_input(body.get("input")),
        convert=lambda a, body: cast(ModerationsMixin, a).convert_moderations_request(body),
        read=lambda a, data: cast(ModerationsMixin, a).convert_moderations_response(data)),
    RelayMode.IMAGES: Mode(
        default_model="dall-e-2", streamable=True, billing=Billing.IMAGES, events=True,
        count_prompt=lambda body: count_text(text_field(body, "prompt")),
        convert=lambda a, body: cast(ImagesMixin, a).convert_image_request(body),
        read=lambda a, data: _images(cast(ImagesMixin, a).convert_image_response(data))),
    RelayMode.IMAGES_EDIT: Mode(
        default_model="gpt-image-1.5", streamable=True, form=EDIT_FORM, billing=Billing.IMAGES, events=True,
        count_prompt=lambda body: count_text(text_field(body, "prompt")), check_form=check_edit_form,
        form_fields=lambda a, fields: cast(ImageEditsMixin, a).convert_image_edit_fields(fields),
        form_body=lambda a, body, files: cast(ImageEditsMixin, a).convert_image_edit_body(body, files),
        read=lambda a, data: _images(cast(ImageEditsMixin, a).convert_image_edit_response(data))),
    RelayMode.SPEECH: Mode(
        default_model="tts-1", billing=Billing.SPEECH,
        count_prompt=lambda body: count_speech_input(text_field(body, "input")),
        convert=lambda a, body: cast(AudioMixin, a).convert_speech_request(body)),
    RelayMode.TRANSCRIPTION: Mode(default_model="whisper-1", form=TRANSCRIPTION, billing=Billing.TRANSCRIPTION,
                                  form_fields=_audio_fields),
    RelayMode.TRANSLATION: Mode(default_model="whisper-1", form=TRANSLATION, billing=Billing.TRANSCRIPTION,
                                form_fields=_audio_fields),
    RelayMode.RERANK: Mode(
        count_prompt=_rerank_prompt,
        convert=lambda a, body: cast(RerankMixin, a).convert_rerank_request(body),
        read=lambda a, data: cast(RerankMixin, a).convert_rerank_response(data)),
    RelayMode.REALTIME: Mode(billing=Billing.REALTIME),  # a WebSocket session: api/relay/realtime
    RelayMode.TASK: Mode(billing=Billing.TASK),  # a task submission: api/relay/tasks
    RelayMode.VIDEO: Mode(billing=Billing.VIDEO),  # a video task submission: api/relay/tasks
}
