"""What the relay knows of a request for its bill: `RequestFacts`, filled by the pipeline as the request
goes and turned into a settlement record (api.services.billing.records), and the record's unique id."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from api.services.model_name import ModelName


def answer_ms(started: float, now: float) -> int:
    """first_response_ms of an answer read at `now` for a request started at `started` (both
    time.monotonic()): at least 1, because 0 there means no answer was read — an answer within a
    millisecond must not read as none (the channel's time to first byte, the log's `frt`)."""
    return max(1, int((now - started) * 1000))


def new_settlement_id(request_id: str) -> str:
    """The request id plus 32 random bits: unique across processes even when request ids collide."""
    return f"{request_id}-{os.urandom(4).hex()}"


@dataclass(slots=True)
class RequestFacts:
    """Who asked what of which channels; filled by the pipeline as the request goes."""

    request_id: str
    user_id: int
    username: str
    token_id: int
    token_name: str
    token_limited: bool
    group: str
    name: ModelName
    mode: str = "chat"
    is_stream: bool = False
    channel_id: int = 0
    used_channels: list[int] = field(default_factory=list)
    model_ratio: float = 0.0
    completion_ratio: float = 1.0
    group_ratio: float = 1.0
    model_price: float | None = None
    cache_ratio: float | None = None  # applied to cache reads (None: billed as prompt tokens)
    cache_creation_ratio: float | None = None  # applied to cache writes
    cache_creation_1h_ratio: float | None = None  # applied to the one-hour part of the cache writes
    image_ratio: float | None = None  # applied to input image tokens (image models)
    image_output_ratio: float | None = None  # applied to output image tokens
    started: float = field(default_factory=time.time)
    first_response_ms: int = 0
    incomplete: str = ""  # why an answer stopped early ("" = complete)
    inbound: str = ""  # the client's format when not OpenAI's: anthropic, gemini, responses
    dropped: str = ""  # what conversion left out for the channel (comma-separated)
    task_id: str = ""  # a task submission (Midjourney, Suno): the upstream's task id
    # How it was routed: session_source, affinity (hit, new, moved), key_index (api/relay/affinity.py)
    routing: dict[str, Any] = field(default_factory=dict)
    # The budget windows it counts in, [owner, identity, start, end] each, known once admitted
    windows: list[list[Any]] = field(default_factory=list)

    @property
    def model(self) -> str:
        """The model billed and logged: the one the client asked for."""
        return self.name.requested

    @property
    def upstream_model(self) -> str:
        """The model the channel was sent (after its mapping)."""
        return self.name.sent
