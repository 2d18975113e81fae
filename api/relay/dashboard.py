"""The relay's reports: OpenAI's legacy `/dashboard/billing/subscription` and `/usage` (the key's,
or its owner's, limit and use, settlements still waiting included) and Prometheus' `/metrics`."""
from __future__ import annotations

import hmac
import ipaddress
import time

import orjson
from aiohttp import web

from api import keys
from api.i18n import language, translate
from api.relay.caller import key_caller
from api.relay.state import RELAY, RelayState, relay_state
from api.services import redis_keys
from api.services.billing.records import SettlementRecord
from api.services.billing.settlement import pending_key
from api.services.queues import Queue
from api.upstream import call as upstream
from api.web.net import client_ip
from models import Token, User


async def _billing_amounts(request: web.Request) -> tuple[int, int, int, bool, float]:
    """(limit, used, access_until, unlimited, divisor) of the caller's key (or user)."""
    state = relay_state(request)
    caller = await key_caller(request, state)
    options = request.config_dict[keys.OPTIONS]
    assert caller.token is not None
    token = await Token.get(id=caller.token.id)
    store = request.config_dict[keys.STORE]
    pending = await store.redis.hgetall(pending_key(store, caller.user.id))
    waiting = [SettlementRecord.decode(v) for v in pending.values()]
    divisor = options.get_float("QuotaPerUnit") if options.get_bool("DisplayInCurrencyEnabled") else 1.0
    access_until = token.expired_time if token.expired_time != -1 else 0
    if options.get_bool("DisplayTokenStatEnabled"):
        used = token.used_quota + sum(r.quota for r in waiting if r.token_id == token.id)
        return token.remain_quota + token.used_quota, used, access_until, token.unlimited_quota, divisor
    user = await User.get(id=caller.user.id)
    used = user.used_quota + sum(r.quota for r in waiting)
    return user.quota + user.used_quota, used, access_until, False, divisor


async def billing_subscription(request: web.Request) -> web.Response:
    limit, _, access_until, unlimited, divisor = await _billing_amounts(request)
    amount = 100000000.0 if unlimited else limit / divisor
    body = {"object": "billing_subscription", "has_payment_method": True, "soft_limit_usd": amount,
            "hard_limit_usd": amount, "system_hard_limit_usd": amount, "access_until": access_until}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def billing_usage(request: web.Request) -> web.Response:
    _, used, _, _, divisor = await _billing_amounts(request)
    body = {"object": "list", "total_usage": used / divisor * 100}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


def _private(ip: str) -> bool:
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return addr.is_loopback or addr.is_private


async def metrics(request: web.Request) -> web.Response:
    """Prometheus text; with MetricsToken set it needs `Authorization: Bearer <token>`, without it
    only loopback and private-network scrapers are answered."""
    token = request.config_dict[keys.OPTIONS].get("MetricsToken")
    auth = request.headers.get("Authorization", "")
    given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    allowed = (hmac.compare_digest(given.encode(errors="surrogateescape"), token.encode()) if token
               else _private(client_ip(request)))
    if not allowed:
        return web.Response(status=403, text=translate("relay_metrics_forbidden", language(request)))
    state: RelayState = request.config_dict[RELAY]
    prefix = request.config_dict[keys.SETTINGS].redis_prefix
    async with state.queues.redis.pipeline(transaction=False) as pipe:
        for queue in Queue:
            pipe.llen(redis_keys.dramatiq_queue(prefix, queue))
        depths = await pipe.execute()
    gauges: dict[str, tuple[str, list[tuple[tuple[tuple[str, str], ...], float]]]] = {
        "gateway_queue_depth": ("Messages waiting in each worker queue.",
                                [((("queue", q),), float(d)) for q, d in zip(Queue, depths, strict=True)]),
        "gateway_uptime_seconds": ("Seconds since this process started.",
                                   [((), time.time() - request.config_dict[keys.START_TIME])]),
        "gateway_channel_inflight": ("Requests in flight per channel, every API process counted (as of the last "
                                     "second's sync).",
                                     [((("channel", str(cid)),), float(n))
                                      for cid, n in sorted(state.load.totals().items())]),
    }
    text = state.metrics.render(gauges, upstream.STATS.calls, upstream.STATS.seconds)
    return web.Response(text=text, content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})
