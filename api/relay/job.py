"""The relay request as it goes through its lifecycle (api.relay.lifecycle): who asked (api.relay.caller),
what, and what came of it. The gateway's own refusals are api.relay.refusals."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from api import keys
from api.channels.index import ChannelInfo
from api.middlewares import REQUEST_ID_HEADER
from api.relay.affinity import Pin, Session
from api.relay.caller import Caller
from api.relay.inbound.base import Inbound
from api.relay.kept_reasoning import StreamCollector
from api.relay.modes import MODES
from api.relay.state import RelayState
from api.services.billing import pricing
from api.services.billing.quota import Charge
from api.services.billing.realtime_pricing import AudioPrice
from api.services.billing.request_facts import RequestFacts
from api.services.configuration.options import OptionsService
from api.services.model_name import ModelName
from api.upstream.base import (
    RelayMode,
    StreamState,
    TokenUsage,
)
from api.upstream.masking import mask_bytes, mask_secrets
from api.web.header_values import header_value

# -- the request as it goes -----------------------------------------------------------------------


@dataclass(slots=True)
class Chain:
    """A request's chain of models (api/relay/fallbacks.py): the models still to try, on which reasons."""

    asked: str  # the model the client asked for (a named route's name)
    models: list[str]
    on: frozenset[str]
    source: str  # client, route, operator
    passed: list[dict[str, Any]] = field(default_factory=list)  # each model passed over, and why
    last: Any = None  # the last attempt's upstream error, before status_code_mapping
    first: str = ""  # the model tried first without stickiness (the asked one, a route's first)
    sticky_key: str = ""  # where the session's stickiness is kept (api/relay/fallback_sticky.py); "": none
    moved: bool = False  # the request fell back to another model of the chain


@dataclass(slots=True)
class Form:
    """A multipart request: text fields, and file parts forwarded untouched."""

    fields: dict[str, str]
    files: list[tuple[str, str, str, bytes]]


@dataclass(slots=True)
class Job:
    request: web.Request
    state: RelayState
    options: OptionsService
    mode: RelayMode
    route: str
    caller: Caller
    body: dict[str, Any]
    form: Form | None = None
    name: ModelName = ModelName()  # the model asked for, and the one the attempt under way sends
    group: str = ""
    price: pricing.Price | None = None
    channel: ChannelInfo | None = None
    upstream: ChannelInfo | None = None  # the channel of the attempt under way
    prompt_tokens: int = 0
    pre: int = 0
    charge: Charge | None = None
    facts: RequestFacts | None = None
    partial: Outcome | None = None  # what a cancelled stream produced before it was cancelled
    stream: StreamState | None = None  # a streamed answer's accumulator, while it streams
    produced: int | None = None  # output tokens of the finished answer (the checkpoint while settling)
    images: int | None = None  # images delivered, when the upstream bills those it produced (billing.images_billed)
    inbound: Inbound | None = None  # the client's own format, when it is not OpenAI's
    started: float = field(default_factory=time.monotonic)
    session: Session | None = None  # the conversation it belongs to (api/relay/affinity.py)
    pin_key: str = ""  # where its pin is kept
    pin: Pin | None = None  # the channel and key the session was pinned to when the request came
    new_pin: Pin | None = None  # where it is pinned from now on, when that changed
    task: str = ""  # a task submission's platform ("mj", "suno"): charged as a task, logged under it
    audio: AudioPrice | None = None  # a Realtime session's audio ratios, resolved with its price
    kept: StreamCollector | None = None  # the reasoning state its answer leaves (api/relay/kept_reasoning.py)
    kept_survey: tuple[Any, dict[str, Any]] | None = None  # (messages, per family) surveyed at the admission
    chain: Chain | None = None  # the models to try after this one (api/relay/fallbacks.py)

    @property
    def model(self) -> str:
        """The model the client asked for: priced, routed, billed and logged under this name."""
        return self.name.requested

    @property
    def is_stream(self) -> bool:
        return MODES[self.mode].streamable and self.body.get("stream") is True

    def mask(self, text: str) -> str:
        """Upstream text of the attempt under way, safe for the client and the logs (api/upstream/masking.py)."""
        upstream = self.upstream
        return mask_secrets(text, upstream.key, upstream.base_url) if upstream is not None else mask_secrets(text)

    def mask_bytes(self, raw: bytes) -> bytes:
        upstream = self.upstream
        return mask_bytes(raw, upstream.key, upstream.base_url) if upstream is not None else mask_bytes(raw)


DROPPED_HEADER = "X-Gateway-Dropped"
MODEL_HEADER = "X-Gateway-Model"


def answer_headers(job: Job) -> dict[str, str]:
    """An answer's own headers, streamed or not: the request id, the model that answered (X-Gateway-Model:
    a chain's, api/relay/fallbacks.py), and what conversion left out for
    the channel (so the client can see it: `facts.dropped` is made sendable where it is made,
    api.web.header_values.header_list)."""
    model = job.model
    headers = {REQUEST_ID_HEADER: job.request.get(keys.REQUEST_ID, ""),
               MODEL_HEADER: model if model.isascii() and model.isprintable() else header_value(model)}
    if job.facts is not None and job.facts.dropped:
        headers[DROPPED_HEADER] = job.facts.dropped
    return headers


@dataclass(slots=True)
class Outcome:
    response: web.StreamResponse
    usage: TokenUsage
    quota: int
    produced: bool = True
    result: Any = None  # what a task's submission made (its answer and row), for its route to answer with
