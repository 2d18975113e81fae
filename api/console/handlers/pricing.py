"""Public model prices: every model an enabled channel serves, with its ratios or per-call price.

The list is built once and kept in this process until a "channel" or "option" event (from any
process) says that channels, abilities or prices changed.
"""
from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from api import keys
from api.console.auth import current_user
from api.errors import ApiError
from api.response import ok
from api.services.billing import pricing
from api.services.configuration.options import OptionsService
from api.services.events import EventBus
from models import Ability, Channel
from models.enums import ChannelStatus, Role


def _table(options: OptionsService, key: str, defaults: Mapping[str, float]) -> dict[str, float]:
    """The built-in table overlaid with the admin's option (the option's entries win)."""
    configured = options.get_json(key)
    merged = dict(defaults)
    if isinstance(configured, dict):
        merged.update({k: v for k, v in configured.items() if isinstance(v, int | float) and not isinstance(v, bool)})
    return merged


def price_entry(model: str, groups: list[str], ratios: dict[str, float], completions: dict[str, float],
                prices: dict[str, float], cache: Mapping[str, Any] | None = None,
                cache_write: Mapping[str, Any] | None = None,
                cache_write_1h: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """One model's entry, or None when it has neither a price nor a ratio (the relay refuses it)."""
    name = pricing.wildcard_name(model)
    price = prices.get(model, prices.get(name))
    ratio = ratios.get(model, ratios.get(name))
    if price is not None and price >= 0:
        quota_type, model_price = 1, float(price)
    elif ratio is not None:
        quota_type, model_price = 0, 0.0
    else:
        return None
    by_ratio = quota_type == 0
    write = _ratio(cache_write, model, name) if by_ratio else None
    return {
        "model_name": model,
        "quota_type": quota_type,
        "model_ratio": float(ratio) if ratio is not None else 0.0,
        "completion_ratio": float(pricing.completion_ratio_for(model, completions)),
        "model_price": model_price,
        "enable_groups": groups,
        "owner_by": "",
        # Cached input (CacheRatio / CreateCacheRatio / CreateCacheRatio1h, as the relay applies them);
        # None = billed as prompt.
        "cache_ratio": _ratio(cache, model, name) if by_ratio else None,
        "cache_creation_ratio": write,
        "cache_creation_1h_ratio": (pricing.one_hour_write_ratio(_ratio(cache_write_1h, model, name), write)
                                    if by_ratio else None),
    }


def _ratio(table: Mapping[str, Any] | None, model: str, name: str) -> float | None:
    value = (table or {}).get(model, (table or {}).get(name))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


async def build_pricing(options: OptionsService) -> list[dict[str, Any]]:
    enabled = await Channel.filter(status=int(ChannelStatus.ENABLED)).values_list("id", flat=True)
    rows = await Ability.filter(enabled=True, channel_id__in=list(enabled)).values_list("model", "group")
    groups: dict[str, set[str]] = {}
    for model, group in rows:
        groups.setdefault(model, set()).add(group)
    ratios = _table(options, "ModelRatio", pricing.DEFAULT_MODEL_RATIO)
    completions = _table(options, "CompletionRatio", pricing.DEFAULT_COMPLETION_RATIO)
    prices = _table(options, "ModelPrice", pricing.DEFAULT_MODEL_PRICE)
    cache, cache_write = options.get_json("CacheRatio") or {}, options.get_json("CreateCacheRatio") or {}
    cache_write_1h = options.get_json("CreateCacheRatio1h") or {}
    entries = (price_entry(m, sorted(g), ratios, completions, prices, cache, cache_write, cache_write_1h)
               for m, g in groups.items())
    return sorted((e for e in entries if e is not None),
                  key=lambda e: (not e["model_name"].startswith("gpt"), e["model_name"]))


async def build_unpriced(options: OptionsService) -> list[dict[str, Any]]:
    """Models that enabled channels offer but the relay has no price for (every call to them is
    refused), each with the channels offering it: what an administrator has to price."""
    enabled = dict(await Channel.filter(status=int(ChannelStatus.ENABLED)).values_list("id", "name"))
    rows = await Ability.filter(enabled=True, channel_id__in=list(enabled)).values_list("model", "channel_id")
    offered: dict[str, set[int]] = {}
    for model, channel_id in rows:
        offered.setdefault(model, set()).add(channel_id)
    return [{"model_name": model, "channels": [{"id": i, "name": enabled[i]} for i in sorted(ids)]}
            for model, ids in sorted(offered.items()) if not pricing.is_priced(options, model)]


PRICE_OPTIONS = ("ModelRatio", "CompletionRatio", "ModelPrice", "CacheRatio", "CreateCacheRatio", "CreateCacheRatio1h")


class PricingCache:
    """The list of this process, dropped by every channel or option event, and rebuilt at once when this
    process's own price options changed (a price set here shows on the next read, before its event)."""

    def __init__(self, events: EventBus) -> None:
        self.entries: list[dict[str, Any]] | None = None
        self.prices: tuple[str, ...] = ()
        self.generation = 0
        events.subscribe("channel", self.invalidate)
        events.subscribe("option", self.invalidate)

    def invalidate(self, _message: dict[str, Any] | None = None) -> None:
        self.entries = None
        self.generation += 1

    async def get(self, options: OptionsService) -> list[dict[str, Any]]:
        prices = tuple(options.get(key) for key in PRICE_OPTIONS)
        if self.entries is None or prices != self.prices:
            generation = self.generation
            entries = await build_pricing(options)
            if generation == self.generation:  # no invalidation arrived while building
                self.entries, self.prices = entries, prices
            return entries
        return self.entries


_CACHES: weakref.WeakKeyDictionary[EventBus, PricingCache] = weakref.WeakKeyDictionary()


def cache_of(events: EventBus) -> PricingCache:
    cache = _CACHES.get(events)
    if cache is None:
        cache = _CACHES[events] = PricingCache(events)
    return cache


async def get_pricing(request: web.Request) -> web.Response:
    options = request.config_dict[keys.OPTIONS]
    try:
        user = await current_user(request)
    except ApiError:
        user = None  # public route: a stale session is just a visitor
    entries = await cache_of(request.config_dict[keys.EVENTS]).get(options)
    configured = options.get_json("GroupRatio")
    group_ratio = configured if isinstance(configured, dict) else dict(pricing.DEFAULT_GROUP_RATIO)
    usable = options.get_json("UserUsableGroups")
    usable_group = dict(usable) if isinstance(usable, dict) else {}
    if user is not None and user.group not in usable_group:
        usable_group[user.group] = user.group
    extra: dict[str, Any] = {}
    if user is not None and user.role >= Role.ADMIN:
        extra["unpriced"] = await build_unpriced(options)
    return ok(entries, group_ratio=group_ratio, usable_group=usable_group,
              user_group=user.group if user is not None else None, **extra)
