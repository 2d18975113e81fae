"""The one upstream call. Every request this gateway sends to a provider goes through `call`: a
relayed request, a channel test, a balance or model-list query, a task submission or poll.

    authorize (the adaptor signs it or attaches its credential) → send (redirects never followed:
    a provider that answers 3xx is answering, not sending us elsewhere) → status → on an error
    status, the provider's error mapped by its adaptor and masked → the open answer.

It is also the one place where upstream calls are timed and counted (`STATS`, in /metrics by
caller, channel type and outcome), so a slow or failing provider shows whichever path met it.
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Required, TypedDict, Unpack

import aiohttp

from api.upstream import client
from api.upstream.base import Adaptor, UpstreamContext, UpstreamRequest
from api.upstream.credentials import process_credentials
from api.upstream.errors import RelayError, mask_secrets
from api.upstream.metrics import Histogram, Labels
from api.upstream.task_base import TaskAdaptor

RELAY, TEST, QUERY, TASK = "relay", "test", "query", "task"


@dataclass
class UpstreamStats:
    """Calls by (caller, channel type, outcome: the status class or the failure's code) and the time
    to the answer's headers by (caller, channel type)."""

    calls: dict[Labels, int] = field(default_factory=lambda: defaultdict(int))
    seconds: dict[Labels, Histogram] = field(default_factory=lambda: defaultdict(Histogram))

    def record(self, caller: str, channel_type: int, outcome: str, elapsed: float | None) -> None:
        base = (("caller", caller), ("type", str(channel_type)))
        self.calls[(*base, ("outcome", outcome))] += 1
        if elapsed is not None:
            self.seconds[base].observe(elapsed)


STATS = UpstreamStats()
ErrorHook = Callable[[int, bytes], Awaitable[None]]
Unanswered = Callable[[RelayError], Exception]


class CallOptions(TypedDict, total=False):
    """`call`'s keywords, for the callers that pass them on."""

    caller: Required[str]
    channel_type: Required[int]
    adaptor: Adaptor | TaskAdaptor | None
    ctx: UpstreamContext | None
    secrets: Sequence[str]
    on_error: ErrorHook | None
    unanswered: Unanswered | None


async def call(http: aiohttp.ClientSession, request: UpstreamRequest, timeout: aiohttp.ClientTimeout, *,
               caller: str, channel_type: int, adaptor: Adaptor | TaskAdaptor | None = None,
               ctx: UpstreamContext | None = None, secrets: Sequence[str] = (), on_error: ErrorHook | None = None,
               unanswered: Unanswered | None = None) -> client.Answer:
    """Send `request` and return the open answer (the caller reads, streams or closes it).

    With an `adaptor`, the request is authorized through it first. A chat adaptor's error status
    raises its `convert_error` of the body (after `on_error(status, body)`, for a caller that learns
    from it); a task adaptor's answers are all returned (its protocol reads its own errors), as are
    all answers without an adaptor. A failure to connect or a timeout raises RelayError
    (api/upstream/client.py), or what `unanswered` makes of it. `secrets` are masked in every
    message raised (the relay masks its own later, on every path to the user)."""
    if adaptor is not None:
        await adaptor.authorize(request, ctx or UpstreamContext(http, process_credentials()))
    request.headers["Accept-Encoding"] = "identity"
    started = time.monotonic()
    try:
        resp = await client.send(http, request, timeout)
    except RelayError as err:
        STATS.record(caller, channel_type, str(err.code or "failed"), None)
        if secrets:
            err.message = mask_secrets(err.message, *secrets)
        if unanswered is not None:
            raise unanswered(err) from err
        raise
    STATS.record(caller, channel_type, f"{resp.status // 100}xx", time.monotonic() - started)
    if isinstance(adaptor, Adaptor) and not 200 <= resp.status < 300:
        raw = await client.read_error(resp)
        if on_error is not None:
            await on_error(resp.status, raw)
        mapped = adaptor.convert_error(resp.status, raw)
        if secrets:
            mapped.message = mask_secrets(mapped.message, *secrets)
        raise mapped
    return resp


async def call_whole(http: aiohttp.ClientSession, request: UpstreamRequest, timeout: aiohttp.ClientTimeout,
                     limit: int, **how: Unpack[CallOptions]) -> tuple[int, bytes]:
    """`call`, then the whole answer: (status, body), a body over `limit` bytes refused (a RelayError,
    or what `unanswered` makes of it, as a failure to connect)."""
    resp = await call(http, request, timeout, **how)
    try:
        return resp.status, await client.read_body(resp, limit)  # (it releases the answer)
    except RelayError as err:
        unanswered = how.get("unanswered")
        if unanswered is not None:
            raise unanswered(err) from err
        raise
