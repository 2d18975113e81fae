"""What a row of the provider catalogue says about one channel type (api/upstream/catalogue.py holds
the rows): everything the relay, the channel rules, the key checks, the importer and the console
know about a type, in one value.

A text shown to people is a pair (English, Chinese), as in api/i18n.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from api.upstream.base import RelayMode

if TYPE_CHECKING:
    from api.upstream.base import Adaptor
    from api.upstream.task_base import TaskAdaptor, VideoAdaptor

Text = tuple[str, str]  # (English, Chinese)
AdaptorClass = type["Adaptor"]  # (named before `Provider`, whose field `type` shadows the builtin there)
TaskAdaptorClass = type["TaskAdaptor"]
VideoAdaptorClass = type["VideoAdaptor"]

# Client formats a channel may take as the client sent them (api/relay/inbound/).
ANTHROPIC = "anthropic"
GEMINI = "gemini"
RESPONSES = "responses"


def single_key(key: str) -> str | None:
    """One API key: one line, no spaces (`channel_key_single` otherwise)."""
    key = key.strip()
    return None if key and not any(c.isspace() for c in key) else "channel_key_single"


def parts_key(n: int, message: str) -> Callable[[str], str | None]:
    """`a|b|…` with `n` non-empty parts without spaces (`message` otherwise)."""
    def problem(key: str) -> str | None:
        parts = key.strip().split("|")
        ok = len(parts) == n and all(p.strip() and not any(c.isspace() for c in p.strip()) for p in parts)
        return None if ok else message
    return problem


@dataclass(frozen=True, slots=True)
class KeyFormat:
    """What one key of a channel looks like. `problem` gives the api/i18n key of the refusal
    (which states the format; it takes `line` and `detail`), None for a good key; `detail` explains
    a refused key further (what is wrong in a service-account JSON), "" when it has nothing to add.
    The console shows `hint`. `whole`: the key is one document, never one channel per line."""

    hint: Text
    problem: Callable[[str], str | None] = single_key
    whole: bool = False
    detail: Callable[[str], str] = lambda key: ""


API_KEY = KeyFormat(("The API key", "API 密钥"))


@dataclass(frozen=True, slots=True)
class OtherField:
    """The per-type `other` field of a channel: its label, the value put in when left empty,
    what the console shows in the empty field, a template to fill in, and its check (an api/i18n
    message key for a refused value, with its arguments; None when the value is fine)."""

    label: Text
    default: str = ""
    placeholder: str = ""
    template: str = ""
    rows: int = 1
    check: Callable[[str], tuple[str, dict[str, Any]] | None] = lambda value: None


@dataclass(frozen=True, slots=True)
class Preset:
    """A ready-made channel of this type: an upstream that speaks the type's API at its own address
    (Anthropic-compatible coding plans, say)."""

    name: str
    label: Text
    base_url: str
    models: tuple[str, ...]


@dataclass(frozen=True)
class Provider:
    """One channel type.

    `adaptor` translates requests (api/upstream/providers/); an OpenAI-compatible provider is the
    OpenAI adaptor with its own `base_url`, and `paths`/`modes` when it serves other paths or only
    some endpoints. `base_url` is the default API address ("" = the operator gives one, unless
    `derived_url`: the address is built from the key or `other`). `native`: the client formats
    relayed as sent (ANTHROPIC, GEMINI, RESPONSES); `native_models` narrows them to some models.
    `retired`: the provider switched the API off; existing channels load and show why, and are
    never picked; new ones are refused.
    """

    type: int
    name: str
    label: Text
    adaptor: AdaptorClass
    base_url: str = ""
    derived_url: bool = False
    base_url_label: Text | None = None
    base_url_help: Text | None = None
    key: KeyFormat = API_KEY
    other: OtherField | None = None
    notice: Text | None = None
    models: tuple[str, ...] = ()
    paths: Mapping[RelayMode, str] | None = None
    modes: frozenset[RelayMode] | None = None
    native: frozenset[str] = frozenset()
    native_models: Callable[[str], bool] | None = None
    stream_options: bool = False  # the upstream takes `stream_options.include_usage`
    balance: bool = False  # the adaptor's balance query works against this provider today
    fetch_models: bool = False  # GET {base}/v1/models lists the channel's models
    image_edits: bool = False  # OpenAI's image API in full: the edits form, streamed images (OpenAI, Azure, gateways)
    # The task adaptor of a task type (Midjourney, Suno: its channels serve tasks only), relayed by api/relay/tasks/.
    task: TaskAdaptorClass | None = None
    video: VideoAdaptorClass | None = None  # the video protocol of /v1/videos on this type's channels
    organization: bool = False  # the channel may name an OpenAI organization (OpenAI-Organization header)
    retry_400: bool = False  # a 400 may be an overload answer (Anthropic): retried elsewhere
    disable_on_403: bool = False  # a 403 means the key is unusable (Gemini)
    retired: Text | None = None
    presets: tuple[Preset, ...] = ()

    @property
    def base_url_required(self) -> bool:
        return not self.base_url and not self.derived_url

    def serves_native(self, client_format: str, model: str) -> bool:
        """Whether a request in `client_format` for `model` is relayed to this type as sent."""
        if client_format not in self.native:
            return False
        return self.native_models is None or self.native_models(model)
