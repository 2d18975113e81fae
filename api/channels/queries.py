"""What a channel's upstream says of itself: its balance (the billing endpoints of providers that
have one) and its model list, asked through the relay's seam (the adaptor builds the request and
authorises it, as the relay does) by the console and the balance job."""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson

from api.channels.channel_test import _meta, failure_kind, test_timeout
from api.channels.monitor import TEST_CONCURRENCY, bounded, lock_key, refresh
from api.channels.monitor_deps import Deps
from api.upstream import call as upstream
from api.upstream import client
from api.upstream.balance import BalanceMixin, BalanceQueryError
from api.upstream.base import Adaptor, UpstreamRequest
from api.upstream.errors import RelayError, mask_secrets
from api.upstream.providers.openai import OpenAIAdaptor
from api.upstream.registry import build_adaptor
from models import Channel
from models.enums import ChannelStatus

log = logging.getLogger(__name__)
Fetch = Callable[[UpstreamRequest], Awaitable[dict[str, Any]]]


# -- balances --------------------------------------------------------------------------------------
# Through the seam: the channel's adaptor builds the GET requests (BalanceMixin.query_balance) and
# `seam_fetch` authorises and sends them, as the relay does.

QueryError = BalanceQueryError


def _adaptor(channel: Channel) -> Adaptor:
    return build_adaptor(_meta(channel))


def supports_balance(channel: Channel) -> bool:
    adaptor = _adaptor(channel)
    return isinstance(adaptor, BalanceMixin) and adaptor.has_balance()


def seam_fetch(http: aiohttp.ClientSession, adaptor: Adaptor, timeout: float, secret: str) -> Fetch:
    """GET a JSON object through the seam: authorize, send, status and JSON checks (QueryError)."""

    async def fetch(request: UpstreamRequest) -> dict[str, Any]:
        try:
            status, raw = await upstream.call_whole(
                http, request, aiohttp.ClientTimeout(total=timeout), client.MAX_ERROR_BODY * 16,
                caller=upstream.QUERY, channel_type=adaptor.meta.channel_type, adaptor=adaptor, secrets=(secret,))
        except RelayError as exc:
            if exc.code == "upstream_timeout":
                raise QueryError(f"no answer within {timeout:g} s") from exc
            if exc.local or exc.code in ("do_request_failed", "bad_response_body"):
                raise QueryError(mask_secrets(failure_kind(exc), secret)) from exc
            raise QueryError(f"status {exc.status}: {exc.message}" if exc.message else f"status {exc.status}") from exc
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise QueryError(f"status {status}, not JSON") from exc
        if not isinstance(data, dict):
            raise QueryError("unexpected answer")
        return data

    return fetch


async def query_balance(http: aiohttp.ClientSession, channel: Channel, timeout: float) -> float:
    """The channel's remaining balance in USD (the provider's unit for the non-OpenAI ones)."""
    adaptor = _adaptor(channel)
    if not isinstance(adaptor, BalanceMixin) or not adaptor.has_balance():
        raise QueryError("unsupported")
    return await adaptor.query_balance(seam_fetch(http, adaptor, timeout, adaptor.meta.key))


async def update_balance(http: aiohttp.ClientSession, channel: Channel, timeout: float) -> float:
    balance = await query_balance(http, channel, timeout)
    await Channel.filter(id=channel.id).update(balance=balance, balance_updated_time=int(time.time()))
    return balance


async def update_all_balances(deps: Deps, lock_token: str, concurrency: int = TEST_CONCURRENCY) -> int:
    """Every enabled channel of a type with a balance endpoint; failures are logged and skipped."""
    run_lock = lock_key(deps.store, "channel_balance_all")
    timeout = test_timeout(deps.options)
    channels = [c for c in await Channel.filter(status=ChannelStatus.ENABLED).order_by("id") if supports_balance(c)]
    updated = 0

    async def one(channel: Channel) -> None:
        nonlocal updated
        try:
            await update_balance(deps.http, channel, timeout)
            updated += 1
        except QueryError as exc:
            log.warning("balance of channel #%d not updated: %s", channel.id, exc.message)
        await refresh(deps.store, run_lock, lock_token)

    await bounded(channels, one, concurrency)
    return updated


# -- the provider's model list ---------------------------------------------------------------------



async def fetch_models(http: aiohttp.ClientSession, channel: Channel, timeout: float) -> list[str]:
    """GET {base}/v1/models through the channel's adaptor → the model ids (OpenAI format only)."""
    adaptor = _adaptor(channel)
    base = adaptor.billing_base() if isinstance(adaptor, OpenAIAdaptor) else adaptor.base_url
    data = await seam_fetch(http, adaptor, timeout, adaptor.meta.key)(UpstreamRequest(
        f"{base}/v1/models", adaptor.request_headers(), None, "GET"))
    items = data.get("data")
    if not isinstance(items, list):
        raise QueryError("no model list in the answer")
    return [str(m["id"]) for m in items if isinstance(m, dict) and m.get("id")]
