"""What a request consumed and the settlement record that carries it, with its one encoder and decoder.

A record travels from the relay (the settle script stores it in the user's `{u<id>}:pend` hash) to
a worker (api.services.billing.settlement writes it to the database); a reservation (api.services.
reservations) keeps the same fields of a running request, so that the sweep can write the record
of a request whose process died. Both are JSON with short keys (one per field, below): records
and reservations written by a running version must stay readable by the next one, so a key is
never renamed and a missing key reads as the field's default. Keys added later (`cw1h`, `cwr1h`, `rt`,
`ii`, `io`, `ir`, `ior`, `bw`) are written only when they say something, so a record without them
reads as it always did.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from api.services.billing import pricing

if TYPE_CHECKING:
    from api.services.billing.request_facts import RequestFacts


@dataclass(slots=True)
class TokenUsage:
    """Token counts of one answer, in OpenAI's convention whatever the provider: `cached_tokens`
    (cache reads) and `cache_creation_tokens` (cache writes) are part of `prompt_tokens`,
    `reasoning_tokens` part of `completion_tokens`. Adaptors of providers that count them apart
    (Claude's `input_tokens` excludes both cache counts) add them up when converting."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_creation_tokens: int = 0
    # Of `cache_creation_tokens`, those written with a one-hour lifetime (Anthropic's
    # `cache_creation.ephemeral_1h_input_tokens`), billed at their own ratio.
    cache_creation_1h_tokens: int = 0
    # Image models (gpt-image's `input_tokens_details.image_tokens`, image output tokens): of
    # `prompt_tokens`, the input images' tokens; of `completion_tokens`, the output images'.
    image_tokens: int = 0
    image_output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def from_openai(cls, usage: Any) -> TokenUsage | None:
        """Parse an OpenAI `usage` object; None when absent or all zero (= "not reported")."""
        if not isinstance(usage, Mapping):
            return None
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        if prompt == 0 and completion == 0:
            total = int(usage.get("total_tokens") or 0)
            if total == 0:
                return None
            prompt = total
        prompt_details = usage.get("prompt_tokens_details") or {}
        completion_details = usage.get("completion_tokens_details") or {}
        cached = prompt_details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0  # DeepSeek
        reasoning = completion_details.get("reasoning_tokens") or 0
        return cls(prompt, completion, int(cached), int(reasoning))

    def to_openai(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.cached_tokens or self.cache_creation_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if self.cache_creation_tokens:  # openai-python types/completion_usage.py
            usage["prompt_tokens_details"]["cache_write_tokens"] = self.cache_creation_tokens
        if self.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        return usage


REFUND = "refund"  # the kind of a failed task's refund (negative quota, not a request)


@dataclass(slots=True)
class SettlementRecord:
    """One request's charge (or one task's refund), as the database will record it."""

    request_id: str
    quota: int = 0  # negative for a refund
    usage: TokenUsage = field(default_factory=TokenUsage)
    kind: str = ""  # "" = a request; REFUND = a failed task's charge given back
    token_id: int = 0
    token_limited: bool = False
    token_name: str = ""
    username: str = ""
    group: str = ""
    channel_id: int = 0
    used_channels: list[int] = field(default_factory=list)
    model: str = ""
    upstream_model: str = ""
    mode: str = "chat"
    is_stream: bool = False
    first_response_ms: int = 0
    model_ratio: float = 0.0
    completion_ratio: float = 1.0
    group_ratio: float = 1.0
    model_price: float | None = None  # per-call price in USD; None = billed by tokens
    cache_ratio: float | None = None
    cache_creation_ratio: float | None = None
    cache_creation_1h_ratio: float | None = None  # one-hour cache writes; None = billed as prompt tokens
    image_ratio: float | None = None  # input image tokens; None = billed as prompt tokens
    image_output_ratio: float | None = None  # output image tokens; None = billed as completion tokens
    inbound: str = ""  # the client's format when not OpenAI's
    dropped: str = ""  # what conversion left out for the channel (comma-separated), "" = nothing
    task_id: str = ""
    started: float = 0.0  # epoch seconds the request arrived
    use_time: int = 0  # seconds
    incomplete: str = ""  # why the answer stopped early ("" = complete)
    at: float = 0.0  # epoch seconds the record was made: one batch is applied in this order
    action: str = ""  # a refund: the task's action
    reason: str = ""  # a refund: why the task failed
    charged_at: int = 0  # a refund: epoch seconds of the charge it gives back (its hour is counted)
    routing: dict[str, Any] = field(default_factory=dict)  # session_source, affinity, key_index
    # The budget windows the request counted in: [owner, identity, start, end] (api.services.budgets.plan)
    windows: list[list[Any]] = field(default_factory=list)

    @classmethod
    def of(cls, facts: RequestFacts, quota: int = 0, usage: TokenUsage | None = None) -> SettlementRecord:
        """The record of a request, made when its usage is known."""
        now = time.time()
        return cls(
            request_id=facts.request_id, quota=quota, usage=usage or TokenUsage(), token_id=facts.token_id,
            token_limited=facts.token_limited, token_name=facts.token_name, username=facts.username,
            group=facts.group, channel_id=facts.channel_id, used_channels=list(facts.used_channels),
            model=facts.model, upstream_model=facts.upstream_model, mode=facts.mode,
            is_stream=facts.is_stream, first_response_ms=facts.first_response_ms, model_ratio=facts.model_ratio,
            completion_ratio=facts.completion_ratio, group_ratio=facts.group_ratio, model_price=facts.model_price,
            cache_ratio=facts.cache_ratio, cache_creation_ratio=facts.cache_creation_ratio,
            cache_creation_1h_ratio=facts.cache_creation_1h_ratio, image_ratio=facts.image_ratio,
            image_output_ratio=facts.image_output_ratio, inbound=facts.inbound,
            dropped=facts.dropped, task_id=facts.task_id, started=facts.started,
            use_time=max(0, int(now - facts.started)), routing=dict(facts.routing),
            incomplete=facts.incomplete, at=round(now, 6), windows=list(facts.windows))

    @property
    def is_refund(self) -> bool:
        return self.kind == REFUND

    def window_charge(self) -> tuple[list[list[Any]], int, int, int]:
        """What it adds to each budget window it counted in: (windows, quota, requests, tokens); a
        task's refund takes its request back."""
        return self.windows, self.quota, -1 if self.is_refund else 1, self.usage.total_tokens

    @property
    def price(self) -> pricing.Price:
        return pricing.Price(self.model, self.model_ratio, self.completion_ratio, self.group_ratio,
                             self.model_price, self.cache_ratio, self.cache_creation_ratio,
                             self.cache_creation_1h_ratio, self.image_ratio, self.image_output_ratio)

    # -- the wire form ---------------------------------------------------------------------------

    def encode(self) -> bytes:
        fields = {**request_fields(self), **_charge_fields(self.quota, self.usage, self.use_time, self.incomplete,
                                                           self.at)}
        if self.is_refund:
            fields.update(k=REFUND, act=self.action, why=self.reason, hts=self.charged_at)
        return orjson.dumps(fields)

    @classmethod
    def decode(cls, raw: bytes | str | Mapping[str, Any]) -> SettlementRecord:
        r = raw if isinstance(raw, Mapping) else orjson.loads(raw)
        mp = r.get("mp", -1)
        model = str(r.get("m", ""))
        channel = int(r.get("c") or 0)
        return cls(
            request_id=str(r.get("rid", "")), quota=int(r.get("q") or 0),
            usage=TokenUsage(int(r.get("p") or 0), int(r.get("ct") or 0), int(r.get("ca") or 0),
                             int(r.get("rs") or 0), int(r.get("cw") or 0), int(r.get("cw1h") or 0),
                             int(r.get("ii") or 0), int(r.get("io") or 0)),
            kind=str(r.get("k") or ""), token_id=int(r.get("t") or 0), token_limited=bool(r.get("tl")),
            token_name=str(r.get("tn", "")), username=str(r.get("un", "")), group=str(r.get("g", "")),
            channel_id=channel, used_channels=[int(c) for c in r.get("uc") or ([channel] if channel else [])],
            model=model, upstream_model=str(r.get("um") or model), mode=str(r.get("mode", "chat")),
            is_stream=bool(r.get("s")), first_response_ms=int(r.get("frt") or 0),
            model_ratio=_number(r, "mr", 0), completion_ratio=_number(r, "cr", 1), group_ratio=_number(r, "gr", 1),
            model_price=None if mp is None or mp < 0 else mp, cache_ratio=r.get("cra"),
            cache_creation_ratio=r.get("cwr"), cache_creation_1h_ratio=r.get("cwr1h"), image_ratio=r.get("ir"),
            image_output_ratio=r.get("ior"),
            inbound=str(r.get("fmt") or ""), dropped=str(r.get("drp") or ""), task_id=str(r.get("task") or ""),
            started=float(r.get("st") or 0),
            use_time=int(r.get("ut") or 0), incomplete=str(r.get("inc") or ""), at=float(r.get("ts") or 0),
            action=str(r.get("act") or ""), reason=str(r.get("why") or ""), charged_at=int(r.get("hts") or 0),
            routing=_routing(r.get("rt")), windows=windows_of(r.get("bw")))

    @classmethod
    def decode_reservation(cls, raw: bytes | str) -> tuple[SettlementRecord, int]:
        """→ (the request's record, its prompt tokens in `usage`; the amount taken)."""
        r = orjson.loads(raw)
        return cls.decode(r), int(r.get("pre") or 0)


class Request(Protocol):
    """What a record says of its request: a RequestFacts (while the request runs) or a SettlementRecord."""

    request_id: str
    token_id: int
    token_limited: bool
    token_name: str
    username: str
    group: str
    channel_id: int
    used_channels: list[int]

    @property
    def model(self) -> str: ...

    @property
    def upstream_model(self) -> str: ...

    mode: str
    is_stream: bool
    first_response_ms: int
    model_ratio: float
    completion_ratio: float
    group_ratio: float
    model_price: float | None
    cache_ratio: float | None
    cache_creation_ratio: float | None
    cache_creation_1h_ratio: float | None
    image_ratio: float | None
    image_output_ratio: float | None
    inbound: str
    dropped: str
    task_id: str
    started: float
    incomplete: str
    routing: dict[str, Any]
    windows: list[list[Any]]


def windows_of(value: Any) -> list[list[Any]]:
    """The budget windows of a record or reservation: `[owner, identity, start, end]` each."""
    if not isinstance(value, list):
        return []
    return [[str(w[0]), str(w[1]), int(w[2]), int(w[3])] for w in value
            if isinstance(w, list) and len(w) == 4 and all(isinstance(x, int) for x in w[2:])]


def _routing(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        return {}
    kept: dict[str, Any] = {k: v for k, v in value.items() if k in ("session_source", "affinity", "key_index")
            and isinstance(v, str | int) and not isinstance(v, bool)}
    realtime = value.get("realtime")  # a Realtime response's session, number, audio counts and ratios
    if isinstance(realtime, Mapping):
        kept["realtime"] = {k: v for k, v in realtime.items()
                            if isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)}
    if isinstance(value.get("fallback"), Mapping):  # a chain's models passed over (api/relay/fallbacks.py)
        kept["fallback"] = dict(value["fallback"])
    if isinstance(value.get("mcp"), Mapping):  # an MCP tool call's server, tool, time, status (api/relay/mcp)
        kept["mcp"] = dict(value["mcp"])
    return kept


def request_fields(r: Request) -> dict[str, Any]:
    """The request's part of the wire form, shared by records and reservations."""
    fields = {
        "rid": r.request_id, "t": r.token_id, "tl": 1 if r.token_limited else 0,
        "c": r.channel_id, "uc": r.used_channels, "m": r.model, "um": r.upstream_model or r.model,
        "mode": r.mode, "s": 1 if r.is_stream else 0, "frt": r.first_response_ms,
        "tn": r.token_name, "un": r.username, "g": r.group, "mr": r.model_ratio,
        "cr": r.completion_ratio, "gr": r.group_ratio,
        "mp": -1 if r.model_price is None else r.model_price, "cra": r.cache_ratio,
        "cwr": r.cache_creation_ratio, "fmt": r.inbound, "task": r.task_id,
        "st": round(r.started, 3),
    }
    if r.cache_creation_1h_ratio is not None:
        fields["cwr1h"] = r.cache_creation_1h_ratio
    if r.image_ratio is not None:
        fields["ir"] = r.image_ratio
    if r.image_output_ratio is not None:
        fields["ior"] = r.image_output_ratio
    if r.dropped:
        fields["drp"] = r.dropped
    if r.routing:
        fields["rt"] = r.routing
    if r.windows:
        fields["bw"] = r.windows
    return fields


def _charge_fields(quota: int, usage: TokenUsage, use_time: int, incomplete: str, at: float) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "q": quota, "p": usage.prompt_tokens, "ct": usage.completion_tokens, "ca": usage.cached_tokens,
        "rs": usage.reasoning_tokens, "cw": usage.cache_creation_tokens, "ut": use_time, "inc": incomplete,
        "ts": round(at, 6),
    }
    if usage.cache_creation_1h_tokens:
        fields["cw1h"] = usage.cache_creation_1h_tokens
    if usage.image_tokens:
        fields["ii"] = usage.image_tokens
    if usage.image_output_tokens:
        fields["io"] = usage.image_output_tokens
    return fields


def encode_settlement(request: Request, quota: int, usage: TokenUsage) -> bytes:
    """The record of a request that ends now, straight from its facts: what
    `SettlementRecord.of(request, quota, usage).encode()` gives, without the intermediate value
    (the relay's settlement writes one per request)."""
    now = time.time()
    return orjson.dumps({**request_fields(request),
                         **_charge_fields(quota, usage, max(0, int(now - request.started)), request.incomplete, now)})


def encode_reservation(request: Request, pre: int, prompt_tokens: int,
                       windows: list[list[Any]] | None = None) -> bytes:
    """A running request's reservation: the request's fields, the amount taken, the prompt count
    (read back by SettlementRecord.decode_reservation), the budget windows it is to count in (a
    rolling window's start 0: the admission keeps the starts beside it, `<request id>@`)."""
    fields = {**request_fields(request), "pre": pre, "p": prompt_tokens}
    if windows:
        fields["bw"] = windows
    return orjson.dumps(fields)


def _number(r: Mapping[str, Any], key: str, default: float) -> float:
    """A ratio as it was written (an integer ratio stays one: the log shows `15`, not `15.0`)."""
    value = r.get(key)
    return default if value is None else value
