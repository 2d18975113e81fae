"""The relay's endpoints, one row each: what differs between them, so that the pipeline (handler.py)
has no per-endpoint branches of its own. An endpoint is said in two places, one per layer, joined by
its `RelayMode`: the seam's part (its name, OpenAI's path, the adaptor capability that serves it) is
the member in api/upstream/endpoints.py, below the relay, where adaptors and the channel tests read
it; the relay's part (further routes, its check, prompt count, conversion, how its answer is read,
its billing) is its `Mode` row here, since those name the relay's own checks and strategies. Every
other per-endpoint table is derived from the two: the routes under /v1 (routes.relayed), an
adaptor's default paths (OPENAI_PATHS) and what it serves (`Adaptor.supports`), the modes whose
sessions keep to a channel (affinity.CACHED_MODES).

A new /v1 endpoint:
1. api/upstream/endpoints.py: its capability, a mixin whose default methods speak OpenAI's format
   (`convert_<name>_request`, `convert_<name>_response`), and its `RelayMode` member naming the mode,
   OpenAI's path and the mixin; OpenAI's implementation is that mixin among OpenAIAdaptor's bases
   (api/upstream/providers/openai.py).
2. Here, its `Mode` row: its check (written in api/relay/validate.py), its prompt count, `convert`
   and `read` calling the mixin, its `reading` and `billing` (an existing kind, or a new `Reading`
   with its reader in api/relay/answers.py, a new `Billing` with its strategy in api/relay/billing.py).
3. A test of it through the pipeline (tests/relay/test_pipeline_modes.py has one per endpoint).
The route, the 501 of an adaptor without the capability, the 400 of its check and its settlement
then follow; tests/relay/test_endpoints.py holds the two tables to each other."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from api.relay.form_shape import TRANSCRIPTION, TRANSLATION, FormShape
from api.relay.image_edit_form import EDIT_FORM, check_edit_form
from api.relay.validate import (
    Check,
    check_chat,
    check_completions,
    check_embeddings,
    check_images,
    check_moderations,
    check_rerank,
    check_speech,
)
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


class Reading(StrEnum):
    """How a complete (non-streamed) answer is read into the client's answer and its usage: one reader
    each in api/relay/answers.py."""

    JSON = "json"  # the mode's `read`: the usage reported, else counted (the text, for `text` modes; the prompt)
    IMAGES = "images"  # the mode's `read`: the image tokens reported; asked as a stream, told as its events
    AUDIO = "audio"  # the bytes as they came (speech); the characters to speak are its prompt
    TRANSCRIPT = "transcript"  # as it came, text or JSON: the text heard is its output


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
    routes: tuple[str, ...] = ()  # routes under /v1 besides OpenAI's path (the RelayMode member's)
    default_model: str = ""  # when the body names no model
    streamable: bool = False  # `"stream": true` is honoured
    form: FormShape | None = None  # the body is a form of this shape (audio, image edits), not JSON
    text: bool = False  # the answer is generated text: usage the upstream did not report is counted from it
    check: Check | None = None  # a JSON body's own checks (api/relay/validate.py), after those every body has
    count_prompt: Callable[[Body], int] = _nothing  # prompt tokens, before the upstream answers
    convert: Convert | None = None  # the client's body → the upstream's (None: a form, see upstream_form)
    read: Read | None = None  # a complete JSON answer → (the client's body, reported usage); None: not JSON
    reading: Reading = Reading.JSON  # how a complete answer is read (api/relay/answers.py)
    billing: Billing = Billing.TOKENS  # how it is priced (api/relay/billing.py)
    form_fields: FormFields | None = None  # a form's text fields → the upstream's (its files go as they came)
    form_body: FormBody | None = None  # a form → a JSON body, for an upstream that takes it so (else None)
    check_form: Callable[[dict[str, Any], Form], None] | None = None  # a form's checks, before anything is charged
    events: bool = False  # a stream of named events relayed as they come (api/relay/image_stream.py), not chunks
    cached: bool = False  # an upstream may cache its prompt: a session keeps to one channel (api/relay/affinity.py)

    @property
    def multipart(self) -> bool:
        return self.form is not None


MODES: Mapping[RelayMode, Mode] = {
    RelayMode.CHAT: Mode(streamable=True, text=True, cached=True, check=check_chat, count_prompt=count_chat_request,
                         convert=_chat, read=_answer),
    RelayMode.COMPLETIONS: Mode(
        streamable=True, text=True, cached=True, check=check_completions,
        count_prompt=lambda body: count_input(body.get("prompt")), convert=_chat, read=_answer),
    RelayMode.EMBEDDINGS: Mode(
        routes=("/engines/{model}/embeddings",), check=check_embeddings,
        count_prompt=lambda body: count_input(body.get("input")),
        convert=lambda a, body: cast(EmbeddingsMixin, a).convert_embeddings_request(body),
        read=lambda a, data: cast(EmbeddingsMixin, a).convert_embeddings_response(data)),
    RelayMode.MODERATIONS: Mode(
        default_model="text-moderation-latest", check=check_moderations,
        count_prompt=lambda body: count_input(body.get("input")),
        convert=lambda a, body: cast(ModerationsMixin, a).convert_moderations_request(body),
        read=lambda a, data: cast(ModerationsMixin, a).convert_moderations_response(data)),
    RelayMode.IMAGES: Mode(
        default_model="dall-e-2", streamable=True, reading=Reading.IMAGES, billing=Billing.IMAGES, events=True,
        check=check_images, count_prompt=lambda body: count_text(text_field(body, "prompt")),
        convert=lambda a, body: cast(ImagesMixin, a).convert_image_request(body),
        read=lambda a, data: _images(cast(ImagesMixin, a).convert_image_response(data))),
    RelayMode.IMAGES_EDIT: Mode(
        default_model="gpt-image-1.5", streamable=True, form=EDIT_FORM, reading=Reading.IMAGES,
        billing=Billing.IMAGES, events=True, check_form=check_edit_form,
        count_prompt=lambda body: count_text(text_field(body, "prompt")),
        form_fields=lambda a, fields: cast(ImageEditsMixin, a).convert_image_edit_fields(fields),
        form_body=lambda a, body, files: cast(ImageEditsMixin, a).convert_image_edit_body(body, files),
        read=lambda a, data: _images(cast(ImageEditsMixin, a).convert_image_edit_response(data))),
    RelayMode.SPEECH: Mode(
        default_model="tts-1", reading=Reading.AUDIO, billing=Billing.SPEECH, check=check_speech,
        count_prompt=lambda body: count_speech_input(text_field(body, "input")),
        convert=lambda a, body: cast(AudioMixin, a).convert_speech_request(body)),
    RelayMode.TRANSCRIPTION: Mode(default_model="whisper-1", form=TRANSCRIPTION, reading=Reading.TRANSCRIPT,
                                  billing=Billing.TRANSCRIPTION, form_fields=_audio_fields),
    RelayMode.TRANSLATION: Mode(default_model="whisper-1", form=TRANSLATION, reading=Reading.TRANSCRIPT,
                                billing=Billing.TRANSCRIPTION, form_fields=_audio_fields),
    RelayMode.RERANK: Mode(
        check=check_rerank, count_prompt=_rerank_prompt,
        convert=lambda a, body: cast(RerankMixin, a).convert_rerank_request(body),
        read=lambda a, data: cast(RerankMixin, a).convert_rerank_response(data)),
    RelayMode.REALTIME: Mode(billing=Billing.REALTIME),  # a WebSocket session: api/relay/realtime
    RelayMode.TASK: Mode(billing=Billing.TASK),  # a task submission: api/relay/tasks
    RelayMode.VIDEO: Mode(billing=Billing.VIDEO),  # a video task submission: api/relay/tasks
}
