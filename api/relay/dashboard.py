"""The relay's reports: OpenAI's legacy `/dashboard/billing/subscription` and `/usage` (the key's,
or its owner's, limit and use, settlements still waiting included), new-api's `/api/usage/token`
(the key's quota), each with the limit over time that binds the key first, and Prometheus'
`/metrics`."""
from __future__ import annotations

import hmac
import ipaddress
import time

import orjson
from aiohttp import web

from api import keys
from api.errors import Unauthorized
from api.i18n import language, translate
from api.relay.auth import KEY_MAX, parse_key
from api.relay.caller import key_caller
from api.relay.state import RELAY, RelayState, relay_state
from api.response import ok
from api.services import redis_keys
from api.services.billing.records import SettlementRecord
from api.services.billing.settlement import pending_key
from api.services.budgets.limits import Limit
from api.services.budgets.usage import LimitUsage, binding, usage_of
from api.services.configuration.options import OptionsService
from api.services.queues import Queue
from api.upstream import call as upstream
from api.web.net import client_ip
from models import Token, User
from models.enums import UserStatus


async def binding_limit(request: web.Request, token_id: int, token_limits: str | tuple[Limit, ...], user_id: int,
                        user_limits: str | tuple[Limit, ...], group: str) -> LimitUsage | None:
    """Of the key's, its user's and their group's limits, the one with the least room left relative
    to it (what a client should watch); None without limits."""
    options: OptionsService = request.config_dict[keys.OPTIONS]
    entries = await usage_of(request.config_dict[keys.STORE], user_id=user_id, user_limits=user_limits, group=group,
                             group_limits_option=options.get("GroupLimits") or "", token_id=token_id,
                             token_limits=token_limits, time_zone=options.get("BudgetTimeZone") or "UTC")
    return binding(entries)


def _binding_view(entry: LimitUsage | None, divisor: float = 1.0) -> dict[str, object] | None:
    """The binding limit on the wire; a quota limit's amounts divided as the answer's others are."""
    if entry is None:
        return None
    scale = divisor if entry["measure"] == "quota" else 1.0
    limit, used = entry["limit"], entry["used"]
    return {"owner": entry["owner"], "index": entry["index"], "window": entry["window"], "measure": entry["measure"],
            "model": entry["model"], "limit": limit / scale if scale != 1.0 else limit,
            "used": used / scale if scale != 1.0 else used,
            "remaining": max(0, limit - used) / scale if scale != 1.0 else max(0, limit - used),
            "soft": entry["soft"], "window_start": entry["window_start"], "resets_at": entry["resets_at"]}


async def _billing_amounts(request: web.Request) -> tuple[int, int, int, bool, float, LimitUsage | None]:
    """(limit, used, access_until, unlimited, divisor, binding limit) of the caller's key (or user)."""
    state = relay_state(request)
    caller = await key_caller(request, state)
    options = request.config_dict[keys.OPTIONS]
    assert caller.token is not None
    token = await Token.get(id=caller.token.id)
    bound = await binding_limit(request, token.id, caller.token.limits, caller.user.id, caller.user.limits,
                                caller.user.group)
    store = request.config_dict[keys.STORE]
    pending = await store.redis.hgetall(pending_key(store, caller.user.id))
    waiting = [SettlementRecord.decode(v) for v in pending.values()]
    divisor = options.get_float("QuotaPerUnit") if options.get_bool("DisplayInCurrencyEnabled") else 1.0
    access_until = token.expired_time if token.expired_time != -1 else 0
    if options.get_bool("DisplayTokenStatEnabled"):
        used = token.used_quota + sum(r.quota for r in waiting if r.token_id == token.id)
        return token.remain_quota + token.used_quota, used, access_until, token.unlimited_quota, divisor, bound
    user = await User.get(id=caller.user.id)
    used = user.used_quota + sum(r.quota for r in waiting)
    return user.quota + user.used_quota, used, access_until, False, divisor, bound


async def billing_subscription(request: web.Request) -> web.Response:
    """OpenAI's shape; `binding_limit`: the limit over time that binds the key first (a quota
    limit's amounts in the answer's unit), or null."""
    limit, _, access_until, unlimited, divisor, bound = await _billing_amounts(request)
    amount = 100000000.0 if unlimited else limit / divisor
    body = {"object": "billing_subscription", "has_payment_method": True, "soft_limit_usd": amount,
            "hard_limit_usd": amount, "system_hard_limit_usd": amount, "access_until": access_until,
            "binding_limit": _binding_view(bound, divisor)}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def billing_usage(request: web.Request) -> web.Response:
    _, used, _, _, divisor, _ = await _billing_amounts(request)
    body = {"object": "list", "total_usage": used / divisor * 100}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def token_usage(request: web.Request) -> web.Response:
    """new-api's `GET /api/usage/token`: the calling key's quota (`Authorization: Bearer sk-…`; a key
    that is disabled, expired or used up still reads its own), in quota units, with `binding_limit`.
    Answered in new-api's shape (`code: true`) inside the console's envelope."""
    key, _ = parse_key(request)
    if not request.headers.get("Authorization", "").strip():
        raise Unauthorized("relay_no_key")
    token = await Token.filter(key=key).first() if key and key.isascii() and len(key) <= KEY_MAX else None
    user = await User.filter(id=token.user_id, deleted_at=None).first() if token is not None else None
    if token is None or user is None:
        raise Unauthorized("relay_invalid_key")
    if user.status != UserStatus.ENABLED:
        raise Unauthorized("relay_user_banned")
    bound = await binding_limit(request, token.id, token.limits, user.id, user.limits, user.group)
    data = {"object": "token_usage", "name": token.name, "total_granted": token.remain_quota + token.used_quota,
            "total_used": token.used_quota, "total_available": token.remain_quota,
            "unlimited_quota": token.unlimited_quota,
            "model_limits": {m: True for m in token.model_limits.split(",") if m},
            "model_limits_enabled": token.model_limits_enabled,
            "expires_at": token.expired_time if token.expired_time != -1 else 0,
            "binding_limit": _binding_view(bound)}
    return ok(data, "ok", code=True)


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
