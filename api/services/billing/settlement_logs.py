"""What a settlement record writes in the logs: a consume log's content and `other` (ratios, cache,
routing), a task refund's system log, and what the request's cache reads saved (QuotaData)."""
from __future__ import annotations

from typing import Any

import orjson

from api.services.billing import pricing
from api.services.billing.records import SettlementRecord
from api.services.logs import log_event


def consume_other(r: SettlementRecord) -> str:
    other: dict[str, Any] = {
        "frt": r.first_response_ms, "model_ratio": r.model_ratio, "completion_ratio": r.completion_ratio,
        "model_price": -1 if r.model_price is None else r.model_price, "group_ratio": r.group_ratio,
        "admin_info": {"use_channel": r.used_channels or [r.channel_id]},
        "upstream_model_name": r.upstream_model, "is_model_mapped": r.upstream_model != r.model,
        "request_id": r.request_id,
    }
    usage = r.usage
    # Each kind of token counted apart, with the ratio it was billed at (image tokens: an image model's,
    # api/services/billing/image_tokens.py); a kind absent from the usage is left out.
    for count, count_name, ratio, ratio_name in (
            (usage.cached_tokens, "cache_tokens", r.cache_ratio, "cache_ratio"),
            (usage.cache_creation_tokens, "cache_creation_tokens", r.cache_creation_ratio, "cache_creation_ratio"),
            (usage.cache_creation_1h_tokens, "cache_creation_tokens_1h", r.cache_creation_1h_ratio,
             "cache_creation_ratio_1h"),
            (usage.reasoning_tokens, "reasoning_tokens", None, ""),
            (usage.image_tokens, "image_tokens", r.image_ratio, "image_ratio"),
            (usage.image_output_tokens, "image_output_tokens", r.image_output_ratio, "image_output_ratio")):
        if count:
            other[count_name] = count
            if ratio is not None:
                other[ratio_name] = ratio
    if r.incomplete:
        other["incomplete"] = r.incomplete
    if r.inbound:
        other["inbound_format"] = r.inbound
    if r.dropped:
        other["dropped"] = r.dropped.split(",")
    if r.task_id:
        other["task_id"] = r.task_id
    if r.routing:
        other.update(r.routing)
    return orjson.dumps(other).decode()


def refund_other(r: SettlementRecord) -> str:
    return log_event("task_refund", {"task_id": r.task_id, "action": r.action, "refund": -r.quota, "reason": r.reason,
                                     "admin_info": {"use_channel": [r.channel_id]}, "request_id": r.request_id},
                     task_id=r.task_id, action=r.action, quota=-r.quota, reason=r.reason)


def refund_content(r: SettlementRecord) -> str:
    return f"task {r.task_id} ({r.action}) failed, {-r.quota} quota refunded: {r.reason}"


def consume_content(r: SettlementRecord) -> str:
    mcp = r.routing.get("mcp")
    if r.mode == "mcp" and isinstance(mcp, dict):
        return f"MCP tool {mcp.get('server')}/{mcp.get('tool')}, price {r.quota} per call"
    if r.model_price is not None:
        text = f"model price {r.model_price}, group ratio {r.group_ratio}"
    else:
        text = f"model ratio {r.model_ratio}, completion ratio {r.completion_ratio}, group ratio {r.group_ratio}"
        if r.usage.cached_tokens and r.cache_ratio is not None:
            text += f", cache ratio {r.cache_ratio}"
        if r.usage.cache_creation_tokens and r.cache_creation_ratio is not None:
            text += f", cache write ratio {r.cache_creation_ratio}"
        if r.usage.cache_creation_1h_tokens and r.cache_creation_1h_ratio is not None:
            text += f", 1-hour cache write ratio {r.cache_creation_1h_ratio}"
        if r.usage.image_tokens and r.image_ratio is not None:
            text += f", image input ratio {r.image_ratio}"
        if r.usage.image_output_tokens and r.image_output_ratio is not None:
            text += f", image output ratio {r.image_output_ratio}"
    if r.incomplete:
        text += f" (incomplete: {r.incomplete})"
    return text


def cache_saving(r: SettlementRecord) -> int:
    """What the request's cache reads saved: its charge with them billed as fresh input, less its
    charge (0 for per-call prices, or when the model has no cache price)."""
    usage, price = r.usage, r.price
    if not usage.cached_tokens or price.model_price is not None or price.cache_ratio is None:
        return 0
    full = pricing.settle_quota(price, usage.prompt_tokens, usage.completion_tokens, cached_tokens=0,
                                cache_creation_tokens=usage.cache_creation_tokens,
                                cache_creation_1h_tokens=usage.cache_creation_1h_tokens)
    actual = pricing.settle_quota(price, usage.prompt_tokens, usage.completion_tokens,
                                  cached_tokens=usage.cached_tokens, cache_creation_tokens=usage.cache_creation_tokens,
                                  cache_creation_1h_tokens=usage.cache_creation_1h_tokens)
    return max(0, full - actual)
